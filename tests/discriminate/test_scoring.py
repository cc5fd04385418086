"""Scoring given options: multiple choice from top_logprobs, votes fallback, forced-decoding likelihood."""

from __future__ import annotations

import math

import pytest

from binder_py.discriminate.scoring import (ChoicePrompt, ScoringUnavailable, choice_grammar, label_logprobs,
                                            literal_grammar, score_options)
from binder_py.lm.scripted import ScriptedLM
from binder_py.lm.types import Capabilities, Choice

PROMPT = ChoicePrompt(context="Table: shirts\nQuestion: which shirt sells most?")
OPTIONS = ["len(df)", 'df.sort_values("sales", ascending=False)["shirt"].iloc[0]', 'df["shirt"].iloc[0]']


def test_choice_probabilities_follow_the_model_and_sum_to_one(make_preference_lm):
    lm = make_preference_lm(lambda text: 3.0 if "sort_values" in text else 0.0)
    scoring = score_options(lm, PROMPT, OPTIONS, method="choice", orders=1)
    assert scoring.method == "choice_logprobs"
    assert scoring.ranked()[0].index == 1
    assert math.isclose(sum(scoring.probabilities()), 1.0)
    assert math.isclose(scoring.probabilities()[1], math.exp(3) / (math.exp(3) + 2), rel_tol=1e-9)
    request = lm.requests[0]
    assert request.grammar is None and request.max_tokens == 1  # logprobs are read: no grammar needed
    assert request.logprobs and request.top_logprobs == 20
    assert request.messages[0][0] == "system"


def test_two_orders_cancel_a_preference_for_label_a():
    """A model that always prefers whatever is labelled A: averaging both orders makes the ends equal."""
    def respond(request, purpose):
        alts = (("A", math.log(0.6)), ("B", math.log(0.3)), ("C", math.log(0.1)))
        return Choice(text="A", top_logprobs=(alts,))
    lm = ScriptedLM(respond, capabilities=Capabilities(api="chat", logprobs=True, grammar=True))
    one = score_options(lm, PROMPT, OPTIONS, method="choice", orders=1)
    assert one.ranked()[0].index == 0
    both = score_options(lm, PROMPT, OPTIONS, method="choice", orders=2)
    assert both.requests == 2
    first, middle, last = (s.logprob for s in both.scores)
    assert math.isclose(first, last) and not math.isclose(middle, first)  # B sits in the middle both times
    reversed_request = lm.requests[-1]
    assert reversed_request.messages[1][1].index("len(df)") > reversed_request.messages[1][1].index("iloc[0]")


def test_label_variants_are_summed_and_missing_labels_get_the_floor():
    choice = Choice(text="A", top_logprobs=((("A", math.log(0.4)), (" A", math.log(0.1)), ("B", math.log(0.2)),
                                              ("The", math.log(0.05))),))
    found = label_logprobs(choice, 3)
    assert math.isclose(found["A"], math.log(0.5)) and "C" not in found
    lm = ScriptedLM([choice], capabilities=Capabilities(api="chat", logprobs=True, grammar=True))
    scoring = score_options(lm, PROMPT, OPTIONS, method="choice", orders=1)
    assert [s.observed for s in scoring.scores] == [True, True, False]
    assert scoring.warnings and "C" in scoring.warnings[0]
    assert scoring.ranked()[-1].index == 2


def test_completion_models_get_one_prompt_ending_in_answer():
    caps = Capabilities(api="completions", logprobs=True, grammar=False)
    lm = ScriptedLM([Choice(text=" B", top_logprobs=(((" B", -0.1), (" A", -2.5)),))], capabilities=caps)
    scoring = score_options(lm, PROMPT, OPTIONS[:2], method="choice", orders=1)
    assert scoring.ranked()[0].index == 1
    request = lm.requests[0]
    assert request.prompt.endswith("Answer:") and request.grammar is None and request.max_tokens == 1


def test_without_logprobs_votes_are_counted_with_smoothing():
    lm = ScriptedLM([["B", "B", "The answer is A", "B", "???"]], capabilities=Capabilities(api="chat"))
    scoring = score_options(lm, PROMPT, OPTIONS, vote_samples=5)
    assert scoring.method == "choice_votes"
    probs = scoring.probabilities()
    assert probs[1] > probs[0] > probs[2] > 0
    assert not scoring.scores[2].observed
    assert "1 of 5" in scoring.warnings[0]
    assert lm.requests[0].n == 5 and lm.requests[0].temperature > 0 and not lm.requests[0].logprobs


def test_votes_are_constrained_to_the_labels_by_a_grammar_when_the_model_takes_one():
    lm = ScriptedLM([["A", "B"]], capabilities=Capabilities(api="chat", grammar=True))
    score_options(lm, PROMPT, OPTIONS, vote_samples=2)
    assert lm.requests[0].grammar == choice_grammar(3) and lm.requests[0].max_tokens == 1


def test_without_logprobs_error_fallback_raises():
    lm = ScriptedLM(["A"], capabilities=Capabilities(api="chat"))
    with pytest.raises(ScoringUnavailable, match="log-probabilities"):
        score_options(lm, PROMPT, OPTIONS, fallback="error")


