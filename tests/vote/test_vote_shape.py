"""Rule 0 of the vote: a counting question's answer is one number, so programs that answer it
with several values (a column of 1s) or with text are set aside when another answered one number."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from binder_py import Binder
from binder_py.lm import ScriptedLM
from binder_py.normalize import is_count_question, is_one_number, is_verdict
from binder_py.tasks import task_profile
from binder_py.vote import AnswerShape, VoteCandidate as C, shape_fit, vote, vote_prefix


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
    ("which single is the most in terms of how many times it charted?", False), ("which is the most?", False),
    ("how much did it cost?", False), ("in how many years was the value over 500?", True),
    ("jimmy johnson won how many consecutive espy awards?", True), ("did they win how many games, 3?", False),
    ("number of teams he has played for.", True), ("what is the total number of laps led?", True),
    ("what's the number of games won?", True), ("total number of gold medals?", True),
    ("what is the number one song?", False), ("which number of the teams is highest?", False),
])
def test_count_questions(question, expected) -> None:
    assert is_count_question(question) is expected


def test_statements_never_expect_a_number() -> None:
    assert task_profile("wikitq").answer_shape("how many images are listed?").expects_number
    assert not task_profile("tabfact").answer_shape("how many goals were scored is 3").expects_number


def test_a_column_of_ones_no_longer_outvotes_a_count() -> None:
    # nt-3374 in an embedded-model run: one program with a neural call returned a list of seven 1s
    # (weight 10 under program_biased) against three identical programs answering 6
    candidates = [C(value=6, count=3, order=0, sample_orders=(0, 2, 3)), C(value=7, order=1),
                  C(value=[1] * 7, order=4, has_neural_calls=True)]
    assert vote(candidates, strategy="program_biased").value == 1
    kept = shape_fit(candidates, AnswerShape(expects_number=True))
    assert [c.value for c in kept] == [6, 7]
    assert vote(kept, strategy="program_biased").value == 6
    assert vote_prefix(candidates, 5, shape=AnswerShape(expects_number=True), strategy="program_biased").value == 6


def test_nothing_is_set_aside_without_a_one_number_answer_or_for_other_questions() -> None:
    lists = [C(value=["a", "b"], order=0), C(value="w", order=1), C(value=None, ok=False, order=2)]
    assert shape_fit(lists, AnswerShape(expects_number=True)) == lists
    mixed = [C(value=["a", "b"], order=0), C(value=3, order=1)]
    assert shape_fit(mixed) == mixed
    failed_kept = [C(value=None, ok=False, order=0), C(value=3, order=1), C(value="x", order=2)]
    assert shape_fit(failed_kept, AnswerShape(expects_number=True)) == failed_kept[:2]


def test_a_count_of_nothing_does_not_outvote_a_count_of_something() -> None:
    """A program whose filter matched no row ("Germany" where the table writes "FRG") counts 0; two
    such programs outvoted one that counted (nt-6736, nt-8739 in an embedded-model run)."""
    shape = AnswerShape(expects_number=True)
    candidates = [C(value=0, count=2, order=0, sample_orders=(0, 1)), C(value=np.int64(3), order=2),
                  C(value="0", order=3), C(value=None, ok=False, order=4)]
    kept = shape_fit(candidates, shape)
    assert [c.value for c in kept] == [np.int64(3), None]
    assert vote(kept).value == 3
    # all counts 0, or 0 beside a text that is no number: the zeros keep their vote
    zeros = [C(value=0, order=0), C(value=0.0, order=1)]
    assert shape_fit(zeros, shape) == zeros
    assert [c.value for c in shape_fit([C(value=0, order=0), C(value="many", order=1)], shape)] == [0]
    # a negative number is no count of something; other questions keep their zeros
    assert shape_fit([C(value=0, order=0), C(value=-2, order=1)], shape) == [C(value=0, order=0), C(value=-2, order=1)]
    assert shape_fit(candidates) == candidates
    assert "a count of 0" in shape.why_set_aside()


def test_the_pipeline_sets_aside_a_count_of_nothing_and_says_so() -> None:
    table = pd.DataFrame({"team": ["FRG", "Italy", "FRG"], "year": [1974, 1982, 1990]})
    nothing = 'len(df[df["team"] == "Germany"])'
    programs = [nothing, nothing, 'len(df[df["year"] > 1980])']
    lm = ScriptedLM(lambda request, purpose: programs)
    answer = Binder(lm=lm, task="wikitq", n=3, mode="python",
                    link_literals=False).ask(table, "how many titles did germany win?")
    assert answer.value == 2
    assert any("a count of 0" in w for w in answer.warnings)


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


@pytest.mark.parametrize("program, expected", [
    ('f_col("Who was the first judge?", df[["Judge"]])', True),
    ('x = 1\nf_col("Is it big?", ["image"]).tolist()', True),
    ('f_col("Is it big?", ["image"]).to_list()', True),
    ('f_val("Who was the first judge?", df[["Judge"]])', False),
    ('f("Who was the first judge?", df[["Judge"]])', False),  # a bare f there is an f_val
    ('df[f_col("Is it big?", ["image"])]', False),
    ('f_col("Is it big?", ["image"]).sum()', False),
    ('df["x"] = f_col("Is it big?", ["image"])', False),
    ("this is not python (", False),
    ("", False),
])
def test_programs_whose_answer_is_an_f_col_column(program, expected) -> None:
    from binder_py.language.program import answers_per_row

    assert answers_per_row(program) is expected


def test_a_column_of_per_row_answers_does_not_outvote_an_answer_about_the_table() -> None:
    # nt-3271 in an embedded-model run: three programs returned f_col("Who was the first judge from
    # florida ...?", ...) itself (one answer per row), against one f_val that answered the question
    judges = ["nathan p. bryan", "curtis longino waller", "louis willard"]
    candidates = [C(value=judges, order=0, has_neural_calls=True, per_row=True),
                  C(value=judges + ["yes"], order=1, has_neural_calls=True, per_row=True),
                  C(value="nathan p. bryan", order=4, has_neural_calls=True)]
    assert vote(candidates, strategy="program_biased").value != "nathan p. bryan"
    assert vote(shape_fit(candidates), strategy="program_biased").value == "nathan p. bryan"
    only_columns = candidates[:2] + [C(value=None, order=5)]
    assert shape_fit(only_columns) == only_columns  # nothing else answered: kept


def test_the_report_recognises_them_from_the_recorded_program() -> None:
    from binder_py.runs.report import vote_candidates

    record = {"candidates": [
        {"program": 'f_col("Who?", df[["Judge"]])', "value": ["a", "b"], "count": 1, "ok": True,
         "sample_orders": [0], "has_neural_calls": True},
        {"program": 'f_val("Who?", df[["Judge"]])', "value": "a", "count": 1, "ok": True, "sample_orders": [1],
         "has_neural_calls": True}]}
    assert [c.per_row for c in vote_candidates(record)] == [True, False]


JUDGES = pd.DataFrame({"judge": ["Ann Lee", "Bo Chan", "Cy Diaz"], "state": ["fl", "fl", "ga"]})
JUDGE_QUESTION = "Who was the first judge from Florida?"
COLUMN = f'f_col("{JUDGE_QUESTION}", ["judge"])'


@pytest.fixture
def judges_oracle(tmp_path) -> str:
    import json

    oracle = tmp_path / "oracle.json"
    oracle.write_text(json.dumps({
        "f_col": {JUDGE_QUESTION: {"ann lee": "ann lee", "bo chan": "bo chan", "cy diaz": "no"}},
        "f_val": {JUDGE_QUESTION: "Ann Lee"}}))
    return f"oracle:{oracle}"


def test_the_pipeline_sets_aside_a_program_that_answers_with_an_f_col_column(judges_oracle) -> None:
    value = f'f_val("{JUDGE_QUESTION}", df[["judge"]])'
    lm = ScriptedLM(lambda request, purpose: [COLUMN, COLUMN, value])
    answer = Binder(lm=lm, neural=judges_oracle, task="wikitq", n=3, rescope=False).ask(JUDGES, JUDGE_QUESTION)
    assert answer.value == "Ann Lee"
    assert any("f_col column itself" in w for w in answer.warnings)


@pytest.mark.parametrize("program, expected", [
    ('f_col("Who?", df[["Judge"]])', 'f_val("Who?", df[["Judge"]])'),
    ('x = 1\nf_col("Is it big é?",\n  ["image"]).tolist()', 'x = 1\nf_val("Is it big é?",\n  ["image"])'),
    ('df[f_col("Is it big?", ["image"])]', None),
    ('f_val("Who?", df[["Judge"]])', None),
])
def test_as_value_question(program, expected) -> None:
    from binder_py.language.program import as_value_question

    assert as_value_question(program) == expected


def test_the_rescope_stage_asks_a_column_answer_once(judges_oracle) -> None:
    lm = ScriptedLM(lambda request, purpose: [COLUMN, COLUMN])
    answer = Binder(lm=lm, neural=judges_oracle, task="wikitq", n=2).ask(JUDGES, JUDGE_QUESTION)
    assert answer.value == "Ann Lee"
    sibling = [c for c in answer.candidates if c.origin == "rescope"]
    assert [c.program for c in sibling] == ['f_val("Who was the first judge from Florida?", ["judge"])']
    assert sibling[0].voted and sibling[0].repaired_from == 0
    from binder_py.answer import ProgramCounts

    counts = ProgramCounts.of(answer.candidates)
    assert (counts.sampled, counts.repairs, counts.rescopes) == (2, 0, 1)
    assert "+ 1 asking an f_col question once" in counts.sentence()
    off = Binder(lm=ScriptedLM(lambda request, purpose: [COLUMN]), neural=judges_oracle, task="wikitq", n=1,
                 rescope=False).ask(JUDGES, JUDGE_QUESTION)
    assert not [c for c in off.candidates if c.origin == "rescope"] and off.value != "Ann Lee"


@pytest.mark.parametrize("question, expected", [
    ("which year had more venues, 2007 or 2012?", True),
    ("who had the most wins in the 1950's: kansas or kansas state?", True),
    ("were there more with inside or outside cylinders?", True),  # "were" starts it, yet it asks X or Y
    ("who placed the highest, Italy or Germany?", True),
    ("how many players scored 10 or more points?", False),  # a count, and "or more" is no choice
    ("which players scored 10 or more points?", False),
    ("is sweden better or not?", False),
    ("did they win?", False),
    ("which is the best-selling shirt?", False),
])
def test_choice_questions(question, expected) -> None:
    from binder_py.normalize import is_choice_question

    assert is_choice_question(question) is expected


@pytest.mark.parametrize("value, expected", [
    ("kansas", True), ("Kansas State", True), ("KANSAS", True), (2007, True), ("2007", True), (2007.0, True),
    ("kansas 47", False), ("34", False), ("ans", False), (["kansas", "kansas state"], False), (None, False),
    ("", False),
])
def test_an_answer_names_an_option_word_for_word(value, expected) -> None:
    from binder_py.normalize import names_option

    assert names_option("Who had the most wins in 2007: Kansas or Kansas State?", value) is expected


def test_a_choice_questions_answers_that_name_no_option_are_set_aside() -> None:
    # nt-12346 in an embedded-model run: "kansas 47" and "34" against one program that named an option
    question = "who had the most wins in the 1950's: kansas or kansas state?"
    profile = task_profile("wikitq")
    choice = profile.answer_shape(question).choice_question
    assert choice == question
    candidates = [C(value="kansas 47", order=0), C(value="34", count=2, order=1, sample_orders=(1, 2)),
                  C(value="kansas", order=3)]
    assert vote(candidates).value == "34"
    assert [c.value for c in shape_fit(candidates, AnswerShape(choice_question=choice))] == ["kansas"]
    assert vote_prefix(candidates, 5, shape=AnswerShape(choice_question=choice)).value == "kansas"
    # no program named an option: nothing is set aside
    assert shape_fit(candidates[:2], AnswerShape(choice_question=choice)) == candidates[:2]
    # statements and yes/no questions are no choice questions
    assert task_profile("tabfact").answer_shape("kansas or kansas state won 3 games").choice_question is None
    assert profile.answer_shape("did kansas win?").choice_question is None


def _ask_teams(programs: list[str], task: str, question: str):
    """``question`` about a three-team table, answered in python mode by the scripted ``programs``."""
    table = pd.DataFrame({"team": ["kansas", "kansas state", "iowa"], "wins": [47, 34, 12]})
    lm = ScriptedLM(lambda request, purpose: programs)
    return Binder(lm=lm, task=task, n=len(programs), mode="python").ask(table, question)


def test_the_pipeline_sets_aside_answers_that_name_no_option_and_says_so() -> None:
    best = 'df.sort_values("wins", ascending=False)["team"].iloc[0]'
    wins = 'df["wins"].max()'
    answer = _ask_teams([wins, wins, best], "wikitq", "who won most, kansas or kansas state?")
    assert answer.value == "kansas"
    assert any("none of the options the question names" in w for w in answer.warnings)


@pytest.mark.parametrize("value, expected", [
    (True, True), (False, True), ("yes", True), ("False", True), (1, True), (0, True), ([True], True),
    (pd.Series([False]), True), (10, False), ("maybe", False), ([True, False], False), (None, False), ("", False),
])
def test_verdicts(value, expected) -> None:
    assert is_verdict(value) is expected


def test_a_statements_answers_that_are_no_verdict_are_set_aside() -> None:
    # a TabFact program that returned a count: it won the vote and was reported as False
    assert task_profile("tabfact").answer_shape("x").expects_verdict and not task_profile("wikitq").answer_shape("x").expects_verdict
    candidates = [C(value=10, count=2, order=0, sample_orders=(0, 1)), C(value=True, order=2)]
    assert [c.value for c in shape_fit(candidates, AnswerShape(expects_verdict=True))] == [True]
    assert vote_prefix(candidates, 3, shape=AnswerShape(expects_verdict=True), yes_no=True).value == "yes"
    # no program gave a verdict: nothing is set aside
    assert shape_fit(candidates[:1], AnswerShape(expects_verdict=True)) == candidates[:1]


def test_the_pipeline_sets_aside_a_statements_count_and_says_so() -> None:
    count = 'len(df)'
    check = 'df[df["team"] == "kansas"]["wins"].iloc[0] == 47'
    answer = _ask_teams([count, count, check], "tabfact", "kansas won 47 games")
    assert answer.value is True
    assert any("not one verdict" in w for w in answer.warnings)


@pytest.mark.parametrize("question, expected", [
    ("which is the best-selling shirt made in north america?", True),
    ("Who scored the most goals?", True),
    ("against which team did man united play at emirates stadium?", True),  # a preposition first
    ("to whom was the award given?", True),
    ("in which year was it built?", True),
    ("in what year was it built?", False),
    ("within which?", True),
    ("whichever", False),
    ("whose team won?", True),
    ("which year had more venues, 2007 or 2012?", False),   # a choice question: its options decide
    ("which is it, true or false?", False),
    ("where there at least 10 wins?", False),               # WikiTQ's "where" for "were": a yes/no answer
    ("how many goals?", False),
    ("did kansas win?", False),
])
def test_name_questions(question, expected) -> None:
    from binder_py.normalize import is_name_question

    assert is_name_question(question) is expected


def test_a_name_questions_bare_yes_no_answers_are_set_aside() -> None:
    """The quick start's 'which is the best-selling shirt …?' had `False` among its voted answers
    (33%, a program that returned a mask's `.any()`): a question that asks which or who is never
    answered by a bare yes/no, so such answers are set aside when another program named something."""
    question = "which is the best-selling shirt made in north america and with no chemicals?"
    shape = task_profile("analyst").answer_shape(question)
    assert shape.expects_name
    candidates = [C(False, order=0), C(np.bool_(True), order=1), C("yes", order=2), C([True, False], order=3),
                  C("pure cotton oxford shirt", order=4)]
    assert [c.value for c in shape_fit(candidates, shape)] == ["pure cotton oxford shirt"]
    assert vote_prefix(candidates, 5, shape=shape).value == "pure cotton oxford shirt"
    assert shape_fit(candidates[:3], shape) == []  # nothing else answered: still none votes
    assert vote_prefix(candidates[:3], 3, shape=shape).value is None
    assert "where the question asks for a name" in shape.why_set_aside()
    # "no." in a name stays; a number does not name a shirt (test_a_name_is_not_a_number below)
    assert shape.fits(C("no. 5", order=0)) and not shape.fits(C(1, order=0))
    assert not task_profile("tabfact").answer_shape("which team won is arsenal").expects_name


def test_a_name_questions_answer_that_the_question_itself_names_is_set_aside() -> None:
    """"Against which team did Man United play at Emirates Stadium?": three programs returned the away
    side, Man United, two the home side. The question names Man United, so that is not its answer
    (in WikiTQ dev, 1 of 660 which/who questions has a gold answer the question names)."""
    question = "Against which team did Man United play at Emirates Stadium?"
    shape = task_profile("analyst").answer_shape(question)
    assert shape.expects_name and shape.echo_question == question
    candidates = [C("Man United", order=0), C(["Man United"], order=1), C("man united ", order=2),
                  C("Arsenal", order=3), C(["Arsenal"], order=4), C("emirates stadium", order=5)]
    assert [c.order for c in shape_fit(candidates, shape)] == [3, 4]
    assert vote_prefix(candidates, 6, shape=shape).value == "Arsenal"
    assert shape_fit(candidates[:3], shape) == candidates[:3]  # nothing else answered: kept, and it wins
    assert "the question itself names" in shape.why_set_aside()
    # a word the question names is named too; a longer name holding it, and several values, are other answers
    assert not shape.fits(C("United", order=0))
    assert shape.fits(C("Man United Women", order=0))
    assert task_profile("analyst").answer_shape("Against which teams did Man United play at Emirates Stadium?").fits(
        C(["Man United", "Arsenal"], order=0))
    # other questions keep such answers: a choice question's answer is one of its options
    assert task_profile("wikitq").answer_shape("which team won, arsenal or man united?").echo_question is None
    # nor is a number the question names ("which year after 1990 …?" may be answered 1990 by no program,
    # but "what year saw the highest growth between 1990 and 2004?" is 1990 in WikiTQ)
    year = task_profile("wikitq").answer_shape("which year between 1990 and 2004 saw the highest growth?")
    assert year.echo_question is not None and year.fits(C(1990, order=0)) and year.fits(C("1990", order=0))


@pytest.mark.parametrize("question, expected", [
    ("what is the name of the building listed after idaho state capitol?", True),
    ("name the team that won after arsenal", True),
    ("Against which team did Man United play?", True),
    ("what team won, arsenal or chelsea?", False),  # options
    ("was arsenal the winner?", False),  # yes/no
    ("how many games did arsenal win?", False),
    ("when did arsenal win?", False),  # another kind of question: not read
])
def test_questions_that_ask_beyond_themselves(question, expected) -> None:
    from binder_py.normalize import asks_beyond_itself

    assert asks_beyond_itself(question) is expected


def test_a_what_questions_answer_that_the_question_itself_names_is_set_aside() -> None:
    question = "what is the name of the building listed after idaho state capitol?"
    shape = task_profile("wikitq").answer_shape(question)
    assert not shape.expects_name and shape.echo_question == question
    candidates = [C("idaho state capitol", order=0), C("the grove hotel", order=1)]
    assert vote_prefix(candidates, 2, shape=shape).value == "the grove hotel"
    assert "the question itself names (it asks for something else)" in shape.why_set_aside()


def test_the_pipeline_sets_aside_a_name_questions_bare_yes_no_and_says_why() -> None:
    table = pd.DataFrame({"shirt": ["a", "b", "c"], "sales": [3, 9, 5]})
    boolean = '(df["sales"] > 4).any()'
    named = 'df.sort_values("sales", ascending=False)["shirt"].iloc[0]'
    lm = ScriptedLM(lambda request, purpose: [boolean, boolean, named])
    answer = Binder(lm=lm, task="analyst", n=3, mode="python").ask(table, "which shirt sold best?")
    assert answer.value == "b"
    assert any("2 program(s) did not vote" in w and "a bare yes/no, and the question asks what, which, who" in w
               for w in answer.warnings), answer.warnings


@pytest.mark.parametrize("question, expected", [
    ("Which South American city has the smallest population?", True),   # "population" is not what it asks for
    ("who scored the winning goal?", True),
    ("against which team did they play last?", True),
    ("which year had the most wins?", False),
    ("which was the only year that the event was not run?", False),     # "year" within four words of "which"
    ("in which olympic games did she not finish?", False),
    ("which ranking is mexico?", False),
    ("who had the highest score?", False),
    ("what country won more gold medals than any other?", True),
    ("name a country that had 4 consecutive runs under 1:19.", True),
    ("what is the difference in population between enping and heshan?", False),
    ("what was his best finish before his first win?", False),
    ("what is the total number of sales?", False),
    ("how many cities are in asia?", False),                             # not a which/what/who question
    ("which team won, arsenal or chelsea?", False),                      # a choice question: its options decide
])
def test_which_and_what_questions_that_ask_for_a_name(question, expected) -> None:
    from binder_py.normalize import asks_for_a_name

    assert asks_for_a_name(question) is expected


def test_a_name_is_not_a_number() -> None:
    """'Which South American city has the smallest population?': three programs returned the smallest
    population, two the city. A which/who question that asks for no quantity is answered by a name, so
    the numbers are set aside when a program named something (in WikiTQ dev 2 of 541 such questions
    have numbers for gold answers; 9 of 345 what/name ones)."""
    shape = task_profile("analyst").answer_shape("Which South American city has the smallest population?")
    assert shape.expects_text
    candidates = [C(2011000, order=0), C("2011000", order=1), C([2011000, 709000], order=2), C("Quito", order=3),
                  C("quito", order=4)]
    assert [c.order for c in shape_fit(candidates, shape)] == [3, 4]
    assert vote_prefix(candidates, 5, shape=shape).value == "Quito"
    assert shape_fit(candidates[:3], shape) == candidates[:3]  # no program named a city: the numbers stay
    assert "a number where the question asks for a name" in shape.why_set_aside()
    # text that holds a number, and a list with a name in it, are names
    assert shape.fits(C("no. 5", order=0))
    assert task_profile("analyst").answer_shape("which cities are in peru?").fits(C(["Lima", 3], order=0))
    assert not task_profile("wikitq").answer_shape("which year had the most wins?").expects_text


def test_the_pipeline_prefers_the_named_city_to_the_population() -> None:
    table = pd.DataFrame({"city": ["Lima", "Quito", "Oslo"], "population": [10719000, 2011000, 709000]})
    number = 'df[df["city"] != "Oslo"]["population"].min()'
    named = 'df[df["city"] != "Oslo"].sort_values("population")["city"].iloc[0]'
    lm = ScriptedLM(lambda request, purpose: [number, number, named])
    answer = Binder(lm=lm, task="analyst", n=3, mode="python").ask(
        table, "Which South American city has the smallest population?")
    assert answer.value == "Quito"
    assert any("did not vote" in w and "a number where the question asks for a name" in w for w in answer.warnings)


def test_an_infinite_answer_is_inf_in_the_answers_json_and_its_distribution() -> None:
    """`ask --json` said "value": "inf" but its distribution's display stayed null."""
    table = pd.DataFrame({"a": [1, 2], "b": [0, 0]})
    lm = ScriptedLM(lambda request, purpose: ['df["a"].sum() / df["b"].sum()'])
    data = Binder(lm=lm, task="analyst", n=1, mode="python").ask(table, "what is the ratio?").to_json()
    assert data["value"] == "inf" and data["distribution"][0]["display"] == "inf"


def test_wikitq_answers_take_the_first_line_of_a_cell_and_analysts_the_whole_cell() -> None:
    """WikiTQ's cells are HTML cells whose lines are separate facts ("14,505 ft" over "4421 m"); its answers
    take the first line. A user's own table (the analyst task) keeps the whole cell."""
    wikitq = task_profile("wikitq").answer_shape("what is the elevation of mount whitney?")
    assert wikitq.read("14,505\u00a0ft\n4421\u00a0m") == "14,505\u00a0ft"
    assert wikitq.read(["the grove hotel\n\n\n\ngrove hotel in downtown boise", "x"]) == ["the grove hotel", "x"]
    assert wikitq.read(pd.Series(["a\nb", 2], index=[3, 4])).tolist() == ["a", 2]
    assert wikitq.read("one line") == "one line" and wikitq.read(7) == 7
    analyst = task_profile("analyst").answer_shape("what is the elevation of mount whitney?")
    assert analyst.read("14,505 ft\n4421 m") == "14,505 ft\n4421 m"
    table = pd.DataFrame({"peak": ["mount whitney", "mount shasta"], "elevation": ["14,505 ft\n4421 m", "14,179 ft\n4322 m"]})
    program = 'df[df["peak"] == "mount whitney"]["elevation"].iloc[0]'
    lm = ScriptedLM(lambda request, purpose: [program])
    answer = Binder(lm=lm, task="wikitq", n=1, mode="python").ask(table, "what is the elevation of mount whitney?")
    assert answer.value == "14,505 ft" and answer.winner.value == "14,505 ft\n4421 m"
    from binder_py.runs.report import record_vote

    record = {"question": "what is the elevation of mount whitney?", "candidates": [
        {"program": program, "value": "14,505 ft\n4421 m", "count": 1, "ok": True, "sample_orders": [0]}]}
    assert record_vote(record, 5, {"task": "wikitq", "mode": "python"}).value == "14,505 ft"


@pytest.mark.parametrize("question, expected", [
    ("other than 1927 what year did the code start with a?", "1927"),
    ("name another region for the 1985 release other than greece.", "greece"),
    ("what other girl besides amanda also had a 4 in cycling?", "amanda"),
    ("excluding the women's national basketball league, what competition had the lowest attendance?",
     "women's national basketball league"),
    ("aside from 316, what was the other works number used in 1883?", "316"),
    ("which team won the most games?", None),
])
def test_what_a_question_sets_aside_by_name(question, expected) -> None:
    from binder_py.normalize import excluded_phrase

    assert excluded_phrase(question) == expected


def test_what_the_question_sets_aside_is_not_its_answer_a_number_included() -> None:
    question = "other than 1927 what year did the code start with a?"
    shape = task_profile("wikitq").answer_shape(question)
    assert shape.excluded == "1927"
    candidates = [C(1927, order=0), C("1927", order=1), C(1955, order=2)]
    assert [c.order for c in shape_fit(candidates, shape)] == [2]
    assert vote_prefix(candidates, 3, shape=shape).value == 1955
    assert shape_fit(candidates[:2], shape) == candidates[:2]  # nothing else answered: kept
    assert "what it sets aside" in shape.why_set_aside()
    # a longer name holding the excluded one is another answer
    excluding = task_profile("wikitq").answer_shape("excluding the women's national basketball league, what "
                                                    "competition had the lowest attendance?")
    assert excluding.fits(C("national basketball league", order=0))
    assert not excluding.fits(C("The Women's National Basketball League", order=0))


@pytest.mark.parametrize("question, expected", [
    ("Which Japanese product has the highest rating?", True),
    ("who was the first president?", True),
    ("what is the name of the last album?", True),
    ("which teams were the last to qualify?", False),       # plural
    ("which two players tied for first place?", False),
    ("name the top three parties", False),
    ("which players have at least 4 goals?", False),        # "at least" is no superlative
    ("which team is from the west?", True),                 # one value, superlative or not
    ("which child was born after elizabeth churchill?", True),
    ("who are the players from spain?", False),
    ("how many players scored the most?", False),           # a count
])
def test_questions_that_ask_for_one_value(question, expected) -> None:
    from binder_py.normalize import asks_for_one

    assert asks_for_one(question) is expected


def test_several_values_do_not_answer_a_superlative() -> None:
    """'Which Japanese product has the highest rating?': two programs listed every Japanese product, one
    named the best rated. The question asks for the one a superlative picks, so the lists are set aside
    (in WikiTQ dev 1 of 517 such questions has several gold answers)."""
    shape = task_profile("analyst").answer_shape("Which Japanese product has the highest rating?")
    assert shape.expects_one
    listed = ["Switch OLED", "PlayStation 5", "WH-1000XM5"]
    candidates = [C(listed, order=0), C(listed, order=1), C("WH-1000XM5", order=2), C(["WH-1000XM5"], order=3),
                  C(["WH-1000XM5", "wh-1000xm5"], order=4)]
    assert [c.order for c in shape_fit(candidates, shape)] == [2, 3, 4]
    assert vote_prefix(candidates, 5, shape=shape).value == "WH-1000XM5"
    assert shape_fit(candidates[:2], shape) == candidates[:2]  # no program named one: the lists stay
    assert "several values where it asks for one" in shape.why_set_aside()
    assert not task_profile("wikitq").answer_shape("which teams were the last to qualify?").expects_one


@pytest.mark.parametrize("value, expected", [
    ("Su Song 蘇頌", True),      # the cell adds the name in its own script
    ("su song", True),
    ("蘇頌", False),             # nothing in Latin letters
    ("Xu Guangci 徐光啟", False),  # not the question's words ("xu guang ci")
    ("Shen Kuo 沈括", False),
])
def test_an_option_written_with_its_name_in_another_script(value, expected) -> None:
    """A WikiTQ cell often adds the name in its own script ("Su Song 蘇頌"): it still names the option the
    question writes in Latin letters (the twenty-second session's dev loss nt-8255)."""
    from binder_py.normalize import names_option

    assert names_option("did xu guang ci or su song create the five star charts in 1094 ad?", value) is expected


@pytest.mark.parametrize("question, expected", [
    ("which country won a silver but didn't win a gold or bronze?", False),
    ("which title is for ipad but not for iphone or ipod?", False),
    ("which region is the only one without midwife or midwives?", False),
    ("who was not last elected in either 2005 or 2009?", False),
    ("which nation was not in the top 10 iran or germany?", True),   # the options come after the negation
    ("which was not released in 2004, onna no ehon or music tree?", True),
    ("which year had more venues, 2007 or 2012?", True),
])
def test_an_or_inside_a_negation_or_after_either_offers_no_choice(question, expected) -> None:
    from binder_py.normalize import is_choice_question, is_name_question

    assert is_choice_question(question) is expected
    assert is_name_question(question) is not expected  # a which/who question that offers none names its answer


@pytest.mark.parametrize("height", ["6'5\"", "6–8", "6-11", "6 ft 5 in", "6′ 5″", ["6–8", "6–9"]])
def test_a_height_does_not_name_the_tallest_player(height) -> None:
    """"who is the tallest player on the team?" answered 6'5" (and "6–8"): a height in feet and inches is a
    quantity like a number, set aside when another program named a player."""
    shape = task_profile("wikitq").answer_shape("who is the tallest player on the team?")
    assert not shape.fits(C(height, order=0)) and shape.fits(C("tyler zeller", order=0))
    assert shape.fits(C("b-52", order=0)) and shape.fits(C("1990–91", order=0))  # (a name, a season)


@pytest.mark.parametrize("question, expected", [
    ("which hotel is in africa?", True),
    ("how long is the duration of one season (from the first game to the last)?", True),
    ("as of 2013, what is the total number of floor exercise gold medals won by american women?", True),
    ("in which year did the team win?", True),
    ("when did it open?", True),
    ("the hotel which opened first is in vienna", False),  # a statement to judge
    ("is the hotel which opened first in vienna?", False),
    ("true or false: the hotel opened before 1900", False),
    ("grand plaza opened before 1900.", False),
    ("did kansas win?", False),
])
def test_questions_that_ask_what_not_whether(question, expected) -> None:
    from binder_py.normalize import asks_what_not_whether

    assert asks_what_not_whether(question) is expected


def test_a_bare_yes_no_never_answers_a_wh_question() -> None:
    """"Which hotel is in Africa?" was answered `True` (f_val("Is the city in Africa?", df["city"])), and
    "how long is the duration of one season?" `True` too: when no program answered as asked, the yes/no
    answers voted anyway. They never vote now; a statement still gets its verdict."""
    for question in ("how long is the duration of one season?", "which hotel is in africa?"):
        shape = task_profile("wikitq").answer_shape(question)
        assert shape.expects_no_verdict
        candidates = [C(True, order=0), C(np.bool_(False), order=1), C("no", order=2)]
        assert shape_fit(candidates, shape) == []
        assert "asks what, which, who, when or how" in shape.misfit(candidates[0])
        failed = C(None, order=3, ok=False)
        assert shape_fit([*candidates, failed], shape) == [failed]  # the vote decides about failures
        assert shape_fit([*candidates, C("5 months", order=4)], shape)[0].value == "5 months"
    statement = task_profile("analyst").answer_shape("grand plaza opened before 1900")
    assert not statement.expects_no_verdict and shape_fit([C(True, order=0)], statement)[0].value is True


def test_no_answer_when_every_answer_was_a_bare_yes_no_says_so() -> None:
    """When every program answered a wh-question with a bare yes/no, there is no answer, and the account
    says the programs answered and were set aside (not that they "returned an empty result")."""
    table = pd.DataFrame({"date": ["2020-01-01", "2020-05-30"], "team": ["a", "b"]})
    lm = ScriptedLM(lambda request, purpose: ['(df["team"] == "a").any()', "len(df) > 1"])
    answer = Binder(lm=lm, task="wikitq", n=2, mode="python", repair_attempts=0).ask(table, "how long is the season?")
    assert answer.value is None
    assert any("no candidate's answer voted: the programs that answered were set aside" in w for w in answer.warnings)
    text = answer.explain()
    assert "-> answered True, which did not vote (the warnings say why)" in text and "an empty result" not in text
    html = answer._repr_html_()
    assert "answered True, which did not vote" in html and "returned an empty result" not in html
