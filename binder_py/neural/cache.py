"""A thread-safe cache of neural answers, with single-flight.

``col`` answers are cached per ROW: (backend, question, context column names, row key).
``val`` answers per whole request: (backend, question, column names, all row keys).
When two concurrent programs need the same rows, each row is asked once: the second
waits for the first. A row the backend failed to answer is not cached.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from binder_py.neural.backends import NeuralAnswer
from binder_py.neural.requests import NeuralRequest


@dataclass
class CacheStats:
    row_hits: int = 0
    row_misses: int = 0
    val_hits: int = 0
    val_misses: int = 0
    backend_calls: int = 0
    prefilled_rows: int = 0  # col answers stored by store_col (the question-level plan)


@dataclass
class Resolution:
    """The result of resolving a request through the cache."""

    answers: dict[str, Any]  # col: key → raw answer (keys the backend failed on are absent)
    value: Any  # val
    cached_keys: list[str]  # col: keys answered from the cache (or by a concurrent request)
    from_cache: bool  # everything came from the cache
    computed: list[NeuralAnswer]  # what the backend returned for this call (provenance)


@dataclass
class Reservation:
    """Rows of one ``col`` question claimed by :meth:`NeuralCache.reserve_col`."""

    backend_id: str
    question: str
    columns: tuple[str, ...]
    keys: list[str]
    event: threading.Event


class NeuralCache:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._rows: dict[tuple, Any] = {}
        self._vals: dict[tuple, Any] = {}
        self._inflight: dict[tuple, threading.Event] = {}
        self.stats = CacheStats()

    def __len__(self) -> int:
        with self._lock:
            return len(self._rows) + len(self._vals)

    def clear(self) -> None:
        with self._lock:
            self._rows.clear()
            self._vals.clear()

    # ------------------------------------------------------------ prefill (the question-level plan)
    def reserve_col(self, backend_id: str, question: str, columns: list[str] | tuple[str, ...],
                    keys: list[str]) -> Reservation:
        """Claim the rows of ``keys`` that are neither cached nor being asked: the caller
        will answer them (then :meth:`store_col`) and MUST :meth:`release` the reservation
        (in a ``finally``). Meanwhile requests for those rows wait (single-flight); a row
        released without an answer is asked by the waiting request itself."""
        base = (backend_id, "col", question, tuple(columns))
        event = threading.Event()
        mine: list[str] = []
        with self._lock:
            for k in dict.fromkeys(keys):
                ck = base + (k,)
                if ck in self._rows or ck in self._inflight:
                    continue
                self._inflight[ck] = event
                mine.append(k)
        return Reservation(backend_id, question, tuple(columns), mine, event)

    def store_col(self, backend_id: str, question: str, columns: list[str] | tuple[str, ...],
                  answers_by_key: dict[str, Any]) -> int:
        """Prefill ``col`` answers (row key → raw answer) for ``question`` over ``columns``,
        keyed like :meth:`resolve_col` keys them. Rows already cached keep their answer.
        Returns how many rows were stored."""
        base = (backend_id, "col", question, tuple(columns))
        stored = 0
        with self._lock:
            for k, v in answers_by_key.items():
                ck = base + (k,)
                if ck not in self._rows:
                    self._rows[ck] = v
                    stored += 1
            self.stats.prefilled_rows += stored
        return stored

    def release(self, reservation: Reservation) -> None:
        """End a :meth:`reserve_col` reservation: waiting requests read the stored rows and
        ask for the others themselves."""
        base = (reservation.backend_id, "col", reservation.question, reservation.columns)
        with self._lock:
            for k in reservation.keys:
                if self._inflight.get(base + (k,)) is reservation.event:
                    del self._inflight[base + (k,)]
        reservation.event.set()

    # ------------------------------------------------------------ col
    def resolve_col(self, backend_id: str, request: NeuralRequest,
                    compute: Callable[[NeuralRequest], NeuralAnswer]) -> Resolution:
        base = (backend_id, "col", request.question, tuple(request.columns))
        result: dict[str, Any] = {}
        cached: list[str] = []
        computed: list[NeuralAnswer] = []
        pending = list(dict.fromkeys(request.keys))
        for _attempt in range(3):  # a row another request failed on is asked again by us
            if not pending:
                break
            waiting: dict[str, threading.Event] = {}
            mine: list[str] = []
            event = threading.Event()
            with self._lock:
                for k in pending:
                    ck = base + (k,)
                    if ck in self._rows:
                        result[k] = self._rows[ck]
                        cached.append(k)
                        self.stats.row_hits += 1
                    elif ck in self._inflight:
                        waiting[k] = self._inflight[ck]
                    else:
                        mine.append(k)
                        self._inflight[ck] = event
                        self.stats.row_misses += 1
                if mine:
                    self.stats.backend_calls += 1
            try:
                if mine:
                    answer = compute(request.subset(mine))
                    computed.append(answer)
                    wanted = set(mine)
                    got = {k: v for k, v in answer.answers.items() if k in wanted}
                    with self._lock:
                        for k, v in got.items():
                            self._rows[base + (k,)] = v
                    result.update(got)
            finally:
                if mine:
                    with self._lock:
                        for k in mine:
                            if self._inflight.get(base + (k,)) is event:
                                del self._inflight[base + (k,)]
                    event.set()
            pending = []
            for k, ev in waiting.items():
                ev.wait()
                with self._lock:
                    ck = base + (k,)
                    if ck in self._rows:
                        result[k] = self._rows[ck]
                        cached.append(k)
                    else:
                        pending.append(k)
        from_cache = not computed and len(cached) == len(set(request.keys))
        return Resolution(result, None, cached, from_cache, computed)

    # ------------------------------------------------------------ val
    def resolve_val(self, backend_id: str, request: NeuralRequest,
                    compute: Callable[[NeuralRequest], NeuralAnswer]) -> Resolution:
        ck = (backend_id, "val", request.question, tuple(request.columns), tuple(request.keys))
        while True:
            with self._lock:
                if ck in self._vals:
                    self.stats.val_hits += 1
                    return Resolution({}, self._vals[ck], [], True, [])
                event = self._inflight.get(ck)
                if event is None:
                    event = threading.Event()
                    self._inflight[ck] = event
                    self.stats.val_misses += 1
                    self.stats.backend_calls += 1
                    owner = True
                else:
                    owner = False
            if not owner:
                event.wait()
                with self._lock:
                    if ck in self._vals:
                        self.stats.val_hits += 1
                        return Resolution({}, self._vals[ck], [], True, [])
                continue  # the other request failed: ask ourselves
            try:
                answer = compute(request)
                with self._lock:
                    self._vals[ck] = answer.value
                return Resolution({}, answer.value, [], False, [answer])
            finally:
                with self._lock:
                    if self._inflight.get(ck) is event:
                        del self._inflight[ck]
                event.set()
