"""Sampled programs are constrained by the grammar of the table's columns when the model takes grammars."""

from __future__ import annotations

from binder_py import Binder
from binder_py.grammar import gbnf_accepts
from binder_py.lm import ScriptedLM
from binder_py.lm.types import Capabilities

PROGRAM = "df['shirt'].iloc[0]"


def ask(capabilities: Capabilities, **settings):
    lm = ScriptedLM(lambda request, purpose: PROGRAM, capabilities=capabilities)
    Binder(lm=lm, n=2, progress=False, **settings).ask("examples/shirts.csv", "which shirt?")
    return lm.requests[0]


def test_a_grammar_model_gets_the_tables_grammar():
    request = ask(Capabilities(api="completions", grammar=True))
    assert request.grammar is not None
    assert gbnf_accepts(request.grammar, PROGRAM)
    assert not gbnf_accepts(request.grammar, "df['North America'].iloc[0]")  # an invented column


def test_no_grammar_when_not_supported_or_turned_off():
    assert ask(Capabilities(api="completions")).grammar is None
    assert ask(Capabilities(api="completions", grammar=True), constrained=False).grammar is None


def test_a_chat_model_with_exemplar_turns_writes_unfenced_programs():
    request = ask(Capabilities(api="chat", grammar=True))
    assert request.messages is not None and gbnf_accepts(request.grammar, PROGRAM)
