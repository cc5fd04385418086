"""The engines' parts that need no Ray: the endpoint budget's policy, the captured recording,
the neural cache merge, the local engine, and the one-line error when Ray is missing."""

from __future__ import annotations

import threading
import time

import pytest

from binder_py.cli import main
from binder_py.engines import RAY_INSTALL_HINT, check_engine
from binder_py.engines.budget import BudgetLimits, EndpointBudget, limits_for_spec
from binder_py.engines.local import LocalEngine
from binder_py.engines.neural_share import (MergedNeuralCache, add_entries, cache_keys, hit_rate, model_answers,
                                            new_entries)
from binder_py.engines.recording import CapturedRecording, write_recording
from binder_py.errors import BinderError
from binder_py.lm import LMRequest, ReplayLM
from binder_py.lm.store import LMStore, cache_key, request_key
from binder_py.lm.types import Choice
from binder_py.neural import NeuralCache
from binder_py.neural.backends import NeuralAnswer
from binder_py.neural.requests import NeuralRequest


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def budget(**limits) -> tuple[EndpointBudget, Clock]:
    clock = Clock()
    return EndpointBudget(BudgetLimits(endpoint="http://llm:8000/v1", **limits), clock=clock), clock


# --- the endpoint budget ---------------------------------------------------------------------------
def test_budget_caps_requests_in_flight_across_all_holders():
    b, _ = budget(max_concurrency=2)
    first, second = b.try_acquire(), b.try_acquire()
    assert first[0] is not None and second[0] is not None
    lease, wait = b.try_acquire()
    assert lease is None and wait > 0  # a third worker waits
    assert b.release(first[0]) and b.try_acquire()[0] is not None
    assert b.stats.max_in_flight == 2


def test_a_lease_its_holder_never_returns_expires():
    b, clock = budget(max_concurrency=1, lease_seconds=30)
    lease, _ = b.try_acquire()
    assert b.try_acquire()[0] is None
    clock.now += 31  # the worker holding it was killed
    again, _ = b.try_acquire()
    assert again is not None and b.stats.expired == 1
    assert not b.release(lease)  # a late release of the expired lease frees nothing twice
    assert b.in_flight == 1


def test_requests_per_minute_hold_for_the_whole_cluster():
    b, clock = budget(max_concurrency=None, rpm=3)
    for _ in range(3):
        lease, _ = b.try_acquire()
        b.release(lease)
    lease, wait = b.try_acquire()
    assert lease is None and 59 < wait <= 60
    clock.now += wait
    assert b.try_acquire()[0] is not None


def test_the_retry_budget_refuses_retries_beyond_floor_plus_ratio():
    b, clock = budget(max_concurrency=None, retry_floor=2, retry_ratio=0.5)
    for _ in range(4):
        b.release(b.try_acquire()[0])
    granted = [b.retry(0.1) for _ in range(5)]
    assert granted[:4] == [0.1] * 4 and granted[4] is None  # 2 + 0.5 * 4 = 4 retries a minute
    assert b.stats.retries == 4 and b.stats.retries_refused == 1
    clock.now += 61
    for _ in range(4):
        b.release(b.try_acquire()[0])
    assert b.retry(0.1) == 0.1  # a new minute


def test_retry_after_pauses_the_endpoint_for_everyone():
    b, clock = budget(max_concurrency=None)
    b.release(b.try_acquire()[0])
    assert b.retry(5.0, retry_after=5.0) == 5.0  # the worker told to wait
    lease, wait = b.try_acquire()  # another worker asking now waits too
    assert lease is None and wait == pytest.approx(5.0)
    assert b.retry(0.5) == pytest.approx(5.0)  # and a retry elsewhere waits out the pause
    clock.now += 5.0
    assert b.try_acquire()[0] is not None and b.stats.paused_seconds == pytest.approx(5.0)


def test_a_new_runs_limits_replace_the_actors_only_when_nothing_is_in_flight():
    import asyncio

    from binder_py.engines.budget import BudgetActor

    first, second = BudgetLimits(endpoint="e", max_concurrency=2), BudgetLimits(endpoint="e", max_concurrency=8)

    async def scenario():
        actor = BudgetActor(first)
        lease = await actor.acquire(10)
        held = await actor.configure(second)  # a request is in flight: the running limits hold
        await actor.release(lease)
        return held, await actor.configure(second), (await actor.stats())["limits"]["max_concurrency"]

    assert asyncio.run(scenario()) == (first, second, 8)


