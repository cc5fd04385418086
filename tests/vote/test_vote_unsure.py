"""Rule 0 of the vote, unsure calls: a program one of whose f_col calls had the model unsure of every row
(each P(yes) within 0.5 ± 0.2) is set aside when a program without such a call answered."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from binder_py import Binder
from binder_py.lm import ScriptedLM
from binder_py.neural.yes_scores import ScoredYesNo, decide_call, p_yes_range, unsure_of_every_row
from binder_py.runs.report import record_vote
from binder_py.vote import VoteCandidate as C, polarity_fit, sure_fit, vote, vote_prefix


def test_p_yes_range() -> None:
    assert p_yes_range({"a": ScoredYesNo(0.4), "b": ScoredYesNo(0.62), "c": "unknown"}) == (0.4, 0.62)
    assert p_yes_range({"a": ScoredYesNo(0.4)}) is None  # one row: no range
    assert p_yes_range({"a": "yes", "b": "no"}) is None  # not scored (an oracle's answers)


@pytest.mark.parametrize("p_range, unsure", [
    ((0.32, 0.68), True), ((0.45, 0.55), True),
    ((0.25, 0.6), False), ((0.4, 0.75), False),  # one row the model was sure of
    ((0.7, 0.7), False), ((0.3, 0.6), False),  # the bounds are not inside
    (None, False),
])
def test_unsure_of_every_row(p_range, unsure) -> None:
    assert unsure_of_every_row(p_range) is unsure


def test_the_threshold_note_says_the_range() -> None:
    note = decide_call({"a": ScoredYesNo(0.41), "b": ScoredYesNo(0.58)})[1]
    assert "(0.41 to 0.58)" in note


def test_sure_fit() -> None:
    unsure = C(value="acrylic knit shirt", order=0, count=3, unsure=True)
    sure = C(value="pure cotton oxford shirt", order=1)
    assert vote(sure_fit([unsure, sure])).value == "pure cotton oxford shirt"
    # kept when nothing else answered
    assert sure_fit([unsure, C(value=None, order=1)]) == [unsure, C(value=None, order=1)]
    assert sure_fit([unsure, C(value="x", ok=False, order=1)]) == [unsure, C(value="x", ok=False, order=1)]
    # vote_prefix applies it; an unsure program is no witness for the negation rule either
    assert vote_prefix([unsure, sure], 2).value == "pure cotton oxford shirt"
    keeps_but_unsure = C(value="acrylic knit shirt", order=0, negation="keeps", unsure=True)
    drops = C(value="pure cotton oxford shirt", order=1, negation="drops")
    assert vote(polarity_fit(sure_fit([keeps_but_unsure, drops]))).value == "pure cotton oxford shirt"


SHIRTS = pd.DataFrame({"shirt": ["organic cotton tee", "acrylic knit shirt", "pure cotton oxford shirt"],
                       "made in": ["Mexico", "United States", "Canada"], "sales": [1200, 2900, 2100]})
QUESTION = "which is the best-selling shirt made in North America and made of natural fibers?"
TAIL = '\ndf.sort_values("sales", ascending=False)["shirt"].iloc[0]'
ON_COUNTRIES = 'df = df[f_col("Is it made of natural fibers?", ["made in"])]' + TAIL
ON_SHIRTS = 'df = df[f_col("Is it made of natural fibers?", ["shirt"])]' + TAIL


def _scored(request):
    """P(yes) as a model would give them: sure about shirts, unsure about countries."""
    if request.kind != "col":
        return None
    if request.columns == ["made in"]:
        return {key: ScoredYesNo({"mexico": 0.38, "united states": 0.62, "canada": 0.55}[str(key).lower()])
                for key in request.keys}
    return {key: ScoredYesNo(0.1 if "acrylic" in str(key) else 0.9) for key in request.keys}


def _ask(programs):
    lm = ScriptedLM(lambda request, purpose: list(programs))
    return Binder(lm=lm, neural=_scored, task="analyst", n=len(programs), link_literals=False).ask(SHIRTS, QUESTION)


def test_a_program_whose_call_was_unsure_of_every_row_is_set_aside() -> None:
    answer = _ask([ON_COUNTRIES, ON_COUNTRIES, ON_SHIRTS])
    assert answer.value == "pure cotton oxford shirt"
    by_program = {c.program: c for c in answer.candidates}
    assert by_program[ON_COUNTRIES].value == "acrylic knit shirt" and not by_program[ON_COUNTRIES].voted
    assert by_program[ON_COUNTRIES].neural_calls[0].p_yes_range == (0.38, 0.62)
    assert any("unsure of every row" in w for w in answer.warnings), answer.warnings
    # the report's re-vote of the recorded candidates agrees with the live vote
    record = {"question": QUESTION, "dataset": "analyst",
              "candidates": [json.loads(json.dumps(c.to_json(), default=str)) for c in answer.candidates]}
    assert record_vote(record, 3, {"task": "analyst", "mode": "binder"}).value == "pure cotton oxford shirt"
    # a line written before the ranges were recorded votes as it did then
    for candidate in record["candidates"]:
        for call in candidate["run"]["calls"]:
            call.pop("p_yes_range")
    assert record_vote(record, 3, {"task": "analyst", "mode": "binder"}).value == "acrylic knit shirt"


def test_unsure_programs_still_answer_alone() -> None:
    answer = _ask([ON_COUNTRIES])
    assert answer.value == "acrylic knit shirt"
    assert not any("unsure of every row" in w for w in answer.warnings)
