"""Arithmetic on amounts the table holds as text: the column read as the numbers its cells write first."""

from __future__ import annotations

import pandas as pd
import pytest

from binder_py import Binder
from binder_py.lm import ScriptedLM
from binder_py.pipeline.text_numbers import cell_numbers, read_as_numbers

STAFF = pd.DataFrame({"name": ["Amara", "Ben", "Chen", "Diego"],
                      "department": ["Engineering", "Sales", "Engineering", "Marketing"],
                      "salary": ["$124,000", "$78,500", "$131,000", "$92,000"],
                      "bonus": ["12%", "8.5%", "", "10%"],
                      "budget": ["$1.2 million", "$850 thousand", "$2 million", "$400 thousand"],
                      "commute": ["12 km", "3.5 km", "40 km", "8 km"],
                      "started": ["2016-09-12", "2021-01-04", "2019-03-18", "2014-06-30"],
                      "team size": [5, 3, 8, 2]})


@pytest.mark.parametrize("column, expected", [
    ("salary", {"$124,000": 124000, "$78,500": 78500, "$131,000": 131000, "$92,000": 92000}),
    ("bonus", {"12%": 12, "8.5%": 8.5, "10%": 10}),  # the empty cell stays out (NaN after the map)
    ("budget", {"$1.2 million": 1200000, "$850 thousand": 850000, "$2 million": 2000000, "$400 thousand": 400000}),
    ("commute", {"12 km": 12, "3.5 km": 3.5, "40 km": 40, "8 km": 8}),
    ("started", None),    # dates: no sums
    ("name", None),       # text
    ("team size", None),  # numbers already
])
def test_the_numbers_the_cells_write(column, expected):
    assert cell_numbers(STAFF[column]) == expected


@pytest.mark.parametrize("program", [
    'df[df["department"] == "Engineering"]["salary"].sum()',
    'df.groupby("department")["salary"].sum().idxmax()',
    "df.salary.mean()",
    'df["salary"].max() - df["salary"].min()',
    'df[df["bonus"] != ""]["salary"].median()',
])
def test_arithmetic_on_a_column_of_amounts_reads_it_as_numbers_first(program):
    linked, notes = read_as_numbers(program, {"df": STAFF})
    assert linked.startswith("df['salary'] = df['salary'].map({'$124,000': 124000, '$78,500': 78500, ")
    assert linked.endswith("\n" + program)
    assert notes == ("'salary' read as the numbers its cells write ('$124,000' = 124000, '$78,500' = 78500, …), "
                     "not as text",)


@pytest.mark.parametrize("program", [
    'df["salary"].max()',  # ordered, not added (the value order's job)
    'df[df["salary"] == "$78,500"]["name"]',  # compared
    'df["name"].str.len().sum()',  # a text column's lengths
    'df["team size"].sum()',  # numbers already
    'df["salary"] = pd.to_numeric(df["salary"].str.replace(r"[^0-9.]", "", regex=True))\ndf["salary"].sum()',
    'df["started"].sum()',  # no amounts
    'df["salary"].sum(',  # no program
])
def test_other_programs_are_left_alone(program):
    assert read_as_numbers(program, {"df": STAFF}) is None


def test_a_named_table_and_two_columns():
    linked, notes = read_as_numbers('orders["salary"].sum() + orders["budget"].sum()', {"orders": STAFF})
    assert linked.splitlines()[0].startswith("orders['salary'] = orders['salary'].map(")
    assert linked.splitlines()[1].startswith("orders['budget'] = orders['budget'].map(")
    assert len(notes) == 2


def test_the_pipeline_adds_the_numbers_and_the_joined_text_gives_way():
    """The sampled program's sum joins the text and is refused; its linked version answers the total and
    votes in its place. With linking off, the question has no answer."""
    program = 'df[df["department"] == "Engineering"]["salary"].sum()'
    answer = Binder(lm=ScriptedLM(lambda request, purpose: [program] * 3), task="analyst", n=3, mode="python",
                    progress=False).ask(STAFF, "What is the total salary of Engineering?")
    assert answer.value == 255000
    assert "read as the numbers its cells write" in answer.explain()
    off = Binder(lm=ScriptedLM(lambda request, purpose: [program] * 3), task="analyst", n=3, mode="python",
                 progress=False, link_literals=False, repair_attempts=0).ask(STAFF, "What is the total salary?")
    assert off.value is None


