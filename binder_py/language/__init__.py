"""Binder-Python, the language: parse a program, rewrite its neural calls, run it in the sandbox.

See docs/LANGUAGE.md for the language and :func:`execute` for the entry point. What answers a
neural call (backends, requests, the neural cache, planning) is :mod:`binder_py.neural`.
"""

from binder_py.language.execute import ProgramRun, execute
from binder_py.language.program import BRIDGE_NAME, CALLBACK_NAME, CallSite, ParsedProgram, parse_program
from binder_py.language.rewrite import rewrite
from binder_py.language.trace import NeuralCallTrace

__all__ = ["BRIDGE_NAME", "CALLBACK_NAME", "CallSite", "NeuralCallTrace", "ParsedProgram", "ProgramRun",
           "execute", "parse_program", "rewrite"]
