"""Retries with backoff, concurrency limits and rate limits (thread-safe, shared by threads and tasks).

* :class:`RetryPolicy` — bounded in count and total time, exponential backoff with
  *full jitter* (``sleep = uniform(0, min(cap, base * 2**attempt))``), and
  ``Retry-After`` honoured (seconds or an HTTP date) when the server sends it. Each retry
  is announced as it happens (``retrying (n/N)…`` on stderr by default).
* :class:`Limiter` — at most ``max_concurrency`` requests in flight, and
  requests-per-minute / tokens-per-minute budgets (sliding 60-second window).

The clock and the sleep function are injectable so tests run fast.
"""

from __future__ import annotations

import email.utils
import random
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field


def announce_on_stderr(message: str) -> None:
    """The default way a retry is announced: one line on stderr, as it happens."""
    print(f"binder-py: {message}", file=sys.stderr, flush=True)


@dataclass
class RetryPolicy:
    """When and how long to wait before retrying a failed request.

    Only failures that may pass are retried: timeouts, rate limits (HTTP 429) and server
    errors (HTTP 5xx); the caller classifies them. Everything else fails at once: a refused
    connection, an unknown host, a bad key, an unknown model, a malformed response.
    ``max_retries`` counts retries, so a request is sent at most ``max_retries + 1`` times;
    ``max_total_seconds`` bounds the time spent on one request including waits.
    ``announce`` is called with one line before each wait (``retrying (n/N) in 1.2s…``).
    """

    max_retries: int = 6
    max_total_seconds: float = 120.0
    base_seconds: float = 0.5
    cap_seconds: float = 30.0
    max_retry_after_seconds: float = 60.0  # a longer Retry-After is not worth waiting for
    sleep: Callable[[float], None] = field(default=time.sleep, repr=False)
    clock: Callable[[], float] = field(default=time.monotonic, repr=False)
    rng: random.Random = field(default_factory=random.Random, repr=False)
    announce: Callable[[str], None] = field(default=announce_on_stderr, repr=False)

    def retry_message(self, who: str, failure: object, attempt: int, wait: float) -> str:
        """What :attr:`announce` is told before retry number ``attempt`` (0-based)."""
        return f"{who}: {failure}; retrying ({attempt + 1}/{self.max_retries}) in {wait:.1f}s…"

    def backoff(self, attempt: int, retry_after: float | None = None) -> float:
        """Seconds to wait before retry number ``attempt`` (0-based)."""
        if retry_after is not None:
            # honour the server; a little jitter keeps many clients from waking together
            return max(0.0, retry_after) + self.rng.uniform(0, min(0.25, self.base_seconds))
        return self.rng.uniform(0, min(self.cap_seconds, self.base_seconds * (2 ** attempt)))


def parse_retry_after(value: str | None, *, now: float | None = None) -> float | None:
    """``Retry-After`` (or ``retry-after-ms``) as seconds: a number, or an HTTP date."""
    if value is None:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            return None
        if when is None:
            return None
        seconds = when.timestamp() - (time.time() if now is None else now)
    return max(0.0, seconds)


class Limiter:
    """Concurrency limit plus requests-per-minute and tokens-per-minute budgets.

    Use as ``with limiter.slot(tokens): send()``. ``rpm``/``tpm`` of ``None``
    mean unlimited. Blocking is done with a condition variable, so the limiter
    is shared safely by any number of threads (async callers reach it through
    worker threads).
    """

    def __init__(self, max_concurrency: int | None = 16, rpm: float | None = None, tpm: float | None = None,
                 *, clock: Callable[[], float] = time.monotonic, window_seconds: float = 60.0):
        self.max_concurrency = max_concurrency
        self.rpm = rpm
        self.tpm = tpm
        self.clock = clock
        self.window = window_seconds
        self._cond = threading.Condition()
        self._in_flight = 0
        self.max_in_flight_seen = 0
        self._events: deque[tuple[float, int]] = deque()  # (time, tokens) of recent requests

    def _prune(self, now: float) -> None:
        while self._events and self._events[0][0] <= now - self.window:
            self._events.popleft()

    def _wait_needed(self, tokens: int, now: float) -> float:
        """0 when a request of ``tokens`` may start now, else seconds until it might."""
        if self.max_concurrency is not None and self._in_flight >= self.max_concurrency:
            return 1.0  # woken by notify when a slot frees
        self._prune(now)
        wait = 0.0
        if self.rpm is not None and len(self._events) >= self.rpm:
            over = len(self._events) - int(self.rpm) + 1
            wait = max(wait, self._events[over - 1][0] + self.window - now)
        if self.tpm is not None and self._events:
            used = sum(t for _, t in self._events)
            tokens_wanted = min(tokens, int(self.tpm))  # a single huge request still goes, alone
            if used + tokens_wanted > self.tpm:
                freed = 0
                for when, t in self._events:
                    freed += t
                    if used - freed + tokens_wanted <= self.tpm:
                        wait = max(wait, when + self.window - now)
                        break
        return wait

    def acquire(self, tokens: int = 0) -> None:
        with self._cond:
            while True:
                now = self.clock()
                wait = self._wait_needed(tokens, now)
                if wait <= 0:
                    break
                self._cond.wait(timeout=min(wait, 1.0))
            self._take(tokens)

    def try_acquire(self, tokens: int = 0) -> float:
        """Take a slot if one may start now and return 0; else take nothing and return the
        seconds to wait before asking again (for callers that must not block, e.g. a Ray actor)."""
        with self._cond:
            wait = self._wait_needed(tokens, self.clock())
            if wait > 0:
                return wait
            self._take(tokens)
            return 0.0

    def _take(self, tokens: int) -> None:
        self._in_flight += 1
        self.max_in_flight_seen = max(self.max_in_flight_seen, self._in_flight)
        if self.rpm is not None or self.tpm is not None:
            self._events.append((self.clock(), tokens))

    def release(self) -> None:
        with self._cond:
            self._in_flight -= 1
            self._cond.notify_all()

    def slot(self, tokens: int = 0) -> _Slot:
        return _Slot(self, tokens)

    @property
    def in_flight(self) -> int:
        return self._in_flight


class _Slot:
    def __init__(self, limiter: Limiter, tokens: int):
        self.limiter = limiter
        self.tokens = tokens

    def __enter__(self) -> None:
        self.limiter.acquire(self.tokens)

    def __exit__(self, *exc: object) -> None:
        self.limiter.release()
