"""Question-level planning of neural calls: answer the predictable calls of ALL candidate
programs of a question before any of them runs, several questions per prompt.

The candidate programs of one question tend to ask the same few ``f_col`` questions
about the same columns. Before they run, the planner

1. collects the *predictable* requests of every candidate (``prefetch.predictable_requests``:
   a literal question, literal column names of the original table, in a program that
   never rebinds ``df``/``table``) — the same requests the programs will send;
2. drops rows already in the shared :class:`NeuralCache` (or being asked), claiming the
   others so concurrent requests wait for the plan instead of asking again;
3. groups the ``f_col`` requests by context columns and answers each group with
   :meth:`LMNeuralBackend.answer_many` — ONE prompt per batch of rows asking up to
   ``max_questions`` questions (one answer column per question, rows matched by row_id);
   a group of one question is asked the ordinary way (``backend.answer``); predictable
   ``f_val`` requests are asked in the same wave (through the cache);
4. stores every answer in the cache by row key (``NeuralCache.store_col``). A row the
   model did not answer is not stored: the program's own call asks for it again.

The programs then run as usual; their predicted calls are cache hits (their traces say
``from_cache`` and list ``cached_keys``), calls that were not predicted go through the
normal path. The plan's own prompts, outputs and usage are kept in a :class:`NeuralPlan`
(``Answer.plan``) and counted in the question's usage.

Only backends with ``answer_many`` (the prompted LM) are planned for; with the oracle or
a callable backend nothing changes (see :func:`supports_planning`).
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from binder_py.jsonable import to_jsonable
from binder_py.language.backends import backend_cache_id
from binder_py.language.cache import NeuralCache, Reservation
from binder_py.language.prefetch import predictable_requests
from binder_py.language.program import parse_program
from binder_py.language.requests import NeuralRequest
from binder_py.lm.types import Usage


@dataclass
class PlanStep:
    """One unit of the plan: a multi-question group, a single ``f_col`` question, or an ``f_val``.

    ``asked``/``answered`` count rows per question (kind ``val``: 1 or 0)."""

    kind: str  # "multi" | "col" | "val"
    columns: list[str]
    questions: list[str]
    asked: dict[str, int] = field(default_factory=dict)
    answered: dict[str, int] = field(default_factory=dict)
    prompts: list[str] = field(default_factory=list)
    raw_outputs: list[str] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    warnings: list[str] = field(default_factory=list)
    error: str | None = None
    from_cache: bool = False  # val: the answer was already cached
    seconds: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "columns": list(self.columns), "questions": list(self.questions),
                "asked": dict(self.asked), "answered": dict(self.answered), "prompts": list(self.prompts),
                "raw_outputs": list(self.raw_outputs), "usage": self.usage.as_dict(),
                "warnings": list(self.warnings), "error": self.error, "from_cache": self.from_cache,
                "seconds": self.seconds}


@dataclass
class NeuralPlan:
    """What the planner asked before the candidate programs ran (``Answer.plan``)."""

    backend: str
    programs: int = 0  # candidate programs looked at
    predicted: int = 0  # predictable requests found (before de-duplication)
    steps: list[PlanStep] = field(default_factory=list)
    seconds: float = 0.0
    warnings: list[str] = field(default_factory=list)

    @property
    def usage(self) -> Usage:
        total = Usage()
        for step in self.steps:
            total += step.usage
        return total

    @property
    def requests(self) -> int:
        return int(self.usage.requests)

    def merged(self, other: NeuralPlan) -> NeuralPlan:
        """This plan followed by ``other`` (e.g. the plan of the repair round)."""
        return NeuralPlan(self.backend, self.programs + other.programs, self.predicted + other.predicted,
                          self.steps + other.steps, self.seconds + other.seconds, self.warnings + other.warnings)

    def to_json(self) -> dict[str, Any]:
        return {"backend": self.backend, "programs": self.programs, "predicted": self.predicted,
                "requests": self.requests, "usage": self.usage.as_dict(), "seconds": self.seconds,
                "warnings": list(self.warnings), "steps": [to_jsonable(s.to_json()) for s in self.steps]}


def supports_planning(backend: Any) -> bool:
    """The backend can answer several questions in one prompt (and sends distinct rows)."""
    return callable(getattr(backend, "answer_many", None)) and bool(getattr(backend, "dedup", True))


def collect_requests(programs: Iterable[str], table: pd.DataFrame,
                     title: str | None = None) -> tuple[int, list[NeuralRequest]]:
    """The predictable requests of ``programs`` on ``table``, de-duplicated: one per
    (kind, question, columns) for ``f_col``, one per (question, columns, rows) for ``f_val``.
    Returns (requests found before de-duplication, the distinct requests)."""
    found = 0
    distinct: dict[tuple, NeuralRequest] = {}
    for program in programs:
        try:
            parsed = parse_program(program)
            requests = predictable_requests(parsed, table, title, dedup=True)
        except Exception:  # noqa: BLE001 - a broken program fails later, with its own message
            continue
        for request in requests:
            found += 1
            key: tuple = (request.kind, request.question, tuple(request.columns))
            if request.kind == "val":
                key += (tuple(request.keys),)
            distinct.setdefault(key, request)
    return found, list(distinct.values())


def plan_neural_calls(programs: Iterable[str], table: pd.DataFrame, backend: Any, cache: NeuralCache, *,
                      title: str | None = None, max_workers: int = 4, vals: bool = True) -> NeuralPlan:
    """Answer the predictable neural requests of ``programs`` into ``cache`` (see the module
    docstring). Never raises: a failing step is recorded in its ``error`` and the programs'
    own calls ask again."""
    start = time.perf_counter()
    programs = list(programs)
    plan = NeuralPlan(backend=str(getattr(backend, "name", type(backend).__name__)), programs=len(programs))
    if not supports_planning(backend):
        return plan
    plan.predicted, requests = collect_requests(programs, table, title)
    backend_id = backend_cache_id(backend)
    groups: dict[tuple[str, ...], list[tuple[NeuralRequest, Reservation]]] = {}
    jobs: list[Any] = []
    for request in requests:
        if request.kind == "val":
            if vals:
                jobs.append(lambda r=request: _val_step(r, backend, cache, backend_id))
            continue
        reservation = cache.reserve_col(backend_id, request.question, request.columns, request.keys)
        if not reservation.keys:
            cache.release(reservation)
            continue
        groups.setdefault(tuple(request.columns), []).append((request.subset(reservation.keys), reservation))
    for members in groups.values():
        jobs.append(lambda m=members: _col_step(m, backend, cache, backend_id))
    if jobs:
        if len(jobs) > 1 and max_workers > 1:
            with ThreadPoolExecutor(max_workers=min(max_workers, len(jobs)), thread_name_prefix="binder-plan") as pool:
                plan.steps = list(pool.map(lambda job: job(), jobs))
        else:
            plan.steps = [job() for job in jobs]
    plan.steps = [s for s in plan.steps if s is not None]
    plan.seconds = time.perf_counter() - start
    return plan


def _col_step(members: list[tuple[NeuralRequest, Reservation]], backend: Any, cache: NeuralCache,
              backend_id: str) -> PlanStep:
    columns = list(members[0][0].columns)
    questions = [r.question for r, _ in members]
    step = PlanStep(kind="multi" if len(members) > 1 else "col", columns=columns, questions=questions,
                    asked={r.question: len(r.keys) for r, _ in members})
    start = time.perf_counter()
    try:
        if len(members) > 1:
            many = backend.answer_many([r for r, _ in members])
            by_question = many.answers
            step.prompts, step.raw_outputs = list(many.prompts), list(many.raw_outputs)
            step.usage, step.warnings = many.usage, list(many.warnings)
        else:
            request = members[0][0]
            single = backend.answer(request)
            by_question = {request.question: single.answers}
            step.prompts, step.raw_outputs = list(single.prompts), list(single.raw_outputs)
            step.usage, step.warnings = single.usage, list(single.warnings)
        for request, _ in members:
            wanted = set(request.keys)
            got = {k: v for k, v in (by_question.get(request.question) or {}).items() if k in wanted}
            cache.store_col(backend_id, request.question, request.columns, got)
            step.answered[request.question] = len(got)
    except Exception as error:  # noqa: BLE001 - the programs' own calls ask again and report errors
        step.error = f"{type(error).__name__}: {error}"
    finally:
        for _, reservation in members:
            cache.release(reservation)
        step.seconds = time.perf_counter() - start
    return step


def _val_step(request: NeuralRequest, backend: Any, cache: NeuralCache, backend_id: str) -> PlanStep:
    step = PlanStep(kind="val", columns=list(request.columns), questions=[request.question],
                    asked={request.question: 1})
    start = time.perf_counter()
    try:
        resolution = cache.resolve_val(backend_id, request, backend.answer)
        step.from_cache = resolution.from_cache
        step.answered[request.question] = 1
        for answer in resolution.computed:
            step.prompts.extend(answer.prompts)
            step.raw_outputs.extend(answer.raw_outputs)
            step.usage += answer.usage
            step.warnings.extend(answer.warnings)
    except Exception as error:  # noqa: BLE001
        step.error = f"{type(error).__name__}: {error}"
    finally:
        step.seconds = time.perf_counter() - start
    return step
