"""The Ray engine on a local Ray (``ray.init(num_cpus=2)``): the same records as a local run,
one recording, a killed worker's question retried, a killed driver resumed, the budget
held across workers, ``ask_many(engine="ray")``.

The model is the macro benchmark's scripted programs and neural answers behind the
loopback OpenAI-compatible server (real HTTP), on real WikiTQ dev questions.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.ray
ray = pytest.importorskip("ray", reason="the ray extra is not installed (pip install -e \".[ray]\")")

from binder_py.bench.engines import repeated_questions, responder_for  # noqa: E402
from binder_py.errors import BinderError  # noqa: E402
from binder_py.lm.testserver import LoopbackServer  # noqa: E402
from binder_py.runs import report, run_eval  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
N = 5
VOLATILE = {"seconds", "finished_at", "timings", "usage", "warnings", "lm", "neural_calls", "plan_wave"}  # (no waves on Ray)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    try:
        from binder_py.datasets import resolve_data_dir

        resolve_data_dir(None, "wikitq")
    except BinderError:
        pytest.skip("shared benchmark data not found (../shared/data): these tests use WikiTQ dev tables")
    cache = tmp_path_factory.mktemp("lm-cache")
    os.environ["BINDER_CACHE_DIR"] = str(cache)
    ray.init(num_cpus=2, include_dashboard=False, logging_level="WARNING",
             runtime_env={"env_vars": {"PYTHONPATH": str(ROOT), "BINDER_CACHE_DIR": str(cache)}})
    try:
        yield ray.get_runtime_context().gcs_address
    finally:
        ray.shutdown()
        os.environ.pop("BINDER_CACHE_DIR", None)


@pytest.fixture(scope="module")
def examples(cluster):
    return repeated_questions(6)


def evaluate(examples, out, engine, *, latency=0.0, spec_options="", **kw):
    with LoopbackServer(responder=responder_for(examples, N), latency=latency) as server:
        spec = f"openai:gpt-4o-mini@{server.base_url}{spec_options}"
        summary = run_eval("wikitq", "dev", out=out, mode="binder", lm=spec, n=N, examples=examples, cache=False,
                           concurrency=2, progress=False, engine=engine, **kw)
        server.endpoint = server.base_url  # (the address is gone once the server stops)
        return summary, server


def records(out: Path) -> dict[str, dict]:
    lines = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    return {r["id"]: r for r in lines}


def timeless(value):
    """``value`` without its clock readings (``timings``, ``seconds``): all else must be equal."""
    if isinstance(value, dict):
        return {k: timeless(v) for k, v in value.items() if k not in ("timings", "seconds")}
    if isinstance(value, list):
        return [timeless(v) for v in value]
    return value


def comparable(record: dict) -> dict:
    return timeless({k: v for k, v in record.items() if k not in VOLATILE})


@pytest.fixture(scope="module")
def local_run(examples, tmp_path_factory):
    out = tmp_path_factory.mktemp("local") / "run"
    evaluate(examples, out, "local")
    return out


def test_a_ray_run_writes_the_same_records_as_a_local_run(examples, local_run, tmp_path):
    summary, _ = evaluate(examples, tmp_path / "ray", "ray")
    assert summary.engine == "ray" and summary.answered == len(examples) and summary.errors == 0
    local, remote = records(local_run), records(tmp_path / "ray")
    assert sorted(local) == sorted(remote) == sorted(e.id for e in examples)
    for qid in local:
        assert remote[qid]["prediction"] == local[qid]["prediction"]
        assert timeless(remote[qid]["candidates"]) == timeless(local[qid]["candidates"])
        assert comparable(remote[qid]) == comparable(local[qid])
    assert json.loads((tmp_path / "ray" / "config.json").read_text())["engine"] == "ray"
    first, second = report([local_run, tmp_path / "ray"]).metrics  # binder-py report reads both alike
    assert first["questions"] == second["questions"] == len(examples)
    assert first["accuracy"] == second["accuracy"] and first["requests_per_question"] > 0
    # the workers' recording reached the run's lm.sqlite: the run replays offline, here on the local engine
    replay = run_eval("wikitq", "dev", out=tmp_path / "replay", mode="binder", lm=f"replay:{tmp_path / 'ray'}",
                      n=N, examples=examples, concurrency=2, progress=False)
    assert replay.errors == 0
    assert {q: r["prediction"] for q, r in records(tmp_path / "replay").items()} == \
        {q: r["prediction"] for q, r in local.items()}


def test_the_budget_holds_for_the_whole_cluster(examples, tmp_path):
    # two questions run at once on two workers, but the endpoint allows one request at a time
    summary, server = evaluate(examples[:4], tmp_path / "ray", "ray", latency=0.05, spec_options="?concurrency=1")
    assert summary.errors == 0 and server.request_count >= 4
    assert server.max_in_flight == 1
    from binder_py.engines.budget import NAMESPACE, budget_name

    actor = ray.get_actor(budget_name(server.endpoint), namespace=NAMESPACE)
    stats = ray.get(actor.stats.remote())
    assert stats["granted"] == server.request_count and stats["max_in_flight"] == 1 and stats["in_flight"] == 0


def test_a_killed_workers_question_is_run_again(tmp_path):
    from binder_py.engines.ray_engine import RayEngine, WorkerRecipe, new_run_key

    marker = tmp_path / "killed"

    def make_binder(lm):
        from binder_py.ask import Binder
        from binder_py.lm import ScriptedLM

        return Binder(lm=ScriptedLM(lambda r, p: "A: 1"), progress=False)

    def work(binder, item):
        if item == 2 and not marker.exists():
            marker.write_text(str(os.getpid()))
            os._exit(1)  # the worker dies in the middle of the question
        return item * 10

    engine = RayEngine(WorkerRecipe(key=new_run_key(), make_binder=make_binder), concurrency=2)
    assert dict(engine.run(work, range(4))) == {0: 0, 1: 10, 2: 20, 3: 30}
    assert marker.exists()


def test_a_question_whose_worker_keeps_dying_becomes_an_error_line(tmp_path):
    from binder_py.engines.ray_engine import RayEngine, WorkerRecipe, new_run_key

    def make_binder(lm):
        from binder_py.ask import Binder

        return Binder(lm="replay:/nonexistent", progress=False)

    def work(binder, item):
        if item == 1:
            os._exit(1)
        return item

    engine = RayEngine(WorkerRecipe(key=new_run_key(), make_binder=make_binder), concurrency=2, max_retries=1,
                       lost=lambda item, error: f"lost {item}: {type(error).__name__}")
    got = dict(engine.run(work, range(3)))
    assert got == {0: 0, 1: "lost 1: WorkerCrashedError", 2: 2}


def test_a_killed_driver_resumes_losing_only_questions_in_flight(cluster, examples, local_run, tmp_path):
    ids = tmp_path / "ids.txt"
    ids.write_text("\n".join(e.id for e in examples if "~" not in e.id) + "\n")
    wanted = [e for e in examples if "~" not in e.id]
    out = tmp_path / "run"
    with LoopbackServer(responder=responder_for(wanted, N), latency=0.4) as server:
        spec = f"openai:gpt-4o-mini@{server.base_url}"
        command = [sys.executable, "-m", "binder_py", "eval", "wikitq", "--split", "dev", "--ids", str(ids),
                   "--lm", spec, "--n", str(N), "--no-cache", "--concurrency", "2", "--quiet", "--out", str(out),
                   "--engine", "ray", "--ray-address", cluster]
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        driver = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        results = out / "results.jsonl"
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and driver.poll() is None:
            if results.exists() and results.read_text().count("\n") >= 1:
                break
            time.sleep(0.05)
        assert driver.poll() is None, driver.communicate()[1].decode()[-2000:]
        driver.send_signal(signal.SIGKILL)
        driver.wait()
        kept = records(out)
        assert 1 <= len(kept) < len(wanted)
        # the same command again resumes: finished questions are not asked again
        summary = run_eval("wikitq", "dev", out=out, mode="binder", lm=spec, n=N, ids=[e.id for e in wanted],
                           cache=False, concurrency=2, progress=False, engine="ray")
    assert summary.skipped == len(kept) and summary.answered == len(wanted) - len(kept)
    final, local = records(out), records(local_run)
    assert sorted(final) == sorted(e.id for e in wanted)
    assert (out / "results.jsonl").read_text().count("\n") == len(wanted)  # each question once
    for qid, record in final.items():  # (the CLI run names tables relative to the data directory)
        assert record["prediction"] == local[qid]["prediction"]
        assert timeless(record["candidates"]) == timeless(local[qid]["candidates"])


def test_ask_many_on_ray_gives_the_local_answers_and_records_them(examples, tmp_path):
    import sqlite3

    from binder_py.ask import Binder

    items = [{"table": e.load_table(), "question": e.question, "title": e.title, "question_id": e.id}
             for e in examples[:3]]
    settings = {"cache": False, "task": "wikitq", "n": N, "progress": False}
    answers = {}
    with LoopbackServer(responder=responder_for(examples, N)) as server:
        for engine in ("local", "ray"):
            binder = Binder(lm=f"openai:gpt-4o-mini@{server.base_url}", record_dir=str(tmp_path / engine), **settings)
            answers[engine] = binder.ask_many(items, concurrency=2, engine=engine)
            binder.close()
    local, remote = answers["local"], answers["ray"]
    assert [a.value for a in remote] == [a.value for a in local]
    assert [[c.program for c in a.candidates] for a in remote] == [[c.program for c in a.candidates] for a in local]

    def recorded(engine):  # the workers' answers went into record_dir/lm.sqlite, as the local run's did
        with sqlite3.connect(tmp_path / engine / "lm.sqlite") as db:
            return (sorted(db.execute("SELECT key, response_json FROM responses")),
                    sorted(db.execute("SELECT lm, endpoint, model FROM models")))

    assert recorded("ray") == recorded("local") and len(recorded("local")[0]) >= 3
    replayed = Binder(lm=f"replay:{tmp_path / 'ray'}", **settings).ask_many(items, concurrency=2)
    assert [a.value for a in replayed] == [a.value for a in local]


def test_ask_many_on_ray_gives_a_table_that_cannot_be_read_as_its_items_error(examples, tmp_path):
    """On Ray, ask_many reads table files before sending them: one missing file raised for the
    whole list, with return_exceptions too (and without saying which item), where the local
    engine puts the error in that item's place and answers the others."""
    from binder_py.ask import Binder
    from binder_py.errors import TableError

    items = [{"table": examples[0].load_table(), "question": examples[0].question, "title": examples[0].title},
             {"table": str(tmp_path / "missing.csv"), "question": "how many?"}]
    with LoopbackServer(responder=responder_for(examples, N)) as server:
        binder = Binder(lm=f"openai:gpt-4o-mini@{server.base_url}", cache=False, task="wikitq", n=N, progress=False)
        answers = binder.ask_many(items, concurrency=2, engine="ray", return_exceptions=True)
        with pytest.raises(BinderError, match=r"^ask_many items\[1\]: .*missing.csv: no such file"):
            binder.ask_many(items, engine="ray")
        binder.close()
    assert answers[0].value is not None and isinstance(answers[1], TableError)


