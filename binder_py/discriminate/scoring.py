"""Score given options (programs, program steps) under a language model.

Pangu (Gu et al., 2023) lets the LM *discriminate* among valid plans instead of
generating one. It scores a plan ``c`` for an utterance ``u`` as ``P(c | u)``. The
servers binder-py talks to (llama.cpp / xllamacpp, vLLM, OpenAI-compatible APIs)
do not return the log-probability of a given text (no prompt ``echo``), so two
formulations are offered, both built only on :mod:`binder_py.lm.types`:

``"choice"`` (default) — **multiple choice, one request.** The options are listed
under labels ``A``, ``B``, … and the model answers with one label. The
probabilities are read from ``top_logprobs`` of the **first generated token**
(several tokens that spell the same label, ``"A"`` and ``" A"``, are summed) and
renormalised over the labels. llama.cpp reports these alternatives from the model's
distribution before any grammar, so no grammar is sent then (on the embedded model a
grammar is checked against the whole 151k-token vocabulary and costs seconds); when
the label is read from sampled text (the votes fallback) generation is constrained to
the labels by a grammar where the model takes one. One forward pass over all options: the cheapest
formulation on CPU (1 generated token; the prompt is what costs), and the one a
0.5B model can do at all. Small models prefer early labels, so ``orders=2`` also
asks with the options reversed and averages the two log-probabilities per option.

``"pointwise"`` — **one yes/no judgement per option** (Pangu's semantic-matching
formulation for encoder and encoder-decoder LMs: one decoding step, the probability
of a designated token as the score). The prompt is the task, then one option and
"Does it answer the question? yes or no"; the score is
``log P(yes) − log(P(yes) + P(no))`` read from the first token's ``top_logprobs``
(variants such as ``"Yes"``/``" yes"`` summed). Options are judged independently, so
there is no label-position bias and no limit on how many are compared; the prompts
share the task prefix, which llama.cpp's prompt cache evaluates once, so each option
costs only its own tokens plus one generated token.

``"likelihood"`` — **forced decoding, one request per option.** The prompt asks for
the program; a grammar that matches exactly the option's text forces the model to
"generate" it, and the reported token log-probabilities (from the unconstrained
distribution, as above) give ``log P(option | prompt)``; the score is their mean
(length-normalised, so long programs are not penalised for their length). Needs a
grammar and log-probabilities; costs one generated token per option token (about
1 s per short program at 30 tokens/s). A server that reports probabilities *after*
the grammar gives every forced token log-probability 0; that is detected and raised.

Models without log-probabilities: with ``fallback="votes"`` (default) the choice
prompt is sampled ``vote_samples`` times (temperature 0.8) and the label counts,
smoothed, become the probabilities (method ``"choice_votes"``); with
``fallback="error"`` a :class:`ScoringUnavailable` is raised.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from binder_py.lm.types import Choice, LanguageModel, LMError, LMRequest

__all__ = [
    "LABELS",
    "ChoicePrompt",
    "OptionScore",
    "Scoring",
    "ScoringUnavailable",
    "score_options",
    "choice_grammar",
    "literal_grammar",
    "label_logprobs",
]

LABELS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"

Method = Literal["auto", "choice", "pointwise", "likelihood"]
Fallback = Literal["votes", "error"]

DEFAULT_INSTRUCTION = ("You are given a table, a question about it and candidate Python (pandas) programs. "
                       "Choose the program that answers the question correctly. Answer with its letter only.")
DEFAULT_JUDGE_INSTRUCTION = ("You are given a table, a question about it and one candidate Python (pandas) "
                             "program. Say whether the program computes the answer to the question. "
                             "Answer yes or no only.")
DEFAULT_WRITE_INSTRUCTION = ("Write a Python (pandas) program over the table `df` that answers the question. "
                             "Write only the program.")
_VOTE_TEMPERATURE = 0.8
_VOTE_SMOOTHING = 0.5  # added to every label count before normalising
FORCED_ZERO = -1e-6  # every forced token at least this likely: the server reported post-grammar probabilities


class ScoringUnavailable(LMError):
    """The model cannot score options this way (no log-probabilities / no grammar)."""


@dataclass(frozen=True)
class ChoicePrompt:
    """What the model is shown: the task (table + question) and how to answer.

    ``context`` is the table and the question as text; ``instruction`` says what to
    choose (system message for chat models, first paragraph for completion models);
    ``judge_instruction`` and ``write_instruction`` are used by the ``"pointwise"`` and
    ``"likelihood"`` methods instead.
    """

    context: str
    instruction: str = DEFAULT_INSTRUCTION
    write_instruction: str = DEFAULT_WRITE_INSTRUCTION
    judge_instruction: str = DEFAULT_JUDGE_INSTRUCTION


@dataclass(frozen=True)
class OptionScore:
    """One option's score.

    Attributes:
        index: its position in the options given.
        text: the option.
        logprob: log-probability (``"choice"``: normalised over the options, so the
            ``exp`` sum to 1; ``"likelihood"``: mean token log-probability).
        observed: the model reported this option; ``False`` when its value is a bound
            (a label missing from ``top_logprobs`` gets the smallest reported value)
            or, for votes, it was never sampled (smoothing only).
    """

    index: int
    text: str
    logprob: float
    observed: bool = True


@dataclass(frozen=True)
class Scoring:
    """Scores of all options, in the order given."""

    scores: tuple[OptionScore, ...]
    method: str  # "choice_logprobs" | "choice_votes" | "likelihood"
    requests: int
    warnings: tuple[str, ...] = ()

    def ranked(self) -> list[OptionScore]:
        """Best first; equal scores keep the given order."""
        return sorted(self.scores, key=lambda s: (-s.logprob, s.index))

    def probabilities(self) -> list[float]:
        """Softmax of the scores: the options' probabilities (``"choice"``: the model's own, renormalised)."""
        return _softmax([s.logprob for s in self.scores])

    def log_probabilities(self) -> list[float]:
        """Log-softmax of the scores (for ``"pointwise"``: ``log(P(yes)_i / Σ_j P(yes)_j)``)."""
        if not self.scores:
            return []
        norm = _logsumexp([s.logprob for s in self.scores])
        return [s.logprob - norm for s in self.scores]


# ----------------------------------------------------------------------------------- helpers


def _softmax(values: Sequence[float]) -> list[float]:
    if not values:
        return []
    top = max(values)
    exps = [math.exp(v - top) for v in values]
    total = sum(exps)
    return [e / total for e in exps]


def _logsumexp(values: Sequence[float]) -> float:
    top = max(values)
    return top + math.log(sum(math.exp(v - top) for v in values))


def _gbnf_literal(text: str) -> str:
    escaped = (text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
               .replace("\r", "\\r").replace("\t", "\\t"))
    return f'"{escaped}"'


def choice_grammar(n_options: int) -> str:
    """GBNF: one label among the first ``n_options``, optionally after one space."""
    labels = " | ".join(_gbnf_literal(label) for label in LABELS[:n_options])
    return f'root ::= " "? ({labels})'


def literal_grammar(text: str) -> str:
    """GBNF matching exactly ``text``."""
    return f"root ::= {_gbnf_literal(text)}"


def _label_of(token: str, labels: str) -> str | None:
    cleaned = token.strip().rstrip(".):")
    return cleaned if len(cleaned) == 1 and cleaned in labels else None


def label_logprobs(choice: Choice, n_options: int) -> dict[str, float]:
    """Log-probability per label from the first token's ``top_logprobs`` (variants summed).

    Labels absent from the alternatives are absent from the result.
    """
    labels = LABELS[:n_options]
    if not choice.top_logprobs:
        return {}
    found: dict[str, list[float]] = {}
    for token, logprob in choice.top_logprobs[0]:
        label = _label_of(token, labels)
        if label is not None and math.isfinite(logprob):
            found.setdefault(label, []).append(logprob)
    return {label: _logsumexp(lps) for label, lps in found.items()}


def _render_options(options: Sequence[str]) -> str:
    lines = []
    for label, option in zip(LABELS, options):
        body = option.strip("\n").splitlines() or [""]
        if len(body) == 1:
            lines.append(f"{label}. {body[0]}")
        else:
            lines.append(f"{label}.")
            lines.extend("    " + line for line in body)
    return "\n".join(lines)


def _choice_request(lm: LanguageModel, prompt: ChoicePrompt, options: Sequence[str], *, n: int,
                    temperature: float, top_logprobs: int, seed: int | None) -> LMRequest:
    labels = LABELS[:len(options)]
    question = (f"{prompt.context}\n\nOptions:\n{_render_options(options)}\n\n"
                f"Answer with one letter ({labels[0]}-{labels[-1]}).")
    caps = lm.capabilities
    want_logprobs = caps.logprobs and top_logprobs > 0
    # With log-probabilities only the first token's alternatives are read (llama.cpp reports them from the
    # distribution before the grammar), so a grammar would only cost time (it is checked against the whole
    # vocabulary); it is used when the label is read from the sampled text.
    grammar = choice_grammar(len(options)) if caps.grammar and not want_logprobs else None
    common = dict(n=n, temperature=temperature, max_tokens=1 if grammar or want_logprobs else 4, seed=seed,
                  logprobs=want_logprobs, top_logprobs=top_logprobs if want_logprobs else 0, grammar=grammar)
    if caps.chat:
        return LMRequest(messages=(("system", prompt.instruction), ("user", question)), **common)
    return LMRequest(prompt=f"{prompt.instruction}\n\n{question}\nAnswer:", **common)


# ----------------------------------------------------------------------------------- methods


def _no_top_logprobs(lm: LanguageModel) -> ScoringUnavailable:
    """A model that claims log-probabilities (``capabilities.logprobs``) sent none: many
    OpenAI-compatible servers ignore ``top_logprobs``."""
    return ScoringUnavailable(f"{lm.name} returned no log-probabilities although asked for them (top_logprobs), "
                              "and scoring options needs them: use a server that returns them (OpenAI, vLLM, "
                              "llama.cpp's server) or another --mode (binder, python)")


def _score_choice_logprobs(lm: LanguageModel, prompt: ChoicePrompt, options: Sequence[str], *, orders: int,
                           top_logprobs: int, purpose: str) -> Scoring:
    k = len(options)
    per_option: list[list[float]] = [[] for _ in range(k)]
    observed = [False] * k
    warnings: list[str] = []
    permutations = [list(range(k)), list(reversed(range(k)))][:max(1, min(orders, 2))]
    for order in permutations:
        shown = [options[i] for i in order]
        request = _choice_request(lm, prompt, shown, n=1, temperature=0.0, top_logprobs=top_logprobs, seed=0)
        choice = lm.complete(request, purpose=purpose, tags={"options": str(k)}).choices[0]
        if not choice.top_logprobs:
            raise _no_top_logprobs(lm)
        by_label = label_logprobs(choice, k)
        if not by_label:
            raise ScoringUnavailable(
                f"{lm.name} returned no label among the first token's top_logprobs; the model must report "
                "top log-probabilities (capabilities.logprobs) for choice scoring")
        floor = min(lp for _, lp in choice.top_logprobs[0]) if choice.top_logprobs else min(by_label.values())
        missing = [LABELS[pos] for pos in range(k) if LABELS[pos] not in by_label]
        if missing:
            warnings.append(f"labels {', '.join(missing)} not among the top {top_logprobs} alternatives: "
                            f"scored at the smallest reported log-probability ({floor:.2f})")
        raw = [by_label.get(LABELS[pos], floor) for pos in range(k)]
        norm = _logsumexp(raw)
        for pos, original in enumerate(order):
            per_option[original].append(raw[pos] - norm)
            observed[original] = observed[original] or LABELS[pos] in by_label
    means = [sum(v) / len(v) for v in per_option]
    norm = _logsumexp(means)
    scores = tuple(OptionScore(i, options[i], means[i] - norm, observed[i]) for i in range(k))
    return Scoring(scores, "choice_logprobs", len(permutations), tuple(warnings))


def _score_choice_votes(lm: LanguageModel, prompt: ChoicePrompt, options: Sequence[str], *, samples: int,
                        purpose: str) -> Scoring:
    k = len(options)
    request = _choice_request(lm, prompt, options, n=samples, temperature=_VOTE_TEMPERATURE, top_logprobs=0, seed=0)
    completion = lm.complete(request, purpose=purpose, tags={"options": str(k), "scoring": "votes"})
    counts = [0] * k
    unreadable = 0
    for choice in completion.choices:
        match = re.search(rf"\b([{LABELS[:k]}])\b", choice.text)
        if match:
            counts[LABELS.index(match.group(1))] += 1
        else:
            unreadable += 1
    total = sum(counts) + _VOTE_SMOOTHING * k
    scores = tuple(OptionScore(i, options[i], math.log((counts[i] + _VOTE_SMOOTHING) / total), counts[i] > 0)
                   for i in range(k))
    warnings = (f"{unreadable} of {len(completion.choices)} sampled answers named no option",) if unreadable else ()
    return Scoring(scores, "choice_votes", 1, warnings)


_YES = frozenset({"yes", "true"})
_NO = frozenset({"no", "false"})


def _yes_no_logprobs(choice: Choice) -> tuple[float | None, float | None]:
    yes: list[float] = []
    no: list[float] = []
    for token, logprob in (choice.top_logprobs or ((),))[0]:
        word = token.strip().strip(".").casefold()
        if math.isfinite(logprob):
            (yes if word in _YES else no if word in _NO else []).append(logprob)
    return (_logsumexp(yes) if yes else None), (_logsumexp(no) if no else None)


def _score_pointwise(lm: LanguageModel, prompt: ChoicePrompt, options: Sequence[str], *, top_logprobs: int,
                     purpose: str) -> Scoring:
    if not lm.capabilities.logprobs:
        raise ScoringUnavailable(f"{lm.name} cannot score options one by one: it returns no log-probabilities; "
                                 "use method='choice' (its votes fallback works without them)")
    scores = []
    warnings = []
    for i, option in enumerate(options):
        body = f"{prompt.context}\n\nProgram:\n{option}\n\nDoes this program answer the question? (yes or no)"
        common = dict(temperature=0.0, max_tokens=1, logprobs=True, top_logprobs=top_logprobs, seed=0)
        request = (LMRequest(messages=(("system", prompt.judge_instruction), ("user", body)), **common)
                   if lm.capabilities.chat else LMRequest(prompt=f"{prompt.judge_instruction}\n\n{body}\nAnswer:",
                                                          **common))
        choice = lm.complete(request, purpose=purpose, tags={"scoring": "pointwise"}).choices[0]
        if not choice.top_logprobs:
            raise _no_top_logprobs(lm)
        yes, no = _yes_no_logprobs(choice)
        if yes is None and no is None:
            raise ScoringUnavailable(f"{lm.name} put neither yes nor no among the first token's top_logprobs")
        if yes is None or no is None:
            floor = min(lp for _, lp in choice.top_logprobs[0])  # type: ignore[index]
            warnings.append(f"option {i}: {'yes' if yes is None else 'no'} not among the top {top_logprobs} "
                            f"alternatives: scored at the smallest reported log-probability ({floor:.2f})")
            yes, no = (floor if yes is None else yes), (floor if no is None else no)
        scores.append(OptionScore(i, option, yes - _logsumexp([yes, no]), True))
    return Scoring(tuple(scores), "pointwise", len(options), tuple(warnings))


def _score_likelihood(lm: LanguageModel, prompt: ChoicePrompt, options: Sequence[str], *, purpose: str) -> Scoring:
    caps = lm.capabilities
    if not (caps.logprobs and caps.grammar):
        raise ScoringUnavailable(f"{lm.name} cannot score by likelihood: it needs both a grammar and "
                                 "log-probabilities; use method='choice'")
    scores = []
    for i, option in enumerate(options):
        body = f"{prompt.context}\n\n{prompt.write_instruction}"
        common = dict(temperature=0.0, max_tokens=lm.count_tokens(option) + 16, logprobs=True,
                      grammar=literal_grammar(option), seed=0)
        request = (LMRequest(messages=(("user", body),), **common) if caps.chat
                   else LMRequest(prompt=body + "\n", **common))
        choice = lm.complete(request, purpose=purpose, tags={"scoring": "likelihood"}).choices[0]
        if choice.text != option:
            raise ScoringUnavailable(f"{lm.name} did not follow the forcing grammar (wrote {choice.text[:60]!r}); "
                                     "likelihood scoring needs a server that honours LMRequest.grammar")
        if choice.token_logprobs:
            lps = [lp for _, lp in choice.token_logprobs]
            if all(lp > FORCED_ZERO for lp in lps) and len(lps) > 1:
                raise ScoringUnavailable(f"{lm.name} reports probabilities after the grammar (every forced token "
                                         "has log-probability 0); use method='choice'")
            value = sum(lps) / len(lps)
        elif choice.mean_logprob is not None:
            value = choice.mean_logprob
        else:
            raise ScoringUnavailable(f"{lm.name} returned no log-probabilities although asked for them")
        scores.append(OptionScore(i, option, value, True))
    return Scoring(tuple(scores), "likelihood", len(options))


def score_options(lm: LanguageModel, prompt: ChoicePrompt, options: Sequence[str], *, method: Method = "auto",
                  fallback: Fallback = "votes", orders: int = 2, top_logprobs: int = 20, vote_samples: int = 8,
                  purpose: str = "discriminate") -> Scoring:
    """Score ``options`` (programs or program steps) for ``prompt`` under ``lm``.

    Args:
        lm: any :class:`~binder_py.lm.types.LanguageModel`; only ``lm.capabilities`` is read.
        prompt: the table and question as text, and the instructions.
        options: 1 to 26 distinct texts.
        method: ``"choice"`` (multiple choice, one request per order), ``"pointwise"``
            (a yes/no judgement per option), ``"likelihood"`` (forced decoding, one
            request per option) or ``"auto"`` (``"pointwise"`` when the model returns
            log-probabilities, else ``"choice"`` with its ``fallback``).
        fallback: without log-probabilities, ``"votes"`` samples the choice
            ``vote_samples`` times; ``"error"`` raises :class:`ScoringUnavailable`.
        orders: 1 (options as given) or 2 (also reversed, log-probabilities averaged:
            cancels most of a small model's preference for early labels).
        top_logprobs: alternatives asked for at the first token (≥ the options + a
            margin; OpenAI allows at most 20).

    Raises:
        ValueError: no options, more than 26, or repeated options.
        ScoringUnavailable: the model cannot score this way and ``fallback="error"``
            (or ``method="likelihood"`` without grammar and log-probabilities).
    """
    if not options:
        raise ValueError("score_options needs at least one option")
    if len(set(options)) != len(options):
        raise ValueError("score_options got the same option twice; de-duplicate the options first")
    if method not in ("auto", "choice", "pointwise", "likelihood"):
        raise ValueError(f"unknown scoring method {method!r}; choose auto, choice, pointwise or likelihood")
    if method == "auto":
        method = "pointwise" if lm.capabilities.logprobs else "choice"
    if len(options) > len(LABELS) and method == "choice":
        raise ValueError(f"multiple choice takes at most {len(LABELS)} options, got {len(options)}; "
                         "prune them first (the proposer keeps max_options per step) or use method='pointwise'")
    if len(options) == 1:
        return Scoring((OptionScore(0, options[0], 0.0, True),), "single", 0)
    if method == "likelihood":
        return _score_likelihood(lm, prompt, options, purpose=purpose)
    if method == "pointwise":
        return _score_pointwise(lm, prompt, options, top_logprobs=max(top_logprobs, 2), purpose=purpose)
    if lm.capabilities.logprobs:
        return _score_choice_logprobs(lm, prompt, options, orders=orders,
                                      top_logprobs=max(top_logprobs, 1), purpose=purpose)
    if fallback == "error":
        raise ScoringUnavailable(f"{lm.name} does not return log-probabilities (capabilities.logprobs is False); "
                                 "use a model that does, or fallback='votes'")
    return _score_choice_votes(lm, prompt, options, samples=max(vote_samples, 1), purpose=purpose)
