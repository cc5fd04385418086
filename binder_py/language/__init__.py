"""Binder-Python, the language: parse a program, rewrite its neural calls, run it in the sandbox.

See docs/LANGUAGE.md for the language and :func:`execute` for the entry point. What answers a
neural call (backends, requests, the neural cache, planning) is :mod:`binder_py.neural`.
The names below are imported on first use (the sandbox's worker needs only the bridge).
"""

from binder_py.lazy import lazy_exports

_EXPORTS = {
    "ProgramRun": "binder_py.language.execute", "execute": "binder_py.language.execute",
    "BRIDGE_NAME": "binder_py.language.program", "CALLBACK_NAME": "binder_py.language.program",
    "CallSite": "binder_py.language.program", "ParsedProgram": "binder_py.language.program",
    "parse_program": "binder_py.language.program", "rewrite": "binder_py.language.rewrite",
    "NeuralCallTrace": "binder_py.language.trace",
}
__getattr__, __dir__ = lazy_exports(__name__, globals(), _EXPORTS)

__all__ = ["BRIDGE_NAME", "CALLBACK_NAME", "CallSite", "NeuralCallTrace", "ParsedProgram", "ProgramRun",
           "execute", "parse_program", "rewrite"]
