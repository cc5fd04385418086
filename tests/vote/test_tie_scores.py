"""A tie at the top of the vote is broken by the model's score of each tied answer given the table and
question (binder_py/discriminate/answers.py, binder_py/pipeline/tiebreak.py), not by the earliest sample;
the scores only order the tie, are recorded, and a report's re-vote orders it the same way."""

from __future__ import annotations

import json
import math
import re

import pandas as pd
import pytest

from binder_py.ask import Binder
from binder_py.lm import ScriptedLM
from binder_py.lm.types import Capabilities, Choice
from binder_py.runs.report import record_vote
from binder_py.vote import VoteCandidate, vote

TABLE = pd.DataFrame({"city": ["Oslo", "Rome", "Lima"], "people": [0.7, 2.8, 10.0]})
SCORING = Capabilities(api="chat", logprobs=True, grammar=True)
#: the model's log-probability of each answer text, as the scripted model reports it
LOGPROBS = {"3": -4.0, "2": -0.5}


def forced_text(request) -> str:
    """The text a literal grammar forces (``root ::= "..."``)."""
    return json.loads(re.fullmatch(r'root ::= (".*")', request.grammar.strip()).group(1))


def responder(follow_grammar: bool = True):
    def respond(request, purpose):
        if purpose != "score-answers":
            return ["len(df)", "df.shape[1]"]  # 3, then 2: a tie, the earliest (3) wins without scores
        text = forced_text(request)
        shown = text if follow_grammar else "something else"
        return Choice(shown, token_logprobs=((text, LOGPROBS[text]), ("<|im_end|>", -0.1)))
    return respond


def test_scores_order_a_tie_and_change_no_weight():
    candidates = [VoteCandidate("a", order=0), VoteCandidate("b", order=1), VoteCandidate("c", order=2, count=2)]
    plain = vote(candidates[:2])
    scored = vote(candidates[:2], answer_scores={("b",): -1.0, ("a",): -2.0})
    assert plain.value == "a" and scored.value == "b" and scored.tied
    assert [s.weight for s in scored.distribution] == [s.weight for s in plain.distribution]
    assert scored.confidence == plain.confidence and scored.distribution[0].score == -1.0
    # scores order ties only: a heavier answer wins whatever its score
    assert vote(candidates, answer_scores={("a",): -9.0, ("b",): -1.0, ("c",): -20.0}).value == "c"
    # a tie where not every answer has a score is broken as without scores
    assert vote(candidates[:2], answer_scores={("b",): -1.0}).value == "a"


def test_a_model_that_can_score_breaks_the_tie_by_its_scores():
    lm = ScriptedLM(responder(), capabilities=SCORING)
    answer = Binder(lm=lm, n=2, progress=False, cache=False).ask(TABLE, "how many cities?")
    assert answer.value == 2 and answer.tie
    # each answer's log-probability, its end of reply included, over the square root of its tokens
    assert [s.score for s in answer.distribution] == [pytest.approx(-0.6 / math.sqrt(2)), pytest.approx(-4.1 / math.sqrt(2))]
    scoring = [r for r, purpose, _ in lm.calls if purpose == "score-answers"]
    assert sorted(forced_text(r) for r in scoring) == ["2", "3"]
    # the program-writing turns (the table and the question), then a turn asking for the answer itself:
    # the runtime still holds the turns it evaluated for the sampling, so a tied answer costs few tokens
    parse = next(r for r, purpose, _ in lm.calls if purpose == "parse")
    last = parse.messages[-1][1]
    assert "how many cities?" in last and "lima" in last.lower() and last.endswith("\nNeuralPandas:")
    for r in scoring:  # the same turns, the last one's marker line replaced by the request for the answer
        assert r.messages[:-1] == parse.messages[:-1]
        assert r.messages[-1] == ("user", last[: -len("NeuralPandas:")] + "Now answer the question yourself, using "
                                  'only the table, without a program. Reply with the answer; separate several values '
                                  'with " | ".')
    assert answer.usage.requests == 3  # the programs' request and the two scores
    assert "picked by the model's log-probability of each tied answer" in answer.closeness_sentence()
    # the report's re-vote of the recorded answer orders the tie the same way
    record = answer.to_json()
    assert record_vote(record, 2, {"task": "analyst", "mode": "binder"}).value == 2


