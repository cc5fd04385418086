"""Concurrency limit, rate limits, single-flight and async calls across threads and tasks."""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import ThreadPoolExecutor

from binder_py.lm import Limiter, LMRequest


def test_concurrency_limit_holds_across_threads(server, make_lm):
    server.latency = 0.1
    lm = make_lm(cache=False, max_concurrency=3)
    with ThreadPoolExecutor(20) as pool:
        results = list(pool.map(lambda i: lm.complete(LMRequest(prompt=f"q{i}")), range(20)))
    assert all(r.text == "answer" for r in results)
    assert server.request_count == 20
    assert server.max_in_flight == 3


def test_concurrency_limit_holds_across_async_tasks_and_threads(server, make_lm):
    server.latency = 0.1
    lm = make_lm(cache=False, max_concurrency=4)

    async def many():
        return await asyncio.gather(*(lm.acomplete(LMRequest(prompt=f"a{i}"), purpose="neural") for i in range(12)))

    thread_results = []
    worker = threading.Thread(target=lambda: thread_results.extend(
        lm.complete(LMRequest(prompt=f"t{i}")) for i in range(3)))
    worker.start()
    results = asyncio.run(many())
    worker.join()
    assert len(results) == 12 and len(thread_results) == 3
    assert server.max_in_flight <= 4 and server.request_count == 15


def test_twenty_clients_run_in_parallel(server, make_lm):
    """With no limit hit, 20 concurrent calls take about one latency, not twenty."""
    import time

    server.latency = 0.3
    lm = make_lm(cache=False, max_concurrency=32)
    started = time.monotonic()
    with ThreadPoolExecutor(20) as pool:
        list(pool.map(lambda i: lm.complete(LMRequest(prompt=f"p{i}")), range(20)))
    assert time.monotonic() - started < 2.0
    assert server.max_in_flight >= 10


def test_single_flight_sends_identical_requests_once(server, make_lm):
    server.latency = 0.3
    lm = make_lm()
    request = LMRequest(prompt="same question", temperature=0)
    barrier = threading.Barrier(8)

    def call(_):
        barrier.wait()
        return lm.complete(request, purpose="neural")

    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(call, range(8)))
    assert server.request_count == 1
    assert sum(not r.cached for r in results) == 1
    assert {r.text for r in results} == {"answer"}
    usage = lm.usage
    assert usage.requests == 1 and usage.cached_requests == 7


def test_single_flight_shares_errors(server, make_lm):
    from binder_py.lm import LMAuthError
    from binder_py.lm.testserver import Fault

    server.latency = 0.2
    server.faults.append(Fault.bad_key())
    lm = make_lm()
    request = LMRequest(prompt="doomed")
    barrier = threading.Barrier(4)

    def call(_):
        barrier.wait()
        try:
            lm.complete(request)
        except LMAuthError as error:
            return error
        return None

    with ThreadPoolExecutor(4) as pool:
        errors = list(pool.map(call, range(4)))
    assert all(isinstance(e, LMAuthError) for e in errors)
    assert server.request_count == 1


def test_requests_per_minute_limit():
    now = [0.0]
    limiter = Limiter(max_concurrency=None, rpm=3, clock=lambda: now[0])
    for _ in range(3):
        limiter.acquire()
        limiter.release()
    assert limiter._wait_needed(0, now[0]) > 59
    now[0] = 60.5
    assert limiter._wait_needed(0, now[0]) == 0


def test_tokens_per_minute_limit():
    now = [0.0]
    limiter = Limiter(max_concurrency=None, tpm=1000, clock=lambda: now[0])
    limiter.acquire(600)
    limiter.release()
    assert limiter._wait_needed(300, now[0]) == 0
    assert limiter._wait_needed(500, now[0]) == 60
    now[0] = 30
    assert limiter._wait_needed(500, now[0]) == 30


def test_rate_limit_blocks_threads_until_the_window_moves():
    limiter = Limiter(max_concurrency=None, rpm=2, window_seconds=0.3)
    import time

    started = time.monotonic()
    for _ in range(4):
        with limiter.slot():
            pass
    assert time.monotonic() - started >= 0.29
