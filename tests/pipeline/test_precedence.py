"""Comparisons joined by & or | without parentheses: regrouped as meant, and run as a link sibling."""

from __future__ import annotations

import pandas as pd
import pytest

from binder_py import Binder
from binder_py.lm import ScriptedLM
from binder_py.pipeline.precedence import regroup_comparisons


@pytest.mark.parametrize("program, expected", [
    # written by the embedded 1.5B model in the seeded WikiTQ runs
    ('df[df["Competition"] == "200 metres" & df["Position"] == "1st"]["Year"]',
     "df[(df['Competition'] == '200 metres') & (df['Position'] == '1st')][\"Year\"]"),
    ('sum(df["Notation"].str.contains(r"1", na=False) & df["Notation"] != "m1")',
     "sum(df['Notation'].str.contains('1', na=False) & (df['Notation'] != 'm1'))"),
    ('df[df.a == "x" | df.a == "y" & df.b > 3]', "df[(df.a == 'x') | (df.a == 'y') & (df.b > 3)]"),
    ('df[df.a == 1 & mask]', "df[(df.a == 1) & mask]"),
    ('df[df.a.isin(["x"]) & df.b >= 3 & df.c < 2]', "df[df.a.isin(['x']) & (df.b >= 3) & (df.c < 2)]"),
    ('x = df[df["é"] == "ü" & df.b == 2]\nlen(x)', "x = df[(df['é'] == 'ü') & (df.b == 2)]\nlen(x)"),  # columns count bytes
    ('f(a & b == c)', 'f(a & (b == c))'),
    ('df[(df.a == 1 & df.b == 2) | df.c]', "df[((df.a == 1) & (df.b == 2)) | df.c]"),
])
def test_comparisons_are_regrouped_as_meant(program: str, expected: str) -> None:
    regrouped = regroup_comparisons(program)
    assert regrouped is not None
    text, notes = regrouped
    assert text == expected
    assert notes and "regrouped as" in notes[0]


@pytest.mark.parametrize("program", [
    'df[(df["a"] == 1) & (df["b"] == 2)]',  # already parenthesized
    'df[(m1 & m2) == True]',
    'df[df.flags & 4 == 4]',  # a bit test, read as Python reads it
    'df[df.a == 1]',
    'len(df',  # does not parse
])
def test_what_is_written_as_meant_is_left_alone(program: str) -> None:
    assert regroup_comparisons(program) is None


RACES = pd.DataFrame({"Competition": ["200 metres", "100 metres", "200 metres"],
                      "Position": ["1st", "1st", "3rd"], "Year": [1997, 1998, 1999]})
QUESTION = "in what year did she win the 200 metres?"
UNGROUPED = 'df[df["Competition"] == "200 metres" & df["Position"] == "1st"]["Year"].iloc[0]'  # a TypeError


def test_the_regrouped_program_votes_in_its_sources_place() -> None:
    lm = ScriptedLM(lambda request, purpose: [UNGROUPED, UNGROUPED, "1999"])
    answer = Binder(lm=lm, task="wikitq", mode="python", n=3, repair_attempts=0).ask(RACES, QUESTION)
    assert answer.value == 1997  # the regrouped program, twice, against one
    linked = [c for c in answer.candidates if c.origin == "link"]
    assert len(linked) == 1 and linked[0].count == 2 and linked[0].voted
    assert "regrouped as" in linked[0].links[0]
    assert not answer.candidates[0].ok  # the program as written failed, and stays on record
    assert "comparisons regrouped" in answer.explain()


def test_link_literals_false_runs_programs_as_written() -> None:
    lm = ScriptedLM(lambda request, purpose: [UNGROUPED, "1999"])
    answer = Binder(lm=lm, task="wikitq", mode="python", n=2, repair_attempts=0,
                    link_literals=False).ask(RACES, QUESTION)
    assert answer.value == 1999 and not any(c.origin == "link" for c in answer.candidates)
