"""Rule 0 of the vote: a counting question's answer is one number, so programs that answer it
with several values (a column of 1s) or with text are set aside when another answered one number."""

from __future__ import annotations

import pandas as pd
import pytest

from binder_py import Binder
from binder_py.lm import ScriptedLM
from binder_py.normalize import is_count_question, is_one_number
from binder_py.tasks import task_profile
from binder_py.vote import VoteCandidate as C, shape_fit, vote, vote_prefix


@pytest.mark.parametrize("value, expected", [
    (3, True), (3.0, True), ("3", True), ("1,200", True), ("-2.5", True), ([6], True), (pd.Series([2]), True),
    (pd.DataFrame({"a": [5]}), True),
    ([1, 1, 1], False), (pd.Series([1, 1]), False), ("w", False), ("2 times", False), (None, False), ("", False),
    (True, False), (float("nan"), False), ({"a": 1}, False),
])
def test_one_number(value, expected) -> None:
    assert is_one_number(value) is expected


@pytest.mark.parametrize("question, expected", [
    ("how many images are listed?", True), ("How many times did Brazil score?", True), ('"How many" ...', True),
    ("what is how many", False), ("which is the most?", False), ("how much did it cost?", False),
])
def test_count_questions(question, expected) -> None:
    assert is_count_question(question) is expected


def test_statements_never_expect_a_number() -> None:
    assert task_profile("wikitq").expects_number("how many images are listed?")
    assert not task_profile("tabfact").expects_number("how many goals were scored is 3")


def test_a_column_of_ones_no_longer_outvotes_a_count() -> None:
    # nt-3374 in an embedded-model run: one program with a neural call returned a list of seven 1s
    # (weight 10 under program_biased) against three identical programs answering 6
    candidates = [C(value=6, count=3, order=0, sample_orders=(0, 2, 3)), C(value=7, order=1),
                  C(value=[1] * 7, order=4, has_neural_calls=True)]
    assert vote(candidates, strategy="program_biased").value == 1
    kept = shape_fit(candidates, expects_number=True)
    assert [c.value for c in kept] == [6, 7]
    assert vote(kept, strategy="program_biased").value == 6
    assert vote_prefix(candidates, 5, expects_number=True, strategy="program_biased").value == 6


def test_nothing_is_set_aside_without_a_one_number_answer_or_for_other_questions() -> None:
    lists = [C(value=["a", "b"], order=0), C(value="w", order=1), C(value=None, ok=False, order=2)]
    assert shape_fit(lists, expects_number=True) == lists
    mixed = [C(value=["a", "b"], order=0), C(value=3, order=1)]
    assert shape_fit(mixed, expects_number=False) == mixed
    failed_kept = [C(value=None, ok=False, order=0), C(value=3, order=1), C(value="x", order=2)]
    assert shape_fit(failed_kept, expects_number=True) == failed_kept[:2]


def test_the_pipeline_sets_them_aside_and_says_so() -> None:
    table = pd.DataFrame({"image": ["a", "b", "c", "d"], "year": [2001, 2002, 2003, 2004]})
    ones = 'df["image"].apply(lambda x: 1).tolist()'
    programs = [ones, ones, ones, "len(df)"]
    lm = ScriptedLM(lambda request, purpose: programs)
    answer = Binder(lm=lm, task="wikitq", n=4, mode="python").ask(table, "how many images are listed?")
    assert answer.value == 4
    assert any("did not vote" in w for w in answer.warnings)
    set_aside = [c for c in answer.candidates if c.program == ones]
    assert set_aside and not any(c.voted for c in set_aside)
    # the same question without a one-number answer among the programs keeps its answer
    lm = ScriptedLM(lambda request, purpose: [ones])
    assert Binder(lm=lm, task="wikitq", n=1, mode="python").ask(table, "how many images are listed?").value == 1
