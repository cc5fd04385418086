"""Voting strategies, tie-breaking, abstentions and prefix voting (binder_py.vote)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from binder_py.vote import (
    STRATEGIES,
    TABFACT_ANSWER_WEIGHTS,
    VoteCandidate as C,
    VoteResult,
    vote,
    vote_prefix,
)


def test_normalised_majority():
    res = vote([C(3, order=0), C("3.0", order=1), C(np.int64(3), order=2), C("4", order=3)])
    assert res.key == ("3",)
    assert res.value == 3  # display of the earliest candidate
    assert res.confidence == pytest.approx(0.75)
    assert res.voters == 4 and res.abstained == 0
    assert [s.key for s in res.distribution] == [("3",), ("4",)]
    top = res.distribution[0]
    assert top.count == 3 and top.weight == 3 and top.candidate_orders == [0, 1, 2]
    assert top.share == pytest.approx(0.75)
    assert sum(s.share for s in res.distribution) == pytest.approx(1.0)
    assert not res.tied


def test_display_is_earliest_by_order_not_input_position():
    res = vote([C("3.0", order=5), C(3, order=1)])
    assert res.value == 3
    assert res.distribution[0].candidate_orders == [1, 5]


def test_counts_are_votes():
    res = vote([C("a", count=1, order=0), C("b", count=3, order=1)])
    assert res.value == "b"
    assert res.confidence == pytest.approx(0.75)
    assert res.voters == 4
    assert res.distribution[0].count == 3


def test_bad_count_rejected():
    with pytest.raises(ValueError, match="count"):
        vote([C("a", count=0)])


def test_list_answers_vote_together():
    res = vote([C(["b", "a"], order=0), C(pd.Series(["a", "b"]), order=1), C("a", order=2)])
    assert res.key == ("a", "b")
    assert res.value == ["b", "a"]


# ---------------------------------------------------------------- abstentions

def test_failed_and_empty_do_not_vote_by_default():
    cands = [C(None, ok=False, order=0), C(None, order=1), C(float("nan"), order=2), C([], order=3),
             C("x", order=4, count=2)]
    res = vote(cands)
    assert res.value == "x" and res.confidence == 1.0
    assert res.voters == 2 and res.abstained == 4


def test_failed_value_ignored_even_when_not_empty():
    res = vote([C("wrong", ok=False, count=5, order=0), C("right", order=1)])
    assert res.value == "right" and res.abstained == 5


def test_keep_failed_votes_its_value():
    res = vote([C("partial", ok=False, count=5, order=0), C("right", order=1)], drop_failed=False)
    assert res.value == "partial"
    # a failed candidate with no value is empty, so it still abstains unless drop_empty=False
    res = vote([C(None, ok=False, count=5, order=0), C("right", order=1)], drop_failed=False)
    assert res.value == "right" and res.abstained == 5


def test_keep_empty_answers():
    res = vote([C(None, order=0), C(float("nan"), order=1), C("", order=2), C("x", order=3)], drop_empty=False)
    assert res.key == () and res.value is None
    assert res.confidence == pytest.approx(0.75)
    assert res.voters == 4 and res.abstained == 0


def test_no_voters():
    for cands in ([], [C(None)], [C("x", ok=False)]):
        res = vote(cands)
        assert isinstance(res, VoteResult)
        assert res.value is None and res.key is None and res.confidence == 0.0 and res.distribution == []
    assert vote([C(None, count=2), C("x", ok=False)]).abstained == 3


# ---------------------------------------------------------------- strategies

def test_probability_weighted():
    cands = [C("a", order=0, mean_logprob=math.log(0.9)),
             C("b", order=1, mean_logprob=math.log(0.3)),
             C("b", order=2, mean_logprob=math.log(0.4))]
    assert vote(cands).value == "b"  # majority: 2 vs 1
    res = vote(cands, strategy="probability")
    assert res.value == "a"  # 0.9 vs 0.7
    assert res.distribution[0].weight == pytest.approx(0.9)
    assert res.confidence == pytest.approx(0.9 / 1.6)


def test_probability_uses_count_and_missing_logprob_weighs_one():
    res = vote([C("a", count=3, mean_logprob=math.log(0.5), order=0), C("b", order=1)], strategy="probability")
    assert res.value == "a" and res.distribution[0].weight == pytest.approx(1.5)
    assert res.distribution[1].weight == pytest.approx(1.0)
    res = vote([C("a", mean_logprob=float("nan"), order=0)], strategy="probability")
    assert res.distribution[0].weight == pytest.approx(1.0)


def test_answer_biased_tabfact():
    cands = [C(True, order=0), C(False, order=1), C(0, order=2), C("no", order=3)]
    assert vote(cands, yes_no=True).value == "no"
    res = vote(cands, strategy="answer_biased", yes_no=True, answer_weights=TABFACT_ANSWER_WEIGHTS)
    assert res.key == ("yes",) and res.value == "yes"
    assert res.distribution[0].weight == 4.0 and res.distribution[1].weight == 3.0
    assert res.confidence == pytest.approx(4 / 7)


@pytest.mark.parametrize("weight_key", ["yes", "Yes", "true", 1, True, "1"])
def test_answer_weight_keys_are_normalised(weight_key):
    res = vote([C(1, order=0), C(0, order=1), C(0, order=2)], strategy="answer_biased", yes_no=True,
               answer_weights={weight_key: 4.0})
    assert res.key == ("yes",)


def test_answer_biased_multi_value_and_defaults():
    res = vote([C(["b", "a"], order=0), C("c", order=1), C("c", order=2)], strategy="answer_biased",
               answer_weights={"a | b": 3.0})
    assert res.key == ("a", "b")
    # no weights: same as majority
    assert vote([C("x"), C("y"), C("y")], strategy="answer_biased").value == "y"


def test_answer_weights_validated():
    with pytest.raises(ValueError):
        vote([C("a")], strategy="answer_biased", answer_weights={"a": -1.0})
    with pytest.raises(ValueError):
        vote([C("a")], strategy="answer_biased", answer_weights={"yes": 4.0, "true": 2.0}, yes_no=True)


def test_program_biased():
    cands = [C("plain", count=5, order=0), C("neural", has_neural_calls=True, order=1)]
    assert vote(cands).value == "plain"
    res = vote(cands, strategy="program_biased")
    assert res.value == "neural"
    assert res.distribution[0].weight == 10.0 and res.distribution[1].weight == 5.0
    assert res.confidence == pytest.approx(10 / 15)
    assert vote(cands, strategy="program_biased", neural_weight=3.0).value == "plain"
    assert vote([C("n", count=2, has_neural_calls=True)], strategy="program_biased").distribution[0].weight == 20.0


def test_unknown_strategy_and_bad_neural_weight():
    with pytest.raises(ValueError, match="strategy"):
        vote([C("a")], strategy="plurality")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        vote([C("a")], strategy="program_biased", neural_weight=-1)
    assert set(STRATEGIES) == {"majority", "probability", "answer_biased", "program_biased"}


# ---------------------------------------------------------------- ties

def test_tie_broken_by_mean_logprob():
    res = vote([C("a", order=0, mean_logprob=-2.0), C("b", order=1, mean_logprob=-0.5)])
    assert res.value == "b" and res.tied
    assert res.confidence == pytest.approx(0.5)
    assert [s.key for s in res.distribution] == [("b",), ("a",)]


def test_tie_logprob_is_count_weighted_mean_of_candidates():
    cands = [C("a", order=0, count=1, mean_logprob=-0.1), C("a", order=1, count=3, mean_logprob=-3.0),
             C("b", order=2, count=4, mean_logprob=-1.0)]
    res = vote(cands)
    assert res.value == "b"  # a: (-0.1 - 9) / 4 = -2.275 < -1.0
    assert res.distribution[1].mean_logprob == pytest.approx(-2.275)


def test_tie_broken_by_earliest_without_logprobs():
    res = vote([C("b", order=1), C("a", order=0)])
    assert res.value == "a" and res.tied
    # same order: input position decides
    assert vote([C("x"), C("y")]).value == "x"


def test_tie_falls_back_to_earliest_when_a_tied_answer_lacks_logprob():
    res = vote([C("a", order=0), C("b", order=1, mean_logprob=-0.1)])
    assert res.value == "a"


def test_tie_with_float_weights():
    # 0.1 + 0.2 vs 0.3 tie despite float error; earliest wins
    cands = [C("a", order=0, mean_logprob=math.log(0.3)),
             C("b", order=1, mean_logprob=math.log(0.1)), C("b", order=2, mean_logprob=math.log(0.2))]
    res = vote(cands, strategy="probability")
    assert res.tied
    assert res.value == "a"  # mean logprob of a (log 0.3) beats b's mean


def test_not_tied_winner_ignores_logprob():
    res = vote([C("a", order=0, count=2, mean_logprob=-5.0), C("b", order=1, mean_logprob=-0.1)])
    assert res.value == "a" and not res.tied


# ---------------------------------------------------------------- prefix voting

def test_vote_prefix():
    cands = [C("a", order=0), C("b", order=1), C("b", order=2), C("a", order=3), C("a", order=4)]
    assert vote_prefix(cands, 1).value == "a"
    assert vote_prefix(cands, 3).value == "b"
    assert vote_prefix(cands, 5).value == "a"
    assert vote_prefix(cands, 100).voters == 5
    assert vote_prefix(cands, 0).value is None
    assert vote_prefix(cands, 3, strategy="program_biased").value == "b"


def test_vote_prefix_with_sample_orders():
    cands = [C("a", count=3, order=0, sample_orders=(0, 5, 6)), C("b", count=2, order=1, sample_orders=(1, 2))]
    res = vote_prefix(cands, 3)
    assert res.value == "b" and res.voters == 3
    assert vote_prefix(cands, 7).value == "a"
    # without sample_orders the whole count is kept
    assert vote_prefix([C("a", count=3, order=0), C("b", count=2, order=1)], 2).value == "a"


def test_to_dict():
    d = vote([C(["b", "a"], order=0), C("c", order=1)]).to_dict()
    assert d["key"] == ["a", "b"] and d["distribution"][0]["key"] == ["a", "b"]
    assert vote([]).to_dict()["key"] is None


def test_wide_dataframe_note_propagates():
    df = pd.DataFrame({"a": ["x"], "b": [1]})
    res = vote([C(df)])
    assert res.value == "x" and res.distribution[0].note
