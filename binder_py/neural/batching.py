"""The plan prompts of several questions in one request (evaluation runs), in fixed waves.

An evaluation runs its questions ``concurrency`` at a time, in order. :class:`PlanWaves`
splits that order into *waves* of consecutive questions (``size`` each, at most the
concurrency, so a wave's questions are all in flight together). Each question's plan
(:func:`binder_py.neural.plan.start_plan`) hands its multi-table prompts to its wave instead of
sending them. When every question of the wave has handed in its plan prompts, or planned
without any, the wave's prompts go out: taken in question order, each question's into the
first multi-table prompt it fits in (first fit), within the model's budget (:meth:`LMNeuralBackend.fits_one_prompt`:
rows, labels, input and output tokens), the packs sent at once. The answers are read back by
label and row_id and handed to each question.

Which prompts share a request depends only on the questions' plans and their order, never on
timing, so a re-run sends the same prompts (an LM cache finds them) and a replay of a recorded
run sends the recorded ones: recorded runs batch too. ``run_eval`` records the wave size and a
replay uses it (``config.json``: ``plan_wave``).

A question's plan prompts join its wave only the first time it plans (a later plan, e.g. in
its repair round, is asked at once), and only from the question's own thread (a context
variable set by :meth:`PlanWaves.question`). A wave that is still incomplete after ``max_wait``
seconds (a guard: a question stuck elsewhere) is sent as it stands, with a warning. The
request, tokens and provenance of a shared prompt are counted in the first question's plan;
the others list the prompt with no usage.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from binder_py.lm.types import Usage
from binder_py.neural.requests import NeuralRequest

__all__ = ["BatchingBackend", "PlanWaves", "Ticket", "current_wave", "waves_can_batch"]


#: how plan prompts are packed, recorded in a run's config (``plan_packing``) so that its replay
#: packs them the same way: 1 = each plan into the last pack, 6 tokens an answer; 2 = first fit,
#: each answer as long as its kind (yes/no 2 tokens, a number 4); 3 = as 2, and a question that
#: hands its wave nothing at its first plan is settled then, not when it finishes (before, its
#: programs could wait for another question's plan in the wave, which waited for it: max_wait)
PLAN_PACKING = 3


@runtime_checkable
class BatchingBackend(Protocol):
    """What a wave needs of the neural backend (:class:`~binder_py.neural.lm_backend.LMNeuralBackend`)."""

    #: pack prompts by each answer's expected length (False: as runs recorded before, for their replays)
    pack_by_answer_kind: bool

    def fits_one_prompt(self, groups: Sequence[Sequence[NeuralRequest]], vals: Sequence[NeuralRequest] = ()) -> bool: ...

    def answer_tables(self, groups: Sequence[Sequence[NeuralRequest]], vals: Sequence[NeuralRequest] = ()) -> Any: ...


def waves_can_batch(backend: Any) -> bool:
    """``backend`` can share plan prompts across questions: a planning backend that combines
    tables and can tell whether they fit one prompt (the prompted LM backend)."""
    from binder_py.neural.backends import PlanningBackend

    return isinstance(backend, PlanningBackend) and isinstance(backend, BatchingBackend) and backend.combine_tables


@dataclass(frozen=True)
class Ticket:
    """One plan prompt a question will hand in: its question and its place among that question's prompts."""

    waves: PlanWaves
    question: str
    seq: int

    def answer_tables(self, groups: Sequence[Sequence[NeuralRequest]], vals: Sequence[NeuralRequest] = ()) -> Any:
        return self.waves.hand_in(self, groups, vals)


@dataclass
class _Entry:
    order: tuple[int, int]
    groups: list[list[NeuralRequest]]
    vals: list[NeuralRequest]
    future: Future = field(default_factory=Future)


@dataclass
class _Wave:
    members: set[str]
    settled: set[str] = field(default_factory=set)
    entries: list[_Entry] = field(default_factory=list)
    sent: bool = False
    opened: threading.Event = field(default_factory=threading.Event)


_CURRENT: ContextVar[tuple[PlanWaves, str] | None] = ContextVar("binder_plan_wave", default=None)


def current_wave() -> tuple[PlanWaves, str] | None:
    """The waves and question key of the question this thread is answering, if any."""
    return _CURRENT.get()


