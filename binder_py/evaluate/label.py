"""TabFact scoring: predictions are read as booleans and compared with the label (True = entailed)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from binder_py.evaluate.denotation import answer_to_strings

__all__ = ["normalize_tabfact_prediction", "tabfact_match", "tabfact_accuracy"]

_TRUE = {"true", "1", "1.0", "yes", "y", "entailed", "entail", "entails", "supported", "support"}
_FALSE = {"false", "0", "0.0", "no", "n", "refuted", "refute", "refutes", "not entailed", "unsupported"}


def normalize_tabfact_prediction(value: Any) -> bool | None:
    """A prediction as a bool, or ``None`` when it cannot be read as one.

    Accepts bools (also numpy), 1/0, and the strings true/false, 1/0, yes/no,
    entailed/refuted (case-insensitive, surrounding whitespace and a final
    ``.`` ignored); a container (list, Series, one-cell DataFrame) holding
    exactly one such value. Anything else (several values, None, "maybe") is
    ``None`` and is scored as wrong.
    """
    strings = answer_to_strings(value)
    if len(strings) != 1:
        return None
    text = strings[0].strip().lower().rstrip(".").strip()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    return None


def _gold_bool(gold: Any) -> bool:
    result = normalize_tabfact_prediction(gold)
    if result is None:
        raise ValueError(f"cannot read TabFact gold label {gold!r} as a boolean")
    return result


def tabfact_match(gold: Any, predicted: Any) -> bool:
    """Whether ``predicted`` (any answer) equals the gold label (bool, 1/0, ``["True"]`` ...)."""
    p = normalize_tabfact_prediction(predicted)
    return p is not None and p == _gold_bool(gold)


def tabfact_accuracy(golds: Sequence[Any], predictions: Iterable[Any]) -> float:
    """Share of predictions equal to their gold label (unreadable predictions count as wrong)."""
    predictions = list(predictions)
    if len(predictions) != len(golds):
        raise ValueError(f"{len(golds)} gold labels but {len(predictions)} predictions")
    if not golds:
        return 0.0
    return sum(tabfact_match(g, p) for g, p in zip(golds, predictions)) / len(golds)
