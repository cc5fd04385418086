"""``vote="probability"`` or ``"likelihood"`` with a model that gives no log-probabilities weighed
every program the same, a majority vote, without a word; the answer now says so."""

from __future__ import annotations

import pandas as pd
import pytest

from binder_py.ask import Binder
from binder_py.lm import ScriptedLM
from binder_py.lm.types import Choice

TABLE = pd.DataFrame({"city": ["Oslo", "Rome", "Lima"], "people": [0.7, 2.8, 10.0]})
SAID = "vote needs the programs' log-probabilities, and scripted gave none: every program weighed the same"


@pytest.mark.parametrize("strategy", ["probability", "likelihood"])
def test_a_vote_by_log_probabilities_without_them_says_it_counted_programs(strategy):
    lm = ScriptedLM(lambda request, purpose: ["len(df)", "len(df)", "df.shape[1]"])
    answer = Binder(lm=lm, n=3, progress=False, cache=False, vote=strategy).ask(TABLE, "how many cities?")
    assert answer.value == 3 and any(SAID in w for w in answer.warnings), answer.warnings


def test_with_log_probabilities_or_one_answer_nothing_is_said():
    given = ScriptedLM(lambda request, purpose: [Choice("len(df)", mean_logprob=-3.0), Choice("df.shape[1]",
                                                                                          mean_logprob=-0.1)])
    answer = Binder(lm=given, n=2, progress=False, cache=False, vote="probability").ask(TABLE, "how many cities?")
    assert answer.value == 2 and not any(SAID in w for w in answer.warnings)
    agreed = ScriptedLM(lambda request, purpose: ["len(df)", "len(df)"])
    answer = Binder(lm=agreed, n=2, progress=False, cache=False, vote="probability").ask(TABLE, "how many cities?")
    assert not any(SAID in w for w in answer.warnings)
