"""Scoring a whole predictions file (JSON Lines), overall and per subset.

Each line is a JSON object:

* ``id`` (string, optional but needed to look gold up from a dataset),
* ``question`` (string; used by the A-or-B rule of the semantic match),
* ``gold``: a list of strings (a plain string is one value; TabFact: ``true``/``false``, 1/0 or ``["True"]``),
* ``gold_canon`` (optional list of WikiTQ canonical values),
* ``prediction``: any JSON value, turned into a denotation by
  :func:`~binder_py.evaluate.denotation.answer_to_strings` (``null`` = no answer),
* ``dataset`` (optional, ``"wikitq"`` or ``"tabfact"``) and ``subsets`` (optional list of subset names).

Missing ``gold``/``question``/``gold_canon``/``subsets`` are filled from ``examples`` (matched by ``id``) when given.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from binder_py.errors import BinderError
from binder_py.jsonfile import iter_json_lines
from binder_py.evaluate.denotation import answer_to_strings
from binder_py.evaluate.official import official_match
from binder_py.evaluate.semantic import semantic_match
from binder_py.evaluate.tabfact import tabfact_match

__all__ = ["ScoreReport", "SubsetScore", "read_jsonl", "score_records", "score_file"]


@dataclass
class SubsetScore:
    total: int = 0
    official: int = 0  # WikiTQ official / TabFact accuracy
    semantic: int = 0  # WikiTQ semantic match / TabFact accuracy

    def as_dict(self) -> dict[str, float | int]:
        return {"total": self.total, "official_correct": self.official, "semantic_correct": self.semantic,
                "official_accuracy": self.official / self.total if self.total else 0.0,
                "semantic_accuracy": self.semantic / self.total if self.total else 0.0}


@dataclass
class ScoreReport:
    task: str
    overall: SubsetScore = field(default_factory=SubsetScore)
    subsets: dict[str, SubsetScore] = field(default_factory=dict)
    wrong: list[dict[str, Any]] = field(default_factory=list)  # records wrong under the semantic match / TabFact

    def as_dict(self) -> dict[str, Any]:
        return {"task": self.task, "overall": self.overall.as_dict(),
                "subsets": {k: v.as_dict() for k, v in sorted(self.subsets.items())}}

    def format(self) -> str:
        if self.task == "tabfact":
            lines = [f"{'subset':<24} {'n':>6} {'accuracy':>9}"]
            rows = [("all", self.overall)] + sorted(self.subsets.items())
            lines += [f"{name:<24} {s.total:>6} {100 * s.as_dict()['official_accuracy']:>8.2f}%" for name, s in rows]
            return "\n".join(lines)
        lines = [f"{'subset':<24} {'n':>6} {'official':>9} {'semantic':>9}"]
        rows = [("all", self.overall)] + sorted(self.subsets.items())
        for name, s in rows:
            d = s.as_dict()
            lines.append(f"{name:<24} {s.total:>6} {100 * d['official_accuracy']:>8.2f}% {100 * d['semantic_accuracy']:>8.2f}%")
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


def _as_list(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    return answer_to_strings(value)


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
    if task not in ("wikitq", "tabfact"):
        raise BinderError(f"unknown task {task!r}; choose wikitq or tabfact")
    report = ScoreReport(task=task)
    for number, record in enumerate(records, start=1):
        example = by_id.get(str(record.get("id"))) if record.get("id") is not None else None
        if "prediction" not in record:
            raise BinderError(f"record {number} (id {record.get('id')!r}) has no 'prediction' field")
        gold = record.get("gold")
        if gold is None and example is not None:
            gold = example.gold
        if gold is None:
            raise BinderError(f"record {number} (id {record.get('id')!r}) has no 'gold' field and its id is not in "
                              "the dataset given; add gold answers or pass --dataset/--split")
        question = record.get("question") or (example.question if example is not None else None)
        canon = record.get("gold_canon", example.gold_canon if example is not None else None)
        subsets = record.get("subsets") or (sorted(example.subsets) if example is not None else [])
        prediction = record["prediction"]
        if task == "tabfact":
            gold_value = gold[0] if isinstance(gold, list) and len(gold) == 1 else gold
            try:
                ok_official = ok_semantic = tabfact_match(gold_value, prediction)
            except ValueError as error:
                raise BinderError(f"record {number} (id {record.get('id')!r}): {error}") from None
        else:
            gold_list = _as_list(gold)
            predicted = _as_list(prediction) if prediction is not None else []
            canon_list = _as_list(canon) if canon is not None else None
            ok_official = official_match(gold_list, predicted, canon_list)
            ok_semantic = ok_official or semantic_match(question, gold_list, predicted, canon_list)
        for score in [report.overall] + [report.subsets.setdefault(str(s), SubsetScore()) for s in subsets]:
            score.total += 1
            score.official += ok_official
            score.semantic += ok_semantic
        if not ok_semantic:
            report.wrong.append({"id": record.get("id"), "question": question, "gold": gold, "prediction": prediction})
    return report


def score_file(path: str | os.PathLike[str], task: str | None = None,
               examples: Sequence[Any] | None = None) -> ScoreReport:
    """:func:`score_records` on a JSON Lines file."""
    return score_records(read_jsonl(path), task=task, examples=examples)

