"""Replaying a recorded run as it was: the plan waves its results lines name, and the requests a
replay missed wherever they were caught (docs/RESULTS.md, "Replay")."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from binder_py.errors import BinderError
from binder_py.runs.records import RESULTS_FILE, read_results

#: how a replay miss reads wherever it was recorded (a neural call's error, a candidate's, a warning)
REPLAY_MISS = "LMReplayMiss: replay miss: "


def replay_misses(value: Any) -> list[str]:
    """The distinct replay misses recorded anywhere in ``value`` (an answer's JSON): a request of the
    question that the replayed recording does not hold, met where it was caught (a program's neural
    call fails as a candidate, a tie is left unscored) rather than failing the question."""
    found: dict[str, None] = {}
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            at = item.find(REPLAY_MISS)
            if at >= 0:
                found.setdefault(item[at + len("LMReplayMiss: "):], None)
        elif isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
    return list(found)


def wave_groups(ids: Sequence[str], size: int, recorded: Mapping[str, Sequence[str]]) -> list[list[str]]:
    """The plan waves of the questions ``ids`` (in run order): the questions of one recorded wave (a
    replay of lines that name their wave) together, the others in waves of ``size`` in order; the
    waves in the order of their first question."""
    by_wave: dict[tuple[str, ...], list[str]] = {}
    rest: list[str] = []
    for qid in ids:
        wave = recorded.get(qid)
        if wave:
            by_wave.setdefault(tuple(wave), []).append(qid)
        else:
            rest.append(qid)
    first = {qid: i for i, qid in enumerate(ids)}
    groups = list(by_wave.values()) + [rest[i:i + max(1, size)] for i in range(0, len(rest), max(1, size))]
    return sorted(groups, key=lambda group: first[group[0]])


def recorded_waves(replayed: Path) -> dict[str, list[str]]:
    """Each question's plan wave as the replayed run's results line names it (lines written before
    waves were recorded name none: those are packed in waves of the recorded size, in order)."""
    try:
        records = read_results(replayed / RESULTS_FILE).records
    except (BinderError, OSError):  # a line too long to read: packed by size, as before
        return {}
    waves: dict[str, list[str]] = {}
    for record in records:  # the last line of an id counts (--retry-errors answers it again)
        wave = record.get("plan_wave")
        if isinstance(wave, list) and all(isinstance(qid, str) for qid in wave) and str(record["id"]) in wave:
            waves[str(record["id"])] = wave
        else:
            waves.pop(str(record["id"]), None)
    return waves


__all__ = ["REPLAY_MISS", "recorded_waves", "replay_misses", "wave_groups"]
