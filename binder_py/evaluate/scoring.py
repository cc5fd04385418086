"""Scoring a whole predictions file (JSON Lines), overall and per subset.

Each line is a JSON object:

* ``id`` (string, optional but needed to look gold up from a dataset),
* ``question`` (string; Binder's evaluator reads its ``or`` choices),
* ``gold``: a list of strings (a plain string is one value; TabFact: ``true``/``false``, 1/0 or ``["True"]``),
* ``gold_canon`` (optional list of WikiTQ canonical values),
* ``prediction``: any JSON value, turned into a denotation by
  :func:`~binder_py.evaluate.denotation.answer_to_strings` (``null`` = no answer),
* ``dataset`` (optional, ``"wikitq"`` or ``"tabfact"``) and ``subsets`` (optional list of subset names).

Missing ``gold``/``question``/``gold_canon``/``subsets`` are filled from ``examples`` (matched by ``id``) when given.
An id that comes again is scored once, by its last line (a run's ``results.jsonl`` holds a question
again after ``--retry-errors``, and its last line is the answer, as ``binder-py report`` reads it).
Every record is judged by :func:`binder_py.evaluate.judge.score_prediction` (WikiTQ: ``official``, ``binder``,
``semantic``; TabFact: ``correct``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from binder_py.tasks import BENCHMARK_TASKS, task_profile
from binder_py.errors import BinderError
from binder_py.evaluate.judge import score_prediction
from binder_py.jsonfile import iter_json_lines

__all__ = ["ScoreReport", "SubsetScore", "evaluator_names", "read_jsonl", "score_file", "score_records",
           "write_judgements"]


def evaluator_names(task: str) -> tuple[str, ...]:
    """The judgement names of a task: WikiTQ's three evaluators, or TabFact's one ``correct``."""
    return task_profile(task).evaluators


@dataclass
class SubsetScore:
    """Counts of one subset: questions, and correct ones per evaluator."""

    names: tuple[str, ...]
    total: int = 0
    correct: dict[str, int] = field(default_factory=dict)

    def add(self, judgement: Mapping[str, bool]) -> None:
        self.total += 1
        for name in self.names:
            self.correct[name] = self.correct.get(name, 0) + bool(judgement[name])

    def accuracy(self, name: str) -> float:
        return self.correct.get(name, 0) / self.total if self.total else 0.0

    def as_dict(self) -> dict[str, float | int]:
        out: dict[str, float | int] = {"total": self.total}
        for name in self.names:
            out[f"{name}_correct"] = self.correct.get(name, 0)
            out[f"{name}_accuracy"] = self.accuracy(name)
        return out


@dataclass
class ScoreReport:
    """Accuracy overall and per subset, and each record's judgements (``judgements``, in input order)."""

    task: str
    overall: SubsetScore
    subsets: dict[str, SubsetScore] = field(default_factory=dict)
    judgements: list[dict[str, Any]] = field(default_factory=list)  # {"id", <evaluator>: bool, ...} per record
    wrong: list[dict[str, Any]] = field(default_factory=list)  # records some evaluator judged wrong
    repeated: int = 0  # records left out: a later record has their id (the last one per id is scored)

    @property
    def names(self) -> tuple[str, ...]:
        return self.overall.names

    def as_dict(self) -> dict[str, Any]:
        return {"task": self.task, "evaluators": list(self.names), "overall": self.overall.as_dict(),
                "subsets": {k: v.as_dict() for k, v in sorted(self.subsets.items())}, "repeated": self.repeated}

    def format(self) -> str:
        headers = ["accuracy"] if task_profile(self.task).evaluator == "label" else list(self.names)
        lines = [f"{'subset':<24} {'n':>6}" + "".join(f" {h:>9}" for h in headers)]
        for name, s in [("all", self.overall)] + sorted(self.subsets.items()):
            lines.append(f"{name:<24} {s.total:>6}" + "".join(f" {100 * s.accuracy(n):>8.2f}%" for n in self.names))
        if self.repeated:
            lines.append(f"({self.repeated} line(s) left out: their id comes again later, and each id is scored by its "
                         "last line, as in a run's results.jsonl after --retry-errors)")
        return "\n".join(lines)


