"""Yes/no row questions that only ask whether a cell is one of the column's own values are computed,
not asked: the question reader, and the row-by-row backend asking the model only what is left."""

import math

import pandas as pd
import pytest

from binder_py.language import execute
from binder_py.lm import ScriptedLM
from binder_py.lm.types import Capabilities, Choice
from binder_py.neural.computed import computed_answers as equality_answers
from binder_py.neural.equalities import named_cell
from binder_py.neural.requests import NeuralRequest, row_key
from binder_py.neural.rowwise import RowwiseNeuralBackend

EMBEDDED = Capabilities(api="chat", logprobs=True, grammar=True, embedded=True)
CITIES = ["holon", "bnei brak", "tel aviv", "ramat gan"]


@pytest.mark.parametrize("question, column, cells, expected", [
    # (questions the embedded 1.5B model wrote in the seeded WikiTQ runs)
    ("Is the city Holon?", "Common name", CITIES, "holon"),
    ("Is it in Greene County?", "Principal county", ["greene county", "clark county"], "greene county"),
    ("Is the position 'soldier'?", "Position", ["soldier", "officer"], "soldier"),
    ("Is the Woodbury Mill listed to the Register?", "Name on the Register", ["woodbury mill", "smith chapel"],
     "woodbury mill"),
    ("Is the event 100 m?", "Event", ["100 m", "100 m hurdles", "200 m"], "100 m"),  # the longest named
    ("Was it an OT game?", "OT", ["(ot)", ""], "(ot)"),
    ("Is the team Real Zaragoza?", "Winners", ["Real Zaragoza", "Barcelona"], "Real Zaragoza"),  # as written
])
def test_a_question_that_only_names_a_cell_is_read(question, column, cells, expected) -> None:
    assert named_cell(question, column, cells) == expected


@pytest.mark.parametrize("question, column, cells", [
    ("Is this song before 'part of your world'?", "Title", ['"part of your world"', "kiss the girl"]),
    ("Is it not in China?", "Country", ["china", "japan"]),
    ("Does the representative live in San Antonio?", "Home Town/City", ["san antonio", "austin"]),
    ("Is it Paris or Lyon?", "City", ["paris", "lyon"]),              # two values named apart
    ("Is the captain's club Arsenal?", "Club", ["arsenal", "chelsea"]),  # "captain's" asks more
    ("Is it in Europe?", "City", ["paris", "lyon"]),                  # no cell named: a real question
    ("Is it 2005?", "Year", ["2005", "2006"]),                        # no letters: numbers are compared elsewhere
])
def test_anything_else_is_left_to_the_model(question, column, cells) -> None:
    assert named_cell(question, column, cells) is None


def test_rows_holding_the_value_within_more_are_asked() -> None:
    rows = [["100 m"], ["100 m hurdles"], ["200 m"]]
    answers, lines = equality_answers("Is the event 100 m?", ["Event"], rows, [row_key(r) for r in rows])
    assert answers == {"100 m": "yes", "200 m": "no"}
    assert lines[0] == "100 m: yes (computed, not asked: the cell is '100 m')"


def yes_lm():
    return ScriptedLM(lambda request, purpose: Choice(text="Yes", top_logprobs=((("Yes", math.log(0.9)),
                                                                                  ("No", math.log(0.1))),)),
                      capabilities=EMBEDDED)


def test_a_program_filters_by_the_computed_answers_and_the_model_is_not_asked() -> None:
    lm = yes_lm()  # says yes to every city, as the 1.5B model did for 67 of 75
    df = pd.DataFrame({"Common name": CITIES, "population": [196, 204, 460, 163]})
    run = execute('df[f_col("Is the city Holon?", ["Common name"])]["population"].tolist()', df,
                  neural=RowwiseNeuralBackend(lm))
    assert run.ok and run.value == [196] and lm.calls == []


def test_a_comparison_is_read_first() -> None:
    lm = yes_lm()
    rows = [["12"], ["46"]]
    answer = RowwiseNeuralBackend(lm).answer(NeuralRequest("col", "Is the silver count over 12?", ["Silver"], rows,
                                                           [row_key(r) for r in rows]))
    assert answer.answers == {"12": "no", "46": "yes"} and lm.calls == []


TEAMS = ["germany\xa0(ger) germany i", "italy\xa0(ita) italy ii", "united states\xa0(usa) usa i", "usa ii"]


@pytest.mark.parametrize("question, column, expected", [
    ("Is it Germany?", "Team", "germany"),                        # (the 1.5B model's calls on WikiTQ)
    ("Is it from the United States?", "Team", "united states"),
    ("Is the result 'L'", "Result", "l"),                         # quoted
    ("Is it a major movie?", "Title", None),                      # no name: an adjective
    ("Is Germany present?", "Team", None),                        # asks more
    ("Is it Germany or Italy?", "Team", None),                    # two names
    ("Is it Spain?", "Team", None),                               # no cell holds it
])
def test_a_name_cells_hold_within_more(question, column, expected) -> None:
    from binder_py.neural.equalities import named_part

    cells = TEAMS + ["l 31–17", "major league"]
    assert named_part(question, column, cells) == expected


def test_rows_holding_the_name_are_yes_and_the_others_asked() -> None:
    rows = [[t] for t in TEAMS]
    answers, lines = equality_answers("Is it from the United States?", ["Team"], rows, [row_key(r) for r in rows])
    assert answers == {row_key([TEAMS[2]]): "yes"}  # "usa ii" may be the same country: asked
    assert "the cell holds 'united states'" in lines[0]
