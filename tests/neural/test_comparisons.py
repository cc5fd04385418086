"""Yes/no row questions that only compare one column with a number are computed, not asked: the
question reader, the cell reader, and the row-by-row backend asking the model only the rest."""

import math

import pandas as pd
import pytest

from binder_py.language import execute
from binder_py.lm import ScriptedLM
from binder_py.lm.types import Capabilities, Choice
from binder_py.neural.comparisons import cell_quantity, read_comparison
from binder_py.neural.computed import computed_answers
from binder_py.neural.requests import NeuralRequest, row_key
from binder_py.neural.rowwise import RowwiseNeuralBackend

EMBEDDED = Capabilities(api="chat", logprobs=True, grammar=True, embedded=True)


@pytest.mark.parametrize("question, column, expected", [
    # (the questions the embedded 1.5B model wrote in the seeded WikiTQ runs, and an analyst's)
    ("Is the result less than 13.00?", "Result", ("<", 13.0, "number")),
    ("Less than 13.00", "Result", ("<", 13.0, "number")),
    ("Is the run time less than 1:19?", "Run 1", ("<", 79.0, "time")),
    ("Is the enrollment less than 600?", "Enrollment (2010-11 & 2011–12)", ("<", 600.0, "number")),
    ("Did they play more than 10 matches?", "Matches", (">", 10.0, "number")),
    ("Is it built before 2010?", "Built", ("<", 2010.0, "year")),
    ("Is the date listed after 1982?", "Date listed", (">", 1982.0, "year")),
    ("Is the silver medal count over 12?", "Silver", (">", 12.0, "number")),
    ("Is the price per kg less than 3.0?", "price_per_kg", ("<", 3.0, "number")),
    ("Is the attendance above 10,000?", "Attendance", (">", 10000.0, "number")),
    ("Is the population over 1 million?", "Population", (">", 1e6, "number")),
    ("Is it 10 or more?", "goals", (">=", 10.0, "number")),
    ("Were there at least 3 goals?", "Goals", (">=", 3.0, "number")),
    ("Is the price not more than $5?", "price", ("<=", 5.0, "number")),
    ("IS THE SCORE AT MOST 2.5?", "Score", ("<=", 2.5, "number")),
    ("Is the number greater than or equal to 55?", "Casualties", (">=", 55.0, "number")),
    ("Is it less than or equal to 3?", "Goals", ("<=", 3.0, "number")),
    ("Equal to or more than 10?", "Wins", (">=", 10.0, "number")),
])
def test_a_comparison_with_a_number_is_read(question, column, expected) -> None:
    comparison = read_comparison(question, column)
    assert comparison is not None and (comparison.op, comparison.value, comparison.kind) == expected


@pytest.mark.parametrize("question, column", [
    ("Is there at least 2 nationalities?", "Fee"),          # asks about something else than the column
    ("Is the compression rate less than 8.5:1?", "Compression"),  # a ratio: no number of one kind
    ("Is the birth date before 19 july 1681?", "Birth date"),     # a whole date, not a year
    ("Is the rank less than 4?", "Rank"),                   # ranks read backwards ("higher" is smaller)
    ("Is it over 50% and red?", "x"),                       # a second condition
    ("Is the price more than 5 but less than 10?", "price"),
    ("Is it not over 5?", "x"),
    ("Was it released after 5?", "year"),                  # before/after a number that is no year
    ("Is it more than twice 10?", "x"),
    ("Is it equal to 5?", "x"),                              # equality is not this module's
    ("Is it greater than or equal to 5 and red?", "x"),
    ("Is it in Europe?", "country"),                        # no comparison at all
    ("Is the distance more than 10 km?", "duration"),       # its unit names another column
])
def test_anything_else_is_left_to_the_model(question, column) -> None:
    assert read_comparison(question, column) is None


