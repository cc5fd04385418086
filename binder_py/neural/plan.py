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
   with ``combine_tables`` (the backend's, on by default) groups that fit ONE prompt
   together (``backend.plan_tables``: token budget of input and output, rows, sub-tables)
   are asked with :meth:`LMNeuralBackend.answer_tables` — one labelled sub-table per
   column set, each output section read by its label and row_ids —; groups that do not
   fit, and every group when the model says the combined prompt is too long, are asked
   per column set as above;
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

import threading
import time
from collections.abc import Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, TypeGuard

import pandas as pd

from binder_py.jsonable import to_jsonable
from binder_py.neural.batching import Ticket, current_wave
from binder_py.neural.backends import NeuralAnswer, NeuralBackend, PlanningBackend, backend_cache_id
from binder_py.neural.cache import NeuralCache, Reservation, answer_kind_key
from binder_py.neural.prefetch import predictable_requests
from binder_py.language.program import parse_program
from binder_py.neural.requests import NeuralRequest
from binder_py.lm.types import LMContextTooLong, Usage


@dataclass
class PlanStep:
    """One unit of the plan: a multi-question group, a single ``f_col`` question, or an ``f_val``.

    ``asked``/``answered`` count rows per question (kind ``val``: 1 or 0)."""

    kind: str  # "tables" | "multi" | "col" | "val"
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
    #: kind "tables": one entry per sub-table (columns, questions, asked, answered); the step's
    #: own asked/answered add up the sub-tables per question
    tables: list[dict[str, Any]] = field(default_factory=list)
    fallback: bool = False  # asked per column set because the combined prompt was too long

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "tables": to_jsonable(self.tables), "fallback": self.fallback, "columns": list(self.columns), "questions": list(self.questions),
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
        return sum((step.usage for step in self.steps), Usage())

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


def supports_planning(backend: NeuralBackend) -> TypeGuard[PlanningBackend]:
    """The backend can answer several questions in one prompt (and sends distinct rows)."""
    return isinstance(backend, PlanningBackend) and backend.dedup


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
            distinct.setdefault(request_identity(request), request)
    return found, list(distinct.values())


class PlanInFlight:
    """A plan whose requests are out: every row it asks is already claimed in the cache (a
    program that needs one waits for the plan instead of asking again), so the candidate
    programs can start while it is in flight. :meth:`result` waits for it."""

    def __init__(self, plan: NeuralPlan, futures: list[Future[Any]], pool: ThreadPoolExecutor | None, start: float):
        self._plan = plan
        self._futures = futures
        self._pool = pool
        self._start = start
        self._done = False

    def result(self) -> NeuralPlan:
        """The plan with its steps, once every request has been answered (idempotent)."""
        if not self._done:
            self._done = True
            for future in self._futures:
                item = future.result()
                if item is not None:
                    self._plan.steps.extend(item if isinstance(item, list) else [item])
            if self._pool is not None:
                self._pool.shutdown(wait=True)
            self._plan.seconds = time.perf_counter() - self._start
        return self._plan


def plan_neural_calls(programs: Iterable[str], table: pd.DataFrame, backend: Any, cache: NeuralCache, *,
                      title: str | None = None, max_workers: int = 4, vals: bool = True,
                      combine_tables: bool | None = None,
                      extra_requests: Sequence[NeuralRequest] = ()) -> NeuralPlan:
    """Answer the predictable neural requests of ``programs`` into ``cache`` (see the module
    docstring) and wait for them: :func:`start_plan` followed by its ``result()``."""
    return start_plan(programs, table, backend, cache, title=title, max_workers=max_workers, vals=vals,
                      combine_tables=combine_tables, extra_requests=extra_requests).result()


def start_plan(programs: Iterable[str], table: pd.DataFrame, backend: Any, cache: NeuralCache, *,
               title: str | None = None, max_workers: int = 4, vals: bool = True,
               combine_tables: bool | None = None,
               extra_requests: Sequence[NeuralRequest] = ()) -> PlanInFlight:
    """Claim the predictable neural requests of ``programs`` (and ``extra_requests``, e.g. the
    ``f_val`` requests over sub-tables from :mod:`binder_py.neural.subtables`) in ``cache`` and
    send them; returns at once with the plan in flight. Never raises: a failing step is
    recorded in its ``error`` and the programs' own calls ask again. ``combine_tables``
    (default: the backend's ``combine_tables``) asks several column sets in one prompt when
    they fit (``backend.plan_tables``). ``max_workers`` bounds the ``f_col`` steps asked at
    once (in an evaluation wave, every step has its own thread: each prompt it hands the wave
    waits for the wave, which waits for all of them); every ``f_val`` step has its own thread, so each is claimed before this returns."""
    start = time.perf_counter()
    programs = list(programs)
    plan = NeuralPlan(backend=backend.name, programs=len(programs))
    if not supports_planning(backend):
        return PlanInFlight(plan, [], None, start)
    assert isinstance(backend, PlanningBackend)
    plan.predicted, requests = collect_requests(programs, table, title)
    plan.predicted += len(extra_requests)
    requests = _distinct(requests + list(extra_requests))
    backend_id = backend_cache_id(backend)
    groups: dict[tuple[str, ...], list[tuple[NeuralRequest, Reservation]]] = {}
    val_requests: list[NeuralRequest] = []
    for request in requests:
        if request.kind == "val":
            if vals and request.rows:  # an f_val over no rows is not asked (its call answers missing)
                val_requests.append(request)
            continue
        group = groups.get(tuple(request.columns), [])
        if any(r.question == request.question for r, _ in group):
            continue  # the same question as another kind of answer: a prompt pairs answers with questions
            # by their text, so this one is asked by its program's own call (cached by its kind)
        reservation = cache.reserve_col(backend_id, request)
        if not reservation.keys:
            cache.release(reservation)
            continue
        groups.setdefault(tuple(request.columns), group).append((request.subset(reservation.keys), reservation))
    if combine_tables is None:
        combine_tables = backend.combine_tables
    units = _units(list(groups.values()), backend, plan, combine_tables)
    # in an evaluation wave (neural.batching), even a lone column set or value goes out as a
    # multi-table prompt, so that it can share a request with other questions' plans
    found = current_wave()
    waves = found[0] if found is not None and found[0].backend is backend and found[0].accepts() else None
    batching = bool(combine_tables) and waves is not None
    hosted = _host_values(units, val_requests, backend, plan, alone=batching) if combine_tables else {}
    if not units and hosted.get(0):
        units = [[]]  # the value questions alone, in one prompt
    jobs: list[Any] = []
    table_jobs: list[int] = []
    tickets: list[Ticket] | None = None  # set below, before any job runs
    val_jobs: list[tuple[threading.Event, Any]] = []
    in_prompt: set[int] = set()
    for index, unit in enumerate(units):
        mine = hosted.get(index, [])
        if mine or len(unit) > 1 or (batching and backend.fits_one_prompt([[r for r, _ in unit[0]]])):
            values: Future[list[Any]] = Future()
            table_jobs.append(len(jobs))
            jobs.append(lambda u=unit, vs=[val_requests[i] for i in mine], f=values, t=len(table_jobs) - 1:
                        _tables_step(u, backend, cache, backend_id, vs, f, tickets[t] if tickets else None))
            for position, i in enumerate(mine):
                in_prompt.add(i)
                claimed = threading.Event()
                val_jobs.append((claimed, lambda r=val_requests[i], c=claimed, f=values, k=position:
                                 _val_step(r, backend, cache, backend_id, c, (f, k))))
        else:
            jobs.append(lambda m=unit[0]: _col_step(m, backend, cache, backend_id))
    for i, request in enumerate(val_requests):
        if i not in in_prompt:
            claimed = threading.Event()
            val_jobs.append((claimed, lambda r=request, c=claimed: _val_step(r, backend, cache, backend_id, c)))
    if not jobs and not val_jobs:
        return PlanInFlight(plan, [], None, start)
    if batching and waves is not None:
        tickets = waves.tickets(len(table_jobs))
    workers = max(1, min(max_workers, len(jobs))) + len(val_jobs)
    if tickets:  # every prompt handed to the wave waits for the wave: one thread each, or a prompt
        workers = max(workers, len(jobs) + len(val_jobs))  # queued behind them kept the wave waiting
    pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="binder-plan")
    futures = [pool.submit(job) for job in jobs] + [pool.submit(job) for _, job in val_jobs]
    for claimed, _ in val_jobs:
        claimed.wait(timeout=_CLAIM_WAIT)
    return PlanInFlight(plan, futures, pool, start)


