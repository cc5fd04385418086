"""Link, third kind: a program that orders a text column whose cells write numbers, durations or dates
runs again with that column ordered by value (an ordered categorical: the cells keep their text)."""

from __future__ import annotations

import pandas as pd
import pytest

from binder_py import Binder
from binder_py.answer import link_entry, superseded_by_links
from binder_py.lm import ScriptedLM
from binder_py.pipeline.text_order import order_by_value, value_order

STOCK = pd.DataFrame({"item": ["batteries", "cable", "paper", "stapler", "coffee"],
                      "unit cost": ["$3.50", "$6.99", "$4.25", "$8.00", "$14.90"],
                      "lead time": ["8h 10m", "11h 40m", "45 min", "1h 5m", "2h"],
                      "ordered": ["March 3, 2015", "2012-07-19", "11 Feb 2018", "June 30, 2010", "2019-09-01"],
                      "season date": ["October 31", "November 4", "January 4", "March 1", "April 2"],
                      "code": ["A10", "A9", "B1", "B2", "C3"], "stock": [120, 35, 300, 12, 18]})


@pytest.mark.parametrize("column, expected", [
    ("unit cost", ["$3.50", "$4.25", "$6.99", "$8.00", "$14.90"]),
    ("lead time", ["45 min", "1h 5m", "2h", "8h 10m", "11h 40m"]),
    ("ordered", ["June 30, 2010", "2012-07-19", "March 3, 2015", "11 Feb 2018", "2019-09-01"]),
    ("season date", None),   # no year: a season's October comes before its January
    ("code", None),          # text
    ("stock", None),         # numbers already
])
def test_the_order_of_the_values_the_cells_write(column, expected):
    assert value_order(STOCK[column]) == expected


@pytest.mark.parametrize("cells, expected", [
    (["12:30", "9:05", "10:15"], ["9:05", "10:15", "12:30"]),
    (["1:20:27", "1:19:56", "59:59"], None),                      # h:mm:ss beside m:ss: which is which?
    (["2:01.10", "1:18.02", "10:59.5"], ["1:18.02", "2:01.10", "10:59.5"]),
    (["10.1 s", "9.58 s"], ["9.58 s", "10.1 s"]),
    (["2004-05", "2005-06", "2003-04"], None),                     # seasons, in text order already
    (["2-1", "10-3", "3-0"], None),                                # scores: no year
    (["$836.8 million", "$2.26 billion", "$1.006 billion"], ["$836.8 million", "$1.006 billion", "$2.26 billion"]),
    (["12 km", "9 km", "6,650 km"], ["9 km", "12 km", "6,650 km"]),
    (["12 km", "9 mi"], None),                                     # two units
    (["A10", "A9"], None),                                         # codes
    (["6'5\"", "6'10\"", "5'11\""], ["5'11\"", "6'5\"", "6'10\""]),     # heights
    (["6–8", "6–10", "7–0"], ["6–8", "6–10", "7–0"]),
    (["6-15", "6-10"], None),                                      # no inches past 11: no heights
])
def test_clock_times_durations_amounts_and_measures(cells, expected):
    assert value_order(pd.Series(cells)) == expected


def test_a_column_in_value_order_already_and_empty_cells():
    assert value_order(pd.Series(["$1.00", "$2.00", "$3.00"])) is None
    assert value_order(pd.Series(["$10", "", "$9"])) == ["", "$9", "$10"]


def test_the_program_orders_the_column_by_value_first():
    program = 'df.sort_values("unit cost", ascending=False)["item"].iloc[0]'
    linked, notes = order_by_value(program, {"df": STOCK})
    assert linked.splitlines()[0] == ("df['unit cost'] = pd.Categorical(df['unit cost'], categories=['$3.50', '$4.25', "
                                      "'$6.99', '$8.00', '$14.90'], ordered=True)")
    assert linked.endswith(program) and notes == (
        "'unit cost' ordered by the values its cells write ('$3.50' < '$4.25' < '$6.99' < …), not as text",)
    chained = 'df[df["stock"] > 10][["item", "unit cost"]].loc[df["item"] != "x"].sort_values("unit cost")'
    assert order_by_value(chained, {"df": STOCK})[0].startswith("df['unit cost'] = pd.Categorical(")
    assert order_by_value('df["item"].max()', {"df": STOCK}) is None
    assert order_by_value('df["unit cost"] == "$8.00"', {"df": STOCK}) is None  # compared, not ordered
    changed = 'df["unit cost"] = pd.to_numeric(df["unit cost"].str[1:])\ndf["unit cost"].max()'
    assert order_by_value(changed, {"df": STOCK}) is None


@pytest.mark.parametrize("program, expected", [
    ('df[df["unit cost"] == df["unit cost"].max()]["item"].iloc[0]', "coffee"),
    ('df.loc[df["lead time"].idxmax(), "item"]', "cable"),
    ('df.sort_values("ordered")["item"].iloc[0]', "stapler"),
])
def test_the_pipeline_answers_by_value_and_the_text_order_gives_way(program, expected):
    lm = ScriptedLM(lambda request, purpose: [program] * 3)
    answer = Binder(lm=lm, task="analyst", n=3, mode="python", progress=False).ask(STOCK, "Which one?")
    assert answer.value == expected
    assert "ordered by the values its cells write" in answer.explain()
    off = Binder(lm=ScriptedLM(lambda request, purpose: [program] * 3), task="analyst", n=3, mode="python",
                 progress=False, link_literals=False).ask(STOCK, "Which one?")
    assert off.value != expected


def test_a_reordered_link_supersedes_its_source_only_when_it_answers():
    reorder = ["'unit cost' ordered by the values its cells write ('$3.50' < …), not as text"]
    answered = [link_entry("sample", True, "stapler", None), link_entry("link", True, "coffee", 0, reorder)]
    assert superseded_by_links(answered) == {0}
    failed = [link_entry("sample", True, "stapler", None), link_entry("link", False, None, 0, reorder)]
    assert superseded_by_links(failed) == {1}
    literal = [link_entry("sample", True, "stapler", None), link_entry("link", True, "coffee", 0, ["'a': 'x' → 'y'"])]
    assert superseded_by_links(literal) == {0}  # a literal link replaces a source that answered from no rows
    verdict = [link_entry("sample", True, False, None), link_entry("link", True, True, 0, ["'a': 'x' → 'y'"])]
    assert superseded_by_links(verdict) == {1}  # ... but not one whose bare yes/no may be right as written
    verdict_reordered = [link_entry("sample", True, False, None), link_entry("link", True, True, 0, reorder)]
    assert superseded_by_links(verdict_reordered) == {0}


def test_two_programs_that_order_by_value_are_both_linked():
    """The link stage reads each column's value order once for all its candidates: a second program
    that orders a column (the same or another) is linked too, not a crash (session 22's analyst run)."""
    programs = iter(['df.loc[df["unit cost"].idxmax(), "item"]', 'df.sort_values("unit cost")["item"].iloc[-1]',
                     'df.loc[df["lead time"].idxmax(), "item"]'])
    lm = ScriptedLM(lambda request, purpose: [next(programs) for _ in range(3)])
    answer = Binder(lm=lm, task="analyst", n=3, mode="python", progress=False).ask(STOCK, "Which one?")
    linked = [c for c in answer.candidates if c.origin == "link"]
    assert len(linked) == 3 and all(c.links for c in linked)
    assert answer.value == "coffee"
