"""Binder-Python: parse, rewrite and run programs with neural calls (``f_col``/``f_val``).

See docs/LANGUAGE.md for the language and :func:`execute` for the entry point.
"""

from binder_py.language.backends import CallableBackend, NeuralAnswer, NeuralBackend, OracleBackend
from binder_py.language.cache import NeuralCache
from binder_py.language.execute import ProgramRun, execute
from binder_py.language.lm_backend import LMNeuralBackend
from binder_py.language.program import BRIDGE_NAME, CALLBACK_NAME, CallSite, ParsedProgram, parse_program
from binder_py.language.requests import NeuralRequest, row_key, type_column, type_value
from binder_py.language.rewrite import rewrite
from binder_py.language.trace import NeuralCallTrace

__all__ = [
    "BRIDGE_NAME", "CALLBACK_NAME", "CallSite", "CallableBackend", "LMNeuralBackend", "NeuralAnswer", "NeuralBackend",
    "NeuralCache", "NeuralCallTrace", "NeuralRequest", "OracleBackend", "ParsedProgram", "ProgramRun",
    "execute", "parse_program", "rewrite", "row_key", "type_column", "type_value",
]