Group = list[tuple[NeuralRequest, Reservation]]


def _units(group_list: list[Group], backend: Any, plan: NeuralPlan, combine_tables: bool) -> list[list[Group]]:
    """The column-set groups as prompts: packs of several groups that fit one multi-table prompt
    (``backend.plan_tables``), then every other group alone."""
    packed: set[int] = set()
    units: list[list[Group]] = []
    if combine_tables and len(group_list) > 1:
        try:
            packs = backend.plan_tables([[r for r, _ in members] for members in group_list])
        except Exception as error:  # noqa: BLE001 - asked per column set instead
            packs = []
            plan.warnings.append(f"combining column sets failed, asked per column set: {type(error).__name__}: {error}")
        for pack in packs:
            pack = [i for i in pack if i not in packed]
            if len(pack) > 1:
                packed.update(pack)
                units.append([group_list[i] for i in pack])
    units += [[members] for index, members in enumerate(group_list) if index not in packed]
    return units


def _host_values(units: list[list[Group]], vals: list[NeuralRequest], backend: PlanningBackend,
                 plan: NeuralPlan, alone: bool = False) -> dict[int, list[int]]:
    """Which ``f_val`` requests ride in which unit's prompt (unit index → indices into ``vals``):
    as many as fit go with the first unit; with no ``f_col`` unit, two or more values (one with
    ``alone``) make a prompt of their own (index 0). The others are asked alone."""
    least = 1 if alone else 2
    if not vals:
        return {}
    if not units and len(vals) < least:
        return {}
    try:
        chosen = backend.pack_values([[r for r, _ in members] for members in units[0]] if units else [], vals)
    except Exception as error:  # noqa: BLE001 - asked alone instead
        plan.warnings.append(f"asking values with the plan prompt failed, asked alone: {type(error).__name__}: {error}")
        return {}
    if not units and len(chosen) < least:
        return {}
    return {0: list(chosen)} if chosen else {}


