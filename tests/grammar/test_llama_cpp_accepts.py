"""llama.cpp itself (through xllamacpp) accepts the generated grammars and constrains generation with them."""

from __future__ import annotations

import json
import re

import pytest

from binder_py.grammar.gbnf import gbnf_accepts
from binder_py.grammar.program import build_program_grammar
from binder_py.neural.answer_types import DATE, NUMBER, TEXT, YES_NO, AnswerKind, AnswerType

xllamacpp = pytest.importorskip("xllamacpp", reason="xllamacpp (prebuilt llama.cpp) is not installed")
pytestmark = [pytest.mark.local_model, pytest.mark.slow]

ODD_COLUMNS = ["team", "units sold", 'say "hi"', "it's", "back\\slash", "Größe", "2010", "class", "a^b", "[x]", "-",
               "ctl\x01", "tab\there"]


@pytest.fixture(scope="module")
def server():
    from binder_py.lm.local_models import DEFAULT_MODEL_KEY, MODELS, ensure_model
    from binder_py.lm.types import LMConfigError

    try:
        model = ensure_model(MODELS[DEFAULT_MODEL_KEY]).path
    except LMConfigError as error:
        pytest.skip(f"the embedded model is not installed: {error}")
    params = xllamacpp.CommonParams()
    params.model.path = str(model)
    params.n_ctx = 2048
    params.n_parallel = 1
    params.cpuparams.n_threads = 1
    params.cpuparams_batch.n_threads = 1
    return xllamacpp.Server(params)


def _complete(server, prompt: str, grammar: str, *, max_tokens: int = 1, seed: int = 1) -> dict:
    return server.handle_completions({"prompt": prompt, "max_tokens": max_tokens, "grammar": grammar,
                                      "temperature": 0.8, "seed": seed})


def test_llama_cpp_refuses_a_broken_grammar(server):  # the check below can fail
    assert "error" in _complete(server, "x", "root ::= ((")


@pytest.mark.parametrize("fenced", [False, True])
def test_program_grammars_are_accepted(server, fenced):
    reply = _complete(server, "x", build_program_grammar(ODD_COLUMNS, table_names=("df", "table"), fenced=fenced))
    assert "error" not in reply, reply


@pytest.mark.parametrize("answer_type", [YES_NO, NUMBER, DATE, TEXT,
                                         AnswerType(AnswerKind.CHOICE, ('the "last" ferry', "harbour\\lights"))])
def test_answer_grammars_and_schemas_are_accepted(server, answer_type):
    assert "error" not in _complete(server, "x", answer_type.gbnf())
    converted = xllamacpp.json_schema_to_grammar(json.dumps(answer_type.json_schema()))
    assert "error" not in _complete(server, "x", converted)


def test_constrained_programs_name_only_real_columns(server):
    columns = ["team", "games won", "games lost"]
    grammar = build_program_grammar(columns)
    prompt = ("# df is a pandas DataFrame with the columns 'team', 'games won', 'games lost'.\n"
              "# Which team lost the most games? Answer with one line of pandas.\n")
    for seed in range(3):
        reply = _complete(server, prompt, grammar, max_tokens=40, seed=seed)
        choice = reply["choices"][0]
        text = choice["text"]
        if choice["finish_reason"] == "stop":  # finished, not cut at max_tokens: a whole program of the grammar
            assert gbnf_accepts(grammar, text), text
        for literal in re.findall(r'df\[\s*"([^"]*)"\s*\]', text):
            assert literal in columns, text
