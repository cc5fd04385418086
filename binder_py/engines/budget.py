"""One request budget per model endpoint, shared by every Ray worker of a run (docs/SCALE.md).

A single-process run limits its requests with one :class:`~binder_py.lm.reliability.Limiter`
(``?concurrency=``, ``?rpm=``, ``?tpm=`` of the ``--lm`` spec). On a cluster each worker has
its own client, so per-worker limits would multiply by the number of workers. Instead one
named Ray actor per endpoint (:class:`BudgetActor`, named by :func:`budget_name`) holds the
budget, and each worker's client asks it for a *lease* before every request:

* **concurrency, requests and tokens per minute** are the spec's, counted over the whole
  cluster (the actor keeps the one :class:`Limiter`);
* **leases expire** (``lease_seconds``, longer than any request may take): a worker killed
  while holding a lease cannot shrink the budget for good;
* **retries are cluster-wide too**: a retry needs the actor's permission. Retries in the last
  minute may be at most ``retry_floor + retry_ratio × requests`` (a retry budget: when the
  server is down, the cluster does not multiply its load by retrying from every worker);
  a refused retry fails the request (the question is recorded with the error; rerun with
  ``--retry-errors``). When the server names a wait (``Retry-After``, sent with HTTP 429),
  the whole endpoint pauses for that long, not only the worker that was told.

:class:`EndpointBudget` is the policy (plain Python, injectable clock, tested without Ray);
:class:`BudgetActor` serves it to the cluster; :class:`RemoteLimiter` and
:class:`ClusterRetryPolicy` are what a worker's OpenAI client uses in place of its own.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from binder_py.lm.reliability import Limiter, RetryPolicy
from binder_py.lm.types import LMUnavailable

NAMESPACE = "binder-py"
DEFAULT_LEASE_SECONDS = 300.0  # > the default 60 s request timeout, with room for slow servers
DEFAULT_RETRY_RATIO = 0.2
DEFAULT_RETRY_FLOOR = 10


def budget_name(endpoint: str) -> str:
    """The Ray actor name of ``endpoint``'s budget (one per endpoint in the ``binder-py`` namespace)."""
    return f"binder-py-budget:{endpoint}"


@dataclass(frozen=True)
class BudgetLimits:
    """The limits of one endpoint (from the ``--lm`` spec's options)."""

    endpoint: str
    max_concurrency: int | None = 16
    rpm: float | None = None
    tpm: float | None = None
    lease_seconds: float = DEFAULT_LEASE_SECONDS
    retry_ratio: float = DEFAULT_RETRY_RATIO
    retry_floor: int = DEFAULT_RETRY_FLOOR


@dataclass
class BudgetStats:
    granted: int = 0
    released: int = 0
    expired: int = 0  # leases reclaimed because their holder never released them
    retries: int = 0
    retries_refused: int = 0
    max_in_flight: int = 0
    paused_seconds: float = 0.0  # total Retry-After pauses imposed on the endpoint