#: how long start_plan waits for an f_val step to claim its request in the cache (a thread start)
_CLAIM_WAIT = 0.2


def _distinct(requests: list[NeuralRequest]) -> list[NeuralRequest]:
    distinct: dict[tuple, NeuralRequest] = {}
    for request in requests:
        distinct.setdefault(request_identity(request), request)
    return list(distinct.values())


def request_identity(request: NeuralRequest) -> tuple:
    """What makes two requests the same: (kind, question, kind of answer, columns), and the rows for
    ``f_val``."""
    key: tuple = (request.kind, request.question, answer_kind_key(request), tuple(request.columns))
    if request.kind == "val":
        key += (tuple(request.keys),)
    return key


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
            cache.store_col(backend_id, request, got)
            step.answered[request.question] = len(got)
    except Exception as error:  # noqa: BLE001 - the programs' own calls ask again and report errors
        step.error = f"{type(error).__name__}: {error}"
    finally:
        for _, reservation in members:
            cache.release(reservation)
        step.seconds = time.perf_counter() - start
    return step


def _tables_step(groups: list[Group], backend: Any, cache: NeuralCache, backend_id: str,
                 vals: Sequence[NeuralRequest] = (), values: Future[list[Any]] | None = None,
                 ticket: Ticket | None = None) -> list[PlanStep]:
    """Several column sets, and ``vals`` (``f_val`` requests), in ONE prompt
    (``backend.answer_tables``, or handed to the evaluation wave with ``ticket``:
    :mod:`binder_py.neural.batching`); the raw value answers go to ``values`` (None each when the step
    failed: the value's own step then asks alone). When the model says the prompt is too long,
    each column set is asked as today (``_col_step``, batched)."""
    columns = list(dict.fromkeys(c for members in groups for c in members[0][0].columns))
    step = PlanStep(kind="tables", columns=columns,
                    questions=list(dict.fromkeys([r.question for members in groups for r, _ in members]
                                                 + [r.question for r in vals])))
    for members in groups:
        step.tables.append({"columns": list(members[0][0].columns), "questions": [r.question for r, _ in members],
                            "asked": {r.question: len(r.keys) for r, _ in members}, "answered": {}})
        for r, _ in members:
            step.asked[r.question] = step.asked.get(r.question, 0) + len(r.keys)
    start = time.perf_counter()
    for request in vals:
        step.tables.append({"columns": list(request.columns), "questions": [request.question], "value": True,
                            "asked": {request.question: 1}, "answered": {}})
        step.asked[request.question] = step.asked.get(request.question, 0) + 1
    fallback: list[PlanStep] = []
    answered_values: list[Any] = [None] * len(vals)
    ask = ticket.answer_tables if ticket is not None else backend.answer_tables
    try:
        if vals:
            result = ask([[r for r, _ in members] for members in groups], vals)
            answered_values = list(result.values)
            for request, value, entry in zip(vals, answered_values, step.tables[len(groups):]):
                entry["answered"][request.question] = int(value is not None)
                step.answered[request.question] = step.answered.get(request.question, 0) + int(value is not None)
        else:
            result = ask([[r for r, _ in members] for members in groups])
        step.prompts, step.raw_outputs = list(result.prompts), list(result.raw_outputs)
        step.usage, step.warnings = result.usage, list(result.warnings)
        for members, by_question, entry in zip(groups, result.sections, step.tables):
            for request, _ in members:
                wanted = set(request.keys)
                got = {k: v for k, v in (by_question.get(request.question) or {}).items() if k in wanted}
                cache.store_col(backend_id, request, got)
                entry["answered"][request.question] = len(got)
                step.answered[request.question] = step.answered.get(request.question, 0) + len(got)
    except LMContextTooLong as error:
        step.error = f"{type(error).__name__}: {error}"
        step.warnings.append("the combined prompt is too long for the model; asked per column set")
        fallback = [_col_step(members, backend, cache, backend_id) for members in groups]
        for s in fallback:
            s.fallback = True
    except Exception as error:  # noqa: BLE001 - the programs' own calls ask again and report errors
        step.error = f"{type(error).__name__}: {error}"
    finally:
        for members in groups:
            for _, reservation in members:
                cache.release(reservation)
        if values is not None:
            values.set_result(answered_values)
        step.seconds = time.perf_counter() - start
    return [step] + fallback


def _val_step(request: NeuralRequest, backend: Any, cache: NeuralCache, backend_id: str,
              claimed: threading.Event | None = None,
              source: tuple[Future[list[Any]], int] | None = None) -> PlanStep:
    """One ``f_val`` through the cache (single-flight); ``claimed`` is set once the request is
    claimed (about to be asked) or answered. With ``source`` (a multi-table step's value answers
    and this request's position) the answer comes from that prompt; asked alone when it has none."""
    step = PlanStep(kind="val", columns=list(request.columns), questions=[request.question],
                    asked={request.question: 1})
    start = time.perf_counter()

    def ask(r: NeuralRequest) -> Any:
        if claimed is not None:
            claimed.set()
        if source is not None:
            value = source[0].result()[source[1]]
            if value is not None:
                return NeuralAnswer(value=value)
        return backend.answer(r)

    try:
        resolution = cache.resolve_val(backend_id, request, ask)
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
        if claimed is not None:
            claimed.set()
        step.seconds = time.perf_counter() - start
    return step
