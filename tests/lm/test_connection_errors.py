"""Errors that come fast and clearly: a refused connection or an unknown host fails at once with
the address it tried; malformed responses are not retried; only timeouts, 429 and 5xx are, and
each retry is announced as it happens."""

from __future__ import annotations

import time

import pytest

from binder_py.cli import main
from binder_py.lm import LMError, LMRequest, LMUnavailable, RetryPolicy, lm_from_spec
from binder_py.lm.testserver import Fault, LoopbackServer


def ask(lm):
    return lm.complete(LMRequest(prompt="question?"), purpose="parse")


@pytest.fixture
def dead_url() -> str:
    """The address of a server that has just stopped: nothing listens there."""
    with LoopbackServer() as server:
        url = server.base_url
    return url


def test_refused_connection_fails_at_once_with_the_address(dead_url):
    announced: list[str] = []
    lm = lm_from_spec(f"openai:m@{dead_url}", cache=False, log=False, retry=RetryPolicy(announce=announced.append))
    started = time.monotonic()
    with pytest.raises(LMUnavailable, match="connection refused") as info:
        ask(lm)
    assert time.monotonic() - started < 2.0  # the default policy would back off for seconds
    assert dead_url.rstrip("/") in str(info.value) and "Is the server running?" in str(info.value)
    assert announced == []


def test_unknown_host_fails_at_once_with_the_host():
    announced: list[str] = []
    lm = lm_from_spec("openai:m@http://no-such-host.invalid/v1", cache=False, log=False,
                      retry=RetryPolicy(announce=announced.append))
    with pytest.raises(LMUnavailable, match="unknown host 'no-such-host.invalid'") as info:
        ask(lm)
    assert "http://no-such-host.invalid/v1" in str(info.value) and announced == []


@pytest.mark.parametrize("fault", [Fault.malformed(), Fault("empty_choices", status=200)])
def test_malformed_responses_are_not_retried(server, make_lm, fake_sleep, fault):
    server.faults.extend([fault, fault])
    with pytest.raises(LMError, match="malformed response") as info:
        ask(make_lm(cache=False))
    assert server.request_count == 1 and fake_sleep.waits == []
    assert server.base_url.rstrip("/") in str(info.value)


def test_each_retry_is_announced_as_it_happens(server, make_lm, fake_sleep):
    announced: list[str] = []
    server.faults.extend([Fault.server_error(503), Fault.rate_limit()])
    policy = RetryPolicy(max_retries=4, sleep=fake_sleep, base_seconds=0.01, announce=announced.append)
    assert ask(make_lm(cache=False, retry=policy)).text == "answer"
    assert len(announced) == 2 == len(fake_sleep.waits)
    assert "server error (HTTP 503)" in announced[0] and "retrying (1/4) in" in announced[0]
    assert "rate limited (HTTP 429)" in announced[1] and "retrying (2/4) in" in announced[1]
    assert server.base_url.rstrip("/") in announced[0]


def test_retries_are_announced_on_stderr_by_default(server, make_lm, fake_sleep, capsys):
    server.faults.append(Fault.server_error(500))
    assert ask(make_lm(cache=False, retry=RetryPolicy(sleep=fake_sleep, base_seconds=0.01))).text == "answer"
    err = capsys.readouterr().err
    assert "binder-py: openai:test-model" in err and "retrying (1/6)" in err


def test_lm_check_on_a_dead_server_says_where_at_once(dead_url, capsys):
    started = time.monotonic()
    assert main(["lm", "check", f"openai:m@{dead_url}"]) == 2
    assert time.monotonic() - started < 5.0
    err = capsys.readouterr().err
    assert "connection refused" in err and dead_url.rstrip("/") in err and "Traceback" not in err


def test_an_unreachable_server_is_a_configuration_error_too(dead_url):
    """So an evaluation stops at once (it stops on LMConfigError) instead of writing one
    "connection refused" error line per question of the split (2,545 in a minute, measured)."""
    from binder_py.lm import LMConfigError, LMUnreachable

    lm = lm_from_spec(f"openai:m@{dead_url}", cache=False, log=False)
    with pytest.raises(LMUnreachable) as info:
        ask(lm)
    assert isinstance(info.value, LMUnavailable) and isinstance(info.value, LMConfigError)
