"""Scoring one prediction against an example's gold (shared by the runner and the report)."""

from __future__ import annotations

from typing import Any

from binder_py.evaluate.denotation import answer_to_strings
from binder_py.evaluate.official import official_match
from binder_py.evaluate.semantic import semantic_match
from binder_py.evaluate.tabfact import tabfact_match


def score_prediction(task: str, question: str, gold: Any, prediction: Any,
                     gold_canon: list[str] | None = None) -> dict[str, bool]:
    """WikiTQ: ``{"official": ..., "semantic": ...}``; TabFact: ``{"correct": ...}``. No answer is wrong."""
    if task == "tabfact":
        gold_value = gold[0] if isinstance(gold, list) and len(gold) == 1 else gold
        if prediction is None:
            return {"correct": False}
        try:
            return {"correct": bool(tabfact_match(gold_value, prediction))}
        except ValueError:  # a prediction that is no label at all
            return {"correct": False}
    gold_list = [gold] if isinstance(gold, str) else answer_to_strings(gold)
    predicted = answer_to_strings(prediction) if prediction is not None else []
    canon = ([gold_canon] if isinstance(gold_canon, str) else list(gold_canon)) if gold_canon is not None else None
    official = bool(predicted) and official_match(gold_list, predicted, canon)
    semantic = official or (bool(predicted) and semantic_match(question, gold_list, predicted, canon))
    return {"official": bool(official), "semantic": bool(semantic)}


def record_scores(record: dict[str, Any]) -> tuple[bool, bool]:
    """``(official, semantic)`` of a results line; TabFact's ``correct`` counts as both."""
    if "correct" in record and "official" not in record:
        ok = bool(record.get("correct"))
        return ok, ok
    return bool(record.get("official")), bool(record.get("semantic"))