def test_limits_come_from_the_spec_and_are_keyed_by_endpoint(monkeypatch):
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    limits = limits_for_spec("openai:qwen@http://vllm:8000/v1?concurrency=64&rpm=600&tpm=100000")
    assert (limits.endpoint, limits.max_concurrency, limits.rpm, limits.tpm) == ("http://vllm:8000/v1", 64, 600, 100000)
    assert limits_for_spec("openai:gpt-4o-mini").endpoint == "https://api.openai.com/v1"
    assert limits_for_spec("openai:gpt-4o-mini").max_concurrency == 16
    assert limits_for_spec("local") is None and limits_for_spec("replay:runs/x") is None


# --- the captured recording --------------------------------------------------------------------------
def test_captured_writes_make_a_replayable_recording(tmp_path):
    capture = CapturedRecording()
    request = LMRequest(prompt="Q: 1+1?", n=1, temperature=0.0, max_tokens=8)
    capture.put_model("openai:m", "http://llm/v1", "m", 4096)
    capture.put(cache_key("http://llm/v1", "m", "completions", request), request_key(request), lm="openai:m",
                endpoint="http://llm/v1", model="m", api="completions", request=request,
                choices=[Choice(text="2", mean_logprob=None, finish_reason="stop")], prompt_tokens=5,
                completion_tokens=1)
    capture.put_token_count("openai:m", "Q: 1+1?", 5)
    writes = capture.drain()
    assert len(writes) == 3 and capture.drain() == []
    store = LMStore(tmp_path / "lm.sqlite")
    assert write_recording(store, writes) == 3
    store.close()
    replay = ReplayLM(tmp_path)
    assert replay.complete(request).choices[0].text == "2" and replay.count_tokens("Q: 1+1?") == 5
    with pytest.raises(ValueError, match="not a recorder write"):
        write_recording(store, [("execute", ("DROP TABLE log",), {})])


# --- the neural cache merge ---------------------------------------------------------------------------
def _answer(request: NeuralRequest) -> NeuralAnswer:
    return NeuralAnswer(answers={k: f"yes-{k}" for k in request.keys}, value=None)


def test_new_answers_travel_from_one_workers_cache_to_another():
    worker_a, worker_b = NeuralCache(), NeuralCache()
    request = NeuralRequest(kind="col", question="Is it big?", columns=("city",), rows=[("paris",), ("rome",)],
                            keys=["paris", "rome"])
    before = cache_keys(worker_a)
    worker_a.resolve_col("lm:m", request, _answer)
    delta = new_entries(worker_a, before)
    assert len(delta["rows"]) == 2 and delta["vals"] == {}
    merged = MergedNeuralCache()
    assert merged.merge(delta, {"row_misses": 2}) == 2 and merged.has_pending
    published = merged.take_pending()
    assert merged.merge(delta) == 0 and not merged.has_pending  # nothing new, no new snapshot
    assert add_entries(worker_b, published) == 2
    calls = []
    found = worker_b.resolve_col("lm:m", request, lambda r: calls.append(r) or _answer(r))
    assert found.from_cache and not calls and found.answers == {"paris": "yes-paris", "rome": "yes-rome"}
    assert hit_rate({"row_hits": 3, "row_misses": 1}) == 0.75
    assert model_answers({"row_misses": 1, "val_misses": 2, "prefilled_rows": 4}) == 7


# --- the local engine and the engine choice -------------------------------------------------------------
class FakeBinder:
    neural_cache = NeuralCache()


def test_the_local_engine_yields_every_result_with_its_index():
    engine = LocalEngine(FakeBinder(), concurrency=3)
    got = dict(engine.run(lambda binder, x: x * x, range(10)))
    assert got == {i: i * i for i in range(10)}


def test_closing_the_local_engine_early_cancels_the_questions_not_started():
    started = []
    lock = threading.Lock()

    def slow(binder, x):
        with lock:
            started.append(x)
        time.sleep(0.05)
        return x

    results = LocalEngine(FakeBinder(), concurrency=2).run(slow, range(50))
    next(results)
    results.close()
    time.sleep(0.2)
    assert len(started) < 10


