"""Grammars for constrained decoding: a program grammar per table (:mod:`binder_py.grammar.program`) and GBNF
helpers (:mod:`binder_py.grammar.gbnf`)."""

from binder_py.grammar.gbnf import GbnfError, gbnf_accepts, parse_gbnf
from binder_py.grammar.program import build_program_grammar

__all__ = ["GbnfError", "build_program_grammar", "gbnf_accepts", "parse_gbnf"]
