"""ScriptedLM returns scripted Choice objects as they are (the extension this work needed)."""

from __future__ import annotations

from binder_py.lm.scripted import ScriptedLM
from binder_py.lm.types import Choice, LMRequest


def test_choices_pass_through_and_strings_still_become_choices():
    scripted = Choice(text="B", mean_logprob=-0.2, top_logprobs=((("B", -0.2), ("A", -1.8)),))
    lm = ScriptedLM([scripted, ["x y", scripted], "plain"])
    assert lm.complete(LMRequest(prompt="p")).choices == [scripted]
    mixed = lm.complete(LMRequest(prompt="p", n=3)).choices
    assert mixed[0] == Choice(text="x y", finish_reason="stop") and mixed[1] is scripted
    assert mixed[2] == mixed[0]  # cycled
    plain = lm.complete(LMRequest(prompt="p"))
    assert plain.text == "plain" and plain.choices[0].mean_logprob is None
    assert lm.usage.completion_tokens == 1 + (2 + 1 + 2) + 1
