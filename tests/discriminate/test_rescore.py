"""The "likelihood" vote over sampled programs."""

from __future__ import annotations

import math

import pytest

from binder_py.discriminate.rescore import likelihood_vote, likelihood_weights
from binder_py.vote import VoteCandidate, vote


def test_beta_zero_is_the_majority_vote():
    cands = [VoteCandidate("a", count=3, mean_logprob=-2.0, order=0),
             VoteCandidate("b", count=2, mean_logprob=-0.1, order=1)]
    result = likelihood_vote(cands, beta=0.0)
    majority = vote(cands)
    assert result.value == majority.value == "a" and math.isclose(result.confidence, majority.confidence)
    assert result.strategy == "likelihood"


def test_beta_one_matches_the_probability_strategy():
    cands = [VoteCandidate("a", count=3, mean_logprob=-0.5, order=0),
             VoteCandidate("b", count=2, mean_logprob=-0.3, order=1),
             VoteCandidate(3.0, count=1, mean_logprob=-1.0, order=2)]
    ours, theirs = likelihood_vote(cands, beta=1.0), vote(cands, strategy="probability")
    assert [s.key for s in ours.distribution] == [s.key for s in theirs.distribution]
    for a, b in zip(ours.distribution, theirs.distribution):
        assert math.isclose(a.share, b.share) and math.isclose(a.mean_logprob, b.mean_logprob)


def test_a_more_likely_minority_wins_when_beta_is_sharp():
    cands = [VoteCandidate("a", count=3, mean_logprob=-0.5, order=0),
             VoteCandidate("b", count=2, mean_logprob=-0.3, order=1)]
    assert likelihood_vote(cands, beta=1.0).value == "a"      # 3·e^-0.2 = 2.46 > 2
    sharp = likelihood_vote(cands, beta=5.0)                   # 3·e^-1 = 1.10 < 2
    assert sharp.value == "b"
    assert math.isclose(sharp.confidence, 2 / (2 + 3 * math.exp(-1.0)))
    assert sharp.distribution[0].mean_logprob == -0.3  # the answers keep their own log-probabilities


def test_answers_are_normalised_and_summed():
    cands = [VoteCandidate(3, mean_logprob=-0.2, order=0), VoteCandidate("3.0", mean_logprob=-0.2, order=1),
             VoteCandidate("x", count=2, mean_logprob=-0.2, order=2)]
    result = likelihood_vote(cands)
    assert result.key == ("3",) and result.tied  # 2 vs 2, equal log-probabilities: the earliest wins
    assert {s.key: s.count for s in result.distribution} == {("3",): 2, ("x",): 2}


def test_missing_logprob_is_neutral_not_best():
    cands = [VoteCandidate("a", mean_logprob=-0.1), VoteCandidate("b", mean_logprob=-0.5),
             VoteCandidate("c", mean_logprob=None)]
    weights = likelihood_weights(cands, beta=2.0)
    assert weights[0] == 1.0 and math.isclose(weights[2], math.exp(2 * (-0.3 + 0.1)))
    assert weights[1] < weights[2] < weights[0]
    # nobody has one: the majority vote
    assert likelihood_weights([VoteCandidate("a", count=2), VoteCandidate("b")]) == [2.0, 1.0]


def test_failed_and_empty_candidates_neither_vote_nor_set_the_best_logprob():
    cands = [VoteCandidate("a", mean_logprob=-0.5, order=0),
             VoteCandidate("boom", mean_logprob=-0.01, ok=False, order=1),
             VoteCandidate(None, mean_logprob=-0.02, order=2)]
    result = likelihood_vote(cands)
    assert result.value == "a" and result.confidence == 1.0 and result.abstained == 2
    assert math.isclose(result.distribution[0].weight, 1.0)  # a is the best voter: exp(0)


def test_no_voters():
    result = likelihood_vote([VoteCandidate(None)])
    assert result.value is None and result.confidence == 0.0 and result.strategy == "likelihood"


@pytest.mark.parametrize("beta", [-1.0, math.inf, math.nan])
def test_bad_beta(beta):
    with pytest.raises(ValueError, match="beta"):
        likelihood_vote([VoteCandidate("a")], beta=beta)
