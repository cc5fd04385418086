"""The choose stage: a choice question no program answered with an option is asked once, of the rows
that hold the options, with the options as the only answers."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from binder_py import Binder
from binder_py.answer import ProgramCounts
from binder_py.lm import ScriptedLM
from binder_py.neural.answer_types import META_KEY, AnswerKind
from binder_py.pipeline.choose import choice_program, linked_options

PLAYERS = pd.DataFrame({"player": ["Paul George", "Greg Smith", "Roy Hibbert"],
                        "height_cm": [203, 208, 218], "team": ["Pacers", "Rockets", "Pacers"]})
QUESTION = "which player is taller, paul george or greg smith?"
COMPARED = 'df[df["player"] == "Paul George"]["height_cm"].iloc[0] > df[df["player"] == "Greg Smith"]["height_cm"].iloc[0]'


@pytest.mark.parametrize("question, expected", [
    (QUESTION, ("player", ("Paul George", "Greg Smith"))),
    ("does der liebeswalzer or manöverkinder contain more acts?", ("title", ("Der Liebeswalzer", "Manöverkinder"))),
    ("who scored more, roy hibbert, paul george or greg smith?", ("player", ("Roy Hibbert", "Paul George", "Greg Smith"))),
    ("which team won more games, pacers or rockets?", ("team", ("Pacers", "Rockets"))),
    ("which had the larger height, 203 or 218?", ("height_cm", (203, 218))),  # numbers of a numeric column
    ("who is heaviest among the following: paul george, kobe, or greg smith?",  # "kobe" is no cell
     ("player", ("Paul George", "Greg Smith"))),
    ("which had the larger height, 203 or 204?", None),     # 204 is no cell
    ("was paul george taller?", None),                      # no "or"
    ("is paul george or roy taller?", None),                # one cell only: "roy" is no whole cell
    ("which player is taller, paul george, greg smith or kobe?", None),  # no cell after the last "or"
])
def test_options_are_cells_of_one_column_on_both_sides_of_the_last_or(question, expected) -> None:
    table = PLAYERS.assign(title=["Der Liebeswalzer", "Manöverkinder", "Die Fledermaus"])
    assert linked_options(table, question) == expected


def test_an_option_that_holds_another_is_one_option() -> None:
    table = pd.DataFrame({"team": ["Kansas", "Kansas State", "Iowa"], "wins": [33, 20, 5]})
    assert linked_options(table, "who had the most wins in the 1950's: kansas or kansas state?") == \
        ("team", ("Kansas", "Kansas State"))


def test_the_program_asks_once_with_the_options_as_its_answers() -> None:
    program = choice_program(QUESTION, "player", ("Paul George", "Greg Smith"))
    assert program == ("f_val('which player is taller, paul george or greg smith? Answer with one of: Paul George or "
                       "Greg Smith', df[df['player'].isin(['Paul George', 'Greg Smith'])])")


def test_a_choice_question_no_program_answered_with_an_option_is_asked_once() -> None:
    asked = []

    def neural(request):
        asked.append(request)
        return "Greg Smith"

    lm = ScriptedLM(lambda request, purpose: [COMPARED, COMPARED, 'df["height_cm"].max()'])
    answer = Binder(lm=lm, neural=neural, task="analyst", n=3, repair_attempts=0).ask(PLAYERS, QUESTION)
    assert answer.value == "Greg Smith"
    chosen = [c for c in answer.candidates if c.origin == "choose"]
    assert len(chosen) == 1 and chosen[0].voted and chosen[0].program.startswith("f_val(")
    (request,) = asked
    assert request.kind == "val" and sorted(r[0] for r in request.rows) == ["Greg Smith", "Paul George"]
    answer_type = request.meta[META_KEY]
    assert answer_type.kind is AnswerKind.CHOICE and answer_type.choices == ("Paul George", "Greg Smith")
    counts = ProgramCounts.of(answer.candidates)
    assert (counts.sampled, counts.choices, counts.voted) == (3, 1, 1)
    assert "+ 1 asking the model to choose among the question's options" in counts.sentence()
    assert json.loads(json.dumps(answer.to_json(), default=str))["candidates"][-1]["origin"] == "choose"


def test_numbers_of_a_numeric_column_are_options_too() -> None:
    asked = []

    def neural(request):
        asked.append(request)
        return "218"

    lm = ScriptedLM(lambda request, purpose: ['df["height_cm"].max() > 210'])
    answer = Binder(lm=lm, neural=neural, task="analyst", n=1, repair_attempts=0, progress=True).ask(
        PLAYERS, "which had the larger height, 203 or 218?")
    assert answer.value == 218 and asked[0].meta[META_KEY].choices == ("203", "218")
    assert sorted(r[asked[0].columns.index("height_cm")] for r in asked[0].rows) == ["203", "218"]


def test_a_value_the_question_names_that_is_no_option_does_not_stop_the_stage() -> None:
    lm = ScriptedLM(lambda request, purpose: ['"Roy Hibbert"'])
    answer = Binder(lm=lm, neural=lambda request: "Greg Smith", task="analyst", n=1, repair_attempts=0).ask(
        PLAYERS, "compared with roy hibbert, which player is taller, paul george or greg smith?")
    assert [c.origin for c in answer.candidates] == ["sample", "choose"]


@pytest.mark.parametrize("programs, settings", [
    (['"Greg Smith"', COMPARED], {}),                     # a program named an option: nothing to do
    ([COMPARED], {"mode": "python"}),                    # no neural calls in python mode
    ([COMPARED], {"rescope": False}),                    # off with its sibling stage
    ([COMPARED], {"task": "tabfact"}),                   # a statement wants a verdict
])
def test_the_stage_stays_out_of_the_way(programs, settings) -> None:
    lm = ScriptedLM(lambda request, purpose: programs)
    settings = {"task": "analyst", **settings}
    answer = Binder(lm=lm, neural=lambda request: "Greg Smith", n=len(programs), repair_attempts=0,
                    **settings).ask(PLAYERS, QUESTION)
    assert not any(c.origin == "choose" for c in answer.candidates)
