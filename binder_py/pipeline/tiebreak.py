"""Part of the vote stage: when the top of the vote is a tie, the model scores each tied answer given the
table and question (:mod:`binder_py.discriminate.answers`), and the vote orders the tie by those scores."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from binder_py.discriminate.answers import can_score_answers, scorable, score_answers
from binder_py.lm.types import Usage
from binder_py.normalize import key_text
from binder_py.pipeline.prompt import ASSUMED_CONTEXT_WINDOW
from binder_py.pipeline.settings import ties_are_scored
from binder_py.pipeline.state import QuestionState
from binder_py.prompting import build_e2e_prompt
from binder_py.prompting.templates import fill, load_template
from binder_py.prompting.e2e import format_answer
from binder_py.vote import VoteShare, top_tie

#: exemplars in the scoring prompt (each costs prompt tokens on every tied question)
SCORING_SHOTS = 1
#: tokens kept free beyond the scoring turn and the answer (the chat template's markers, the end of text)
_REPLY_MARGIN = 16


@dataclass
class TieScores:
    """The tied answers' scores by normalised key (empty: nothing scored), and what scoring cost."""

    scores: dict[tuple[str, ...], float] = field(default_factory=dict)
    usage: Usage = field(default_factory=Usage)
    warnings: tuple[str, ...] = ()


def scores_ties(state: QuestionState) -> bool:
    """Whether a tie at the top of this question's vote is scored (:func:`ties_are_scored`)."""
    return ties_are_scored(state.settings.score_ties, state.settings.mode, can_score_answers(state.lm))


def scoring_prompt(state: QuestionState, answers: Sequence[str] = ()) -> str | tuple[tuple[str, str], ...]:
    """What the tied ``answers`` are scored after: for a chat model, the question's program-writing
    turns with its last turn asking for the answer itself instead of a program (its marker line
    replaced by ``prompts/templates/tie_answer.txt``, in the same turn: some chat templates refuse two
    user turns in a row), whose prefix the runtime still holds evaluated from the sampling; otherwise
    (a completion model, the e2e mode, no prompt, or no room left in the context for the turn and the
    longest answer) the end-to-end prompt with :data:`SCORING_SHOTS` exemplar, fitted to the context."""
    lm, settings, profile = state.lm, state.settings, state.profile
    prompt = state.prompt
    if (lm.capabilities.chat and prompt is not None and prompt.messages and prompt.messages[-1][0] == "user"
            and settings.mode != "e2e"):
        turn = fill(load_template("tie_answer"), {"task": profile.e2e_task, "answer_format": profile.e2e_answer_format})
        *earlier, (role, last) = prompt.messages
        if prompt.marker and last.endswith(prompt.marker):
            last = last[: -len(prompt.marker)]
        else:
            last += "\n"
        needed = (prompt.prompt_tokens + lm.count_tokens(turn)
                  + max((lm.count_tokens(text) for text in answers), default=0) + _REPLY_MARGIN)
        if needed <= (lm.context_window or ASSUMED_CONTEXT_WINDOW):
            return (*earlier, (role, last + turn))
    return e2e_scoring_prompt(state)


def e2e_scoring_prompt(state: QuestionState) -> str:
    """The end-to-end prompt (:data:`SCORING_SHOTS` exemplar), fitted to the model's context."""
    lm, settings, profile = state.lm, state.settings, state.profile
    return build_e2e_prompt(profile.name, state.table, state.question, state.title,
                            table_style=settings.table_style, selection=settings.selection,
                            num_shots=SCORING_SHOTS, count_tokens=lm.count_tokens,
                            context_window=lm.context_window or ASSUMED_CONTEXT_WINDOW,
                            max_table_rows=profile.effective_table_rows(lm, settings.table_rows),
                            lowercase=state.lowercased, tables=state.tables or None).text


def score_tie(state: QuestionState, distribution: Sequence[VoteShare]) -> TieScores:
    """The scores of the answers tied at the top of ``distribution`` (nothing when there is no tie)."""
    tied = top_tie(distribution)
    if len(tied) < 2:
        return TieScores()
    lm = state.lm
    # as the end-to-end prompt's exemplars write answers (a statement's verdict as true/false)
    texts = [format_answer(state.profile.final_value(share.display, key_text(share.key))) for share in tied]
    if not all(map(scorable, texts)):  # the vote orders a tie by scores only when every tied answer has one
        return TieScores()
    try:
        state.services.say(f"{len(tied)} answers tied; {lm.name} scores each given the table")
        prompt = scoring_prompt(state, texts)
        scored = score_answers(lm, prompt, texts, tags=state.tags)
        if not isinstance(prompt, str) and scored.too_long:  # the chat turns counted more than their text
            scored = score_answers(lm, e2e_scoring_prompt(state), texts, tags=state.tags)
    except Exception as error:  # noqa: BLE001 - scoring only refines the vote: the answer stands without it
        return TieScores(warnings=(f"the tied answers could not be scored ({type(error).__name__}: {error}); "
                                   "the tie was broken as without scores",))
    scores = {share.key: value for share, text in zip(tied, texts)
              if (value := scored.scores.get(text)) is not None}
    if len(scores) < len(tied):  # the vote orders a tie by scores only when every tied answer has one
        return TieScores(usage=scored.usage, warnings=(
            f"{len(tied) - len(scores)} of the {len(tied)} tied answers could not be scored by {lm.name}; "
            "the tie was broken as without scores",))
    return TieScores(scores, scored.usage)
