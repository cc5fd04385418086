"""Score a question's candidate answers under the language model: Pangu's discrimination applied to
the answers the programs gave, to break ties in the vote.

When the vote's top is a tie (two or more answers with the same weight: with the embedded model
and n = 5, about one question in four), the earliest sample used to win. Instead, the model that
wrote the programs scores each tied answer ``a`` as ``log P(a | table, question)``: for a chat model,
the question's own program-writing prompt followed by a turn that asks for the answer itself
(``prompts/templates/tie_answer.txt``: the runtime finds the program-writing turns evaluated in a
slot, so a tied answer costs only that turn and its own tokens); otherwise the end-to-end prompt
(:func:`binder_py.prompting.build_e2e_prompt`, one exemplar, the table as the parse prompt shows
it). The answer is forced as the model's reply by a grammar that matches exactly its text;
the score is the sum of the forced tokens' log-probabilities, the end of the reply included (so an
answer is not favoured for being a prefix of a longer one), divided by the square root of their number.
The sum alone (until the twenty-fourth session) favours the shorter answer whatever the table says;
the mean favours the longer one, since after a number's or a list's first tokens the rest are nearly
determined (118656 over 4 for "how many products cost more than $1,000?"); the square root lies
between them, as the length penalties of beam search do (docs/DISCRIMINATE.md gives the measurement). A model reads a small table better than
it writes a program over it, and choosing among given answers is what a small model does well
(``../shared/papers/pangu-dont-generate-discriminate.txt``).

Only models that take a grammar and report log-probabilities (``Capabilities.grammar`` and
``.logprobs``: the embedded model, llama.cpp servers) can score; with others the tie is broken as
before (higher program log-probability, else the earliest sample). A model that reports the
probabilities after the grammar (every forced token at probability 1) scores nothing either.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from dataclasses import dataclass

from binder_py.discriminate.scoring import FORCED_ZERO, literal_grammar
from binder_py.lm.types import LanguageModel, LMContextTooLong, LMRequest, Usage

__all__ = ["AnswerScores", "can_score_answers", "scorable", "score_answers"]

#: the longest answer text scored (a longer one is left unscored: it would cost a token per token)
MAX_ANSWER_CHARS = 200


@dataclass(frozen=True)
class AnswerScores:
    """Each answer text's log-probability after the prompt, divided by the square root of its tokens (None:
    not scored), and the usage of the requests."""

    scores: dict[str, float | None]
    usage: Usage
    #: a request was refused as longer than the model's context (the answers it left unscored may be
    #: scored after a shorter prompt)
    too_long: bool = False


def scorable(text: str) -> bool:
    """Whether an answer text can be scored (not empty, at most :data:`MAX_ANSWER_CHARS` characters)."""
    return bool(text.strip()) and len(text) <= MAX_ANSWER_CHARS


def can_score_answers(lm: LanguageModel) -> bool:
    """Whether ``lm`` can score given answers (it takes a grammar and reports log-probabilities)."""
    return lm.capabilities.grammar and lm.capabilities.logprobs


def score_answers(lm: LanguageModel, prompt: str | Sequence[tuple[str, str]], answers: Sequence[str], *,
                  purpose: str = "score-answers", tags: Mapping[str, str] | None = None) -> AnswerScores:
    """Each of ``answers`` (texts as the end-to-end prompt's exemplars write them) forced as the reply to
    ``prompt`` (a text, or chat turns for a chat model); its score is the sum of its tokens'
    log-probabilities, the end of the reply included, divided by the square root of their number. An answer that cannot be scored (:func:`scorable`), whose request failed (whatever the model raised: scoring only refines a vote), or
    that the model could not be made to write (the server did not follow the grammar) is not scored
    (None); the usage counts every request that was answered."""
    usage = Usage()
    scores: dict[str, float | None] = {}
    too_long = False
    # chat turns as given, a text as one user turn for a chat model, else a completion prompt ending with "A:"
    turns = tuple(prompt) if not isinstance(prompt, str) else (("user", prompt),) if lm.capabilities.chat else None
    for text in dict.fromkeys(answers):
        if not scorable(text):
            scores[text] = None
            continue
        forced = text if turns is not None else " " + text
        common = dict(temperature=0.0, max_tokens=lm.count_tokens(forced) + 8, logprobs=True,
                      grammar=literal_grammar(forced), seed=0)
        request = (LMRequest(messages=turns, **common) if turns is not None
                   else LMRequest(prompt=str(prompt), **common))
        try:
            completion = lm.complete(request, purpose=purpose, tags=tags)
        except LMContextTooLong:
            scores[text], too_long = None, True
            continue
        except Exception:  # noqa: BLE001 - an LMError, or a user's own model failing: this answer is unscored
            scores[text] = None
            continue
        usage += completion.usage
        choice = completion.choices[0]
        logprobs = [lp for _, lp in choice.token_logprobs or ()]
        if choice.text != forced or not logprobs or (len(logprobs) > 1 and all(lp > FORCED_ZERO for lp in logprobs)):
            scores[text] = None
            continue
        scores[text] = sum(logprobs) / math.sqrt(len(logprobs))
    return AnswerScores(scores, usage, too_long)
