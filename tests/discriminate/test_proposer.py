"""The proposer's beam search with a scripted model that prefers given programs."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from binder_py.discriminate.proposer import ProposerSettings, propose, proposer_prompt
from binder_py.lm.scripted import ScriptedLM
from binder_py.lm.types import Capabilities
from binder_py.tables import load_table

SHIRTS_Q = "which is the best-selling shirt made in North America and with no chemicals?"
GOLD_ANSWER = "df.sort_values('sales', ascending=False)['shirt'].iloc[0]"
NA = "df = df[f_col('Is it made in north america?', ['made in'])]"
CHEM = "df = df[f_col('Does it have no chemicals?', ['shirt'])]"


@pytest.fixture
def shirts() -> pd.DataFrame:
    return load_table("examples/shirts.csv")


def gold_liker(code: str) -> float:
    lines = code.splitlines()
    score = 3.0 * (lines[-1] == GOLD_ANSWER)
    score += 2.0 * (NA in lines) + 2.0 * (CHEM in lines)
    score -= 2.0 * sum("f_col" in line and line not in (NA, CHEM) for line in lines)
    return score


def test_the_preferred_program_wins_and_scores_are_log_probabilities(shirts, make_preference_lm):
    lm = make_preference_lm(gold_liker)
    proposal = propose(lm, shirts, SHIRTS_Q,
                       settings=ProposerSettings(show="code", beam=2, max_filters=2, orders=1))
    best = proposal.best
    assert best is not None and best.rank == 0 and best.has_neural_calls
    assert best.code.splitlines()[-1] == GOLD_ANSWER
    assert set(best.code.splitlines()[:-1]) == {NA, CHEM}
    assert all(p.score <= 0 for p in proposal.programs)
    assert [p.score for p in proposal.programs] == sorted((p.score for p in proposal.programs), reverse=True)
    assert math.isclose(sum(p.probability for p in proposal.programs), 1.0)
    codes = [p.code for p in proposal.programs]
    assert len(codes) == len(set(codes))


def test_request_bound_and_trace_pointwise(shirts, make_preference_lm):
    settings = ProposerSettings(show="code", beam=2, max_filters=2, max_options=6)
    lm = make_preference_lm(gold_liker)
    proposal = propose(lm, shirts, SHIRTS_Q, settings=settings)
    # one prompt per option; a condition step scores the extensions of the whole beam at once
    assert proposal.requests == len(lm.calls) <= settings.max_options * (1 + settings.beam * settings.max_filters)
    assert all(purpose == "discriminate" for _, purpose, _ in lm.calls)
    first = proposal.steps[0]
    assert first.stage == "answer" and first.base is None and len(first.kept) == 2 and first.method == "pointwise"
    assert math.isclose(sum(first.probabilities), 1.0)
    assert [s.stage for s in proposal.steps[1:]] == ["condition"] * (len(proposal.steps) - 1)
    # every scored program is complete and keeps its own score: the gold answer alone is among them
    codes = {p.code: p.score for p in proposal.programs}
    assert GOLD_ANSWER in codes and codes[GOLD_ANSWER] < proposal.best.score


def test_pangu_termination_stops_when_no_longer_program_scores_better(shirts, make_preference_lm):
    lm = make_preference_lm(lambda code: 3.0 * (code == GOLD_ANSWER))
    proposal = propose(lm, shirts, SHIRTS_Q, settings=ProposerSettings(show="code", beam=2, max_filters=2))
    assert proposal.best.code == GOLD_ANSWER
    assert len(proposal.steps) == 2  # the answer step, one condition step, then the search stops
    assert proposal.steps[1].kept == ()


def test_request_bound_and_trace_choice(shirts, make_preference_lm):
    settings = ProposerSettings(show="code", beam=2, max_filters=2, max_options=6, orders=2,
                                method="choice")
    lm = make_preference_lm(gold_liker)
    proposal = propose(lm, shirts, SHIRTS_Q, settings=settings)
    assert proposal.requests == len(lm.calls) <= (1 + settings.beam * settings.max_filters) * settings.orders
    assert all(len(step.options) <= settings.max_options for step in proposal.steps)
    later = proposal.steps[1]
    assert later.stage == "condition" and later.options[0] == later.base  # "stop here" is the first option
    assert proposal.best.code.splitlines()[-1] == GOLD_ANSWER


def test_conditions_in_another_order_are_one_program(shirts, make_preference_lm):
    proposal = propose(make_preference_lm(gold_liker), shirts, SHIRTS_Q,
                       settings=ProposerSettings(show="code", beam=4, max_filters=2, orders=1, max_programs=50))
    filter_sets = [frozenset(p.code.splitlines()[:-1]) for p in proposal.programs
                   if p.code.splitlines()[-1] == GOLD_ANSWER]
    assert len(filter_sets) == len(set(filter_sets))


def test_a_model_that_prefers_stopping_gets_short_programs(shirts, make_preference_lm):
    def short_liker(code):
        return 3.0 * (code == GOLD_ANSWER) - 1.0 * code.count("\n")
    proposal = propose(make_preference_lm(short_liker), shirts, SHIRTS_Q,
                       settings=ProposerSettings(show="code", orders=1))
    assert proposal.best.code == GOLD_ANSWER and not proposal.best.has_neural_calls


def test_pure_python_mode_and_value_filters(shirts, make_preference_lm):
    question = "which shirt made in Canada sells the most?"
    def liker(code):
        return 3.0 * (GOLD_ANSWER in code) + 3.0 * ("df['made in'] == 'Canada'" in code)
    proposal = propose(make_preference_lm(liker), shirts, question,
                       settings=ProposerSettings(show="code", neural=False, orders=1))
    assert proposal.best.code == "df = df[df['made in'] == 'Canada']\n" + GOLD_ANSWER
    assert not any(p.has_neural_calls for p in proposal.programs)


def test_without_logprobs_the_votes_fallback_is_used(shirts):
    def respond(request, purpose):
        return ["A", "A", "B"]
    lm = ScriptedLM(respond, capabilities=Capabilities(api="chat"))
    proposal = propose(lm, shirts, SHIRTS_Q, settings=ProposerSettings(show="code", beam=1, max_filters=1))
    assert {s.method for s in proposal.steps} == {"choice_votes"}
    assert proposal.programs


def test_prompt_shows_the_table_with_its_cells_as_they_are(shirts):
    prompt = proposer_prompt(shirts, SHIRTS_Q, title="shirts", rows=3)
    assert "United States" in prompt.context and "made in" in prompt.context
    assert "Pure cotton" not in prompt.context and prompt.context.endswith(f"Question: {SHIRTS_Q}")
    assert "f_col" in prompt.instruction


@pytest.mark.parametrize("kwargs, message", [(dict(beam=0), "beam"), (dict(max_options=27), "max_options"),
                                             (dict(max_options=1), "max_options")])
def test_bad_settings(kwargs, message):
    with pytest.raises(ValueError, match=message):
        ProposerSettings(**kwargs)


def test_bad_input(shirts):
    with pytest.raises(ValueError, match="question"):
        propose(ScriptedLM([]), shirts, "  ")
    with pytest.raises(ValueError, match="row"):
        propose(ScriptedLM([]), shirts.iloc[0:0], SHIRTS_Q)


def test_options_can_be_shown_in_words(shirts, make_preference_lm):
    def liker(text):
        return 3.0 * (text == "the shirt with the highest sales")
    lm = make_preference_lm(liker)
    proposal = propose(lm, shirts, "which shirt sells best?",
                       settings=ProposerSettings(show="text", orders=1, max_filters=0))
    assert proposal.best.code == GOLD_ANSWER  # the program is still code; only the options are words
    assert "the shirt with the highest sales" in proposal.steps[0].shown
    assert GOLD_ANSWER in proposal.steps[0].options
    assert "sort_values" not in lm.requests[0].messages[1][1]
    both = propose(make_preference_lm(lambda t: 0.0), shirts, "which shirt sells best?",
                   settings=ProposerSettings(show="both", orders=1, max_filters=0))
    assert all("\n" in option for option in both.steps[0].shown)


def test_descriptions():
    from binder_py.discriminate.ops import Aggregate, Count, NeuralFilter, ProposedCode, Select, ValueFilter
    program = ProposedCode(Aggregate("sales", "sum"), (ValueFilter("price", ">", 30),
                                                       NeuralFilter("Is it in Asia?", "made in")))
    assert program.describe() == ("among the rows whose price is more than 30 and where, looking at made in, "
                                  "the answer to 'Is it in Asia?' is yes: the total sales")
    assert ProposedCode(Count()).describe() == "the number of rows"
    assert ProposedCode(Select("shirt", "last")).describe() == "the shirt in the last row"
