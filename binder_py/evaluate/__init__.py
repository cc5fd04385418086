"""Scoring: the WikiTQ evaluators (official, binder, semantic), TabFact accuracy, answers as denotations."""

from __future__ import annotations

from binder_py.evaluate.binder import binder_match
from binder_py.evaluate.denotation import answer_to_strings, value_to_string
from binder_py.evaluate.judge import WIKITQ_EVALUATORS, judge_wikitq, score_prediction
from binder_py.evaluate.official import official_match
from binder_py.evaluate.scoring import ScoreReport, score_records
from binder_py.evaluate.semantic import semantic_match
from binder_py.evaluate.label import normalize_tabfact_prediction, tabfact_accuracy, tabfact_match

__all__ = ["WIKITQ_EVALUATORS", "ScoreReport", "answer_to_strings", "binder_match", "judge_wikitq",
           "normalize_tabfact_prediction", "official_match", "score_prediction", "score_records", "semantic_match",
           "tabfact_accuracy", "tabfact_match", "value_to_string"]
