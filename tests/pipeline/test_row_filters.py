"""A neural call that filters rows but asks once, `df[f_val("Is it in the US?", ...)]`, is run again as
`f_col` by the link stage (binder_py/language/row_filters.py)."""

from __future__ import annotations

import pandas as pd
import pytest

from binder_py import Binder
from binder_py.language.row_filters import as_row_filters
from binder_py.lm import ScriptedLM
from binder_py.neural import CallableBackend


@pytest.mark.parametrize("program, expected", [
    ('df[f_val("Is it in the US?", df["location"])]["name"].tolist()',
     'df[f_col("Is it in the US?", df["location"])]["name"].tolist()'),
    ('df[f_val("Is the year after 2000?", ["year"]) & (df["x"] > 3)].shape[0]',
     'df[f_col("Is the year after 2000?", ["year"]) & (df["x"] > 3)].shape[0]'),
    ('df[~f_val("Is it sold out?", "status")]', 'df[~f_col("Is it sold out?", "status")]'),
    ('df[f_val("What year?", df["date"]) > 1999]', 'df[f_col("What year?", df["date"]) > 1999]'),
    ('t = df\nt.loc[f_val("Is it a win?", ["result"]), "team"]', 't = df\nt.loc[f_col("Is it a win?", ["result"]), "team"]'),
    ('df[f_val("a?", "c") | f_val("b?", "d")]', 'df[f_col("a?", "c") | f_col("b?", "d")]'),
])
def test_f_val_that_filters_rows_is_written_as_f_col(program: str, expected: str) -> None:
    written, count = as_row_filters(program)
    assert written == expected and count == expected.count("f_col")


@pytest.mark.parametrize("program", [
    'f_val("Which team won?", df[["team", "result"]])',            # answers one value: as meant
    'df[df["year"] == f_val("Which year?", df["year"])]["team"]',  # one value compared with a column
    'df[f_col("Is it a win?", ["result"])]',
    'df.loc[df["x"] > 3, f_val("Which column?", df)]',             # the column part, not the rows
    'x = f_val("Is it?", df)\nx',
    'df[',                                                         # does not parse
])
def test_other_programs_are_left_alone(program: str) -> None:
    assert as_row_filters(program) is None


TEAMS = pd.DataFrame({"team": ["ajax", "boston", "lyon", "dallas"], "location": ["Netherlands", "USA", "France", "USA"]})
FILTERED_ONCE = 'df[f_val("Is it in the US?", df["location"])]["team"].tolist()'  # KeyError: True or False


def _in_us(question: str, row: dict[str, str]) -> str:
    return "yes" if row["location"].casefold() == "usa" else "no"


def test_the_program_runs_again_with_f_col_in_its_sources_place() -> None:
    lm = ScriptedLM(lambda request, purpose: [FILTERED_ONCE, FILTERED_ONCE, 'df["team"].tolist()'])
    neural = CallableBackend.per_row(_in_us, lambda question, rows: "yes")
    answer = Binder(lm=lm, neural=neural, task="analyst", n=3, repair_attempts=0).ask(
        TEAMS, "which teams are in the us?")
    assert answer.value == ["boston", "dallas"]
    linked = [c for c in answer.candidates if c.origin == "link"]
    assert len(linked) == 1 and linked[0].count == 2 and linked[0].voted
    assert "written as f_col" in linked[0].links[0]
    assert not answer.candidates[0].ok  # the program as written failed, and stays on record


def test_python_mode_writes_no_neural_call() -> None:
    lm = ScriptedLM(lambda request, purpose: [FILTERED_ONCE, 'df["team"].iloc[1]'])
    answer = Binder(lm=lm, task="analyst", mode="python", n=2, repair_attempts=0).ask(TEAMS, "which team is in the us?")
    assert not any(c.origin == "link" for c in answer.candidates)
