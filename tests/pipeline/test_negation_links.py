"""The link stage negates a row filter that drops the question's negation when no program kept it
(binder_py/pipeline/negation_links.py)."""

from __future__ import annotations

import pandas as pd
import pytest

from binder_py import Binder
from binder_py.language.negation import negated_terms
from binder_py.lm import ScriptedLM
from binder_py.pipeline.negation_links import restore_negation

QUESTION = "which is the best-selling shirt made in North America and with no chemicals?"
TERMS = negated_terms(QUESTION)
SHIRTS = pd.DataFrame({"shirt": ["organic cotton tee", "acrylic knit shirt", "pure cotton oxford shirt",
                                 "polyester performance tee"],
                       "made in": ["Mexico", "United States", "United States", "China"],
                       "sales": [1200, 2900, 2100, 3400]})
TAIL = '\ndf.sort_values("sales", ascending=False)["shirt"].iloc[0]'
AREA = 'df = df[f_col("Is it in North America?", ["made in"]) & '
DROPPING = AREA + 'f_col("Does it contain chemicals?", ["shirt"])]' + TAIL
KEEPING = AREA + '~f_col("Does it contain chemicals?", ["shirt"])]' + TAIL
WRONG_COLUMN = ('df = df[f_col("Is it in North America?", ["made in"]) & f_col("Does it contain chemicals?", '
                '["made in"])]' + TAIL)


@pytest.mark.parametrize("program, expected", [
    ('df[f_col("Does it contain chemicals?", ["shirt"])]', 'df[~(f_col("Does it contain chemicals?", ["shirt"]))]'),
    ('df[m & f_col("Chemicals?", "shirt")]', 'df[m & ~(f_col("Chemicals?", "shirt"))]'),
    # the mask is negated where its use ends: after a comparison with yes
    ('df[f_col("Does it contain chemicals?", ["shirt"]) == "yes"]',
     'df[~(f_col("Does it contain chemicals?", ["shirt"]) == "yes")]'),
    # two masks that drop it, both negated
    ('df[f_col("Chemicals?", ["a"]) | f_col("Any chemicals?", ["b"])]',
     'df[~(f_col("Chemicals?", ["a"])) | ~(f_col("Any chemicals?", ["b"]))]'),
    ('df[qa_map(df, "Does it contain chemicals?", ["shirt"])]',
     'df[~(qa_map(df, "Does it contain chemicals?", ["shirt"]))]'),
])
def test_a_dropping_mask_is_negated(program, expected) -> None:
    restored = restore_negation(program, TERMS, "chemicals")
    assert restored is not None
    text, notes = restored
    assert text == expected
    assert len(notes) == expected.count("~(") and all("excludes chemicals" in n for n in notes)


@pytest.mark.parametrize("program", [
    'df[~f_col("Does it contain chemicals?", ["shirt"])]',  # keeps it
    'df[f_col("Does it contain no chemicals?", ["shirt"])]',  # keeps it in its own words
    'f_val("Which shirt has chemicals?", df)',  # one value: negated it is no question
    'df[f_col("Is it in North America?", ["made in"])]',  # asks about something else
    'n = f_col("Does it contain chemicals?", ["shirt"]).sum()',  # not a row mask
    'df[f_col("Does it contain chemicals?", ["shirt"]',  # does not parse
])
def test_what_is_left_alone(program) -> None:
    assert restore_negation(program, TERMS, "chemicals") is None


def test_each_negated_alternative_is_restored() -> None:
    """ "no meat or fish": both calls drop it, both masks are negated."""
    terms = negated_terms("which is the most ordered dish with no meat or fish?")
    text, notes = restore_negation('df[f_col("Does it contain meat?", ["dish"]) & f_col("Does it contain fish?", '
                                   '["dish"])]', terms, "meat, fish")
    assert text == ('df[~(f_col("Does it contain meat?", ["dish"])) & ~(f_col("Does it contain fish?", '
                    '["dish"]))]')
    assert len(notes) == 2


def test_a_question_that_negates_nothing_restores_nothing() -> None:
    assert restore_negation('df[f_col("Does it contain chemicals?", ["shirt"])]', frozenset(), "") is None


def _chemicals(request):
    if request.kind != "col":
        return None
    if request.question.startswith("Is it in North America"):
        return {key: "yes" if "united states" in str(key).lower() else "no" for key in request.keys}
    return {key: "yes" if "acrylic" in str(key) or "polyester" in str(key) else "no" for key in request.keys}


def _ask(programs, **options):
    lm = ScriptedLM(lambda request, purpose: list(programs))
    return Binder(lm=lm, neural=_chemicals, task="analyst", n=len(programs), **options).ask(SHIRTS, QUESTION)


def test_the_link_stage_negates_a_program_when_every_program_drops_the_negation() -> None:
    answer = _ask([DROPPING])
    assert answer.value == "pure cotton oxford shirt"
    linked = [c for c in answer.candidates if c.origin == "link"]
    assert len(linked) == 1 and linked[0].voted
    assert '~(f_col("Does it contain chemicals?", ["shirt"]))' in linked[0].program
    assert any("negated as" in note for note in linked[0].links)
    assert "negated as" in answer.explain()
    source = next(c for c in answer.candidates if c.program == DROPPING)
    assert not source.voted  # the negated version votes in its place


def test_nothing_is_negated_when_a_program_kept_the_negation() -> None:
    answer = _ask([DROPPING, KEEPING])
    assert not any(c.origin == "link" for c in answer.candidates)
    assert answer.value == "pure cotton oxford shirt"  # the dropping program is set aside (vote rule 0)


def test_without_the_link_stage_the_dropping_program_answers() -> None:
    assert _ask([DROPPING], link_literals=False).value == "acrylic knit shirt"


def test_every_dropping_program_is_negated_whatever_column_it_asks() -> None:
    """Asked of the countries, "Does it contain chemicals?" is negated too; its source answered nothing
    (no North American country "contains chemicals"), its negated version answers."""
    answer = _ask([WRONG_COLUMN, DROPPING])
    linked = {c.program for c in answer.candidates if c.origin == "link"}
    assert linked == {restore_negation(WRONG_COLUMN, TERMS, "chemicals")[0],
                      restore_negation(DROPPING, TERMS, "chemicals")[0]}
    assert all(c.voted for c in answer.candidates if c.origin == "link")


def test_outside_of_is_a_negation_too() -> None:
    """ "outside of Europe" asked as "Is the office in Europe?" keeps the European rows; negated, the others."""
    staff = pd.DataFrame({"name": ["Gus", "Chen", "Ana"], "office": ["Paris", "Shanghai", "Madrid"],
                          "salary": [76000, 70000, 52000]})
    program = 'df[f_col("Is the office in Europe?", ["office"])].sort_values("salary")["name"].iloc[-1]'

    def europe(request):
        return {key: "yes" if str(key).lower() in ("paris", "madrid") else "no" for key in request.keys}

    lm = ScriptedLM(lambda request, purpose: [program])
    answer = Binder(lm=lm, neural=europe, task="analyst", n=1).ask(
        staff, "Who is the highest paid employee outside of Europe?")
    assert answer.value == "Chen"
    assert restore_negation('df[f_col("Is the office outside of Europe?", ["office"])]',
                            negated_terms("who works outside of europe?"), "europe") is None  # kept in its words
