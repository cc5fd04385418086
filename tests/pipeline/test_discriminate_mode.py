"""Mode discriminate: the proposer's programs run and vote by their scores (a scripted model)."""

from __future__ import annotations

import sys
from pathlib import Path

from binder_py import Binder
from binder_py.neural import CallableBackend

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "discriminate"))
from conftest import preference_lm  # noqa: E402

QUESTION = "which is the best-selling shirt made in North America and with no chemicals?"
NORTH_AMERICA = {"mexico", "united states", "canada"}


def prefer(text: str) -> float:
    t = text.lower()
    return 2.0 * ("north america" in t) + 2.0 * ("chemical" in t) + 3.0 * ("shirt with the highest sales" in t)


def answer_row(question: str, row: dict[str, str]) -> str:
    if "north america" in question.lower():
        return "yes" if row.get("made in", "").lower() in NORTH_AMERICA else "no"
    if "chemical" in question.lower():
        shirt = row.get("shirt", "").lower()
        return "yes" if any(w in shirt for w in ("cotton", "linen")) and "resin" not in shirt else "no"
    return "no"


def test_discriminate_mode_answers_with_proposed_programs():
    binder = Binder(lm=preference_lm(prefer), neural=CallableBackend.per_row(answer_row), mode="discriminate",
                    progress=False)
    answer = binder.ask("examples/shirts.csv", QUESTION)
    assert answer.value == "pure cotton oxford shirt"
    assert answer.candidates and {c.origin for c in answer.candidates} == {"propose"}
    winner = answer.winner
    assert winner is not None and "f_col" in winner.program and "sort_values('sales'" in winner.program
    steps = answer.prompt["proposal"]
    assert steps[0]["stage"] == "answer" and len(steps[0]["options"]) == len(steps[0]["probabilities"])
    assert answer.usage.requests > 0  # the proposer's scoring requests are counted


def test_likelihood_vote_asks_for_log_probabilities(shirts_path=Path("examples/shirts.csv")):
    from binder_py.lm import ScriptedLM

    lm = ScriptedLM(lambda request, purpose: "df['shirt'].iloc[0]")
    Binder(lm=lm, n=2, vote="likelihood", progress=False).ask(shirts_path, "which shirt?")
    assert lm.requests[0].logprobs


def test_proposed_programs_are_called_proposed_in_every_view():
    from binder_py.answer import ProgramCounts
    from binder_py.notebook import answer_html

    binder = Binder(lm=preference_lm(prefer), neural=CallableBackend.per_row(answer_row), mode="discriminate",
                    progress=False)
    answer = binder.ask("examples/shirts.csv", QUESTION)
    n = len(answer.candidates)
    assert answer.counts.sentence(answer.mode).startswith(f"{n} program(s) proposed ({n} distinct)")
    assert f"{n} program(s) proposed" in answer.explain()
    html = answer_html(answer)
    # every proposed program was labelled "sampled once (end to end)", as if e2e mode had sampled it
    assert "end to end" not in html and "sampled once" not in html
    assert "Winning program <span class=\"muted\">(proposed, rank " in html
    assert ProgramCounts(2, 1, 0, 0, 2).sentence("binder").startswith("2 program(s) sampled (1 distinct)")


def test_an_n_given_in_discriminate_mode_is_said_not_to_apply():
    from dataclasses import replace

    from binder_py.vote import VoteShare

    binder = Binder(lm=preference_lm(prefer), neural=CallableBackend.per_row(answer_row), mode="discriminate",
                    progress=False)
    assert not any("not used in discriminate mode" in w for w in binder.ask("examples/shirts.csv", QUESTION).warnings)
    answer = binder.ask("examples/shirts.csv", QUESTION, n=3)  # n was ignored without a word
    assert any(w.startswith("n=3 is not used in discriminate mode") for w in answer.warnings)
    near = replace(answer, distribution=[VoteShare(key=("a",), display="a", weight=5, count=1, share=0.52,
                                                   candidate_orders=[0]),
                                         VoteShare(key=("b",), display="b", weight=4.6, count=1, share=0.48,
                                                   candidate_orders=[1])])
    assert near.near_tie and "larger n" not in near.closeness_sentence()  # n does not change the proposer's programs
    assert "larger n" in replace(near, mode="binder").closeness_sentence()