class PlanWaves:
    """The plan prompts of the questions ``order`` (their keys, in run order), in waves of ``size``,
    or in the waves ``groups`` (each a list of keys, in run order) where given."""

    def __init__(self, backend: BatchingBackend, order: Sequence[str], size: int, *, max_wait: float = 600.0,
                 first_fit: bool = True, settle_on_plan: bool = True, groups: Sequence[Sequence[str]] | None = None):
        self.backend = backend
        self.first_fit = first_fit  # False: each plan joins the last pack or opens one (runs recorded before)
        self.settle_on_plan = settle_on_plan  # False: settled only when the question ends (runs recorded before)
        self.size = max(1, size)
        self.max_wait = max_wait
        self._lock = threading.Lock()
        self._position = {key: i for i, key in enumerate(dict.fromkeys(order))}
        keys = list(self._position)
        chunks = ([[key for key in group if key in self._position] for group in groups] if groups is not None
                  else [keys[i:i + self.size] for i in range(0, len(keys), self.size)])
        self._waves = [_Wave(set(chunk)) for chunk in chunks if chunk]
        self._wave_by_key = {key: wave for wave in self._waves for key in wave.members}
        missing = [key for key in keys if key not in self._wave_by_key]
        if missing:
            raise ValueError(f"groups leave out {len(missing)} question(s), e.g. {missing[0]!r}")
        self._expected: dict[str, int] = {}
        self._handed: dict[str, int] = {}
        self._done: set[str] = set()  # settled questions: later plan prompts are asked at once

    def _wave_of(self, key: str) -> _Wave:
        return self._wave_by_key[key]

    def members(self, key: str) -> list[str]:
        """The questions of ``key``'s wave, in run order (a results line records them: a replay packs the
        same waves)."""
        return sorted(self._wave_of(key).members, key=self._position.__getitem__)

    @contextmanager
    def question(self, key: str) -> Iterator[None]:
        """Around one question's work (in its thread): its plan prompts join its wave; when it
        ends, the question is settled with whatever it handed in."""
        if key not in self._position:
            yield
            return
        token = _CURRENT.set((self, key))
        try:
            yield
        finally:
            _CURRENT.reset(token)
            self._settle(key)

    def wrap(self, work: Callable[[Any, Any], Any], key_of: Callable[[Any], str]) -> Callable[[Any, Any], Any]:
        """``work(binder, item)`` run inside :meth:`question` for ``key_of(item)``."""
        def run(binder: Any, item: Any) -> Any:
            with self.question(key_of(item)):
                return work(binder, item)
        return run

    def accepts(self) -> bool:
        """The current question may still hand plan prompts to its wave (it has not planned yet)."""
        found = _CURRENT.get()
        if found is None or found[0] is not self:
            return False
        with self._lock:
            return found[1] not in self._done and found[1] not in self._expected

    def tickets(self, count: int) -> list[Ticket] | None:
        """``count`` tickets for the plan prompts the current question is about to hand in, or
        None (no wave, the question already planned once, or nothing to hand in): ask at once."""
        found = _CURRENT.get()
        if found is None or found[0] is not self or count <= 0:
            return None
        key = found[1]
        with self._lock:
            if key in self._done or key in self._expected:
                return None
            self._expected[key] = count
            self._handed[key] = 0
        return [Ticket(self, key, seq) for seq in range(count)]

    def planned(self) -> None:
        """The current question's first plan is out (or it had nothing to plan): if it handed its
        wave no plan prompt, it is settled now. Its programs may wait for rows that another
        question's plan in the same wave claimed first; that wave goes out only when every
        question has settled, so waiting until this question finished made both wait until
        ``max_wait``."""
        found = _CURRENT.get()
        if found is None or found[0] is not self or not self.settle_on_plan:
            return
        with self._lock:
            if found[1] not in self._expected:
                self._settle_locked(found[1])

    def hand_in(self, ticket: Ticket, groups: Sequence[Sequence[NeuralRequest]], vals: Sequence[NeuralRequest]) -> Any:
        """What ``backend.answer_tables(groups, vals)`` returns, asked with the wave's other prompts."""
        entry = _Entry((self._position[ticket.question], ticket.seq), [list(g) for g in groups], list(vals))
        wave = self._wave_of(ticket.question)
        with self._lock:
            late = wave.sent
            if not late:
                wave.entries.append(entry)
                self._handed[ticket.question] += 1
                if self._handed[ticket.question] >= self._expected[ticket.question]:
                    self._settle_locked(ticket.question)
        if late:  # the wave went out without it (max_wait): asked alone
            return self.backend.answer_tables(entry.groups, entry.vals)
        if not entry.future.done() and not wave.opened.wait(self.max_wait):
            self._send_incomplete(wave)
        return entry.future.result()

    def _settle(self, key: str) -> None:
        with self._lock:
            self._settle_locked(key)

    def _settle_locked(self, key: str) -> None:
        if key in self._done:
            return
        self._done.add(key)
        wave = self._wave_of(key)
        wave.settled.add(key)
        if not wave.sent and wave.settled >= wave.members:
            self._launch_locked(wave, complete=True)

    def _send_incomplete(self, wave: _Wave) -> None:
        with self._lock:
            if not wave.sent:
                self._launch_locked(wave, complete=False)

    def _launch_locked(self, wave: _Wave, *, complete: bool) -> None:
        wave.sent = True
        entries = sorted(wave.entries, key=lambda e: e.order)
        wave.opened.set()
        if entries:
            note = "" if complete else (f"its evaluation wave was sent after {self.max_wait:.0f} s without "
                                        f"{len(wave.members - wave.settled)} question(s) that had not planned yet")
            threading.Thread(target=self._send, args=(entries, note), name="binder-plan-wave", daemon=True).start()

    def _send(self, entries: list[_Entry], note: str) -> None:
        packs: list[list[_Entry]] = []
        for entry in entries:  # first fit: each question's plan joins the first pack it fits in
            for pack in (packs if self.first_fit else packs[-1:]):
                if self.backend.fits_one_prompt([g for e in pack + [entry] for g in e.groups],
                                                [v for e in pack + [entry] for v in e.vals]):
                    pack.append(entry)
                    break
            else:
                packs.append([entry])
        threads = [threading.Thread(target=self._ask, args=(pack, note), name="binder-plan-batch")
                   for pack in packs[1:]]
        for thread in threads:
            thread.start()
        self._ask(packs[0], note)
        for thread in threads:
            thread.join()

    def _ask(self, pack: list[_Entry], note: str) -> None:
        try:
            merged = self.backend.answer_tables([g for e in pack for g in e.groups],
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
                part.warnings.append(f"asked in one prompt with {len(pack) - 1} other plan prompt(s); its request "
                                     "and tokens are counted in the first one's plan")
            if note:
                part.warnings.append(note)
            g, v = g + len(entry.groups), v + len(entry.vals)
            entry.future.set_result(part)