def read_jsonl(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """Read a JSON Lines file of objects; blank lines are skipped. Errors name the line."""
    path = Path(path)
    records = []
    try:
        for line in iter_json_lines(path, follow_symlinks=True):
            if line.error is None and not isinstance(line.value, dict):
                raise BinderError(f"{path}, line {line.number}: expected a JSON object with 'gold' and 'prediction', "
                                  f"got {type(line.value).__name__}")
            if line.error is not None:
                raise BinderError(f"{line.error}; each line must be one JSON object")
            records.append(line.value)
    except FileNotFoundError:
        raise BinderError(f"{path}: no such predictions file; check the path") from None
    return records


def score_records(records: Iterable[Mapping[str, Any]], task: str | None = None,
                  examples: Sequence[Any] | None = None) -> ScoreReport:
    """Score prediction records (see the module docstring); ``task`` is "wikitq" or "tabfact" (default:
    the records' ``dataset`` field, else "wikitq"). ``examples`` (dataset :class:`Example` objects)
    fill missing gold, question, canonical values and subsets by ``id``."""
    records = list(records)
    by_id = {e.id: e for e in examples} if examples is not None else {}
    if task is None:
        kinds = {r.get("dataset") for r in records if r.get("dataset")}
        kinds |= {e.dataset for e in (by_id.get(str(r.get("id"))) for r in records) if e is not None}
        if len(kinds) > 1:
            raise BinderError(f"the predictions mix datasets {sorted(kinds)}; score them separately or pass --task")
        task = kinds.pop() if kinds else "wikitq"
    if task not in BENCHMARK_TASKS:
        raise BinderError(f"unknown task {task!r}; choose {' or '.join(BENCHMARK_TASKS)}")
    names = evaluator_names(task)
    last = {str(r["id"]): i for i, r in enumerate(records) if r.get("id") is not None}
    report = ScoreReport(task=task, overall=SubsetScore(names))
    for number, record in enumerate(records, start=1):
        if record.get("id") is not None and last[str(record["id"])] != number - 1:
            report.repeated += 1  # answered again later (a run's --retry-errors): the last line counts
            continue
        example = by_id.get(str(record.get("id"))) if record.get("id") is not None else None
        where = f"record {number} (id {record.get('id')!r})"
        if "prediction" not in record:
            raise BinderError(f"{where} has no 'prediction' field; give one on every line (null for no answer)")
        gold = record.get("gold")
        if gold is None and example is not None:
            gold = example.gold
        if gold is None:
            lookup = (" and its id is not in the dataset given; check --dataset/--split" if examples is not None
                      else "; add gold answers, or pass --dataset (and --split) to look them up by id")
            raise BinderError(f"{where} has no 'gold' field{lookup}")
        question = record.get("question") or (example.question if example is not None else None)
        canon = record.get("gold_canon", example.gold_canon if example is not None else None)
        subsets = record.get("subsets") or (sorted(example.subsets) if example is not None else [])
        try:
            judgement = score_prediction(task, question, gold, record["prediction"], canon)
        except ValueError as error:
            raise BinderError(f"{where}: {error}") from None
        for score in [report.overall] + [report.subsets.setdefault(str(s), SubsetScore(names)) for s in subsets]:
            score.add(judgement)
        report.judgements.append({"id": record.get("id"), **judgement})
        if not all(judgement.values()):
            report.wrong.append({"id": record.get("id"), "question": question, "gold": gold,
                                 "prediction": record["prediction"], **judgement})
    return report


def score_file(path: str | os.PathLike[str], task: str | None = None,
               examples: Sequence[Any] | None = None) -> ScoreReport:
    """:func:`score_records` on a JSON Lines file."""
    return score_records(read_jsonl(path), task=task, examples=examples)


def write_judgements(report: ScoreReport, path: str | os.PathLike[str]) -> None:
    """One JSON line per scored record (an id's last), in input order: ``{"id", "official", "binder",
    "semantic"}`` (TabFact: ``{"id", "correct"}``)."""
    with open(path, "w", encoding="utf-8") as out:
        for judgement in report.judgements:
            out.write(json.dumps(judgement, ensure_ascii=False) + "\n")

