"""Benchmark runs: ``run_eval`` (``binder-py eval``), ``load_run`` and ``report`` (``binder-py report``).

A run directory holds ``config.json``, ``results.jsonl`` (one line per finished question) and
``lm.sqlite`` (the model traffic, for ``--lm replay:DIR``). See :mod:`binder_py.runs.evaluation`.
"""

from binder_py.runs.records import ANSWER_KEYS, read_results
from binder_py.runs.report import (Report, Run, accuracy_by_subset, accuracy_vs_candidates, format_markdown,
                                   load_run, report, revote, run_metrics)
from binder_py.runs.evaluation import RunSummary, answer_example, read_ids_file, run_eval, select_examples
from binder_py.runs.judgements import record_scores, score_prediction

__all__ = ["ANSWER_KEYS", "Report", "Run", "RunSummary", "accuracy_by_subset", "accuracy_vs_candidates",
           "answer_example", "format_markdown", "load_run", "read_ids_file", "read_results", "record_scores",
           "report", "revote", "run_eval", "run_metrics", "score_prediction", "select_examples"]
