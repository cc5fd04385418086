"""A confidence that means something: features of a vote, a calibrated map, and how to check it.

Issue 12, item 4. The vote share alone says 100% when five identical wrong
programs agree. The confidence here combines:

- ``vote_share`` — the answer's share of the sampled programs that voted;
- ``margin`` — its share minus the runner-up's (0 for a tie);
- ``distinct_agreement`` — *distinct* programs giving the answer / distinct programs
  that voted (five copies of one program are one program here: five different
  programs agreeing is stronger evidence than one program sampled five times);
- ``log_distinct_support`` — ``log(1 + distinct programs giving the answer)``;
- ``model_share`` — the answer's share under the model's own scores (the
  ``"likelihood"`` vote of :mod:`binder_py.discriminate.rescore`, or the proposer's
  program probabilities); imputed with its training mean when the model gave none;
- ``valid_rate`` — programs that voted / programs sampled.

:func:`fit_logistic` fits ``P(correct) = σ(w·z + b)`` (Platt-style logistic
regression on standardised features, L2-regularised, Newton/IRLS, numpy only) on
``(features, correct)`` pairs from dev runs (WikiTQ dev, never test). A fitted
:class:`Calibrator` is a small JSON file (:meth:`Calibrator.save`,
:func:`load_calibrator`). :func:`fit_isotonic` is the alternative for one raw score
(pool-adjacent-violators). :func:`expected_calibration_error` and
:func:`reliability_bins` say how well a confidence is calibrated (the bins are what
``binder-py report`` plots). :func:`detect_tie` flags ties and near-ties.

A calibrator records the model and the modes of the runs it was fitted on. The ones in
``binder_py/calibrators/`` ship with the package (:func:`shipped_calibrator`), and the vote stage
uses the one fitted for the question's model and mode unless told otherwise
(:func:`resolve_calibrator`: ``"auto"``, the default; ``"none"``; or a file). Without one,
:func:`confidence` returns the raw vote share with ``calibrated=False``, so nobody mistakes it for
a probability.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np

from binder_py.vote import NEAR_TIE_MARGIN, VoteResult, vote_closeness

__all__ = ["FEATURES", "ConfidenceFeatures", "confidence_features", "Calibrator", "fit_logistic",
           "IsotonicMap", "fit_isotonic", "load_calibrator", "ReliabilityBin", "reliability_bins",
           "expected_calibration_error", "TieFlag", "detect_tie", "Confidence", "confidence",
           "DEFAULT_TIE_MARGIN"]

FEATURES: tuple[str, ...] = ("vote_share", "margin", "distinct_agreement", "log_distinct_support", "model_share",
                             "valid_rate")
#: Top two answers whose shares differ by at most this are a near tie.
DEFAULT_TIE_MARGIN = NEAR_TIE_MARGIN
_FORMAT = "binder-py-confidence/1"


@dataclass(frozen=True)
class ConfidenceFeatures:
    """What :func:`confidence_features` reads from a vote (see the module docstring)."""

    vote_share: float
    margin: float
    distinct_agreement: float
    log_distinct_support: float
    model_share: float | None
    valid_rate: float

    def values(self) -> dict[str, float | None]:
        return asdict(self)


def _program_shares(result: VoteResult) -> list[tuple[tuple[str, ...], float, int]]:
    """(key, share of programs, distinct programs) per answer, from the counts (whatever the strategy)."""
    total = sum(s.count for s in result.distribution)
    return [(s.key, s.count / total if total else 0.0, len(s.candidate_orders)) for s in result.distribution]


def confidence_features(result: VoteResult, *, scored: VoteResult | None = None, sampled: int | None = None,
                        key: tuple[str, ...] | None = None) -> ConfidenceFeatures | None:
    """Features of the answer ``key`` (default: ``result``'s winner); ``None`` when nobody voted.

    Args:
        result: the vote over the executed programs (any strategy; shares come from the counts).
        scored: the same candidates voted with the model's scores (e.g. ``likelihood_vote``);
            ``model_share`` is the answer's share there (``None`` without it).
        sampled: programs sampled in all (default: voters + abstained).
    """
    if result.key is None or not result.distribution:
        return None
    key = result.key if key is None else key
    shares = _program_shares(result)
    mine = next((s for s in shares if s[0] == key), None)
    if mine is None:
        raise ValueError(f"answer {key!r} is not in the vote's distribution")
    others = [share for k, share, _ in shares if k != key]
    distinct_all = sum(d for _, _, d in shares)
    model_share = None
    if scored is not None:
        model_share = next((s.share for s in scored.distribution if s.key == key), 0.0)
    sampled = sampled if sampled is not None else result.voters + result.abstained
    return ConfidenceFeatures(
        vote_share=mine[1],
        margin=mine[1] - max(others, default=0.0),
        distinct_agreement=mine[2] / distinct_all if distinct_all else 0.0,
        log_distinct_support=math.log1p(mine[2]),
        model_share=model_share,
        valid_rate=result.voters / sampled if sampled else 0.0,
    )


def _matrix(features: Sequence[ConfidenceFeatures], names: Sequence[str], fill: Sequence[float]) -> np.ndarray:
    rows = []
    for f in features:
        values = f.values()
        rows.append([fill[i] if values[name] is None else float(values[name]) for i, name in enumerate(names)])
    return np.asarray(rows, dtype=float).reshape(len(rows), len(names))


def _sigmoid(z: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-np.clip(z, -500, 500)))


@dataclass(frozen=True)
class Calibrator:
    """A fitted logistic map from :class:`ConfidenceFeatures` to P(correct)."""

    features: tuple[str, ...]
    weights: tuple[float, ...]  # per standardised feature
    bias: float
    means: tuple[float, ...]  # training means (also the value of a missing feature)
    scales: tuple[float, ...]  # training standard deviations (1 where constant)
    l2: float
    n: int
    fitted_on: str = ""
    ece_train: float | None = None
    model: str = ""  # the model of the runs it was fitted on (``LanguageModel.name``), "" when they differ
    modes: tuple[str, ...] = ()  # the modes of those runs

    def predict(self, features: ConfidenceFeatures) -> float:
        return float(self.predict_many([features])[0])

    def predict_many(self, features: Sequence[ConfidenceFeatures]) -> np.ndarray:
        x = _matrix(features, self.features, self.means)
        z = (x - np.asarray(self.means)) / np.asarray(self.scales)
        return _sigmoid(z @ np.asarray(self.weights) + self.bias)

    def to_json(self) -> dict[str, Any]:
        return {"format": _FORMAT, "kind": "logistic", **asdict(self)}

    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.to_json(), indent=1) + "\n", encoding="utf-8")


#: the largest calibrator file read (one is a few hundred bytes)
MAX_CALIBRATOR_BYTES = 1024 * 1024


def load_calibrator(path: str | Path) -> Calibrator:
    """Read a calibrator written by :meth:`Calibrator.save`; ``ValueError`` with the reason otherwise."""
    from binder_py.errors import BinderError
    from binder_py.jsonfile import read_json

    try:  # a calibrator may come from someone else: the one JSON reader (size, depth, a regular file)
        data = read_json(path, max_bytes=MAX_CALIBRATOR_BYTES, what="calibrator", follow_symlinks=True)
    except OSError as error:
        raise ValueError(f"cannot read the confidence calibration {path}: {error}") from error
    except BinderError as error:
        raise ValueError(f"cannot read the confidence calibration: {error}") from None
    if not isinstance(data, Mapping) or data.get("format") != _FORMAT or data.get("kind") != "logistic":
        raise ValueError(f"{path} is not a binder-py confidence calibration ({_FORMAT}); refit it with fit_logistic")
    try:
        names = tuple(str(n) for n in data["features"])
        unknown = set(names) - set(FEATURES)
        if unknown:
            raise ValueError(f"unknown features {sorted(unknown)}")
        lengths = {len(data[k]) for k in ("weights", "means", "scales")}
        if lengths != {len(names)}:
            raise ValueError("weights, means and scales must have one value per feature")
        calibrator = Calibrator(features=names, weights=tuple(float(w) for w in data["weights"]),
                                bias=float(data["bias"]), means=tuple(float(m) for m in data["means"]),
                                scales=tuple(float(s) for s in data["scales"]), l2=float(data["l2"]),
                                n=int(data["n"]), fitted_on=str(data.get("fitted_on", "")),
                                ece_train=None if data.get("ece_train") is None else float(data["ece_train"]),
                                model=str(data.get("model") or ""),
                                modes=tuple(str(m) for m in data.get("modes") or ()))
    except (KeyError, TypeError, ValueError) as error:
        raise ValueError(f"{path}: bad confidence calibration ({error}); refit it with fit_logistic") from error
    if not all(math.isfinite(v) and s > 0 for v, s in zip(calibrator.weights + calibrator.means, calibrator.scales
                                                         + calibrator.scales)) or not math.isfinite(calibrator.bias):
        raise ValueError(f"{path}: non-finite weights or non-positive scales; refit it with fit_logistic")
    return calibrator


_LOADED: dict[tuple[str, int, int], Calibrator] = {}


def load_calibration(path: str | Path) -> Calibrator:
    """The calibrator in ``path`` for ``--calibrator``/``AskSettings.calibrator`` (read once per file
    version); a :class:`~binder_py.errors.BinderError` that says what to do when it is missing or bad."""
    from binder_py.errors import BinderError

    try:
        stat = Path(path).stat()
    except OSError as error:
        raise BinderError(f"cannot read the confidence calibrator {str(path)!r}: {error.strerror}; fit one with "
                          "'binder-py calibrate RUN_DIR... --out FILE'") from None
    key = (str(Path(path).resolve()), stat.st_mtime_ns, stat.st_size)
    if key not in _LOADED:
        try:
            _LOADED[key] = load_calibrator(path)
        except ValueError as error:
            raise BinderError(f"{error} (binder-py calibrate RUN_DIR... --out FILE)") from None
    return _LOADED[key]


#: the calibrators that ship with binder-py (fitted on WikiTQ dev runs; docs/RESULTS.md says how)
SHIPPED_DIR = Path(__file__).resolve().parent / "calibrators"
#: the values of ``AskSettings.calibrator`` / ``--calibrator`` besides a file
CALIBRATOR_AUTO, CALIBRATOR_NONE = "auto", "none"
#: how ``ReplayLM`` names a replay of one recorded model (``replay:local:qwen2.5-…``)
REPLAY_PREFIX = "replay:"


def answering_model(model: str) -> str:
    """The model that made the answers of ``model`` (a ``LanguageModel.name``): a replay of one
    recorded model (``replay:NAME``) answers as NAME did, so it is NAME."""
    return model.removeprefix(REPLAY_PREFIX)


def shipped_calibrator(model: str, mode: str) -> Calibrator | None:
    """The shipped calibrator fitted for ``model`` (a ``LanguageModel.name``) in ``mode``, if any
    (a replay gets the recorded model's: :func:`answering_model`)."""
    model = answering_model(model)
    for path in sorted(SHIPPED_DIR.glob("*.json")):
        calibrator = load_calibration(path)
        if calibrator.model == model and mode in calibrator.modes:
            return calibrator
    return None


def calibrator_identity(choice: str | None) -> str:
    """What the calibrator setting ``choice`` stands for, to tell two runs' settings apart:
    ``"auto"``, ``"none"``, or a file's calibrator by its content (``"sha256:…"``), wherever the
    file lies (a file fitted again under the same name is another calibrator)."""
    if choice is None or choice == CALIBRATOR_NONE:
        return CALIBRATOR_NONE
    if choice == CALIBRATOR_AUTO:
        return CALIBRATOR_AUTO
    import hashlib

    text = json.dumps(load_calibration(choice).to_json(), sort_keys=True)
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def resolve_calibrator(choice: str | None, model: str, mode: str) -> Calibrator | None:
    """The calibrator ``choice`` names: ``"auto"`` → :func:`shipped_calibrator` for the model and
    mode (None when none ships); ``None``/``"none"`` → None (the raw vote share); else a file."""
    if choice is None or choice == CALIBRATOR_NONE:
        return None
    if choice == CALIBRATOR_AUTO:
        return shipped_calibrator(model, mode)
    return load_calibration(choice)


def fit_logistic(features: Sequence[ConfidenceFeatures], correct: Sequence[bool], *, l2: float = 1.0,
                 names: Sequence[str] = FEATURES, fitted_on: str = "", iterations: int = 50) -> Calibrator:
    """Fit ``P(correct) = σ(w·z + b)`` on standardised features (Newton/IRLS, penalty ``l2·|w|²/2``).

    Raises ``ValueError`` when the inputs differ in length, are fewer than 2, name an
    unknown feature, or ``l2`` is not positive.
    """
    if len(features) != len(correct):
        raise ValueError(f"fit_logistic got {len(features)} feature rows but {len(correct)} labels")
    if len(features) < 2:
        raise ValueError("fit_logistic needs at least 2 examples")
    if not l2 > 0:
        raise ValueError(f"l2 must be positive, got {l2!r}")
    unknown = set(names) - set(FEATURES)
    if unknown:
        raise ValueError(f"unknown features {sorted(unknown)}; choose among {', '.join(FEATURES)}")
    names = tuple(names)
    observed = [[v for f in features if (v := f.values()[n]) is not None] for n in names]
    means = np.array([np.mean(o) if o else 0.0 for o in observed])
    x = _matrix(features, names, tuple(means))
    scales = x.std(axis=0)
    scales[scales < 1e-12] = 1.0
    z = np.hstack([(x - means) / scales, np.ones((len(x), 1))])
    y = np.asarray(correct, dtype=float)
    w = np.zeros(z.shape[1])
    penalty = np.full(z.shape[1], l2)
    penalty[-1] = 0.0  # the bias is not penalised
    for _ in range(iterations):
        p = _sigmoid(z @ w)
        gradient = z.T @ (p - y) + penalty * w
        hessian = (z * (p * (1 - p))[:, None]).T @ z + np.diag(penalty) + 1e-9 * np.eye(len(w))
        step = np.linalg.solve(hessian, gradient)
        w -= step
        if np.max(np.abs(step)) < 1e-10:
            break
    calibrator = Calibrator(features=names, weights=tuple(float(v) for v in w[:-1]), bias=float(w[-1]),
                            means=tuple(float(m) for m in means), scales=tuple(float(s) for s in scales),
                            l2=float(l2), n=len(features), fitted_on=fitted_on)
    ece = expected_calibration_error(calibrator.predict_many(features), correct)
    return Calibrator(**{**asdict(calibrator), "ece_train": ece})


@dataclass(frozen=True)
class IsotonicMap:
    """A non-decreasing step map from one raw score to P(correct) (pool-adjacent-violators)."""

    thresholds: tuple[float, ...]  # upper raw score of each block, ascending
    values: tuple[float, ...]  # P(correct) of each block, non-decreasing

    def __call__(self, score: float) -> float:
        index = int(np.searchsorted(np.asarray(self.thresholds), score, side="left"))
        return self.values[min(index, len(self.values) - 1)]


def fit_isotonic(scores: Sequence[float], correct: Sequence[bool]) -> IsotonicMap:
    """Isotonic regression of ``correct`` on ``scores`` (for one raw confidence, e.g. the vote share)."""
    if len(scores) != len(correct) or not scores:
        raise ValueError("fit_isotonic needs as many labels as scores, and at least one")
    order = np.argsort(np.asarray(scores, dtype=float), kind="stable")
    xs = np.asarray(scores, dtype=float)[order]
    ys = np.asarray(correct, dtype=float)[order]
    blocks: list[list[float]] = []  # [sum of y, count, max x]
    for x, y in zip(xs, ys):
        if blocks and blocks[-1][2] == x:
            blocks[-1][0] += y
            blocks[-1][1] += 1
        else:
            blocks.append([y, 1.0, x])
        while len(blocks) > 1 and blocks[-2][0] / blocks[-2][1] >= blocks[-1][0] / blocks[-1][1]:
            s, c, top = blocks.pop()
            blocks[-1][0] += s
            blocks[-1][1] += c
            blocks[-1][2] = top
    return IsotonicMap(tuple(b[2] for b in blocks), tuple(b[0] / b[1] for b in blocks))


@dataclass(frozen=True)
class ReliabilityBin:
    """One bin of a reliability diagram: confidences in ``[lower, upper)`` (the last bin includes 1)."""

    lower: float
    upper: float
    count: int
    mean_confidence: float | None
    accuracy: float | None


def _checked(confidences: Sequence[float], correct: Sequence[bool]) -> tuple[np.ndarray, np.ndarray]:
    c = np.asarray(confidences, dtype=float)
    y = np.asarray(correct, dtype=float)
    if c.shape != y.shape or c.ndim != 1:
        raise ValueError(f"need one label per confidence, got {c.shape} and {y.shape}")
    if c.size and (np.isnan(c).any() or c.min() < 0 or c.max() > 1):
        raise ValueError("confidences must be numbers in [0, 1]")
    return c, y


def reliability_bins(confidences: Sequence[float], correct: Sequence[bool], *,
                     n_bins: int = 10) -> list[ReliabilityBin]:
    """Equal-width bins over [0, 1] with the count, mean confidence and accuracy of each (``None`` when empty)."""
    if n_bins < 1:
        raise ValueError("n_bins must be at least 1")
    c, y = _checked(confidences, correct)
    index = np.minimum((c * n_bins).astype(int), n_bins - 1)
    bins = []
    for b in range(n_bins):
        inside = index == b
        count = int(inside.sum())
        bins.append(ReliabilityBin(b / n_bins, (b + 1) / n_bins, count,
                                   float(c[inside].mean()) if count else None,
                                   float(y[inside].mean()) if count else None))
    return bins


def expected_calibration_error(confidences: Sequence[float], correct: Sequence[bool], *, n_bins: int = 10) -> float:
    """ECE: Σ over bins of (bin size / n) × |accuracy − mean confidence| (0.0 for no examples)."""
    bins = reliability_bins(confidences, correct, n_bins=n_bins)
    total = sum(b.count for b in bins)
    if not total:
        return 0.0
    return float(sum(b.count / total * abs(b.accuracy - b.mean_confidence)  # type: ignore[operator]
                     for b in bins if b.count))


TieStatus = Literal["clear", "near_tie", "tie", "no_answer"]


@dataclass(frozen=True)
class TieFlag:
    """Whether the winner stands out.

    ``status``: ``"tie"`` (the top two have equal shares), ``"near_tie"`` (within
    ``margin``), ``"clear"``, or ``"no_answer"``. ``contenders`` are the displays of
    every answer within ``margin`` of the winner (the winner first); ``gap`` the
    winner's share minus the runner-up's.
    """

    status: TieStatus
    gap: float
    contenders: tuple[Any, ...]

    @property
    def flagged(self) -> bool:
        return self.status in ("tie", "near_tie")

    def message(self) -> str:
        if not self.flagged:
            return ""
        names = ", ".join(repr(c) for c in self.contenders)
        word = "tie" if self.status == "tie" else f"near tie (gap {self.gap:.0%})"
        return f"{word} between {names}: the answer is a guess among them"


def detect_tie(result: VoteResult, *, margin: float = DEFAULT_TIE_MARGIN) -> TieFlag:
    """Flag a tie or near tie between the top answers of ``result`` (shares as the vote weighed them)."""
    if not 0 <= margin < 1:
        raise ValueError(f"margin must be in [0, 1), got {margin!r}")
    if not result.distribution:
        return TieFlag("no_answer", 0.0, ())
    top = result.distribution[0].share
    if len(result.distribution) == 1:
        return TieFlag("clear", top, (result.distribution[0].display,))
    gap = top - result.distribution[1].share
    contenders = tuple(s.display for s in result.distribution if top - s.share <= margin + 1e-12)
    closeness = "tie" if result.tied else vote_closeness(result.distribution, margin)  # the one rule: vote.py
    if closeness == "tie":
        return TieFlag("tie", 0.0, contenders)
    return TieFlag(closeness or "clear", gap, contenders)


@dataclass(frozen=True)
class Confidence:
    """The confidence reported with an answer.

    ``value`` is P(correct) from the calibrator when ``calibrated``, else the raw vote
    share (not a probability). ``abstain(p)`` is True when ``value < p`` or there is no answer.
    """

    value: float
    calibrated: bool
    features: ConfidenceFeatures | None
    tie: TieFlag

    def abstain(self, below: float) -> bool:
        return self.features is None or self.value < below


def confidence(result: VoteResult, *, scored: VoteResult | None = None, sampled: int | None = None,
               calibrator: Calibrator | None = None, tie_margin: float = DEFAULT_TIE_MARGIN) -> Confidence:
    """The answer's confidence: calibrated when a ``calibrator`` is given, else the vote share."""
    features = confidence_features(result, scored=scored, sampled=sampled)
    tie = detect_tie(result, margin=tie_margin)
    if features is None:
        return Confidence(0.0, calibrator is not None, None, tie)
    if calibrator is None:
        return Confidence(result.confidence, False, features, tie)
    return Confidence(calibrator.predict(features), True, features, tie)