@pytest.mark.parametrize("program", [
    'df["salary"].iloc[0] - df["salary"].iloc[1]',
    'df.loc[df["name"] == "Ben", "salary"].iloc[0] * 2',
    'df.loc[0, "salary"] + 1000',
    'df["salary"].sort_values().iloc[-1] / 12',
])
def test_arithmetic_on_one_value_of_the_column(program):
    assert read_as_numbers(program, {"df": STAFF})[0].startswith("df['salary'] = df['salary'].map(")


STATIONS = pd.DataFrame({"call sign": ["KAAA", "KBBB", "KCCC", "KDDD"],
                         "power": ["2.5\xa0kw", "5\xa0kw", "10\xa0kw", "50\xa0kw"]})


@pytest.mark.parametrize("program, compared", [
    ('df[df["power"] >= "5"].shape[0]', 'df[df["power"] >= 5].shape[0]'),  # as text, "10 kw" < "5"
    ('(df["power"] > 4).sum()', '(df["power"] > 4).sum()'),  # a number: text cannot be ordered against it
    ('df.loc[df["power"] < "10 kw", "call sign"]', 'df.loc[df["power"] < 10, "call sign"]'),
    ('df[("3" < df["power"]) & (df["power"] != "50\xa0kw")]', 'df[(3 < df["power"]) & (df["power"] != 50)]'),
])
def test_a_column_of_amounts_ordered_against_a_number_is_read_as_numbers(program, compared):
    linked, notes = read_as_numbers(program, {"df": STATIONS})
    assert linked == ("df['power'] = df['power'].map({'2.5\\xa0kw': 2.5, '5\\xa0kw': 5, '10\\xa0kw': 10, "
                      "'50\\xa0kw': 50})\n" + compared)
    assert len(notes) == 1


@pytest.mark.parametrize("program", [
    'df[df["power"] == "5\xa0kw"].shape[0]',  # compared for equality only: the cells' text is right
    'df[df["power"] > df["power"].iloc[0]]',  # ordered against the column itself (the value order's job)
    'df[df["call sign"] > "K"]',  # not amounts
])
def test_comparisons_that_need_no_numbers_are_left_alone(program):
    assert read_as_numbers(program, {"df": STATIONS}) is None


def test_the_pipeline_counts_by_the_numbers():
    program = 'df[df["power"] >= "5"].shape[0]'
    answer = Binder(lm=ScriptedLM(lambda request, purpose: [program]), task="wikitq", n=1, mode="python",
                    progress=False, repair_attempts=0).ask(STATIONS, "how many stations have at least 5 kw?")
    assert answer.value == 3  # as text: "5 kw" and "50 kw" (and an ordered categorical failed against "5")


def test_cells_that_write_no_number_count_as_empty():
    years = pd.Series(["2008", "?", "2003", "—", "1955", "n/a", ""])
    assert cell_numbers(years) == {"2008": 2008, "2003": 2003, "1955": 1955}
    assert cell_numbers(pd.Series(["?", "—"])) is None  # no number at all
    assert cell_numbers(pd.Series(["2008", "?", "about 1990"])) is None  # a cell that writes more than a number
    tramways = pd.DataFrame({"name": list("abcdefgh"), "year": ["2008", "?", "2003", "1955", "1958", "2004", "1966", "1979"]})
    answer = Binder(lm=ScriptedLM(lambda request, purpose: ['(df["year"] > 1970).sum()']), task="wikitq", n=1,
                    mode="python", progress=False, repair_attempts=0).ask(tramways, "how many opened after 1970?")
    assert answer.value == 4  # "?" is no year: not counted, and no TypeError (text against 1970)
