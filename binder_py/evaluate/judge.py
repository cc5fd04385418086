"""The one scoring function for a prediction: the live ``eval`` run, ``report`` and ``evaluate`` all call it.

WikiTQ predictions get three named judgements (docs/RESULTS.md, "Evaluators"):

* ``official`` — the official WikiTQ evaluator (:mod:`binder_py.evaluate.official`);
* ``binder`` — Binder's semantic-mode ``eval_ex_match`` (:mod:`binder_py.evaluate.binder`);
* ``semantic`` — binder-py's own documented match (:mod:`binder_py.evaluate.semantic`).

TabFact predictions get one, ``correct`` (:mod:`binder_py.evaluate.label`). The prediction is any answer
value, turned into a denotation by :func:`~binder_py.evaluate.denotation.answer_to_strings`; ``None`` (no answer)
and an empty denotation are wrong under every evaluator.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from binder_py.evaluate.binder import binder_match
from binder_py.evaluate.denotation import answer_to_strings
from binder_py.evaluate.official import official_match
from binder_py.evaluate.semantic import semantic_match
from binder_py.evaluate.label import tabfact_match
from binder_py.tasks import task_profile

__all__ = ["WIKITQ_EVALUATORS", "judge_wikitq", "score_prediction"]

WIKITQ_EVALUATORS = ("official", "binder", "semantic")

#: a predicted denotation longer than this (its values plus their characters) is judged wrong by every
#: judge without running them: their time grows with the prediction (about 5 s per million characters,
#: in Python), which a program sets (a sandbox answer holds up to 100,000,000 characters: nine minutes
#: per question, red team 7), and no WikiTQ gold value is a thousandth as long (the longest, 150)
MAX_JUDGED_CHARS = 100_000


def _as_strings(value: Any) -> list[str]:
    return [value] if isinstance(value, str) else answer_to_strings(value)


def judge_wikitq(question: str | None, gold: Sequence[str], predicted: Sequence[str],
                 gold_canon: Sequence[str] | None = None) -> dict[str, bool]:
    """``{"official", "binder", "semantic"}`` for a predicted denotation (strings) against the gold strings.

    A prediction over :data:`MAX_JUDGED_CHARS` is wrong under every evaluator (none of them is run).
    Raises :class:`ValueError` when ``gold_canon`` has another length than ``gold``.
    """
    if not predicted or len(predicted) + sum(map(len, predicted)) > MAX_JUDGED_CHARS:
        if gold_canon is not None and len(gold_canon) != len(gold):
            raise ValueError(f"{len(gold_canon)} canonical values for {len(gold)} gold values; give one per value")
        return dict.fromkeys(WIKITQ_EVALUATORS, False)
    return {"official": official_match(gold, predicted, gold_canon),
            "binder": binder_match(question, gold, predicted),
            "semantic": semantic_match(gold, predicted, gold_canon)}


def score_prediction(task: str, question: str | None, gold: Any, prediction: Any,
                     gold_canon: Any = None) -> dict[str, bool]:
    """WikiTQ: ``{"official", "binder", "semantic"}``; TabFact: ``{"correct"}``. No answer is wrong.

    ``gold`` is a list of strings or one string (TabFact: a label such as ``true``, ``1`` or ``["True"]``);
    ``gold_canon`` the WikiTQ canonical values, optional. Raises :class:`ValueError` for a TabFact gold that is
    no label, or canonical values that do not pair with the gold values.
    """
    if task_profile(task).evaluator == "label":
        gold_label = gold[0] if isinstance(gold, list) and len(gold) == 1 else gold
        return {"correct": prediction is not None and tabfact_match(gold_label, prediction)}
    if isinstance(prediction, (list, tuple, dict)) and len(prediction) > MAX_JUDGED_CHARS:
        prediction = None  # more values than the judges take (converting them alone took seconds)
    predicted = answer_to_strings(prediction) if prediction is not None else []
    canon = _as_strings(gold_canon) if gold_canon is not None else None
    return judge_wikitq(question, _as_strings(gold), predicted, canon)
