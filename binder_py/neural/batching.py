"""The plan prompts of several questions in one request (evaluation runs).

An evaluation asks several questions at once. Each question's plan (:mod:`binder_py.neural.plan`)
sends one multi-table prompt; the :class:`PlanBatcher` holds each such prompt for a short
window and sends the prompts that arrived meanwhile as ONE multi-table prompt (their sub-tables
and value questions relabelled in order, row_ids unique), as long as it fits the model's
budget (:meth:`LMNeuralBackend.fits_one_prompt`); what does not fit goes in a further request
of the same wave. The answers are read back by label and row_id and handed to each question.

The first prompt of a wave waits for at most ``window`` seconds, or until ``expected`` prompts
(the questions in flight) are waiting. Which questions share a prompt depends on timing, so a
re-run's plan prompts may differ (an LM cache then misses them) and a replay could not find
them: ``run_eval`` turns batching on only for runs that are neither recorded nor replayed
(``run_eval`` with a :class:`LanguageModel` object, not a ``--lm`` spec). The request, tokens
and provenance of a shared prompt are counted in the first question's plan; the others list
the prompt with no usage.
"""

from __future__ import annotations

import threading
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any, Sequence

from binder_py.lm.types import Usage
from binder_py.neural.requests import NeuralRequest


@dataclass
class _Waiting:
    groups: list[list[NeuralRequest]]
    vals: list[NeuralRequest]
    future: Future = field(default_factory=Future)


class PlanBatcher:
    """Merges concurrent ``answer_tables`` calls of one backend into shared requests."""

    def __init__(self, backend: Any, *, window: float = 0.25, expected: int = 4):
        self.backend = backend
        self.window = window
        self.expected = max(1, expected)
        self._lock = threading.Lock()
        self._waiting: list[_Waiting] = []
        self._full = threading.Event()

    def answer_tables(self, groups: Sequence[Sequence[NeuralRequest]], vals: Sequence[NeuralRequest] = ()) -> Any:
        """What ``backend.answer_tables(groups, vals)`` returns, asked together with the other
        questions' prompts of the same wave."""
        entry = _Waiting([list(g) for g in groups], list(vals))
        with self._lock:
            self._waiting.append(entry)
            leader = len(self._waiting) == 1
            if leader:
                self._full.clear()
            if len(self._waiting) >= self.expected:
                self._full.set()
        if leader:
            self._full.wait(self.window)
            with self._lock:
                wave, self._waiting = self._waiting, []
            self._send(wave)
        return entry.future.result()

    def _send(self, wave: list[_Waiting]) -> None:
        packs: list[list[_Waiting]] = []
        for entry in wave:
            if packs and self.backend.fits_one_prompt([g for e in packs[-1] + [entry] for g in e.groups],
                                                      [v for e in packs[-1] + [entry] for v in e.vals]):
                packs[-1].append(entry)
            else:
                packs.append([entry])
        threads = [threading.Thread(target=self._ask, args=(pack,), name="binder-plan-batch") for pack in packs[1:]]
        for thread in threads:
            thread.start()
        self._ask(packs[0])
        for thread in threads:
            thread.join()

    def _ask(self, pack: list[_Waiting]) -> None:
        if len(pack) == 1:
            entry = pack[0]
            try:
                entry.future.set_result(self.backend.answer_tables_now(entry.groups, entry.vals))
            except BaseException as error:  # noqa: BLE001 - the question's plan step reports it
                entry.future.set_exception(error)
            return
        try:
            merged = self.backend.answer_tables_now([g for e in pack for g in e.groups],
                                                    [v for e in pack for v in e.vals])
        except BaseException as error:  # noqa: BLE001 - each question's plan step reports it
            for entry in pack:
                entry.future.set_exception(error)
            return
        from binder_py.neural.lm_backend import TablesAnswer

        g = v = 0
        for index, entry in enumerate(pack):
            part = TablesAnswer(sections=merged.sections[g:g + len(entry.groups)],
                                values=merged.values[v:v + len(entry.vals)],
                                prompts=list(merged.prompts), raw_outputs=list(merged.raw_outputs),
                                usage=merged.usage if index == 0 else Usage(),
                                warnings=list(merged.warnings) if index == 0 else [])
            if index:
                part.warnings.append(f"asked in one prompt with {len(pack) - 1} other question(s); its request "
                                     "and tokens are counted in the first one's plan")
            g, v = g + len(entry.groups), v + len(entry.vals)
            entry.future.set_result(part)


def batch_plan_prompts(backend: Any, concurrency: int, *, replaying: bool = False, window: float = 0.25) -> bool:
    """Let ``backend`` (an :class:`LMNeuralBackend`) send the plan prompts of up to ``concurrency``
    questions asked at once as shared requests; not for one question at a time, a backend that
    cannot combine tables, or when ``replaying`` (a replayed or recorded run: its prompts must be
    the recorded ones). Returns whether batching is on."""
    if concurrency < 2 or replaying or not getattr(backend, "combine_tables", False) or \
            not hasattr(backend, "answer_tables_now"):
        return False
    backend.plan_batcher = PlanBatcher(backend, window=window, expected=concurrency)
    return True


def stop_batching(backend: Any) -> None:
    """``backend`` asks each plan prompt at once again (after the evaluation run)."""
    if getattr(backend, "plan_batcher", None) is not None:
        backend.plan_batcher = None
