"""Retries, backoff, Retry-After, timeouts and error classification against the loopback server."""

from __future__ import annotations

import email.utils
import random
import time

import pytest

from binder_py.lm import (LMAuthError, LMContextTooLong, LMError, LMModelNotFound, LMRequest, LMUnavailable,
                          RetryPolicy)
from binder_py.lm.reliability import parse_retry_after
from binder_py.lm.testserver import Fault


def ask(lm, text="question?", **kw):
    return lm.complete(LMRequest(prompt=text, **kw), purpose="parse")


@pytest.mark.parametrize("fault", [Fault.rate_limit(), Fault.server_error(500), Fault.server_error(503)])
def test_transient_fault_is_retried(server, make_lm, fake_sleep, fault):
    server.faults.extend([fault, fault])
    completion = ask(make_lm(cache=False))
    assert completion.text == "answer"
    assert server.request_count == 3
    assert len(fake_sleep.waits) == 2
    assert completion.usage.requests == 1  # a logical request; retries are not separate answers


def test_retry_after_seconds_is_honoured(server, make_lm, fake_sleep):
    server.faults.append(Fault.rate_limit(retry_after=7))
    assert ask(make_lm(cache=False)).text == "answer"
    assert 7 <= fake_sleep.waits[0] <= 7.25


def test_retry_after_http_date(server, make_lm, fake_sleep):
    when = email.utils.formatdate(time.time() + 30, usegmt=True)
    server.faults.append(Fault.rate_limit(retry_after=when))
    assert ask(make_lm(cache=False)).text == "answer"
    assert 27 <= fake_sleep.waits[0] <= 31


def test_parse_retry_after():
    assert parse_retry_after("2.5") == 2.5
    assert parse_retry_after(None) is None
    assert parse_retry_after("garbage") is None
    assert parse_retry_after("-3") == 0.0
    assert parse_retry_after(email.utils.formatdate(1000.0 + 60, usegmt=True), now=1000.0) == pytest.approx(60, abs=1)


def test_retry_after_longer_than_we_wait_gives_up_at_once(server, make_lm, fake_sleep):
    server.faults.append(Fault.rate_limit(retry_after=3600))
    with pytest.raises(LMUnavailable, match="Retry-After"):
        ask(make_lm(cache=False))
    assert server.request_count == 1 and fake_sleep.waits == []


def test_retries_are_bounded_in_count(server, make_lm, fake_sleep):
    server.faults.extend([Fault.server_error()] * 20)
    with pytest.raises(LMUnavailable, match="gave up after 4 attempts") as info:
        ask(make_lm(cache=False, retry=RetryPolicy(max_retries=3, sleep=fake_sleep, base_seconds=0.01)))
    assert server.request_count == 4
    assert len(fake_sleep.waits) == 3
    assert "HTTP 500" in str(info.value)


def test_retries_are_bounded_in_total_time(server, make_lm):
    now = [0.0]

    def sleep(seconds):
        now[0] += seconds

    policy = RetryPolicy(max_retries=100, max_total_seconds=10.0, base_seconds=4.0, cap_seconds=4.0,
                         sleep=sleep, clock=lambda: now[0], rng=random.Random(1))
    server.faults.extend([Fault.server_error()] * 100)
    with pytest.raises(LMUnavailable, match="retry budget"):
        ask(make_lm(cache=False, retry=policy))
    assert now[0] <= 10.0
    assert server.request_count < 100


def test_backoff_is_exponential_with_full_jitter():
    policy = RetryPolicy(base_seconds=0.5, cap_seconds=8.0, rng=random.Random(0))
    for attempt in range(8):
        bound = min(8.0, 0.5 * 2 ** attempt)
        waits = [policy.backoff(attempt) for _ in range(200)]
        assert all(0 <= w <= bound for w in waits)
        assert max(waits) > bound * 0.8  # jitter spans the whole range
    assert 3.0 <= policy.backoff(0, retry_after=3.0) <= 3.25


def test_hang_past_timeout_is_retried(server, make_lm, fake_sleep):
    server.faults.append(Fault.hang(5))
    started = time.monotonic()
    completion = ask(make_lm(cache=False, timeout=0.3))
    assert completion.text == "answer"
    assert time.monotonic() - started < 3
    assert server.request_count == 2


def test_timeouts_exhaust_into_unavailable(server, make_lm, fake_sleep):
    server.faults.extend([Fault.hang(5)] * 3)
    with pytest.raises(LMUnavailable, match="timed out"):
        ask(make_lm(cache=False, timeout=0.2, retry=RetryPolicy(max_retries=1, sleep=fake_sleep)))
    assert server.request_count == 2


def test_bad_key_fails_at_once(server, make_lm, fake_sleep):
    server.api_key = "sk-right"
    with pytest.raises(LMAuthError, match="OPENAI_API_KEY"):
        ask(make_lm(cache=False, api_key="sk-wrong"))
    assert server.request_count == 1 and fake_sleep.waits == []
    assert ask(make_lm(cache=False, api_key="sk-right")).text == "answer"


def test_unknown_model_fails_at_once(server, make_lm, fake_sleep):
    server.models = ("real-model",)
    with pytest.raises(LMModelNotFound, match="'test-model'"):
        ask(make_lm(cache=False))
    assert server.request_count == 1 and fake_sleep.waits == []


def test_context_too_long_from_server(server, make_lm, fake_sleep):
    server.context_window = 100
    with pytest.raises(LMContextTooLong) as info:
        ask(make_lm(cache=False), "word " * 200)
    assert info.value.limit == 100 and info.value.prompt_tokens == 250
    assert server.request_count == 1 and fake_sleep.waits == []


def test_context_too_long_checked_up_front(server, make_lm):
    lm = make_lm(cache=False, context_window=50)
    with pytest.raises(LMContextTooLong, match="reads at most 50") as info:
        ask(lm, "x" * 1000)
    assert info.value.limit == 50 and info.value.prompt_tokens >= 250
    assert server.request_count == 0
    assert ask(lm, "short").text == "answer"


def test_insufficient_quota_is_not_retried(server, make_lm, fake_sleep):
    from binder_py.lm.testserver import _error_body

    server.faults.append(Fault.rate_limit())
    original = server._send_fault

    def quota(handler, fault, body):
        handler._send(429, _error_body("You exceeded your current quota", "insufficient_quota", "insufficient_quota"))

    server._send_fault = quota
    try:
        with pytest.raises(LMUnavailable, match="quota"):
            ask(make_lm(cache=False))
    finally:
        server._send_fault = original
    assert server.request_count == 1


def test_other_client_errors_are_not_retried(server, make_lm, fake_sleep):
    server.faults.append(Fault.server_error(422))
    with pytest.raises(LMError, match="HTTP 422"):
        ask(make_lm(cache=False))
    assert server.request_count == 1


def test_errors_are_logged(server, make_lm, tmp_path):
    server.faults.append(Fault.bad_key())
    lm = make_lm()
    with pytest.raises(LMAuthError):
        ask(lm, "logged failure")
    rows = lm.store._conn.execute("SELECT source, error, request_json FROM log").fetchall()
    assert rows[-1][0] == "error" and "LMAuthError" in rows[-1][1] and "logged failure" in rows[-1][2]