def test_without_the_means_or_the_wish_to_score_the_earliest_sample_wins():
    cannot = ScriptedLM(responder())  # no grammar, no log-probabilities
    assert Binder(lm=cannot, n=2, progress=False, cache=False).ask(TABLE, "how many cities?").value == 3
    assert all(purpose != "score-answers" for _, purpose, _ in cannot.calls)
    unwanted = ScriptedLM(responder(), capabilities=SCORING)
    answer = Binder(lm=unwanted, n=2, progress=False, cache=False, score_ties=False).ask(TABLE, "how many cities?")
    assert answer.value == 3 and all(purpose != "score-answers" for _, purpose, _ in unwanted.calls)
    assert "earliest sample" in answer.closeness_sentence()


def test_a_server_that_ignores_the_grammar_leaves_the_tie_to_the_earliest_sample_and_says_so():
    lm = ScriptedLM(responder(follow_grammar=False), capabilities=SCORING)
    answer = Binder(lm=lm, n=2, progress=False, cache=False).ask(TABLE, "how many cities?")
    assert answer.value == 3 and all(s.score is None for s in answer.distribution)
    assert any("tied answers could not be scored" in w for w in answer.warnings), answer.warnings


def test_no_tie_no_scoring():
    lm = ScriptedLM(lambda request, purpose: ["len(df)", "len(df)"], capabilities=SCORING)
    answer = Binder(lm=lm, n=2, progress=False, cache=False).ask(TABLE, "how many cities?")
    assert answer.value == 3 and all(purpose != "score-answers" for _, purpose, _ in lm.calls)


def test_a_statement_s_tied_verdicts_are_scored_as_the_prompt_writes_them():
    """TabFact: the vote's yes/no is forced as true/false, as the end-to-end prompt's answers are written."""
    lm = ScriptedLM(lambda request, purpose: (["True", "False", "False", "False", "False"] if purpose != "score-answers"
                                              else Choice(forced_text(request),
                                                          token_logprobs=((forced_text(request), -1.0),))),
                    capabilities=SCORING)
    Binder(lm=lm, n=5, progress=False, cache=False, task="tabfact").ask(TABLE, "lima has the most people.")
    forced = sorted(forced_text(r) for r, purpose, _ in lm.calls if purpose == "score-answers")
    assert forced == ["false", "true"]  # 1 yes (weight 4 under TabFact's vote) against 4 no: a tie


def test_scoring_that_fails_loses_neither_the_answer_nor_the_cost():
    calls = []

    def respond(request, purpose):
        if purpose != "score-answers":
            return ["len(df)", "df.shape[1]"]
        calls.append(request)
        if len(calls) == 2:
            raise RuntimeError("server hiccup")  # not an LMError: a model of the user's own
        return Choice(forced_text(request), token_logprobs=((forced_text(request), -1.0),))

    answer = Binder(lm=ScriptedLM(respond, capabilities=SCORING), n=2, progress=False, cache=False).ask(
        TABLE, "how many cities?")
    assert answer.value == 3 and answer.usage.requests == 2  # the programs' request and the one score made
    assert any("1 of the 2 tied answers could not be scored" in w for w in answer.warnings), answer.warnings

    from binder_py.lm.types import LMUnavailable

    calls.clear()

    def unavailable(request, purpose):
        if purpose == "score-answers" and calls:
            raise LMUnavailable("the server went away")
        return respond(request, purpose)

    answer = Binder(lm=ScriptedLM(unavailable, capabilities=SCORING), n=2, progress=False, cache=False).ask(
        TABLE, "how many cities?")
    assert answer.value == 3 and answer.usage.requests == 2  # the programs' request and the one score made
    assert any("1 of the 2 tied answers could not be scored" in w for w in answer.warnings), answer.warnings


def test_a_tie_with_an_answer_that_cannot_be_scored_sends_no_scoring_request():
    lm = ScriptedLM(lambda request, purpose: ["'x' * 300", "len(df)"], capabilities=SCORING)
    answer = Binder(lm=lm, n=2, progress=False, cache=False).ask(TABLE, "what is the value?")
    assert answer.tie and all(purpose != "score-answers" for _, purpose, _ in lm.calls)


def test_the_report_says_how_the_ties_went_with_and_without_the_scores(tmp_path):
    from pathlib import Path

    from binder_py.runs.report import Run, format_markdown, run_metrics, tie_summary

    answer = Binder(lm=ScriptedLM(responder(), capabilities=SCORING), n=2, progress=False, cache=False).ask(
        TABLE, "how many columns?")
    record = {**answer.to_json(), "id": "q1", "gold": ["2"], "official": True}
    run = Run("r", Path(tmp_path), {"task": "wikitq", "mode": "binder", "n": 2}, [record])
    assert tie_summary(run) == {"judged_by": "official", "tied": 1, "scored": 1, "right": 1, "right_unscored": 0}
    markdown = format_markdown([run_metrics(run)])
    assert "## Ties at the top of the vote" in markdown and "| r | official | 1 | 1 | 1 | 0 |" in markdown
    untied = Run("u", Path(tmp_path), run.config, [{**record, "candidates": record["candidates"][:1]}])
    assert tie_summary(untied) is None


