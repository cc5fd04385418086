"""A thread-safe cache of neural answers, with single-flight.

``col`` answers are cached per ROW: (backend, question, answer kind, context column names, row key).
``val`` answers per whole request: (backend, question, answer kind, column names, all row keys).
The answer kind (:func:`answer_kind_key`) is part of the key because the prompt carries it
(``(yes/no)``, ``(a number)``): a candidate that uses a question as a number must not read the
answers another asked for as yes/no. A request of no particular kind reads another kind's answers
when they cover all its rows, and keeps what it asks itself under its own kind.
When two concurrent programs need the same rows, each row is asked once: the second
waits for the first. A row the backend failed to answer is not cached.
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from binder_py.neural.answer_types import META_KEY, AnswerKind, AnswerType
from binder_py.neural.backends import NeuralAnswer
from binder_py.neural.requests import NeuralRequest, keys_name_rows

if TYPE_CHECKING:
    import pandas as pd

#: tables whose row keys :meth:`NeuralCache.table_keys` keeps (the most recently used)
TABLE_KEYS_KEPT = 8


def answer_kind_key(request: NeuralRequest) -> str:
    """The kind of answer ``request`` asks for, as the cache keys it: ``""`` for any answer (untyped, or
    free text: its prompt names no kind and its answers are not checked), else the kind (and a
    choice's options)."""
    answer_type: AnswerType | None = request.meta.get(META_KEY)
    if answer_type is None or answer_type.kind is AnswerKind.TEXT:
        return ""
    return answer_type.kind.value + "".join("|" + choice for choice in answer_type.choices)


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

    base: tuple  # the cache's key of the question (NeuralCache._question)
    keys: list[str]
    event: threading.Event


class NeuralCache:
    """Answers by request, shared by the candidate programs of a question (thread-safe).

    ``col`` rows live in one dictionary per (backend, question, answer kind, context columns), keyed
    by row key, so resolving a request of many rows costs a few C-speed passes over its keys, not one
    composite key and one stats update per row."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._rows: dict[tuple, dict[str, Any]] = {}  # (backend, question, kind, columns) → row key → answer
        self._vals: dict[tuple, Any] = {}
        self._inflight_rows: dict[tuple, dict[str, threading.Event]] = {}  # like _rows: rows being asked
        self._inflight_vals: dict[tuple, threading.Event] = {}
        #: (backend, question, columns) → the answer kinds held for it (rows or values), for the requests
        #: of no particular kind that read them (:meth:`_borrowed_rows`, :meth:`_borrowed_value`)
        self._kinds: dict[tuple, list[str]] = {}
        #: (id(table), context columns) → (a weak reference to the table, its rows' keys): the programs
        #: that share this cache share the work of :meth:`table_keys` (the last few tables only)
        self._table_keys: OrderedDict[tuple, tuple[weakref.ref, frozenset[str]]] = OrderedDict()
        self.stats = CacheStats()

    def table_keys(self, table: pd.DataFrame, columns: tuple[str, ...],
                   compute: Callable[[], frozenset[str]]) -> frozenset[str]:
        """The keys of ``table``'s rows over ``columns``, computed once by ``compute`` for every program
        that shares this cache (the shared-cache check of :mod:`binder_py.language.execute`; a
        two-column context of a million rows takes about a second)."""
        key = (id(table), columns)
        with self._lock:
            hit = self._table_keys.get(key)
            if hit is not None and hit[0]() is table:
                self._table_keys.move_to_end(key)
                return hit[1]
        keys = compute()
        with self._lock:
            self._table_keys[key] = (weakref.ref(table), keys)
            while len(self._table_keys) > TABLE_KEYS_KEPT:
                self._table_keys.popitem(last=False)
        return keys

    def __len__(self) -> int:
        with self._lock:
            return sum(map(len, self._rows.values())) + len(self._vals)

    def clear(self) -> None:
        with self._lock:
            self._rows.clear()
            self._vals.clear()
            self._kinds.clear()

    @staticmethod
    def _question(backend_id: str, request: NeuralRequest) -> tuple:
        """The cache's key of ``request``'s question: (backend, question, answer kind, columns). Answers
        are stored under their request's own key only; a request of no particular kind may also READ
        another kind's (:meth:`_borrowed_rows`)."""
        return (backend_id, request.question, answer_kind_key(request), tuple(request.columns))

    def _note_kind(self, base: tuple) -> None:
        """Record that answers of ``base``'s kind exist for its question (under the lock)."""
        if base[2]:
            kinds = self._kinds.setdefault((base[0], base[1], base[3]), [])
            if base[2] not in kinds:
                kinds.append(base[2])

    def _rows_of(self, base: tuple) -> dict[str, Any]:
        """``base``'s row answers, made when missing (under the lock)."""
        rows = self._rows.get(base)
        if rows is None:
            rows = self._rows[base] = {}
            self._note_kind(base)
        return rows

    def _borrowed_rows(self, base: tuple, keys: list[str]) -> tuple[dict[str, Any] | None, set[threading.Event]]:
        """For a question of no particular kind (``base[2] == ""``: any answer suits it) whose own answers
        do not cover ``keys``: the answers of one kind asked already that cover them all, or, when that
        kind's rows are still being asked, the events to wait for before looking again; (None, empty)
        otherwise (under the lock). Only read: rows such a request asks itself are stored under its own key."""
        if base[2]:
            return None, set()
        own = self._rows.get(base, {})
        if all(k in own for k in keys):
            return None, set()
        for kind in self._kinds.get((base[0], base[1], base[3]), ()):
            typed = (base[0], base[1], kind, base[3])
            rows, inflight = self._rows.get(typed, {}), self._inflight_rows.get(typed, {})
            missing = [k for k in keys if k not in rows]
            if not missing:
                return {k: rows[k] for k in keys}, set()
            if all(k in inflight for k in missing):
                return None, {inflight[k] for k in missing}
        return None, set()

    def _borrowable_rows(self, base: tuple, keys: list[str]) -> dict[str, Any] | None:
        """:meth:`_borrowed_rows`, waiting once (outside the lock) for another kind's rows in flight."""
        if base[2]:  # a typed request reads only its own kind's answers
            return None
        with self._lock:
            borrowed, waits = self._borrowed_rows(base, keys)
        if waits:
            for event in waits:
                event.wait()
            with self._lock:
                borrowed, _ = self._borrowed_rows(base, keys)
        return borrowed

    def _borrowed_value(self, ck: tuple) -> tuple[bool, Any, threading.Event | None]:
        """Like :meth:`_borrowed_rows` for an ``f_val`` key: (found, value, an event to wait for when
        another kind's value is being asked) (under the lock)."""
        if ck[2] or ck in self._vals:
            return False, None, None
        for kind in self._kinds.get((ck[0], ck[1], ck[3]), ()):
            typed = (ck[0], ck[1], kind, *ck[3:])
            if typed in self._vals:
                return True, self._vals[typed], None
            if typed in self._inflight_vals:
                return False, None, self._inflight_vals[typed]
        return False, None, None

    def _borrowable_value(self, ck: tuple) -> tuple[bool, Any]:
        """:meth:`_borrowed_value`, waiting once (outside the lock) for another kind's value in flight."""
        if ck[2]:  # a typed request reads only its own kind's answer
            return False, None
        with self._lock:
            found, value, other = self._borrowed_value(ck)
        if other is not None:
            other.wait()
            with self._lock:
                found, value, _ = self._borrowed_value(ck)
        return found, value

    def _release_rows(self, base: tuple, keys: list[str], event: threading.Event) -> None:
        """Drop ``keys``' in-flight marks that are ``event``'s (under the lock)."""
        inflight = self._inflight_rows.get(base)
        if inflight is None:
            return
        if len(inflight) == len(keys) and list(inflight.values()).count(event) == len(inflight):
            del self._inflight_rows[base]  # only this request's rows were in flight
            return
        for k in keys:
            if inflight.get(k) is event:
                del inflight[k]
        if not inflight:
            del self._inflight_rows[base]

    # ------------------------------------------------------------ prefill (the question-level plan)
    def reserve_col(self, backend_id: str, request: NeuralRequest) -> Reservation:
        """Claim the rows of ``request`` that are neither cached nor being asked: the caller
        will answer them (then :meth:`store_col`) and MUST :meth:`release` the reservation
        (in a ``finally``). Meanwhile requests for those rows wait (single-flight); a row
        released without an answer is asked by the waiting request itself."""
        base = self._question(backend_id, request)
        event = threading.Event()
        with self._lock:
            borrowed, waits = self._borrowed_rows(base, list(dict.fromkeys(request.keys)))
            if borrowed is not None or waits:
                return Reservation(base, [], event)  # answered already (or being asked) as another kind
            self._note_kind(base)
            rows = self._rows.get(base, {})
            inflight = self._inflight_rows.setdefault(base, {})
            mine = [k for k in dict.fromkeys(request.keys) if k not in rows and k not in inflight]
            inflight.update(dict.fromkeys(mine, event))
            if not inflight:
                del self._inflight_rows[base]
        return Reservation(base, mine, event)

    def store_col(self, backend_id: str, request: NeuralRequest, answers_by_key: dict[str, Any]) -> int:
        """Prefill ``col`` answers (row key → raw answer) for ``request``'s question, keyed like
        :meth:`resolve_col` keys them. Rows already cached keep their answer.
        Returns how many rows were stored."""
        base = self._question(backend_id, request)
        with self._lock:
            rows = self._rows_of(base)
            new = {k: v for k, v in answers_by_key.items() if k not in rows}
            rows.update(new)
            self.stats.prefilled_rows += len(new)
        return len(new)

    def release(self, reservation: Reservation) -> None:
        """End a :meth:`reserve_col` reservation: waiting requests read the stored rows and
        ask for the others themselves."""
        with self._lock:
            self._release_rows(reservation.base, reservation.keys, reservation.event)
        reservation.event.set()

    # ------------------------------------------------------------ col
    def resolve_col(self, backend_id: str, request: NeuralRequest,
                    compute: Callable[[NeuralRequest], NeuralAnswer]) -> Resolution:
        base = self._question(backend_id, request)
        result: dict[str, Any] = {}
        cached: list[str] = []
        computed: list[NeuralAnswer] = []
        distinct = list(dict.fromkeys(request.keys))
        borrowed = self._borrowable_rows(base, distinct)
        if borrowed is not None:  # any answer suits this request, and another kind's cover its rows
            with self._lock:
                self.stats.row_hits += len(distinct)
            return Resolution(borrowed, None, distinct, True, [])
        pending = distinct
        for _attempt in range(3):  # a row another request failed on is asked again by us
            if not pending:
                break
            event = threading.Event()
            with self._lock:
                rows = self._rows_of(base)
                hits = [k for k in pending if k in rows] if rows else []
                if hits:
                    result.update({k: rows[k] for k in hits})
                    cached.extend(hits)
                    self.stats.row_hits += len(hits)
                    rest = [k for k in pending if k not in rows]
                else:
                    rest = pending
                inflight = self._inflight_rows.setdefault(base, {})
                waiting = {k: inflight[k] for k in rest if k in inflight} if inflight else {}
                mine = [k for k in rest if k not in waiting] if waiting else rest
                inflight.update(dict.fromkeys(mine, event))
                if not inflight:
                    del self._inflight_rows[base]
                self.stats.row_misses += len(mine)
                if mine:
                    self.stats.backend_calls += 1
            try:
                if mine:
                    answer = compute(request if mine == request.keys else request.subset(mine))
                    computed.append(answer)
                    wanted = set(mine)
                    got = dict(answer.answers) if answer.answers.keys() == wanted else \
                        {k: v for k, v in answer.answers.items() if k in wanted}
                    with self._lock:
                        self._rows_of(base).update(got)
                    result.update(got)
            finally:
                if mine:
                    with self._lock:
                        self._release_rows(base, mine, event)
                    event.set()
            for ev in set(waiting.values()):
                ev.wait()
            with self._lock:
                rows = self._rows.get(base, {})
                answered = [k for k in waiting if k in rows]
                result.update({k: rows[k] for k in answered})
                pending = [k for k in waiting if k not in rows]
            cached.extend(answered)
        from_cache = not computed and len(cached) == len(distinct)
        return Resolution(result, None, cached, from_cache, computed)

    # ------------------------------------------------------------ val
    def resolve_val(self, backend_id: str, request: NeuralRequest,
                    compute: Callable[[NeuralRequest], NeuralAnswer]) -> Resolution:
        if not keys_name_rows(request):
            # a forged request (red team 10: a worker sent an honest sub-table's keys beside cells of its own):
            # the model's answer to its cells is this request's alone, never what others get for those keys
            answer = compute(request)
            answer = replace(answer, warnings=[*answer.warnings, "answered for this call alone, not through the "
                                               "cache shared with other programs: its rows are not the rows its "
                                               "keys name"])
            return Resolution({}, answer.value, [], False, [answer])
        ck = (*self._question(backend_id, request), tuple(request.keys))
        found, value = self._borrowable_value(ck)
        if found:  # any answer suits this request: another kind's, asked already
            with self._lock:
                self.stats.val_hits += 1
            return Resolution({}, value, [], True, [])
        while True:
            with self._lock:
                if ck in self._vals:
                    self.stats.val_hits += 1
                    return Resolution({}, self._vals[ck], [], True, [])
                event = self._inflight_vals.get(ck)
                if event is None:
                    event = threading.Event()
                    self._inflight_vals[ck] = event
                    self._note_kind(ck)  # (a request of no particular kind may wait for it)
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
                    if self._inflight_vals.get(ck) is event:
                        del self._inflight_vals[ck]
                event.set()
