"""``answer_weights`` apply only to the ``answer_biased`` vote: given with another vote they were
dropped without a word, and a negative weight failed with a ValueError from the vote, after every
model call. The answer now says when they are not used, and a bad weight is refused up front."""

from __future__ import annotations

import pandas as pd
import pytest

from binder_py.ask import Binder
from binder_py.errors import BinderError
from binder_py.lm import ScriptedLM

TABLE = pd.DataFrame({"city": ["Oslo", "Rome", "Lima"], "people": [0.7, 2.8, 10.0]})


def programs() -> ScriptedLM:
    return ScriptedLM(lambda request, purpose: ["len(df)", "len(df) + 1", "len(df) + 1"])


def test_answer_weights_under_another_vote_are_said_to_be_unused():
    answer = Binder(lm=programs(), n=3, progress=False, cache=False,
                    answer_weights={"3": 5.0}).ask(TABLE, "how many cities?")
    assert answer.value == 4
    assert "answer_weights is not used by the majority vote, only by vote='answer_biased'" in answer.warnings
    weighed = Binder(lm=programs(), n=3, progress=False, cache=False, answer_weights={"3": 5.0},
                     vote="answer_biased").ask(TABLE, "how many cities?")
    assert weighed.value == 3 and not any("answer_weights" in w for w in weighed.warnings)


@pytest.mark.parametrize("weights", [{"3": -1.0}, {"3": float("inf")}, {"3": "high"}])
def test_a_bad_answer_weight_is_refused_before_any_model_call(weights):
    lm = programs()
    with pytest.raises(BinderError, match="answer_weights gives '3' the weight"):
        Binder(lm=lm, n=3, progress=False, cache=False, answer_weights=weights,
               vote="answer_biased").ask(TABLE, "how many cities?")
    assert lm.calls == []
