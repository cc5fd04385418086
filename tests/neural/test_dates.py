"""Yes/no row questions that only ask a row's year, decade or month are computed, not asked."""

import math

import pandas as pd
import pytest

from binder_py.language import execute
from binder_py.lm import ScriptedLM
from binder_py.lm.types import Capabilities, Choice
from binder_py.neural.computed import computed_answers as date_answers
from binder_py.neural.dates import cell_date_part, read_date_question
from binder_py.neural.requests import row_key
from binder_py.neural.rowwise import RowwiseNeuralBackend

EMBEDDED = Capabilities(api="chat", logprobs=True, grammar=True, embedded=True)


@pytest.mark.parametrize("question, column, expected", [
    ("Is it in 1986?", "Date:", ("year", 1986, 1986)),        # (the 1.5B model: 14 of 63 rows wrong)
    ("Is the year 1999?", "Date", ("year", 1999, 1999)),
    ("Was it released in 2005?", "Release", ("year", 2005, 2005)),
    ("Is it in the 1990s?", "Year", ("year", 1990, 1999)),
    ("Is it from the 1980's?", "Year", ("year", 1980, 1989)),
    ("Is the year in the 1900's?", "Created", ("year", 1900, 1999)),  # the century, as WikiTQ's gold reads it
    ("Is it in the 2000s?", "Year", ("year", 2000, 2009)),
    ("Is the month January?", "Date Start", ("month", 1, 1)),
    ("Did it happen in May?", "Date", ("month", 5, 5)),
    ("Is the date July 8th?", "Date", ("day", 708, 708)),    # (the 1.5B model: 13 of 21 rows wrong)
    ("Is it the 8th of July?", "Date", ("day", 708, 708)),
])
def test_a_year_decade_or_month_is_read(question, column, expected) -> None:
    asked = read_date_question(question, column)
    assert asked is not None and (asked.part, asked.low, asked.high) == expected


@pytest.mark.parametrize("question", [
    "Is it in July 2005?",           # a month of a year: not read
    "Is it built before 2010?",      # a comparison (computed elsewhere)
    "Is it 2005 or 2006?",
    "Is it not in 1986?",
    "Is it in the first stage of the 2008 AFC Asian Cup?",  # more than a date
    "Was the winner born in 1970?",  # "winner" asks about another column
])
def test_anything_else_is_left_to_the_model(question) -> None:
    assert read_date_question(question, "Date") is None


def test_cells_are_read_for_one_year_or_one_month() -> None:
    year = read_date_question("Is it in 1986?", "Date")
    assert [cell_date_part(c, year) for c in ["september 19, 1986", "1980–1984", "n/a", 1986, "-2005"]] == \
        [1986, None, None, 1986, 2005]
    day = read_date_question("Is the date July 8th?", "Date")
    assert [cell_date_part(c, day) for c in ["1 july", "8 july", "july 8, 1990", "1990-07-08", "july", "8 july – 9 july"]] \
        == [701, 708, 708, 708, None, None]
    month = read_date_question("Is the month January?", "Date")
    assert [cell_date_part(c, month) for c in ["january 8", "Jan 5", "2023-01-05", "marlboro", "march 1 – april 2",
                                               "8 sept 2001", "may 4"]] == [1, 1, 1, None, None, 9, 5]


def test_the_model_is_asked_only_the_rows_without_a_date() -> None:
    lm = ScriptedLM(lambda request, purpose: Choice(text="Yes", top_logprobs=((("Yes", math.log(0.9)),
                                                                                  ("No", math.log(0.1))),)),
                    capabilities=EMBEDDED)
    df = pd.DataFrame({"Date": ["september 19, 1986", "march 2, 1987", "tbd"], "Opponent": ["a", "b", "c"]})
    run = execute('df[f_col("Is it in 1986?", ["Date"])]["Opponent"].tolist()', df, neural=RowwiseNeuralBackend(lm))
    assert run.ok and run.value == ["a", "c"] and len(lm.calls) == 1  # "tbd" was asked (and the model said yes)
    answers, lines = date_answers("Is it in 1986?", ["Date"], [["march 2, 1987"]], [row_key(["march 2, 1987"])])
    assert answers == {"march 2, 1987": "no"}
    assert lines == ["march 2, 1987: no (computed, not asked: the year 1987, asked the year 1986)"]
