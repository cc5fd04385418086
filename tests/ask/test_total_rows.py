"""A table's last row that adds up the rows above it (``Total | | 11 | 11 | 33``) is set aside before a
question is asked, and the answer says so; ``keep_total_row`` keeps it. Rows that only look like one
(no sum behind them, or a column where every row says "Total") are data and stay."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from binder_py.ask import Binder
from binder_py.cli import main
from binder_py.errors import BinderError
from binder_py.lm import ScriptedLM
from binder_py.lm.testserver import LoopbackServer
from binder_py.tables import prepare_table
from binder_py.total_rows import find_total_row, without_total_row

MEDALS = prepare_table(pd.DataFrame({
    "Rank": ["1", "2", "3", "Total"],
    "Nation": ["Norway", "Italy", "Peru", ""],
    "Gold": ["3", "1", "0", "4"],
    "Total": ["5", "2", "1", "8"],
}, dtype=object))


def test_a_last_row_that_adds_up_the_rows_above_is_found():
    found = find_total_row(MEDALS)
    assert found is not None and found.label == "Total" and found.label_column == "Rank"
    assert found.summed_columns == ("Gold", "Total")
    table, again = without_total_row(MEDALS)
    assert again == found and len(table) == 3 and list(table["Nation"]) == ["Norway", "Italy", "Peru"]
    assert str(table["Rank"].dtype) == "int64"  # typed again: the column held the word "Total"


@pytest.mark.parametrize("last", [
    ["Totals:", "", "4", "8"],
    ["GRAND TOTAL", "", "4", "8"],
    ["", "Overall", "4", "8"],
    ["Total*", "", "4.0", "8"],
])
def test_the_ways_a_total_row_is_labelled(last):
    table = prepare_table(pd.DataFrame([["1", "Norway", "3", "5"], ["2", "Italy", "1", "2"], ["3", "Peru", "0", "1"], last],
                                       columns=["Rank", "Nation", "Gold", "Total"], dtype=object))
    assert find_total_row(table) is not None


@pytest.mark.parametrize("rows", [
    # the word, but no column adds up
    [["a", "3"], ["b", "1"], ["Total", "9"]],
    # every row of the column says Total: eclipse types, not a total row
    [["Total", "3"], ["Partial", "1"], ["Total", "4"]],
    # a total row needs two rows above it
    [["a", "3"], ["Total", "3"]],
    # no label
    [["a", "3"], ["b", "1"], ["c", "4"]],
    # a column of text above the number
    [["a", "x"], ["b", "1"], ["Total", "1"]],
    # zeros that add up to zero prove nothing
    [["a", "0"], ["b", "0"], ["Total", "0"]],
])
def test_rows_that_only_look_like_a_total_are_data(rows):
    table = prepare_table(pd.DataFrame(rows, columns=["name", "value"], dtype=object))
    assert find_total_row(table) is None
    assert without_total_row(table)[0] is table


def counting_lm() -> ScriptedLM:
    return ScriptedLM(lambda request, purpose: ["df['Gold'].sum()", "df['Gold'].sum()", "len(df)"])


def test_the_programs_run_without_it_and_the_answer_says_so():
    answer = Binder(lm=counting_lm(), n=3, progress=False, cache=False).ask(MEDALS, "how many gold medals in all?")
    assert answer.value == 4  # not 8: the total row counted again
    assert any("the last row of the table ('Total' in column 'Rank') adds up the rows above it" in w
               and "keep_total_row=True" in w for w in answer.warnings)
    assert len(answer.table) == 3


def test_keep_total_row_keeps_it():
    answer = Binder(lm=counting_lm(), n=3, progress=False, cache=False, keep_total_row=True).ask(
        MEDALS, "how many gold medals in all?")
    assert answer.value == 8 and not any("adds up the rows above" in w for w in answer.warnings)
    with pytest.raises(BinderError, match="keep_total_row is True or False"):
        Binder(lm=counting_lm(), progress=False, keep_total_row="yes")


def test_each_named_table_is_read_on_its_own():
    other = pd.DataFrame({"city": ["Oslo", "Rome", "Total"], "people": [1, 2, 3]})
    lm = ScriptedLM(lambda request, purpose: ["len(medals) + len(cities)"] * 3)
    answer = Binder(lm=lm, n=3, progress=False, cache=False).ask({"medals": MEDALS, "cities": other}, "rows?")
    assert answer.value == 5
    notes = [w for w in answer.warnings if "adds up the rows above" in w]
    assert len(notes) == 2 and "table 'medals'" in notes[0] and "table 'cities'" in notes[1]


def test_the_cli_option_keeps_it(tmp_path, capsys):
    path = tmp_path / "medals.csv"
    pd.DataFrame({"Rank": ["1", "2", "3", "Total"], "Gold": [3, 1, 0, 4]}).to_csv(path, index=False)
    with LoopbackServer(responder=lambda body, api: "```python\nlen(df)\n```") as server:
        spec = f"openai:test-model@{server.base_url}"
        for extra, rows in (([], 3), (["--keep-total-row"], 4)):
            assert main(["ask", str(path), "how many rows?", "--lm", spec, "--no-cache", "--json", *extra]) == 0
            assert json.loads(capsys.readouterr().out)["value"] == rows


def test_a_run_recorded_before_total_rows_were_set_aside_is_compared_as_keeping_them():
    from binder_py.runs.records import config_differences

    old = {"format": 1, "task": "wikitq", "mode": "binder", "lm": "local", "n": 5, "settings": {}}
    assert config_differences(old, {**old, "keep_total_row_effective": False}) == ["keep_total_row: True -> False"]
    assert config_differences(old, {**old, "keep_total_row_effective": True, "settings": {"keep_total_row": True}}) == []
