"""A neural call asked about a column its context leaves out is run again with that column in its context."""

from __future__ import annotations

import pandas as pd
import pytest

from binder_py import Binder
from binder_py.lm import ScriptedLM
from binder_py.neural.backends import CallableBackend
from binder_py.pipeline.named_columns import with_named_columns

CARS = pd.DataFrame({"Model": ["aspect", "vista", "tour"], "Starting Price": ["$95,948", "$74,704", "$362,285"],
                     "Population (2011)": [1, 2, 3], "Year": [2001, 2002, 2003], "é name": ["x", "y", "z"]})
TABLES = {"df": CARS, "table": CARS}
PRICE = "Which model had the highest starting price?"


@pytest.mark.parametrize("context, widened", [
    ('df[df["Year"] > 2000][["Model"]]', "df[df[\"Year\"] > 2000][['Model', 'Starting Price']]"),
    ('df[df["Year"] > 2000]["Model"]', "df[df[\"Year\"] > 2000][['Model', 'Starting Price']]"),  # one column
    ('df.loc[df["Year"] > 2000][["Model", "Year"]]', "df.loc[df[\"Year\"] > 2000][['Model', 'Year', 'Starting Price']]"),
    ('df[["Model"]]', "df[['Model', 'Starting Price']]"),
    ('"Model"', "['Model', 'Starting Price']"),
    ('["Model"]', "['Model', 'Starting Price']"),
    ('table[table["Year"] > 2000][["Model"]]', "table[table[\"Year\"] > 2000][['Model', 'Starting Price']]"),
])
def test_a_named_column_joins_the_context(context: str, widened: str) -> None:
    program, notes = with_named_columns(f"f_val({PRICE!r}, {context})", TABLES)
    assert program == f"f_val({PRICE!r}, {widened})"
    assert notes == (f"'Starting Price' added to the context of `f_val({PRICE!r}, …)`, whose question names it",)


def test_a_name_without_its_parenthesized_part_and_a_unicode_name() -> None:
    program, _ = with_named_columns('f_col("Is the population over 2?", ["Model"])', TABLES)
    assert program == "f_col(\"Is the population over 2?\", ['Model', 'Population (2011)'])"
    program, _ = with_named_columns('f_val("Which É name is last?", df[["Model"]])', TABLES)
    assert program == "f_val(\"Which É name is last?\", df[['Model', 'é name']])"


@pytest.mark.parametrize("program", [
    f'f_val({PRICE!r}, df[["Model", "Starting Price"]])',  # shown already
    f'f_val({PRICE!r}, df[df["Year"] > 2000])',  # a whole sub-table: every column shown
    f'f_val({PRICE!r}, df[df["Year"] > 2000]["Model"].tolist())',  # a list of values: not a column pick
    f'f_val({PRICE!r}, other[["Model"]])',  # not a table's name
    'f_val("Which one is the best?", df[["Model"]])',  # names no column
    'f_val("Is it in the year list?", df[["Model"]])'.replace("year list", "yearly list"),  # "year" inside a word
    f'f_val({PRICE!r}, df[["Nope"]])',  # a column the table lacks: fails as written
    f'df[["Model"]]',  # no neural call
    f'f_val({PRICE!r}, df[["Model"]]',  # no program
])
def test_other_contexts_are_left_alone(program: str) -> None:
    assert with_named_columns(program, TABLES) is None


def test_the_widened_call_votes_in_its_sources_place() -> None:
    """Shown the model names only, the model guesses "vista"; shown the prices, it names the highest. Python mode
    leaves the program as written."""
    program = f'f_val({PRICE!r}, df[df["Year"] > 2000][["Model"]])'

    def answer_value(question: str, rows: list[dict[str, str]]) -> str:
        if rows and "Starting Price" in rows[0]:
            return max(rows, key=lambda r: float(r["Starting Price"].strip("$").replace(",", "")))["Model"]
        return "vista"

    neural = CallableBackend.per_row(lambda q, row: "no", answer_value)
    answer = Binder(lm=ScriptedLM(lambda request, purpose: [program, program]), neural=neural, task="wikitq", n=2,
                    repair_attempts=0, rescope=False).ask(CARS, "which model had the highest starting price?")
    assert answer.value == "tour"
    linked = [c for c in answer.candidates if c.origin == "link"]
    assert len(linked) == 1 and linked[0].count == 2 and linked[0].voted
    assert not answer.candidates[0].voted and answer.candidates[0].value == "vista"
