"""Confidence features, logistic/isotonic calibration, ECE and reliability bins, tie detection."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from binder_py.calibration import (ConfidenceFeatures, confidence, confidence_features, detect_tie,
                                   expected_calibration_error, fit_isotonic, fit_logistic, load_calibrator,
                                   reliability_bins)
from binder_py.discriminate.rescore import likelihood_vote
from binder_py.vote import VoteCandidate, vote


def test_five_identical_programs_are_weaker_than_five_different_ones():
    same = vote([VoteCandidate("a", count=5, order=0), VoteCandidate("b", order=5)])
    different = vote([VoteCandidate("a", order=i) for i in range(5)] + [VoteCandidate("b", order=5)])
    f_same, f_diff = confidence_features(same), confidence_features(different)
    assert f_same.vote_share == f_diff.vote_share == pytest.approx(5 / 6)
    assert f_same.distinct_agreement == 0.5 and f_diff.distinct_agreement == pytest.approx(5 / 6)
    assert f_same.log_distinct_support == pytest.approx(math.log(2))
    assert f_diff.log_distinct_support == pytest.approx(math.log(6))


def test_features_read_counts_margin_model_share_and_valid_rate():
    cands = [VoteCandidate("a", count=3, mean_logprob=-1.0, order=0), VoteCandidate("b", count=2, mean_logprob=-0.1,
                                                                                    order=1),
             VoteCandidate(None, ok=False, order=2, count=3)]
    result = vote(cands)
    scored = likelihood_vote(cands, beta=5.0)
    f = confidence_features(result, scored=scored, sampled=10)
    assert f.vote_share == pytest.approx(0.6) and f.margin == pytest.approx(0.2)
    assert f.model_share == pytest.approx(next(s.share for s in scored.distribution if s.key == ("a",)))
    assert f.model_share < 0.5  # the model prefers b
    assert f.valid_rate == pytest.approx(0.5)
    assert confidence_features(result).valid_rate == pytest.approx(5 / 8)  # voters + abstained
    assert confidence_features(vote([])) is None
    with pytest.raises(ValueError, match="not in the vote"):
        confidence_features(result, key=("zzz",))


def _synthetic(n=400, seed=0):
    """Correctness that depends on distinct agreement, not on the vote share (which is always 1)."""
    rng = np.random.default_rng(seed)
    feats, labels = [], []
    for _ in range(n):
        agreement = rng.uniform(0.1, 1.0)
        feats.append(ConfidenceFeatures(vote_share=1.0, margin=1.0, distinct_agreement=agreement,
                                        log_distinct_support=math.log1p(agreement * 5), model_share=None,
                                        valid_rate=rng.uniform(0.5, 1)))
        labels.append(bool(rng.uniform() < agreement))
    return feats, labels


def test_logistic_calibration_beats_the_raw_vote_share_and_round_trips(tmp_path):
    feats, labels = _synthetic()
    calibrator = fit_logistic(feats, labels, fitted_on="synthetic")
    predicted = calibrator.predict_many(feats)
    raw_ece = expected_calibration_error([f.vote_share for f in feats], labels)
    assert raw_ece > 0.3
    assert expected_calibration_error(predicted, labels) < 0.08
    assert calibrator.ece_train == pytest.approx(expected_calibration_error(predicted, labels))
    low = ConfidenceFeatures(1.0, 1.0, 0.15, math.log1p(0.75), None, 0.8)
    high = ConfidenceFeatures(1.0, 1.0, 0.95, math.log1p(4.75), None, 0.8)
    assert calibrator.predict(low) < 0.35 < 0.75 < calibrator.predict(high)
    path = tmp_path / "confidence.json"
    calibrator.save(path)
    again = load_calibrator(path)
    assert again == calibrator
    assert json.loads(path.read_text())["format"] == "binder-py-confidence/1"


def test_load_calibrator_rejects_other_files(tmp_path):
    bad = tmp_path / "x.json"
    bad.write_text('{"format": "something else"}')
    with pytest.raises(ValueError, match="not a binder-py confidence"):
        load_calibrator(bad)
    feats, labels = _synthetic(50)
    data = fit_logistic(feats, labels).to_json()
    data["weights"] = data["weights"][:-1]
    bad.write_text(json.dumps(data))
    with pytest.raises(ValueError, match="one value per feature"):
        load_calibrator(bad)
    with pytest.raises(ValueError, match="cannot read"):
        load_calibrator(tmp_path / "missing.json")


def test_fit_logistic_input_errors():
    feats, labels = _synthetic(10)
    with pytest.raises(ValueError, match="labels"):
        fit_logistic(feats, labels[:-1])
    with pytest.raises(ValueError, match="unknown features"):
        fit_logistic(feats, labels, names=("vote_share", "colour"))
    with pytest.raises(ValueError, match="l2"):
        fit_logistic(feats, labels, l2=0)


def test_isotonic_is_monotone_and_pools_violations():
    iso = fit_isotonic([0.1, 0.2, 0.3, 0.4, 0.5], [False, True, False, True, True])
    assert iso.values == (0.0, 0.5, 1.0)
    assert iso(0.05) == 0.0 and iso(0.25) == 0.5 and iso(0.35) == 1.0 and iso(0.99) == 1.0
    assert list(iso.values) == sorted(iso.values)


def test_reliability_bins_and_ece_by_hand():
    conf = [0.05, 0.15, 0.95, 1.0, 0.9]
    correct = [False, True, True, True, False]
    bins = reliability_bins(conf, correct, n_bins=10)
    assert [b.count for b in bins] == [1, 1, 0, 0, 0, 0, 0, 0, 0, 3]
    assert bins[2].accuracy is None and bins[9].accuracy == pytest.approx(2 / 3)
    assert bins[9].mean_confidence == pytest.approx(0.95)
    expected = (1 * 0.05 + 1 * 0.85 + 3 * abs(2 / 3 - 0.95)) / 5
    assert expected_calibration_error(conf, correct) == pytest.approx(expected)
    assert expected_calibration_error([], []) == 0.0
    with pytest.raises(ValueError, match="\\[0, 1\\]"):
        reliability_bins([1.5], [True])


def test_three_way_tie_is_flagged():
    result = vote([VoteCandidate("a", order=0), VoteCandidate("b", order=1), VoteCandidate("c", order=2)])
    flag = detect_tie(result)
    assert flag.status == "tie" and flag.flagged and flag.contenders == ("a", "b", "c")
    assert "tie between 'a', 'b', 'c'" in flag.message()


def test_near_tie_and_clear_winner():
    near = vote([VoteCandidate("a", count=11, order=0), VoteCandidate("b", count=9, order=1)])
    assert detect_tie(near, margin=0.1).status == "near_tie"
    assert detect_tie(near, margin=0.05).status == "clear"
    clear = vote([VoteCandidate("a", count=8), VoteCandidate("b", count=2, order=1)])
    flag = detect_tie(clear)
    assert flag.status == "clear" and not flag.flagged and flag.message() == "" and flag.gap == pytest.approx(0.6)
    assert detect_tie(vote([])).status == "no_answer"
    assert detect_tie(vote([VoteCandidate("a")])).status == "clear"


def test_confidence_without_calibrator_is_marked_uncalibrated_and_abstains():
    result = vote([VoteCandidate("a", count=5)])
    raw = confidence(result)
    assert raw.value == 1.0 and not raw.calibrated and not raw.abstain(0.9)
    feats, labels = _synthetic()
    calibrated = confidence(result, calibrator=fit_logistic(feats, labels))
    assert calibrated.calibrated and calibrated.value < 1.0
    assert confidence(vote([])).abstain(0.0)