class EndpointBudget:
    """The cluster-wide budget of one endpoint: leases, rate limits, retry budget, pauses."""

    def __init__(self, limits: BudgetLimits, *, clock: Callable[[], float] = time.monotonic,
                 window_seconds: float = 60.0):
        self.limits = limits
        self.clock = clock
        self.window = window_seconds
        self.limiter = Limiter(max_concurrency=limits.max_concurrency, rpm=limits.rpm, tpm=limits.tpm,
                               clock=clock, window_seconds=window_seconds)
        self._leases: dict[int, float] = {}  # lease id -> expiry
        self._ids = itertools.count(1)
        self._requests: deque[float] = deque()
        self._retries: deque[float] = deque()
        self.paused_until = 0.0
        self.stats = BudgetStats()

    def try_acquire(self, tokens: int = 0) -> tuple[int | None, float]:
        """``(lease, 0)`` when a request of about ``tokens`` tokens may start now, else
        ``(None, seconds to wait before asking again)``."""
        now = self.clock()
        self._reclaim(now)
        if now < self.paused_until:
            return None, self.paused_until - now
        wait = self.limiter.try_acquire(tokens)
        if wait > 0:
            return None, wait
        lease = next(self._ids)
        self._leases[lease] = now + self.limits.lease_seconds
        self._requests.append(now)
        self.stats.granted += 1
        self.stats.max_in_flight = max(self.stats.max_in_flight, len(self._leases))
        return lease, 0.0

    def release(self, lease: int) -> bool:
        """Give ``lease`` back; False when it had expired already (its slot was reclaimed)."""
        if self._leases.pop(lease, None) is None:
            return False
        self.limiter.release()
        self.stats.released += 1
        return True

    def retry(self, wait: float, retry_after: float | None = None) -> float | None:
        """May a failed request be retried after ``wait`` seconds? ``None``: no, the cluster's
        retry budget is spent; else the seconds to wait (at least ``wait``, longer while the
        endpoint is paused). A server-named wait (``retry_after``) pauses the whole endpoint."""
        now = self.clock()
        self._prune(now)
        allowed = self.limits.retry_floor + self.limits.retry_ratio * len(self._requests)
        if len(self._retries) >= allowed:
            self.stats.retries_refused += 1
            return None
        self._retries.append(now)
        self.stats.retries += 1
        if retry_after is not None and now + wait > self.paused_until:
            self.stats.paused_seconds += now + wait - max(now, self.paused_until)
            self.paused_until = now + wait
        return max(wait, self.paused_until - now)

    @property
    def in_flight(self) -> int:
        return len(self._leases)

    def _prune(self, now: float) -> None:
        for times in (self._requests, self._retries):
            while times and times[0] <= now - self.window:
                times.popleft()

    def _reclaim(self, now: float) -> None:
        for lease in [lease for lease, expiry in self._leases.items() if expiry <= now]:
            del self._leases[lease]
            self.limiter.release()
            self.stats.expired += 1


class BudgetActor:
    """:class:`EndpointBudget` as an asyncio Ray actor: ``acquire`` waits (without polling)
    until a lease is granted, so a worker makes one call per request."""

    def __init__(self, limits: BudgetLimits):
        self.budget = EndpointBudget(limits)
        self._changed: asyncio.Condition | None = None

    def _condition(self) -> asyncio.Condition:
        if self._changed is None:
            self._changed = asyncio.Condition()
        return self._changed

    async def acquire(self, tokens: int = 0) -> int:
        changed = self._condition()
        async with changed:
            while True:
                lease, wait = self.budget.try_acquire(tokens)
                if lease is not None:
                    return lease
                try:
                    await asyncio.wait_for(changed.wait(), timeout=min(wait, 1.0))
                except asyncio.TimeoutError:
                    pass

    async def release(self, lease: int) -> bool:
        changed = self._condition()
        async with changed:
            released = self.budget.release(lease)
            changed.notify_all()
            return released

    async def retry(self, wait: float, retry_after: float | None = None) -> float | None:
        return self.budget.retry(wait, retry_after)

    async def configure(self, limits: BudgetLimits) -> BudgetLimits:
        """Take ``limits`` (a new run's) unless requests are in flight under the current ones;
        returns the limits that hold."""
        if limits != self.budget.limits and self.budget.in_flight == 0:
            self.budget = EndpointBudget(limits)
        return self.budget.limits

    async def stats(self) -> dict[str, Any]:
        from dataclasses import asdict

        return {**asdict(self.budget.stats), "in_flight": self.budget.in_flight,
                "limits": asdict(self.budget.limits)}


