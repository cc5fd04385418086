"""Judgements of a results line: the one scoring function, and reading a line's judgements back."""

from __future__ import annotations

from typing import Any

import pandas as pd

from binder_py.evaluate.judge import score_prediction
from binder_py.evaluate.scoring import evaluator_names

__all__ = ["evaluator_names", "record_scores", "revive_answer", "score_prediction"]


def revive_answer(value: Any) -> Any:
    """A recorded answer back as the run saw it (a table was stored as {"columns", "rows"})."""
    if isinstance(value, dict) and set(value) == {"columns", "rows"}:
        try:
            return pd.DataFrame(value["rows"], columns=value["columns"])
        except (TypeError, ValueError, AssertionError):  # not a table after all: the value as recorded
            return value
    return value


def record_scores(record: dict[str, Any], task: str) -> dict[str, bool]:
    """The judgements of a results line by evaluator name (WikiTQ: official, binder, semantic; TabFact: correct).

    A line recorded before the three WikiTQ evaluators existed (no ``binder`` field) is judged again from its
    recorded prediction by :func:`score_prediction`; its timestamps were recorded as ISO text, so a date answer
    may be judged as that text.
    """
    names = evaluator_names(task)
    if all(name in record for name in names):
        return {name: bool(record[name]) for name in names}
    if record.get("error") or record.get("prediction") is None:
        return dict.fromkeys(names, False)
    return score_prediction(task, record.get("question"), record.get("gold"), revive_answer(record["prediction"]),
                            record.get("gold_canon"))