def test_an_unknown_engine_and_a_missing_ray_are_one_line_errors(monkeypatch, capsys, tmp_path):
    with pytest.raises(BinderError, match="unknown engine 'spark'"):
        check_engine("spark")
    import binder_py.engines as engines

    monkeypatch.setattr(engines, "ray_installed", lambda: False)
    status = main(["eval", "wikitq", "--limit", "1", "--lm", "replay:nowhere", "--engine", "ray",
                   "--out", str(tmp_path / "run")])
    err = capsys.readouterr().err.strip()
    assert status == 2 and err == f"binder-py eval: error: {RAY_INSTALL_HINT}"
    assert 'pip install "binder-py[ray]"' in err and not (tmp_path / "run").exists()
    status = main(["eval", "wikitq", "--limit", "1", "--lm", "replay:nowhere", "--ray-address", "auto",
                   "--out", str(tmp_path / "run")])
    assert status == 2 and "--ray-address needs --engine ray" in capsys.readouterr().err


def test_a_ray_address_that_does_not_answer_is_a_one_line_error_before_anything_is_written(tmp_path, monkeypatch):
    """``eval --engine ray --ray-address xx:1`` (or a port nothing listens at) printed nothing and
    waited for ever: ray.init retries a cluster it cannot reach. The address is now tried first."""
    import socket

    from binder_py.engines import check_ray_address
    from binder_py.runs import run_eval

    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    port = closed.getsockname()[1]
    closed.close()
    started = time.perf_counter()
    with pytest.raises(BinderError, match=rf"cannot reach the Ray cluster at 127.0.0.1:{port} \(connection refused"):
        check_ray_address(f"127.0.0.1:{port}")
    with pytest.raises(BinderError, match=r"unknown host 'no-such-head.invalid'.*--ray-address"):
        check_ray_address("ray://no-such-head.invalid")
    with pytest.raises(BinderError, match="is not HOST:PORT"):
        check_ray_address("ray://head:99999")
    monkeypatch.setenv("RAY_ADDRESS", f"127.0.0.1:{port}")
    with pytest.raises(BinderError, match="cannot reach the Ray cluster"):
        check_ray_address(None)
    assert time.perf_counter() - started < 5
    with socket.socket() as listening:  # a head that answers, and the addresses Ray resolves itself
        listening.bind(("127.0.0.1", 0))
        listening.listen()
        check_ray_address(f"127.0.0.1:{listening.getsockname()[1]}")
        check_ray_address("auto")
        check_ray_address("anyscale://my-cluster")  # a client builder's scheme: Ray resolves it
    monkeypatch.delenv("RAY_ADDRESS")
    check_ray_address(None)
    pytest.importorskip("ray", reason="the ray extra is not installed")
    with pytest.raises(BinderError, match="cannot reach the Ray cluster"):
        run_eval("wikitq", "dev", out=tmp_path / "run", mode="e2e", lm="replay:nowhere", examples=[],
                 engine="ray", ray_address=f"127.0.0.1:{port}", progress=False)
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("bad", [0, -1, 2.5, "4", True])
def test_a_concurrency_that_is_not_a_whole_number_of_at_least_1_is_refused(bad, tmp_path):
    """``--concurrency 0`` was refused, but ``ask_many(items, concurrency=0)`` and
    ``run_eval(..., concurrency=0)`` ran one question at a time (2.5 too) without a word."""
    import pandas as pd

    from binder_py import Binder
    from binder_py.lm import ScriptedLM
    from binder_py.runs import run_eval

    lm = ScriptedLM([])
    with pytest.raises(BinderError, match=r"concurrency must be a whole number of at least 1 \(questions at once\)"):
        Binder(lm=lm, progress=False).ask_many([(pd.DataFrame({"a": [1]}), "sum?")], concurrency=bad)
    with pytest.raises(BinderError, match="concurrency must be a whole number of at least 1"):
        run_eval("wikitq", "dev", out=tmp_path / "run", mode="e2e", lm=lm, examples=[], concurrency=bad,
                 progress=False)
    assert lm.calls == [] and not (tmp_path / "run").exists()


def test_the_command_line_says_concurrency_in_its_own_words(capsys):
    assert main(["eval", "wikitq", "--concurrency", "0", "--out", "/nonexistent/run"]) == 2
    assert "--concurrency must be a whole number of at least 1 (questions at once), got 0" in capsys.readouterr().err
