"""A one-value neural call used as a row filter (``df[f_val("Is the surface hard?", "Surface")]``, which
looks up a column named True) is run again asked of every row, as f_col."""

from __future__ import annotations

import pandas as pd
import pytest

from binder_py import Binder
from binder_py.lm import ScriptedLM
from binder_py.neural.backends import CallableBackend
from binder_py.pipeline.row_filters import as_row_filters

MATCHES = pd.DataFrame({"No.": [1, 2, 3, 4, 5], "Surface": ["hard (i)", "clay", "hard", "grass", "hard (i)"],
                        "Opponent": ["A", "B", "C", "D", "E"]})
TABLES = {"df", "table"}


@pytest.mark.parametrize("program, expected", [
    ('df[f_val("Is the surface hard?", "Surface")].shape[0]',
     'df[f_col("Is the surface hard?", "Surface")].shape[0]'),
    ('df[f_val("Surface is hard?", df["Surface"])]["Opponent"].tolist()',  # no question word: still a condition
     'df[f_col("Surface is hard?", df["Surface"])]["Opponent"].tolist()'),
    ('df.loc[f_val("Is it hard?", ["Surface", "No."]) & (df["No."] > 1), "Opponent"]',
     'df.loc[f_col("Is it hard?", ["Surface", "No."]) & (df["No."] > 1), "Opponent"]'),
    ('df[~f_val("Is it clay?", df[["Surface"]])]', 'df[~f_col("Is it clay?", df[["Surface"]])]'),
    ('table[f_val(question="Is it hard?", context="Surface")]', 'table[f_col(question="Is it hard?", context="Surface")]'),
    ('n = 1\ndf[f_val("Is é hard?", "Surface") | f_val("Is it clay?", "Surface")].shape[0] + n',  # both calls, unicode
     'n = 1\ndf[f_col("Is é hard?", "Surface") | f_col("Is it clay?", "Surface")].shape[0] + n'),
])
def test_a_one_value_call_that_filters_rows_is_asked_of_every_row(program: str, expected: str) -> None:
    rewritten, notes = as_row_filters(program, TABLES)
    assert rewritten == expected
    assert all("asked of every row, as f_col" in note for note in notes) and notes


@pytest.mark.parametrize("program", [
    'df.loc[f_val("What is the highest Qual?", "Qual")].Car',  # names a value, not a condition
    'df[f_val("Which surface is hard?", "Surface")]',
    'df[f_val("Is the result better?", df[df["Opponent"] == "A"])]',  # a sub-table: its mask cannot filter df
    'df[df["Surface"] == f_val("Is it hard?", "Surface")]',  # compared, not a filter by itself
    'x = f_val("Is it hard?", "Surface")\ndf[x]',  # through a name: not followed
    'other[f_val("Is it hard?", "Surface")]',  # not a table's name
    'df[f_col("Is it hard?", "Surface")]',  # already per row
    'f_val("Is any surface hard?", "Surface")',
    'df[f_val("Is it hard?", "Surface")',  # no program
])
def test_other_calls_are_left_alone(program: str) -> None:
    assert as_row_filters(program, TABLES) is None


def _hard(question: str, row: dict[str, str]) -> str:
    return "yes" if "hard" in row.get("Surface", "") else "no"


def test_the_rewritten_program_votes_in_its_sources_place() -> None:
    """The program as written fails (``df[True]``); its version with f_col answers and votes with the
    source's count; python mode and link_literals=False leave it as written."""
    program = 'df[f_val("Is the surface hard?", "Surface")].shape[0]'
    lm = ScriptedLM(lambda request, purpose: [program, program, "1"])
    neural = CallableBackend.per_row(_hard, lambda question, rows: "yes")
    answer = Binder(lm=lm, neural=neural, task="wikitq", n=3, repair_attempts=0).ask(
        MATCHES, "what is the number of times a hard surface was used?")
    assert answer.value == 3
    linked = [c for c in answer.candidates if c.origin == "link"]
    assert len(linked) == 1 and linked[0].count == 2 and linked[0].voted
    assert "asked of every row, as f_col" in linked[0].links[0]
    assert not answer.candidates[0].ok  # as written: KeyError, and it stays on record
    assert "row filter asked of every row" in answer.explain()
    off = Binder(lm=ScriptedLM(lambda request, purpose: [program, program, "1"]), neural=neural, task="wikitq", n=3,
                 repair_attempts=0, link_literals=False).ask(MATCHES, "what is the number of times a hard surface was used?")
    assert off.value == 1 and not any(c.origin == "link" for c in off.candidates)