def test_cells_are_read_as_the_same_kind_of_value_or_not_at_all() -> None:
    number = read_comparison("Is the population over 1 million?", "Population")
    assert [cell_quantity(c, number) for c in ["8,900,000", "1.2 million", "900 thousand", 2_500_000.0]] == \
        [8.9e6, 1.2e6, 9e5, 2.5e6]
    # a column of millions against "1 million", and empty cells: left to the model
    assert [cell_quantity(c, number) for c in ["13.9", 13.9, "", None, math.nan]] == [None] * 5
    time = read_comparison("Is the run time less than 1:19?", "Run 1")
    assert [cell_quantity(c, time) for c in ["1:18.00", "1:19.37", "1:17.1 (pb)", "dnf", "78"]] == \
        [78.0, 79.37, 77.1, None, None]
    year = read_comparison("Is the date listed after 1982?", "Date listed")
    assert [cell_quantity(c, year) for c in ["june 22, 1984 (#84003236)", "-2005", "2013-", "1980–1984", "n/a"]] == \
        [1984.0, 2005.0, 2013.0, None, None]
    plain = read_comparison("Is the parking spaces greater than 0?", "Station Parking")
    assert [cell_quantity(c, plain) for c in ["403 spaces", "no parking", "£250,000", "1–5", "-3", "12.5%",
                                              "5:10.44", True]] == [403.0, None, 250000.0, None, -3.0, 12.5, None, None]
    miles = read_comparison("Is the distance more than 10 miles?", "distance")
    assert [cell_quantity(c, miles) for c in ["16 km", "12 miles", "12 mile", "12"]] == [None, 12.0, 12.0, 12.0]


def test_computed_answers_say_what_was_compared() -> None:
    answers, lines = computed_answers("Is the silver medal count over 12?", ["Silver"], [["46"], ["12"], ["x"]],
                                      ["46", "12", "x"])
    assert answers == {"46": "yes", "12": "no"}  # "x" holds no number: the model is asked
    assert lines[0] == "46: yes (computed, not asked: 46 > 12)"
    assert computed_answers("Is it over 12?", ["a", "b"], [["46", "1"]], ["46 | 1"]) == ({}, [])  # two columns


@pytest.mark.parametrize("cell", ["n/a", "N/A ", "—", "?", "tba", "-"])
def test_a_cell_that_writes_no_number_is_no(cell) -> None:
    """As pandas compares a missing value (never true), not asked: the model said yes to n/a ≤ 1,000."""
    answers, lines = computed_answers("Is the attendance less than or equal to 1,000?", ["Attendance"],
                                      [["409"], [cell], ["3,549"]], ["409", cell, "3,549"])
    assert answers == {"409": "yes", cell: "no", "3,549": "no"}
    assert any("writes no number" in line for line in lines)


def yes_lm():
    """A model that says yes to every row, as the embedded models lean."""
    return ScriptedLM(lambda request, purpose: Choice(text="Yes", top_logprobs=((("Yes", math.log(0.9)),
                                                                                  ("No", math.log(0.1))),)),
                      capabilities=EMBEDDED)


def test_the_backend_asks_the_model_only_the_rows_it_cannot_compute() -> None:
    lm = yes_lm()
    rows = [["46"], ["12"], ["dnf"], ["22"], ["n/a"]]
    request = NeuralRequest("col", "Is the silver medal count over 12?", ["Silver"], rows,
                            [row_key(r) for r in rows])
    answer = RowwiseNeuralBackend(lm).answer(request)
    assert len(lm.calls) == 1 and "Silver: dnf" in lm.calls[0][0].messages[-1][1]
    assert answer.answers["46"] == "yes" and answer.answers["12"] == "no" and answer.answers["22"] == "yes"
    assert answer.answers["dnf"] == "yes"  # no number in it, and no missing-value mark: the model is asked
    assert answer.answers["n/a"] == "no"  # writes no number: computed
    assert any("computed, not asked: 12 > 12" in line for line in answer.raw_outputs)
    # a question that is no comparison goes to the model whole
    lm2 = yes_lm()
    RowwiseNeuralBackend(lm2).answer(NeuralRequest("col", "Is it a country in Europe?", ["Silver"], rows,
                                                   [row_key(r) for r in rows]))
    assert len(lm2.calls) == 5


def test_a_program_filters_by_the_computed_answers() -> None:
    lm = yes_lm()
    df = pd.DataFrame({"item": ["orange", "apple", "mango"], "price_per_kg": [2.4, 1.9, 4.5]})
    run = execute('df[f_col("Is the price per kg less than 3.0?", ["price_per_kg"])]["item"].tolist()', df,
                  neural=RowwiseNeuralBackend(lm))
    assert run.ok and run.value == ["orange", "apple"] and lm.calls == []