def test_no_label_in_alternatives_is_a_clear_error():
    lm = ScriptedLM([Choice(text="The", top_logprobs=((("The", -0.1),),))],
                    capabilities=Capabilities(api="chat", logprobs=True))
    with pytest.raises(ScoringUnavailable, match="no label"):
        score_options(lm, PROMPT, OPTIONS, method="choice", orders=1)


def test_likelihood_is_the_mean_token_logprob_of_the_forced_text():
    def respond(request, purpose):
        text = OPTIONS[0] if "len" in request.grammar else OPTIONS[1]
        lps = ((text[:3], -0.2), (text[3:], -0.4)) if text == OPTIONS[0] else ((text, -1.5),)
        return Choice(text=text, token_logprobs=lps)
    lm = ScriptedLM(respond, capabilities=Capabilities(api="chat", logprobs=True, grammar=True))
    scoring = score_options(lm, PROMPT, OPTIONS[:2], method="likelihood")
    assert scoring.method == "likelihood" and scoring.requests == 2
    assert math.isclose(scoring.scores[0].logprob, -0.3) and math.isclose(scoring.scores[1].logprob, -1.5)
    assert lm.requests[0].grammar == literal_grammar(OPTIONS[0])


def test_likelihood_detects_post_grammar_probabilities_and_missing_capabilities():
    lm = ScriptedLM(lambda r, p: Choice(text=OPTIONS[0], token_logprobs=(("le", 0.0), ("n(df)", 0.0))),
                    capabilities=Capabilities(api="chat", logprobs=True, grammar=True))
    with pytest.raises(ScoringUnavailable, match="after the grammar"):
        score_options(lm, PROMPT, OPTIONS[:2], method="likelihood")
    with pytest.raises(ScoringUnavailable, match="grammar and log-probabilities"):
        score_options(ScriptedLM(["x"], capabilities=Capabilities(logprobs=True)), PROMPT, OPTIONS[:2],
                      method="likelihood")


def test_literal_grammar_escapes_quotes_backslashes_and_newlines():
    assert literal_grammar('df["a"]\nx\\y') == 'root ::= "df[\\"a\\"]\\nx\\\\y"'


@pytest.mark.parametrize("options, message", [([], "at least one"), (["a", "a"], "same option"),
                                              ([str(i) for i in range(27)], "at most 26")])
def test_bad_options_are_rejected(options, message):
    with pytest.raises(ValueError, match=message):
        score_options(ScriptedLM(["A"]), PROMPT, options)


def test_one_option_needs_no_request():
    lm = ScriptedLM([])
    scoring = score_options(lm, PROMPT, ["len(df)"])
    assert scoring.scores[0].logprob == 0.0 and not lm.calls


def test_pointwise_scores_each_option_by_its_yes_probability(make_preference_lm):
    lm = make_preference_lm(lambda text: 2.0 if "sort_values" in text else -1.0)
    scoring = score_options(lm, PROMPT, OPTIONS, method="pointwise")
    assert scoring.method == "pointwise" and scoring.requests == 3 == len(lm.calls)
    assert scoring.ranked()[0].index == 1
    assert math.isclose(scoring.scores[1].logprob, -math.log1p(math.exp(-2.0)))
    assert all(r.max_tokens == 1 and r.top_logprobs >= 2 and r.grammar is None for r in lm.requests)
    assert all(OPTIONS[i] in r.messages[1][1] and r.messages[0][0] == "system" for i, r in enumerate(lm.requests))
    # auto picks pointwise when the model has log-probabilities; more than 26 options are fine
    many = [f"df['c{i}'].sum()" for i in range(30)]
    assert score_options(make_preference_lm(lambda t: 0.0), PROMPT, many).method == "pointwise"


def test_pointwise_sums_spellings_and_bounds_a_missing_answer():
    choice = Choice(text="No", top_logprobs=((("No", math.log(0.5)), ("no", math.log(0.1)), ("The", math.log(0.05))),))
    lm = ScriptedLM(lambda r, p: choice, capabilities=Capabilities(api="chat", logprobs=True))
    scoring = score_options(lm, PROMPT, OPTIONS[:2], method="pointwise")
    assert math.isclose(scoring.scores[0].logprob, math.log(0.05) - math.log(0.65))  # yes at the floor
    assert "yes not among" in scoring.warnings[0]
    none = ScriptedLM(lambda r, p: Choice(text="The", top_logprobs=((("The", -0.1),),)),
                      capabilities=Capabilities(api="chat", logprobs=True))
    with pytest.raises(ScoringUnavailable, match="neither yes nor no"):
        score_options(none, PROMPT, OPTIONS[:2], method="pointwise")
    with pytest.raises(ScoringUnavailable, match="no log-probabilities"):
        score_options(ScriptedLM(["yes"]), PROMPT, OPTIONS[:2], method="pointwise")
    claims = ScriptedLM(lambda r, p: "yes", capabilities=Capabilities(api="chat", logprobs=True))
    with pytest.raises(ScoringUnavailable, match="use a server that returns them .* or another --mode"):
        score_options(claims, PROMPT, OPTIONS[:2])  # pointwise
    with pytest.raises(ScoringUnavailable, match="use a server that returns them .* or another --mode"):
        score_options(claims, PROMPT, OPTIONS[:2], method="choice")
