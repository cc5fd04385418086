"""The plan stage's ``f_val`` requests over sub-tables built by plain pandas.

A candidate such as ``f_val("How many are from Sweden?", df.head(15)[["Name", "Nation"]])``
asks about a sub-table the program computes, so the request is not known from the text
alone. Its context expression is pure pandas over the original table
(:func:`binder_py.neural.prefetch.subtable_value_calls`), so the planner evaluates it — the
expressions of every candidate in ONE program run in the sandbox, like any LM-written code —
and the neural bridge records the requests the calls send (the same cells and keys as the
candidates' own calls). They join the plan's prompt; nothing is asked here.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from typing import Any

import pandas as pd

from binder_py.language import execute, parse_program
from binder_py.neural.answer_types import META_KEY
from binder_py.neural.backends import NeuralAnswer
from binder_py.neural.cache import NeuralCache
from binder_py.neural.prefetch import SubtableCall, subtable_value_calls
from binder_py.neural.requests import NeuralRequest
from sandbox import Limits, Sandbox

#: a sub-table that takes longer than this is not planned (the candidate's own call asks)
SUBTABLE_LIMITS = Limits(wall_seconds=2.0, cpu_seconds=2.0)


class _RecordingBackend:
    """Answers nothing: every ``f_val`` of the evaluation program gets None, and the requests the
    bridge sent are read from the run's traces."""

    name = "plan-subtables"
    cache_id = name
    prefetch = False
    dedup = True

    def __init__(self) -> None:
        self.lock = threading.Lock()

    def answer(self, request: NeuralRequest) -> NeuralAnswer:
        return NeuralAnswer(value=None)


def subtable_calls(programs: Iterable[str], table: pd.DataFrame) -> list[SubtableCall]:
    """The distinct sub-table ``f_val`` calls of ``programs`` (by question and context source)."""
    distinct: dict[tuple[str, str], SubtableCall] = {}
    for program in programs:
        try:
            calls = subtable_value_calls(parse_program(program), table)
        except Exception:  # noqa: BLE001 - a broken program fails later, with its own message
            continue
        for call in calls:
            distinct.setdefault((call.question, call.context), call)
    return list(distinct.values())


def evaluation_program(calls: list[SubtableCall]) -> str:
    """One statement per call, each guarded, so one failing sub-table does not hide the others."""
    return "\n".join(f"try:\n    f_val({call.question!r}, {call.context})\nexcept Exception:\n    pass"
                     for call in calls)


def subtable_requests(programs: Iterable[str], table: pd.DataFrame, sandbox: Sandbox, *,
                      title: str | None = None, tables: Any = None) -> list[NeuralRequest]:
    """The ``f_val`` requests the candidates' sub-table calls will send, computed by running their
    context expressions in ``sandbox``; [] when there are none or the evaluation fails."""
    calls = subtable_calls(programs, table)
    if not calls:
        return []
    run = execute(evaluation_program(calls), table, neural=_RecordingBackend(), sandbox=sandbox, title=title,
                  cache=NeuralCache(), prefetch=False, limits=SUBTABLE_LIMITS, tables=tables)
    by_site = {site.id: index for index, site in enumerate(parse_program(evaluation_program(calls)).sites)}
    requests: list[NeuralRequest] = []
    for trace in run.calls:
        index = by_site.get(trace.site)
        if index is None or trace.kind != "val" or trace.error:
            continue
        call = calls[index]
        meta = {META_KEY: call.answer_type} if call.answer_type is not None else {}
        requests.append(NeuralRequest("val", trace.question, list(trace.columns), [list(r) for r in trace.rows],
                                      list(trace.keys), site=None, title=title, meta=meta))
    return requests
