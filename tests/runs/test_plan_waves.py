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


def test_a_run_resumed_in_other_waves_replays_them_as_they_were(tmp_path: Path, monkeypatch):
    """The plan prompts of each wave of --concurrency questions are packed together. A run extended by
    a resume (--limit 1, then --limit 3), retried (--retry-errors) or interrupted answered its questions
    in other waves than one uninterrupted run of its selection: its replay packed them otherwise, and
    those plan requests missed. Each line now records its wave, and the replay packs the waves recorded."""
    from binder_py.bench.macro import Responder
    from binder_py.lm.testserver import LoopbackServer

    monkeypatch.setenv("BINDER_CACHE_DIR", str(tmp_path / "cache"))
    table = tmp_path / "t.csv"
    table.write_text("name,points,team\nalice,3,red\nbob,5,blue\ncarol,4,red\n", encoding="utf-8")
    colours = ["red", "blue", "green"]
    examples = [Example(id=f"q{i}", question=f"who plays for the {c} team?", table_path=str(table), gold=["alice"],
                        title="scores", subsets=frozenset({"dev"}), dataset="wikitq") for i, c in enumerate(colours)]

    class Model(Responder):  # the macro benchmark's neural answers (every plan answered in full)
        def _parse(self, text, n):
            colour = next(c for c in colours if f"the {c} team?" in text.rsplit("Q:", 1)[-1])
            return colour, [f'```python\ndf[f_col("Is the team {colour}?", ["team"])]["name"].iloc[0]\n```'] * n
    respond = Model({}, n=1)

    out = tmp_path / "run"
    with LoopbackServer(responder=respond) as server:
        for limit in (1, 3):  # waves [q0], then [q1, q2]; one run of three: [q0, q1], [q2]
            run_eval("wikitq", "dev", out=out, mode="binder", lm=f"openai:m@{server.base_url}", n=1,
                     examples=examples, limit=limit, progress=False, concurrency=2)
    records = {r["id"]: r for r in map(json.loads, (out / "results.jsonl").read_text().splitlines())}
    assert records["q0"]["plan_wave"] == ["q0"] and records["q2"]["plan_wave"] == ["q1", "q2"]
    replay = run_eval("wikitq", "dev", out=tmp_path / "replay", mode="binder", lm=f"replay:{out}",
                      examples=examples, limit=3, progress=False, concurrency=2)
    replayed = {r["id"]: r for r in map(json.loads, (tmp_path / "replay" / "results.jsonl").read_text().splitlines())}
    assert replay.errors == 0, [r["error"] for r in replayed.values()]
    assert {q: r["plan_wave"] for q, r in replayed.items()} == {q: r["plan_wave"] for q, r in records.items()}
