"""Evaluation waves (neural/batching.py) with questions that share neural calls."""

from __future__ import annotations

import json
import time
from functools import partial
from pathlib import Path

from binder_py.datasets.common import Example
from binder_py.lm import ScriptedLM
from binder_py.neural import batching
from binder_py.runs import evaluation, run_eval

PROGRAM = 'df[f_col("Is the team red?", ["team"])]["name"].iloc[0]'


def test_two_questions_of_one_wave_asking_the_same_rows_do_not_wait_for_each_other(tmp_path: Path, monkeypatch):
    """Two questions about one table, in one wave, whose programs ask the same f_col question:
    the first to plan claims the rows, the other's program waits for that plan, and the plan
    went out only when the other question had finished too: both waited until max_wait (600 s)."""
    monkeypatch.setattr(evaluation, "PlanWaves", partial(batching.PlanWaves, max_wait=10.0))
    table = tmp_path / "t.csv"
    table.write_text("name,points,team\nalice,3,red\nbob,5,blue\ncarol,4,red\n", encoding="utf-8")
    examples = [Example(id=f"q{i}", question=q, table_path=str(table), gold=["alice"], title="scores",
                        subsets=frozenset({"dev"}), dataset="wikitq")
                for i, q in enumerate(["who is on the red team?", "who plays for team red?"])]

    def reply(request, purpose):
        if purpose == "parse":
            return PROGRAM
        if purpose == "repair":
            return ""
        return "Table A\nrow_id\tIs the team red?\n0\tyes\n1\tno\n*/"
    started = time.perf_counter()
    summary = run_eval("wikitq", "dev", out=tmp_path / "run", mode="binder", lm=ScriptedLM(reply), n=2,
                       examples=examples, progress=False, concurrency=2)
    seconds = time.perf_counter() - started
    records = [json.loads(line) for line in (tmp_path / "run" / "results.jsonl").read_text().splitlines()]
    assert summary.config["plan_wave"] == 2
    assert [r["prediction"] for r in records] == ["alice", "alice"]
    assert not any("had not planned yet" in w for r in records for w in r["warnings"])
    assert seconds < 8
