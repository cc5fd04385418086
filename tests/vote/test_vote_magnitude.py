"""A question that asks by how much two things differ is answered by a magnitude: a negative number
votes as its absolute value, whichever way round a program subtracted."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from binder_py import Binder
from binder_py.lm import ScriptedLM
from binder_py.normalize import asks_for_a_magnitude
from binder_py.vote import AnswerShape


@pytest.mark.parametrize("question, expected", [
    ("how many more gold medals must qatar win before they can earn 12 gold medals?", True),
    ("How much older is Ann than Bob?", True),
    ("what is the difference in gauge between works numbers 541 and 542?", True),
    ("what was the point difference between the two teams?", True),
    ("by how many votes did she win?", True),
    ("how far apart are the two stations?", True),
    ("what was the team's goal difference?", False),  # a cell, which may be negative
    ("how many medals did qatar win?", False),
    ("what was the lowest temperature?", False),
])
def test_questions_that_ask_by_how_much(question: str, expected: bool) -> None:
    assert asks_for_a_magnitude(question) is expected


@pytest.mark.parametrize("value, read", [
    (-11, 11), (-2.5, 2.5), (np.int64(-3), np.int64(3)), ([-4], [4]), ((-4,), (4,)), (7, 7), (0, 0),
    ([-1, -2], [-1, -2]),  # several values: as they are
    ("-5", "-5"), (True, True), (None, None), (float("nan"), None),
])
def test_a_negative_number_reads_as_its_magnitude(value, read) -> None:
    got = AnswerShape(magnitude=True).read(value)
    if read is None and isinstance(value, float):
        assert got != got  # NaN stays NaN
    else:
        assert got == read and type(got) is type(read)
    assert AnswerShape().read(value) is value  # without the flag: as it is


def test_both_orders_of_a_subtraction_vote_together() -> None:
    medals = pd.DataFrame({"Nation": ["qatar", "oman"], "Gold": [1, 3]})
    programs = ['df[df["Nation"] == "qatar"]["Gold"].sum() - 12', 'df[df["Nation"] == "qatar"]["Gold"].sum() - 12',
                '12 - df[df["Nation"] == "qatar"]["Gold"].sum()', '3']
    answer = Binder(lm=ScriptedLM(lambda request, purpose: programs), task="wikitq", mode="python", n=4,
                    repair_attempts=0, progress=False).ask(
        medals, "how many more gold medals must qatar win before they can earn 12 gold medals?")
    assert answer.value == 11 and answer.distribution[0].count == 3
