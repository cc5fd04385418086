"""Rule 0 of the vote, polarity: a program whose neural call asks about what the question negates
without negating it ("with no chemicals" asked as "Does it contain chemicals?", the yes rows kept) is
set aside when a program that keeps the negation answered."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from binder_py import Binder
from binder_py.language.negation import negated_terms, negated_words, negation_polarity
from binder_py.lm import ScriptedLM
from binder_py.runs.report import record_vote
from binder_py.vote import AnswerShape, VoteCandidate as C, polarity_fit, shape_fit, vote

SHIRTS_QUESTION = "which is the best-selling shirt made in North America and with no chemicals?"


@pytest.mark.parametrize("question, expected", [
    (SHIRTS_QUESTION, ["chemicals"]),
    ("which team did not win a game in 2005?", ["win"]),
    ("who didn\u2019t score a goal?", ["score"]),
    ("which players have never been capped?", ["capped"]),
    ("list the films without a sequel", ["sequel"]),
    ("how many non-european teams played?", ["european"]),
    ("players not from canada scored in 2010", ["canada"]),
    ("who is not from canada?", ["canada"]),  # prepositions are skipped
    ("which races were not won in 2008?", ["won"]),  # numbers are no terms
    # a word right after "or"/"nor" is negated too; a new clause after "or" is not
    ("which is the most ordered dish with no meat or fish?", ["meat", "fish"]),
    ("which title is for ipad but not for iphone or ipod?", ["iphone", "ipod"]),
    ("which shirt has no chemicals or is made in canada?", ["chemicals"]),
    ("which team had no wins or 5 draws?", ["wins"]),
    # phrases that negate as "not" does
    ("who is the highest paid employee outside of europe?", ["europe"]),
    ("which city outside the eu has the most stores?", ["eu"]),
    ("how many players play a position other than guard?", ["guard"]),
    ("which dishes, except for desserts, are vegan?", ["desserts"]), ("all teams excluding brazil", ["brazil"]),
    ("were there more with inside or outside cylinders?", []), ("which driver won 11 years apart from each other?", []),
    # no negation: the abbreviation of number, "or not", "not only", a comparison, nothing negated
    ("what is the no. of wins?", []), ("who was No. 5?", []), ("what is the total no of goals?", []),
    ("who wore no 10?", []), ("is it true or not that he won?", []), ("not only fast but cheap?", []),
    ("which players had no more than 3 goals?", []), ("which team won the most games?", []), ("", []),
])
def test_negated_words(question, expected) -> None:
    assert negated_words(question) == expected


def test_stems_match_plurals() -> None:
    assert negated_terms("shirts with no chemicals") == {"chemical"}
    assert negated_terms("not in the races") == negated_terms("not in the race") == {"race"}
    assert negated_terms("no titles") == negated_terms("no title")
    assert negated_terms("no boxes") == negated_terms("no box")


@pytest.mark.parametrize("program, polarity", [
    # asked about the negated word without negating it
    ('df = df[f_col("Does it contain chemicals?", ["shirt"])]\ndf["shirt"].iloc[0]', "drops"),
    ('df[f_col("Does it contain any chemical?", ["shirt"]) == "yes"]', "drops"),
    ('df[f_col("Does it contain chemicals?", ["shirt"]) != "no"]', "drops"),
    ('f_val("Which shirt has chemicals?", df)', "drops"),
    ('df[~f_col("Is it chemical-free?", ["shirt"])]', "drops"),  # negated twice
    ('df[f_col("Chemicals?", ["shirt"]) & f_col("Is it in North America?", ["made in"])]', "drops"),  # a mask
    ('df[f_col(question="Does it contain chemicals?", columns=["shirt"])]', "drops"),  # keywords
    ('df[qa_map(df, "Does it contain chemicals?", ["shirt"])]', "drops"),  # the compatibility form
    ('df[f_col("Does it contain chemicals? Yes or no.", ["shirt"]) == "no"]', "keeps"),  # "yes or no" negates nothing
    ('df[f_col("Does it contain chemicals or not?", ["shirt"])]', "drops"),
    # the negation kept, in the call's words or by the program
    ('df[f_col("Does it contain no chemicals?", ["shirt"])]', "keeps"),
    ('df[f_col("Does it not contain any chemicals?", ["shirt"])]', "keeps"),
    ('df[f_col("Doesn\'t it have chemicals?", ["shirt"])]', "keeps"),
    ('df[f_col("Is it chemical-free?", ["shirt"])]', "keeps"),
    ('df[~f_col("Does it contain chemicals?", ["shirt"])]', "keeps"),
    ('df[~(f_col("Does it contain chemicals?", ["shirt"]))]', "keeps"),
    ('df[f_col("Does it contain chemicals?", ["shirt"]) == "no"]', "keeps"),
    ('df[f_col("Does it contain chemicals?", ["shirt"]) == False]', "keeps"),
    ('df[f_col("Does it contain chemicals?", ["shirt"]) == 0]', "keeps"),
    ('df[f_col("Does it contain chemicals?", ["shirt"]) != "Yes"]', "keeps"),
    ('df[f_col("Does it contain chemicals?", ["shirt"]).eq("no")]', "keeps"),
    ('df[f_col("Does it contain chemicals?", ["shirt"]).ne(True)]', "keeps"),
    ('df[f_col("Does it contain chemicals?", ["shirt"]).isin(["no", "No"])]', "keeps"),
    ('df[~(f_col("Does it contain chemicals?", ["shirt"]) == "yes")]', "keeps"),  # through the comparison
    ('df[~f_col("Does it contain chemicals?", ["shirt"]).eq("yes")]', "keeps"),
    # an answer that goes anywhere but a row mask is not read
    ('not (f_col("Does it contain chemicals?", ["shirt"]) == "yes")', None),
    ('c = f_col("Does it contain chemicals?", ["shirt"])\ndf[c == "no"]', None),
    ('df["chem"] = f_col("Does it contain chemicals?", ["shirt"])\ndf[df["chem"] == "no"]', None),
    ('len(df) - len(df[f_col("Does it contain chemicals?", ["shirt"]) == "yes"])', "drops"),
    ('(f_col("Does it contain chemicals?", ["shirt"]) == "yes").sum() == 0', None),
    ('df.drop(df[f_col("Does it contain chemicals?", ["shirt"]) == "yes"].index)', "drops"),
    ('f_val("Which shirt has no chemicals?", df)', "keeps"),
    # calls about something else, answers that are not yes/no, no call, no program
    ('df[f_col("Is it in North America?", ["made in"])]', None),
    ('df[f_col("Which chemicals does it contain?", ["shirt"]) != "none"]', None),
    ('df[df["price"] > 3]', None),
    ("df[", None),
    ('q = "Does it contain chemicals?"\ndf[f_col(q, ["shirt"])]', None),  # a question held in a variable: not read
])
def test_negation_polarity(program, polarity) -> None:
    assert negation_polarity(program, SHIRTS_QUESTION) == polarity


def test_a_question_without_negation_is_never_judged() -> None:
    assert negation_polarity('df[f_col("Does it contain chemicals?", ["shirt"])]', "which shirt has chemicals?") is None


def test_a_call_that_keeps_the_negation_outweighs_one_that_asks_plainly() -> None:
    question = "which team did not win the cup but won more than 10 games?"
    program = ('df[(f_col("Did the team win the cup?", ["team"]) == "no") & '
               '(f_col("Did the team win more than 10 games?", ["team"]) == "yes")]')
    assert negation_polarity(program, question) == "keeps"


def test_an_answer_that_is_not_yes_no_is_not_judged() -> None:
    question = "which players are not from canada?"
    assert negation_polarity('df[f_col("What country is he from?", ["player"]) != "Canada"]', question) is None
    assert negation_polarity('df[f_col("Is he from Canada?", ["player"])]', question) == "drops"


def test_odd_programs_are_not_judged_and_never_raise() -> None:
    deep = "x = " + "(" * 5000 + "1" + ")" * 5000
    for program in (deep, "\x00", 'df[f_col(3, ["shirt"])]', 'df[f_col(None)]', 'f_col()', "f_col"):
        assert negation_polarity(program, SHIRTS_QUESTION) is None


def test_polarity_fit_sets_aside_only_when_a_program_that_keeps_the_negation_answered() -> None:
    kept = C(value="pure cotton oxford shirt", order=1, negation="keeps")
    dropped = [C(value="acrylic knit shirt", order=0, negation="drops"),
               C(value="acrylic knit shirt", order=2, negation="drops")]
    assert vote([*dropped, kept]).value == "acrylic knit shirt"
    assert polarity_fit([*dropped, kept]) == [kept]
    assert vote(polarity_fit([*dropped, kept])).value == "pure cotton oxford shirt"
    # the only program that keeps it failed, or answered nothing: nothing is set aside
    failed = C(value=None, ok=False, order=1, negation="keeps")
    assert polarity_fit([*dropped, failed]) == [*dropped, failed]
    empty = C(value=None, order=1, negation="keeps")
    assert polarity_fit([*dropped, empty]) == [*dropped, empty]
    # a program that asks the model nothing about it is no witness
    plain = C(value="organic cotton tee", order=1)
    assert polarity_fit([*dropped, plain]) == [*dropped, plain]
    # failed programs stay (the vote decides about them)
    failed_dropping = C(value=None, ok=False, order=3, negation="drops")
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
    assert any("without negating it" in w and "(chemicals)" in w for w in answer.warnings), answer.warnings
    by_program = {c.program: c for c in answer.candidates}
    assert by_program[KEEPING].voted and not by_program[DROPPING].voted
    # the report's re-vote of the recorded candidates agrees with the live vote
    record = {"question": SHIRTS_QUESTION, "dataset": "analyst",
              "candidates": [json.loads(json.dumps({"program": c.program, "value": c.value, "count": c.count,
                                                    "ok": c.ok, "sample_orders": list(c.sample_orders),
                                                    "origin": c.origin}))
                             for c in answer.candidates]}
    assert record_vote(record, 3, {"task": "analyst", "mode": "binder"}).value == "pure cotton oxford shirt"


def test_every_program_dropping_the_negation_still_answers_without_the_link_stage() -> None:
    """With no program that keeps the negation, nothing is set aside; the link stage would run the
    program negated (tests/pipeline/test_negation_links.py), so it is off here."""
    lm = ScriptedLM(lambda request, purpose: [DROPPING])
    answer = Binder(lm=lm, neural=_chemicals, task="analyst", n=1, link_literals=False).ask(SHIRTS, SHIRTS_QUESTION)
    assert answer.value == "acrylic knit shirt"
    assert not any("without negating it" in w for w in answer.warnings)


def test_the_shape_rule_comes_first() -> None:
    """A program of the wrong shape (a bare yes for "which ...?") is no witness for the negation."""
    shape = AnswerShape(expects_no_verdict=True, expects_name=True)
    dropping = [C(value="acrylic knit shirt", order=i, negation="drops") for i in range(3)]
    yes = C(value="yes", order=3, negation="keeps")
    voters = polarity_fit(shape_fit([*dropping, yes], shape))
    assert vote(voters).value == "acrylic knit shirt"


def test_vote_prefix_applies_the_negation_rule_too() -> None:
    from binder_py.vote import vote_prefix

    candidates = [C(value="acrylic knit shirt", order=0, negation="drops"),
                  C(value="acrylic knit shirt", order=1, negation="drops"),
                  C(value="pure cotton oxford shirt", order=2, negation="keeps")]
    assert vote_prefix(candidates, 3).value == "pure cotton oxford shirt"
    assert vote_prefix(candidates, 2).value == "acrylic knit shirt"  # no witness among the first two