def budget_actor(limits: BudgetLimits) -> tuple[Any, BudgetLimits]:
    """The endpoint's budget actor and the limits that hold: the running one (another run
    against the same endpoint shares it; while that run has requests in flight, its limits
    hold) or a new one. The driver calls this; the actor is detached (named actors die with
    the handle that made them, and a run may outlive the run that made it), and costs no CPU.
    Needs a connected Ray."""
    import ray

    actor_class = ray.remote(BudgetActor)
    actor = actor_class.options(name=budget_name(limits.endpoint), namespace=NAMESPACE, get_if_exists=True,
                                lifetime="detached", num_cpus=0, max_concurrency=10_000).remote(limits)
    return actor, ray.get(actor.configure.remote(limits))


def find_budget_actor(endpoint: str) -> Any:
    """A worker's handle on ``endpoint``'s budget actor (made by the driver)."""
    import ray

    return ray.get_actor(budget_name(endpoint), namespace=NAMESPACE)


class RemoteLimiter:
    """A worker's stand-in for :class:`Limiter`: each slot is a lease from the endpoint's actor."""

    def __init__(self, actor: Any, max_concurrency: int | None):
        self.actor = actor
        self.max_concurrency = max_concurrency

    def acquire(self, tokens: int = 0) -> int:
        import ray

        return ray.get(self.actor.acquire.remote(tokens))

    def release(self, lease: int) -> None:
        self.actor.release.remote(lease)  # no need to wait for the answer

    def slot(self, tokens: int = 0) -> _LeaseSlot:
        return _LeaseSlot(self, tokens)


class _LeaseSlot:
    def __init__(self, limiter: RemoteLimiter, tokens: int):
        self.limiter = limiter
        self.tokens = tokens
        self.lease: int | None = None

    def __enter__(self) -> None:
        self.lease = self.limiter.acquire(self.tokens)

    def __exit__(self, *exc: object) -> None:
        if self.lease is not None:
            self.limiter.release(self.lease)


@dataclass
class ClusterRetryPolicy(RetryPolicy):
    """The worker's :class:`RetryPolicy`, with each retry granted (and timed) by the endpoint's actor."""

    actor: Any = field(default=None, repr=False)
    endpoint: str = ""

    def backoff(self, attempt: int, retry_after: float | None = None) -> float:
        import ray

        wait = super().backoff(attempt, retry_after)
        granted = ray.get(self.actor.retry.remote(wait, retry_after))
        if granted is None:
            raise LMUnavailable(f"{self.endpoint}: the cluster's retry budget is spent (too many retries in the last "
                                "minute across all workers); the server is struggling: check it, then rerun with "
                                "--retry-errors")
        return float(granted)




def limits_for_spec(spec: str) -> BudgetLimits | None:
    """The cluster-wide limits an ``--lm`` spec asks for (``?concurrency=``, ``?rpm=``, ``?tpm=``,
    default concurrency 16), keyed by its endpoint; ``None`` for a model that is no server
    (``local``, ``replay:``)."""
    import os

    from binder_py.lm.spec import DEFAULT_TIMEOUT, parse_spec

    parsed = parse_spec(spec)
    if parsed.provider not in ("openai", "openai-completions", "azure"):
        return None
    default = os.environ.get("AZURE_OPENAI_ENDPOINT" if parsed.provider == "azure" else "OPENAI_BASE_URL")
    endpoint = parsed.base_url or (default or "").rstrip("/") or "https://api.openai.com/v1"
    opts = parsed.options
    timeout = float(opts.get("timeout", DEFAULT_TIMEOUT))
    return BudgetLimits(endpoint=endpoint, max_concurrency=opts.get("concurrency", 16), rpm=opts.get("rpm"),
                        tpm=opts.get("tpm"), lease_seconds=max(DEFAULT_LEASE_SECONDS, 3 * timeout))


__all__ = ["BudgetActor", "BudgetLimits", "BudgetStats", "ClusterRetryPolicy", "EndpointBudget", "NAMESPACE",
           "RemoteLimiter", "budget_actor", "budget_name", "find_budget_actor", "limits_for_spec"]
