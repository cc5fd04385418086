"""ScriptedLM, the stand-in other layers test with."""

from __future__ import annotations

import asyncio

import pytest

from binder_py.lm import LanguageModel, LMRequest, ScriptedLM


def test_function_responder_and_recorded_calls():
    lm = ScriptedLM(lambda request, purpose: "yes" if purpose == "neural" else "df.a.sum()")
    assert isinstance(lm, LanguageModel)
    out = lm.complete(LMRequest(prompt="is it red?", n=3), purpose="neural", tags={"question_id": "q1"})
    assert [c.text for c in out.choices] == ["yes", "yes", "yes"]
    assert lm.complete(LMRequest(prompt="write it"), purpose="parse").text == "df.a.sum()"
    assert [(r.prompt, p, t) for r, p, t in lm.calls] == [("is it red?", "neural", {"question_id": "q1"}),
                                                         ("write it", "parse", {})]
    assert lm.usage.requests == 2 and lm.usage.prompt_tokens == 5 and lm.usage.completion_tokens == 4
    assert lm.ledger.for_question("q1").requests == 1


def test_queued_answers_and_lists():
    lm = ScriptedLM(["one", ["a", "b"]])
    assert lm.complete(LMRequest(prompt="x")).text == "one"
    assert [c.text for c in lm.complete(LMRequest(prompt="y", n=3)).choices] == ["a", "b", "a"]
    with pytest.raises(AssertionError, match="no answer left"):
        lm.complete(LMRequest(prompt="z"))


def test_async_and_token_counting():
    lm = ScriptedLM(lambda r, p: "ok")
    assert asyncio.run(lm.acomplete(LMRequest(prompt="q"))).text == "ok"
    assert lm.count_tokens("a b  c") == 3
