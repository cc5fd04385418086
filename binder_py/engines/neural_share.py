"""The neural cache across Ray workers: per-worker caches, merged by the driver.

Every worker keeps its own :class:`~binder_py.neural.cache.NeuralCache` (shared by the
candidates of a question, and by the questions that worker runs, exactly as one local
run shares one cache). After each question the worker returns the answers that question
added (:func:`new_entries`); the driver merges them into one store (:class:`MergedNeuralCache`)
and, at most every few seconds, publishes a snapshot that later tasks carry; a worker adds
a newer snapshot to its cache before its next question (:func:`add_entries`).

Why not one shared store (an actor)? A neural lookup happens per row and per call site;
a remote call for each would cost more than it saves, and the answers a question needs are
mostly its own (its candidates share the worker's cache at once). The price: a worker sees
another worker's answers only after the next snapshot, so two questions about the same rows
that run at the same time on two workers both ask. docs/BENCHMARKS.md measures the hit rate
against a local run.

Entries are ``(kind, key) -> answer`` with ``kind`` ``"rows"`` (one ``f_col`` row) or
``"vals"`` (one ``f_val`` call); keys start with the neural backend's ``cache_id``, so
answers of another backend never match.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

Entries = dict[str, dict[tuple, Any]]
KINDS = ("rows", "vals")


def _flat(cache: Any) -> dict[str, dict[tuple, Any]]:
    """The cache's two stores as flat ``key -> answer`` maps: ``rows`` keyed ``(*call, row key)`` (the cache
    holds them per call: ``call -> row key -> answer``, the call a tuple (backend, question, answer kind,
    columns)), ``vals`` as they are. Call with the cache's lock held."""
    rows = {(*base, key): answer for base, answers in cache._rows.items() for key, answer in answers.items()}
    return {"rows": rows, "vals": dict(cache._vals)}


def cache_keys(cache: Any) -> dict[str, set[tuple]]:
    """The keys ``cache`` holds now (to find what a question adds)."""
    with cache._lock:
        return {kind: set(table) for kind, table in _flat(cache).items()}


def new_entries(cache: Any, before: dict[str, set[tuple]]) -> Entries:
    """The answers ``cache`` holds that were not there ``before``."""
    with cache._lock:
        return {kind: {k: v for k, v in table.items() if k not in before[kind]}
                for kind, table in _flat(cache).items()}


def add_entries(cache: Any, entries: Entries) -> int:
    """Add ``entries`` to ``cache`` (answers it has already are kept); returns how many were new."""
    added = 0
    with cache._lock:
        for flat_key, value in entries.get("rows", {}).items():
            base, key = tuple(flat_key[:-1]), flat_key[-1]
            answers = cache._rows_of(base)
            if key not in answers:
                answers[key] = value
                added += 1
        for key, value in entries.get("vals", {}).items():
            if key not in cache._vals:
                cache._vals[key] = value
                cache._note_kind(key)
                added += 1
    return added


def cache_counts(cache: Any) -> dict[str, int]:
    """The cache's counters: hits and misses (rows and whole calls), and rows stored ahead by the
    question-level plan (asked of the model without a lookup)."""
    s = cache.stats
    return {"row_hits": s.row_hits, "row_misses": s.row_misses, "val_hits": s.val_hits, "val_misses": s.val_misses,
            "prefilled_rows": s.prefilled_rows}


def model_answers(counts: dict[str, int]) -> int:
    """Neural answers the model was asked for (rows and whole calls): what the cache did not save."""
    return counts.get("row_misses", 0) + counts.get("val_misses", 0) + counts.get("prefilled_rows", 0)


def hit_rate(counts: dict[str, int]) -> float:
    """Share of neural lookups (rows and whole calls) answered from the cache."""
    hits = counts.get("row_hits", 0) + counts.get("val_hits", 0)
    total = hits + counts.get("row_misses", 0) + counts.get("val_misses", 0)
    return hits / total if total else 0.0


def _empty() -> Entries:
    return {kind: {} for kind in KINDS}


@dataclass
class MergedNeuralCache:
    """The driver's merge of the workers' answers. ``pending`` holds what was merged since
    the last :meth:`take_pending` (the next snapshot's delta)."""

    entries: Entries = field(default_factory=_empty)
    pending: Entries = field(default_factory=_empty)
    counts: dict[str, int] = field(default_factory=dict)  # summed over every question's lookups

    def merge(self, entries: Entries, counts: dict[str, int] | None = None) -> int:
        added = 0
        for kind in KINDS:
            table, delta = self.entries[kind], self.pending[kind]
            for key, value in entries.get(kind, {}).items():
                if key not in table:
                    table[key] = delta[key] = value
                    added += 1
        for name, n in (counts or {}).items():
            self.counts[name] = self.counts.get(name, 0) + n
        return added

    def take_pending(self) -> Entries:
        delta, self.pending = self.pending, _empty()
        return delta

    @property
    def has_pending(self) -> bool:
        return any(self.pending[kind] for kind in KINDS)


__all__ = ["Entries", "MergedNeuralCache", "add_entries", "cache_counts", "cache_keys", "hit_rate", "model_answers", "new_entries"]
