"""Rule 0 of the vote, polarity: a program whose neural call asks about what the question negates
without negating it ("with no chemicals" asked as "Does it contain chemicals?", the yes rows kept) is
set aside when a program that keeps the negation answered."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from binder_py import Binder
from binder_py.language.negation import drops_negation, negated_terms
from binder_py.lm import ScriptedLM
from binder_py.runs.report import record_vote
from binder_py.vote import VoteCandidate as C, polarity_fit, vote

SHIRTS_QUESTION = "which is the best-selling shirt made in North America and with no chemicals?"


@pytest.mark.parametrize("question, expected", [
    (SHIRTS_QUESTION, {"chemical"}),
    ("which team did not win a game in 2005?", {"win", "game"}),
    ("who didn\u2019t score a goal?", {"score", "goal"}),
    ("which players have never been capped?", {"capp"}),
    ("list the films without a sequel", {"sequel"}),
    ("how many non-european teams played?", {"european", "team"}),
    # no negation: the abbreviation of number, "or not", a comparison, nothing negated
    ("what is the no. of wins?", set()), ("who was No. 5?", set()), ("is it true or not that he won?", set()),
    ("which players had no more than 3 goals?", set()), ("which team won the most games?", set()), ("", set()),
])
def test_negated_terms(question, expected) -> None:
    assert negated_terms(question) == frozenset(expected)


@pytest.mark.parametrize("program, dropped", [
    # asked about the negated word without negating it
    ('df = df[f_col("Does it contain chemicals?", ["shirt"])]\ndf["shirt"].iloc[0]', True),
    ('df[f_col("Does it contain any chemical?", ["shirt"]) == "yes"]', True),
    ('df[f_col("Does it contain chemicals?", ["shirt"]) != "no"]', True),
    ('f_val("Which shirt has chemicals?", df)', True),
    ('df[~f_col("Is it chemical-free?", ["shirt"])]', True),  # negated twice
    # the negation kept, in the call's words or by the program
    ('df[f_col("Does it contain no chemicals?", ["shirt"])]', False),
    ('df[f_col("Does it not contain any chemicals?", ["shirt"])]', False),
    ('df[f_col("Doesn\'t it have chemicals?", ["shirt"])]', False),
    ('df[f_col("Is it chemical-free?", ["shirt"])]', False),
    ('df[~f_col("Does it contain chemicals?", ["shirt"])]', False),
    ('df[~(f_col("Does it contain chemicals?", ["shirt"]))]', False),
    ('df[f_col("Does it contain chemicals?", ["shirt"]) == "no"]', False),
    ('df[f_col("Does it contain chemicals?", ["shirt"]) == False]', False),
    ('df[f_col("Does it contain chemicals?", ["shirt"]) != "Yes"]', False),
    ('df[f_col("Does it contain chemicals?", ["shirt"]).eq("no")]', False),
    ('df[f_col("Does it contain chemicals?", ["shirt"]).ne(True)]', False),
    ('f_val("Which shirt has no chemicals?", df)', False),
    # calls about something else, no call, no program
    ('df[f_col("Is it in North America?", ["made in"])]', False),
    ('df[df["price"] > 3]', False),
    ("df[", False),
    ('q = "Does it contain chemicals?"\ndf[f_col(q, ["shirt"])]', False),  # a question held in a variable: not read
])
def test_drops_negation(program, dropped) -> None:
    assert drops_negation(program, SHIRTS_QUESTION) is dropped


def test_a_question_without_negation_never_drops_it() -> None:
    assert not drops_negation('df[f_col("Does it contain chemicals?", ["shirt"])]', "which shirt has chemicals?")


def test_polarity_fit_sets_aside_only_when_a_program_that_keeps_the_negation_answered() -> None:
    kept = C(value="pure cotton oxford shirt", order=1)
    dropped = [C(value="acrylic knit shirt", order=0, drops_negation=True),
               C(value="acrylic knit shirt", order=2, drops_negation=True)]
    assert vote([*dropped, kept]).value == "acrylic knit shirt"
    assert polarity_fit([*dropped, kept]) == [kept]
    assert vote(polarity_fit([*dropped, kept])).value == "pure cotton oxford shirt"
    # the only program that keeps it failed, or answered nothing: nothing is set aside
    failed = C(value=None, ok=False, order=1)
    assert polarity_fit([*dropped, failed]) == [*dropped, failed]
    empty = C(value=None, order=1)
    assert polarity_fit([*dropped, empty]) == [*dropped, empty]
    # failed programs stay (the vote decides about them)
    failed_dropping = C(value=None, ok=False, order=3, drops_negation=True)
    assert polarity_fit([kept, failed_dropping]) == [kept, failed_dropping]


SHIRTS = pd.DataFrame({"shirt": ["organic cotton tee", "acrylic knit shirt", "pure cotton oxford shirt"],
                       "made in": ["Mexico", "United States", "United States"], "sales": [1200, 2900, 2100]})
DROPPING = ('df = df[f_col("Does it contain chemicals?", ["shirt"])]\n'
            'df.sort_values("sales", ascending=False)["shirt"].iloc[0]')
KEEPING = ('df = df[~f_col("Does it contain chemicals?", ["shirt"])]\n'
           'df.sort_values("sales", ascending=False)["shirt"].iloc[0]')


def _chemicals(request):
    if request.kind == "col":
        return {key: "yes" if "acrylic" in str(key) else "no" for key in request.keys}
    return None


def test_the_pipeline_and_the_report_set_aside_a_program_that_drops_the_negation() -> None:
    lm = ScriptedLM(lambda request, purpose: [DROPPING, DROPPING, KEEPING])
    answer = Binder(lm=lm, neural=_chemicals, task="analyst", n=3).ask(SHIRTS, SHIRTS_QUESTION)
    assert answer.value == "pure cotton oxford shirt"
    assert any("without negating it" in w and "chemical" in w for w in answer.warnings), answer.warnings
    by_program = {c.program: c for c in answer.candidates}
    assert by_program[KEEPING].voted and not by_program[DROPPING].voted
    # the report's re-vote of the recorded candidates agrees with the live vote
    record = {"question": SHIRTS_QUESTION, "dataset": "analyst",
              "candidates": [json.loads(json.dumps({"program": c.program, "value": c.value, "count": c.count,
                                                    "ok": c.ok, "sample_orders": list(c.sample_orders),
                                                    "origin": c.origin}))
                             for c in answer.candidates]}
    assert record_vote(record, 3, {"task": "analyst", "mode": "binder"}).value == "pure cotton oxford shirt"


def test_every_program_dropping_the_negation_still_answers() -> None:
    lm = ScriptedLM(lambda request, purpose: [DROPPING])
    answer = Binder(lm=lm, neural=_chemicals, task="analyst", n=1).ask(SHIRTS, SHIRTS_QUESTION)
    assert answer.value == "acrylic knit shirt"
    assert not any("without negating it" in w for w in answer.warnings)
