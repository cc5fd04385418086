"""Repair hints from the error: what a failed program's error means for the columns it reads."""

from __future__ import annotations

import pandas as pd
import pytest

from binder_py import Binder
from binder_py.lm import ScriptedLM
from binder_py.pipeline.error_hints import error_hints
from binder_py.language import execute
from binder_py.tables import prepare_table
from sandbox import Sandbox

TABLE = prepare_table(pd.DataFrame({
    "title": ["Inception", "Titanic", "Avatar"],
    "year": ["2010", "1997", "2009"],
    "price": ["$349", "$38,990", "$1,299.50"],
    "box office": ["$836.8 million", "$2.26 billion", "$2.92 billion"],
    "height": ["1,410 m (4,626 ft)", "980 m (3,215 ft)", "75 m (246 ft)"],
    "released": ["March 3, 2015", "2012-07-19", "11 Feb 2018"],
}))
TABLES = {"df": TABLE, "table": TABLE}


SANDBOX = Sandbox(mode="unsafe-inprocess")


def value(program: str):
    outcome = execute(program, TABLE, neural=None, sandbox=SANDBOX).outcome
    assert outcome.ok, outcome.error
    return outcome.value


def run(program: str) -> str:
    outcome = execute(program, TABLE, neural=None, sandbox=SANDBOX).outcome
    assert not outcome.ok, outcome.value
    return outcome.error.message


def hint(program: str) -> str:
    hints = error_hints(program, run(program), TABLES)
    assert len(hints) == 1, hints
    return hints[0]


def test_text_methods_on_a_column_of_numbers_say_it_holds_numbers():
    line = hint('df[df["year"].str.startswith("199")].shape[0]')
    assert line.startswith("column 'year' holds numbers, not text: write df['year'].astype(str).str to use text "
                           "methods on their digits, or compare them as numbers (df['year'] >= ")


@pytest.mark.parametrize("program", [
    'df[df["price"] > 1000]',
    'df[df["price"].str.replace("$", "").astype(float) > 1000]',
    'df["price"].astype(int).sum()',
    'df["price"].sum() - 3',
])
def test_numbers_written_with_currency_and_commas_get_a_conversion_that_works(program):
    line = hint(program)
    assert line.startswith("column 'price' holds text such as '$349', '$38,990', not numbers: read its numbers with ")
    conversion = line.split("read its numbers with ", 1)[1]
    assert value(conversion + ".tolist()") == [349.0, 38990.0, 1299.5]


def test_amounts_in_words_are_read_by_f_col_and_cells_of_several_numbers_by_their_first():
    assert hint('df[df["box office"] > 1000]["title"]').endswith(
        "get its numbers with f_col('What is the box office as a number?', ['box office'])")
    line = hint('df[df["height"] > 1000]["title"]')
    assert "read the first number of each cell with " in line
    first = line.split("read the first number of each cell with ", 1)[1]
    assert value(first + ".tolist()") == [1410, 980, 75]


def test_dates_written_as_text_are_read_as_dates():
    line = hint('df[df["released"] < 2015]["title"]')
    assert "read them as dates with pd.to_datetime(df['released'], format='mixed', errors='coerce')" in line
    conversion = line.split("read them as dates with ", 1)[1].split(" (then", 1)[0]
    assert value(conversion + ".dt.year.tolist()") == [2015, 2012, 2018]


def test_one_truth_value_and_no_rows_left():
    assert hint('df[df["title"].str.len().max() > 3]').startswith("a table was indexed with one True/False")
    assert hint('df[df["title"] == "Jaws"]["year"].iloc[0]').startswith("the rows selected were none")


def test_other_errors_unknown_columns_and_broken_programs_give_no_hint():
    assert error_hints('df["nope"].sum()', "KeyError: 'nope'", TABLES) == []
    assert error_hints('df[df["nope"] > 3]', "TypeError: Invalid comparison between dtype=str and int", TABLES) == []
    assert error_hints('df[df["title"] > 3]', "TypeError: Invalid comparison between dtype=str and int", TABLES) == []
    assert error_hints("df[", "SyntaxError", TABLES) == []


def test_the_repair_prompt_carries_the_hint():
    table = pd.DataFrame({"title": ["Jaws", "Titanic", "Heat"], "year": [1975, 1997, 1995]})
    failing = 'df[df["year"].str.startswith("199")].shape[0]'
    fixed = 'df[df["year"].between(1990, 1999)].shape[0]'
    lm = ScriptedLM(lambda request, purpose: fixed if purpose == "repair" else [failing] * 4)
    answer = Binder(lm=lm, task="analyst", n=4, mode="python").ask(table, "How many movies came out in the 1990s?")
    assert answer.value == 2
    repairs = [r.prompt or r.messages[-1][1] for r, purpose, _ in lm.calls if purpose == "repair"]
    assert len(repairs) == 1 and "Can only use .str accessor" in repairs[0]
    assert "column 'year' holds numbers, not text: write df['year'].astype(str).str" in repairs[0]