def test_a_model_object_that_cannot_be_sent_is_a_one_line_error(examples, tmp_path):
    from binder_py.lm import ScriptedLM

    lm = ScriptedLM(lambda r, p: "A: 1")  # holds locks: it cannot be pickled
    with pytest.raises(BinderError, match="give the model as an --lm spec string"):
        run_eval("wikitq", "dev", out=tmp_path / "run", mode="e2e", lm=lm, n=1, examples=examples[:1],
                 progress=False, engine="ray")


def test_a_worker_catches_up_on_the_base_and_the_deltas_it_has_not_seen(cluster):
    from binder_py.engines.ray_engine import _catch_up, _WorkerState
    from binder_py.neural import NeuralCache

    def rows(*keys):
        return {"rows": {("lm:m", "col", "q?", ("c",), k): "yes" for k in keys}, "vals": {}}

    cache = NeuralCache()
    state = _WorkerState(key="run", binder=None, recording=None)
    snapshot = [1, ray.put(rows("a", "b")), [(2, ray.put(rows("c"))), (3, ray.put(rows("d")))]]
    _catch_up(cache, state, snapshot)
    assert len(cache) == 4 and state.neural_version == 3
    snapshot[2].append((4, ray.put(rows("e"))))
    _catch_up(cache, state, snapshot)  # only the new delta
    assert len(cache) == 5 and state.neural_version == 4
    _catch_up(cache, state, [5, ray.put(rows("a", "f")), []])  # a new base
    assert len(cache) == 6 and state.neural_version == 5
