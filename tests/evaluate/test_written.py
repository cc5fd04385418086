"""Numbers reported as the table writes them (binder_py/evaluate/written.py): the unit rules, a WikiTQ
evaluation whose answer is a cell written "10,031", and its report's re-vote."""

from __future__ import annotations

import json

import numpy as np
import pytest

from binder_py.datasets.common import Example
from binder_py.evaluate.judge import score_prediction
from binder_py.evaluate.written import (MAX_RECORDED, as_written, number_key, recorded_written_numbers, used_written,
                                        written_numbers)
from binder_py.lm import ScriptedLM
from binder_py.runs import load_run, revote, run_eval
from binder_py.tasks import task_profile


def test_only_cells_written_with_thousands_separators_are_kept():
    cells = ["10,031", " 9,800 ", "1,234.50", "-2,000", "1500", "1,2345", "01,000", "abc", "", "10,031.0"]
    assert written_numbers(cells) == {"10031": "10,031", "9800": "9,800", "1234.5": "1,234.50", "-2000": "-2,000"}


def test_number_keys_match_ints_floats_and_numpy_alike_and_nothing_else():
    assert number_key(10031) == number_key(10031.0) == number_key(np.int64(10031)) == "10031"
    assert number_key(np.float64(1234.5)) == "1234.5"
    for other in (True, np.bool_(False), "10031", None, float("nan"), float("inf"), [1]):
        assert number_key(other) is None


def test_as_written_replaces_the_numbers_it_holds_in_lists_too_and_nothing_else():
    written = {"10031": "10,031", "9800": "9,800"}
    assert as_written(10031, written) == "10,031"
    assert as_written(np.int64(9800), written) == "9,800"
    assert as_written([10031, 5, "x", 9800.0], written) == ["10,031", 5, "x", "9,800"]
    assert as_written(("a", 10031), written) == ("a", "10,031")
    assert as_written(10032, written) == 10032 and as_written(True, {"1": "1,000"}) is True
    assert as_written(10031, {}) == 10031


def test_a_results_line_records_only_the_entries_its_answers_use():
    written = {"10031": "10,031", "9800": "9,800", "12000": "12,000"}
    assert used_written(written, [10031, [9800, 3], None, "x"]) == {"10031": "10,031", "9800": "9,800"}


@pytest.mark.parametrize("recorded", [
    None, [], "10031", {"10031": 10031}, {10031: "10,031"}, {"10031": "10031"}, {"10031": "99,999"},
    {"10031": "10,031; import os"}, {str(i): f"{i:,}" for i in range(1000, 1000 + MAX_RECORDED + 1)},
])
def test_a_recorded_map_that_is_not_number_texts_to_their_written_forms_is_ignored(recorded):
    assert recorded_written_numbers(recorded) == {}


def test_a_recorded_map_of_written_numbers_is_read_back():
    assert recorded_written_numbers({"10031": "10,031", "1234.5": "1,234.50"}) == {"10031": "10,031",
                                                                                  "1234.5": "1,234.50"}


def test_only_wikitq_reports_numbers_as_written():
    assert task_profile("wikitq").numbers_as_written
    assert not task_profile("tabfact").numbers_as_written and not task_profile("analyst").numbers_as_written


TABLE = 'name,attendance,year\nalpha,"10,031",1999\nbeta,"9,800",2001\ngamma,"12,450",2003\n'
PROGRAMS = {  # question -> programs sampled (n = 3), gold
    "what was the attendance for alpha?": (['df.loc[df["name"] == "alpha", "attendance"].iloc[0]'] * 3, ["10,031"]),
    "what is the total attendance?": (['df["attendance"].sum()'] * 3, ["32,281"]),
    "which year had the most attendance?": (['df.loc[df["attendance"].idxmax(), "year"]'] * 3, ["2003"]),
}


def test_a_wikitq_run_reports_a_cell_written_with_separators_as_written_and_its_report_agrees(tmp_path):
    table = tmp_path / "data" / "t.csv"
    table.parent.mkdir()
    table.write_text(TABLE, encoding="utf-8")
    examples = [Example(id=f"q{i}", question=q, table_path=str(table), gold=gold, dataset="wikitq",
                        subsets=frozenset({"dev"}), table_root=str(table.parent))
                for i, (q, (_, gold)) in enumerate(PROGRAMS.items())]
    assert examples[0].written_numbers() == {"10031": "10,031", "9800": "9,800", "12450": "12,450"}

    def respond(request, purpose):
        text = request.prompt if request.prompt is not None else "\n".join(c for _, c in request.messages)
        question = max(PROGRAMS, key=lambda q: text.lower().rfind(q))
        return "" if purpose == "repair" else list(PROGRAMS[question][0])

    out = tmp_path / "run"
    run_eval("wikitq", "dev", out=out, mode="python", lm=ScriptedLM(respond), n=3, examples=examples,
             progress=False, concurrency=1)
    lines = {r["id"]: r for r in map(json.loads, (out / "results.jsonl").read_text().splitlines())}
    cell, total, year = lines["q0"], lines["q1"], lines["q2"]
    # the cell as the table writes it: the official evaluator reads "10,031" as text, and 10031 was wrong
    assert cell["prediction"] == "10,031" and cell["official"] and cell["written_numbers"] == {"10031": "10,031"}
    assert not score_prediction("wikitq", cell["question"], ["10,031"], 10031)["official"]
    # a computed number no cell holds, and a number the table writes plainly, are left as they are
    assert total["prediction"] == 32281 and "written_numbers" not in total
    assert year["prediction"] == 2003 and year["official"] and "written_numbers" not in year
    run = load_run(out)
    for record in run.records:  # the report's re-vote reports the answer as the run did
        assert revote(record, 3, run.config) == record["prediction"]
