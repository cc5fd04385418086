"""Fit a confidence calibrator on recorded runs (``binder-py calibrate RUN_DIR... --out FILE``).

Each answered question of each run gives one example: the features of its vote
(:func:`binder_py.calibration.confidence_features`, re-voted from the recorded candidates under
the run's own rules) and whether the answer was right (WikiTQ: the ``binder`` evaluator, TabFact:
``correct``, as ``binder-py report`` judges). Fit on WikiTQ dev runs, never on test: the command
refuses a run whose split is a test split.

Besides the in-sample error, :func:`fit_from_runs` reports the leave-one-out expected calibration
error (each question's confidence from a calibrator fitted without it), the figure to quote for a
small fit, beside the raw vote share's error on the same questions.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass, replace

from binder_py.calibration import (Calibrator, ConfidenceFeatures, answering_model, confidence_features,
                                   expected_calibration_error, fit_logistic)
from binder_py.errors import BinderError
from binder_py.runs.judgements import evaluator_names, record_scores
from binder_py.runs.report import Run, load_runs, record_vote

#: splits a calibrator must never be fitted on
HELD_OUT_SPLITS = frozenset({"test", "test-small"})
#: re-vote with every recorded sample (vote_prefix keeps the samples whose position is below k)
ALL_SAMPLES = 1 << 30


@dataclass(frozen=True)
class CalibrationFit:
    """A fitted calibrator and how well it and the raw vote share are calibrated on its examples."""

    calibrator: Calibrator
    examples: int
    right: int
    ece_vote_share: float
    ece_in_sample: float
    ece_leave_one_out: float

    def summary(self) -> str:
        weights = ", ".join(f"{name} {weight:+.2f}" for name, weight in
                            zip(self.calibrator.features, self.calibrator.weights))
        return (f"fitted on {self.examples} answered questions ({self.right} right) from "
                f"{self.calibrator.fitted_on}\n"
                f"expected calibration error: vote share {self.ece_vote_share:.3f}, calibrated "
                f"{self.ece_leave_one_out:.3f} leave-one-out ({self.ece_in_sample:.3f} in sample)\n"
                f"weights (standardised features): {weights}; bias {self.calibrator.bias:+.2f}")


def run_examples(run: Run) -> tuple[list[ConfidenceFeatures], list[bool], list[float]]:
    """(features, right, vote share) of every answered question of ``run``."""
    judge = "binder" if "binder" in evaluator_names(run.task) else "correct"
    features, right, shares = [], [], []
    for record in run.records:
        if record.get("error") or record.get("prediction") is None or not record.get("candidates"):
            continue
        result = record_vote(record, ALL_SAMPLES, run.config)
        found = confidence_features(result)
        if found is None:
            continue
        features.append(found)
        right.append(bool(record_scores(record, run.task)[judge]))
        shares.append(float(result.confidence))
    return features, right, shares


def fit_from_runs(directories: Sequence[str | os.PathLike[str]], *, l2: float = 1.0,
                  min_examples: int = 10) -> CalibrationFit:
    """Fit a logistic calibrator on the answered questions of the runs in ``directories`` (at least
    ``min_examples``, right and wrong ones among them)."""
    runs = load_runs(directories)
    for run in runs:
        if run.truncated_bytes:
            print(f"binder-py calibrate: {run.path}: the last line of results.jsonl is cut off "
                  f"({run.truncated_bytes:,} bytes: the eval was killed or is still writing it); fitting without it",
                  file=sys.stderr)
        split = str(run.config.get("split") or "")
        if split in HELD_OUT_SPLITS:
            raise BinderError(f"{run.path}: a {split} split run; fit the calibration on dev runs (WikiTQ dev "
                              "or its subsets), never on the test split it will be reported on")
    features: list[ConfidenceFeatures] = []
    right: list[bool] = []
    shares: list[float] = []
    for run in runs:
        f, r, s = run_examples(run)
        features += f
        right += r
        shares += s
    if len(features) < min_examples or len(set(right)) < 2:
        raise BinderError(f"the runs hold {len(features)} answered question(s), {sum(right)} right: a calibration "
                          f"needs at least {min_examples}, with right and wrong answers among them; run more "
                          "questions")
    fitted_on = ", ".join(f"{run.name} ({run.config.get('split')}, {run.config.get('lm')})" for run in runs)
    models = {answering_model(str(run.config.get("lm_name") or run.config.get("lm") or "")) for run in runs}
    calibrator = replace(fit_logistic(features, right, l2=l2, fitted_on=fitted_on),
                         model=models.pop() if len(models) == 1 else "",
                         modes=tuple(sorted({run.mode for run in runs} - {"?"})))
    held_out = [fit_logistic(features[:i] + features[i + 1:], right[:i] + right[i + 1:], l2=l2).predict(features[i])
                for i in range(len(features))]
    return CalibrationFit(calibrator=calibrator, examples=len(features), right=sum(right),
                          ece_vote_share=expected_calibration_error(shares, right),
                          ece_in_sample=float(calibrator.ece_train or 0.0),
                          ece_leave_one_out=expected_calibration_error(held_out, right))