def test_a_completion_model_scores_after_the_end_to_end_prompt():
    completion = Capabilities(api="completion", logprobs=True, grammar=True)

    def respond(request, purpose):
        if purpose != "score-answers":
            return ["len(df)", "df.shape[1]"]
        text = forced_text(request)
        return Choice(text, token_logprobs=((text, LOGPROBS[text.strip()]), ("\n", -0.1)))

    lm = ScriptedLM(respond, capabilities=completion)
    answer = Binder(lm=lm, n=2, progress=False, cache=False).ask(TABLE, "how many cities?")
    assert answer.value == 2
    scoring = [r for r, purpose, _ in lm.calls if purpose == "score-answers"]
    assert scoring and all(r.messages is None and r.prompt.rstrip().endswith("A:") for r in scoring)
    assert sorted(forced_text(r) for r in scoring) == [" 2", " 3"]


def test_without_room_in_the_context_the_end_to_end_prompt_is_used(monkeypatch):
    from binder_py.pipeline import tiebreak

    monkeypatch.setattr(tiebreak, "_REPLY_MARGIN", 10**6)  # no room after the program-writing turns
    lm = ScriptedLM(responder(), capabilities=SCORING)
    answer = Binder(lm=lm, n=2, progress=False, cache=False).ask(TABLE, "how many cities?")
    assert answer.value == 2
    scoring = [r for r, purpose, _ in lm.calls if purpose == "score-answers"]
    assert scoring and all(len(r.messages) == 1 and r.messages[0][1].rstrip().endswith("A:") for r in scoring)


def test_a_chat_prompt_the_model_finds_too_long_is_retried_with_the_end_to_end_prompt():
    from binder_py.lm.types import LMContextTooLong

    plain = responder()

    def respond(request, purpose):
        if purpose == "score-answers" and len(request.messages) > 1:  # the program-writing turns
            raise LMContextTooLong("the prompt does not fit")
        return plain(request, purpose)

    lm = ScriptedLM(respond, capabilities=SCORING)
    answer = Binder(lm=lm, n=2, progress=False, cache=False).ask(TABLE, "how many cities?")
    assert answer.value == 2 and [s.score for s in answer.distribution] == [pytest.approx(-0.6 / math.sqrt(2)), pytest.approx(-4.1 / math.sqrt(2))]
    scored = [r for r, purpose, _ in lm.calls if purpose == "score-answers" and len(r.messages) == 1]
    assert scored and all(r.messages[0][1].rstrip().endswith("A:") for r in scored)


def test_answers_are_scored_between_their_sum_and_their_mean():
    """Summed, a long answer lost to a short one whatever the table said (gold "bizen-mikado" lost to
    "okayama" at -10.4 against -8.7, 6 tokens against 3); averaged, a long number won for its nearly
    determined later digits (118656 over 4 for "how many products cost more than $1,000?", -27.3 over 7
    tokens against -9.6 over 2). The sum is divided by the square root of the tokens."""
    from binder_py.discriminate.answers import score_answers

    logprobs = {"okayama": [-4.0, -4.0, -0.7], "bizen - mikado": [-3.0, -2.0, -2.0, -1.5, -1.5, -0.4],
                "4": [-9.5, -0.1], "1 1 8 6 5 6": [-9.0, -9.0, -3.0, -3.0, -3.0, -0.2, -0.1]}

    def respond(request, purpose):
        text = forced_text(request)
        return Choice(text, token_logprobs=tuple((str(i), lp) for i, lp in enumerate(logprobs[text])))

    lm = ScriptedLM(respond, capabilities=SCORING)
    scored = score_answers(lm, (("user", "which?"),), list(logprobs)).scores
    assert scored == {text: pytest.approx(sum(lps) / math.sqrt(len(lps))) for text, lps in logprobs.items()}
    assert scored["bizen - mikado"] > scored["okayama"]  # summed: -10.4 < -8.7
    assert scored["4"] > scored["1 1 8 6 5 6"]  # averaged: -4.8 < -3.9
