"""A symbolic proposer: grow valid Binder-Python programs over a table; the LM picks the best ``k``.

Pangu's search (Gu et al., 2023, Algorithm 1) with Binder-Python as the plan
language. The proposer enumerates only programs that are valid by construction —
real columns, real cells, numbers from the question, well-formed ``f_col`` calls —
and the model only *discriminates* among them (:mod:`.scoring`), which a 0.5B model
does far better than writing a program.

Search
------
1. **Answer step.** Candidates are final expressions over the whole table
   (:func:`.candidates.final_candidates`: count, sum/mean/max/min, the row with the
   largest/smallest value, a column's values / first / last). The model scores them;
   the best ``beam`` are kept.
2. **Condition steps** (up to ``max_filters``): each kept program gets one more
   condition line in front of its answer (:func:`.candidates.filter_candidates`:
   equality with a mentioned cell, a comparison with a number of the question, an
   ``f_col`` yes/no question derived from the question). Every candidate is a whole,
   runnable program, so the model always judges whole programs.
3. **Scores.** Two regimes, by the scoring method (:mod:`.scoring`):

   - *absolute* (``"pointwise"``, the default when the model returns
     log-probabilities, and ``"likelihood"``): a program's score is its own
     (``log P(yes | program)``), comparable across steps, exactly Pangu's setting.
     The extensions of the whole beam are scored; the best ``beam`` become the next
     beam; the search **stops when the best extension does not beat the best
     program so far** (Pangu's termination check).
   - *relative* (``"choice"``, and its votes fallback without log-probabilities):
     each prompt's options are the program itself ("stop here") and its extensions,
     and a program's score is the sum of the log-probabilities of the choices that
     built it, each renormalised over its prompt's options
     (:meth:`.scoring.Scoring.log_probabilities`) — the log-probability of the program
     under the model's step-wise choices. Extending can only lower a score, so an
     extension already below the best finished program is dropped.

   The same conditions in another order are one program.

Bounds: at most ``max_options`` (≤ 26) options per step (the candidates with the
best lexical prior, see :mod:`.candidates`), so at most ``1 + beam × max_filters``
scoring steps per question — each one prompt per option with ``"pointwise"``
scoring (the default when the model returns log-probabilities; the prompts share
their prefix), or ``orders`` prompts with ``"choice"`` — and at most ``max_programs``
programs returned.

The programs are returned best first with their scores; the caller runs them in the
sandbox and votes (``binder_py.discriminate.rescore.likelihood_vote`` with ``β = 1``
and ``mean_logprob = score`` sums the probability of the programs per answer).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

import pandas as pd

from binder_py.discriminate.candidates import filter_candidates, final_candidates
from binder_py.discriminate.ops import Filter, NeuralFilter, ProposedCode
from binder_py.discriminate.scoring import LABELS, ChoicePrompt, Fallback, Method, Scoring, score_options
from binder_py.lm.types import LanguageModel
from binder_py.prompting.table_format import format_table
from binder_py.vote import AnswerShape

Show = Literal["code", "text", "both"]

__all__ = ["ProposerSettings", "ProposedProgram", "StepTrace", "Proposal", "propose", "proposer_prompt"]

INSTRUCTION = ("You are given a table (the pandas DataFrame `df`), a question about it, and candidate Python "
               "programs. In a program, f_col(question, columns) asks a yes/no question about each row's cells "
               "in those columns. Choose the program that computes the answer to the question. Answer with the "
               "letter of that program only.")


@dataclass(frozen=True)
class ProposerSettings:
    """How wide and deep the search goes (see the module docstring for the bounds)."""

    beam: int = 3
    max_filters: int = 2
    max_options: int = 8
    max_programs: int = 10
    orders: int = 2
    method: Method = "auto"
    fallback: Fallback = "votes"
    neural: bool = True  # offer f_col conditions (False: pure-pandas programs only)
    table_rows: int = 10  # rows of the table shown in the prompt
    show: Show = "text"  # what an option is: the program, its description in words, or both

    def __post_init__(self) -> None:
        if self.beam < 1 or self.max_programs < 1 or self.max_filters < 0:
            raise ValueError("ProposerSettings: beam and max_programs must be ≥ 1 and max_filters ≥ 0")
        if self.show not in ("code", "text", "both"):
            raise ValueError(f"ProposerSettings.show must be code, text or both, got {self.show!r}")
        if not 2 <= self.max_options <= len(LABELS):
            raise ValueError(f"ProposerSettings.max_options must be between 2 and {len(LABELS)}, "
                             f"got {self.max_options}")


@dataclass(frozen=True)
class ProposedProgram:
    """A ranked program.

    Attributes:
        code: Binder-Python text (run it in the sandbox).
        score: log-probability of the choices that built it (≤ 0).
        probability: ``exp(score)`` normalised over the returned programs.
        has_neural_calls: it contains ``f_col`` calls.
        rank: 0 for the best.
    """

    code: str
    score: float
    probability: float
    has_neural_calls: bool
    rank: int


@dataclass(frozen=True)
class StepTrace:
    """One prompt of the search, for ``--explain``.

    ``stage`` is ``"answer"`` or ``"condition"``; ``base`` the program extended
    (``None`` for the answer step, and for absolute scores, where a step scores the
    extensions of the whole beam); ``options`` the candidate programs with their
    ``probabilities``; ``shown`` what the model saw for each (the code, or words, see
    ``ProposerSettings.show``); ``kept`` the programs that stayed in the search.
    """

    stage: str
    base: str | None
    options: tuple[str, ...]
    shown: tuple[str, ...]
    probabilities: tuple[float, ...]
    method: str
    kept: tuple[str, ...]
    warnings: tuple[str, ...] = ()


@dataclass
class Proposal:
    """What :func:`propose` found: programs best first, and how."""

    question: str
    programs: list[ProposedProgram]
    steps: list[StepTrace] = field(default_factory=list)
    requests: int = 0

    @property
    def best(self) -> ProposedProgram | None:
        return self.programs[0] if self.programs else None


def proposer_prompt(table: pd.DataFrame, question: str, *, title: str | None = None, rows: int = 10) -> ChoicePrompt:
    """The table (its first ``rows`` rows, cells as they are) and the question, with the proposer's instruction."""
    text = format_table(table, title, style="binder", max_rows=rows, lowercase=False)
    return ChoicePrompt(context=f"{text}\n\nQuestion: {question}", instruction=INSTRUCTION)


def _shown(programs: list[ProposedCode], show: Show) -> list[str]:
    """The options' text; programs whose description collides are shown with their code too."""
    if show == "code":
        return [p.code for p in programs]
    texts = [p.describe() for p in programs]
    if show == "both" or len(set(texts)) < len(texts):
        return [f"{t}\n{p.code}" for t, p in zip(texts, programs)]
    return texts


def _logsumexp(a: float, b: float) -> float:
    top = max(a, b)
    return top + math.log(math.exp(a - top) + math.exp(b - top))


Found = dict[tuple[object, frozenset[Filter]], tuple[ProposedCode, float]]


def _key(program: ProposedCode) -> tuple[object, frozenset[Filter]]:
    return program.final, frozenset(program.filters)


def _merge(found: Found, program: ProposedCode, score: float) -> None:
    key = _key(program)
    if key in found:
        kept, previous = found[key]
        found[key] = (kept, _logsumexp(previous, score))
    else:
        found[key] = (program, score)


def _record(steps: list[StepTrace], stage: str, base: ProposedCode | None, programs: list[ProposedCode],
            scoring: Scoring, kept: list[str]) -> None:
    steps.append(StepTrace(stage=stage, base=None if base is None else base.code,
                           options=tuple(p.code for p in programs), shown=tuple(s.text for s in scoring.scores),
                           probabilities=tuple(scoring.probabilities()), method=scoring.method,
                           kept=tuple(kept), warnings=scoring.warnings))


def _resolved_method(lm: LanguageModel, method: Method) -> Method:
    if method == "auto":
        return "pointwise" if lm.capabilities.logprobs else "choice"
    return method


def _ranked_programs(found: Found, limit: int) -> list[ProposedProgram]:
    best = sorted(found.values(), key=lambda v: -v[1])[:limit]
    top = max((v for _, v in best), default=0.0)
    total = sum(math.exp(v - top) for _, v in best)
    return [ProposedProgram(code=p.code, score=v, probability=math.exp(v - top) / total if total > 0 else 0.0,
                            has_neural_calls=any(isinstance(f, NeuralFilter) for f in p.filters), rank=i)
            for i, (p, v) in enumerate(best)]


def propose(lm: LanguageModel, table: pd.DataFrame, question: str, *, title: str | None = None,
            settings: ProposerSettings = ProposerSettings(), shape: AnswerShape | None = None) -> Proposal:
    """Enumerate valid programs for ``question`` over ``table`` and rank them with ``lm``.

    ``table`` should be prepared (:func:`binder_py.tables.prepare_table`: numeric
    columns are numbers). Raises ``ValueError`` for an empty question or a table
    without rows or columns, and whatever :func:`.scoring.score_options` raises
    (``ScoringUnavailable`` with ``fallback="error"``, LM errors).
    """
    if not question.strip():
        raise ValueError("propose needs a non-empty question")
    if table.empty or len(table.columns) == 0:
        raise ValueError("propose needs a table with at least one row and one column")
    prompt = proposer_prompt(table, question, title=title, rows=settings.table_rows)
    method = _resolved_method(lm, settings.method)
    proposal = Proposal(question, [])

    def score(programs: list[ProposedCode]) -> Scoring:
        result = score_options(lm, prompt, _shown(programs, settings.show), method=method,
                               fallback=settings.fallback, orders=settings.orders)
        proposal.requests += result.requests
        return result

    finals = [ProposedCode(c.step) for c in final_candidates(table, question, limit=settings.max_options,
                                                              shape=shape)]
    if not finals:
        return proposal
    search = _search_absolute if method in ("pointwise", "likelihood") else _search_relative
    found = search(table, question, finals, score, proposal.steps, settings)
    proposal.programs = _ranked_programs(found, settings.max_programs)
    return proposal


def _search_absolute(table: pd.DataFrame, question: str, finals: list[ProposedCode],
                     score: Callable[[list[ProposedCode]], Scoring], steps: list[StepTrace],
                     settings: ProposerSettings) -> Found:
    """Pangu's loop for scores that compare across steps (pointwise, likelihood): a program's score is its own."""
    found: Found = {}
    scoring = score(finals)
    for program, s in zip(finals, scoring.scores):
        found[_key(program)] = (program, s.logprob)
    ranked = scoring.ranked()[: settings.beam]
    beam = [finals[s.index] for s in ranked]
    _record(steps, "answer", None, finals, scoring, [p.code for p in beam])
    best = ranked[0].logprob
    for _ in range(settings.max_filters):
        candidates: list[ProposedCode] = []
        for program in beam:
            for c in filter_candidates(table, question, program, limit=settings.max_options - 1,
                                       neural=settings.neural):
                extended = program.with_filter(c.step)
                if _key(extended) not in found and all(_key(extended) != _key(x) for x in candidates):
                    candidates.append(extended)
        if not candidates:
            break
        scoring = score(candidates)
        for program, s in zip(candidates, scoring.scores):
            found[_key(program)] = (program, s.logprob)
        ranked = scoring.ranked()[: settings.beam]
        _record(steps, "condition", None, candidates, scoring,
                [candidates[s.index].code for s in ranked if s.logprob > best])
        if ranked[0].logprob <= best:
            break  # Pangu's termination: no longer program beats the best so far
        best = ranked[0].logprob
        beam = [candidates[s.index] for s in ranked]
    return found


def _search_relative(table: pd.DataFrame, question: str, finals: list[ProposedCode],
                     score: Callable[[list[ProposedCode]], Scoring], steps: list[StepTrace],
                     settings: ProposerSettings) -> Found:
    """Beam search over decisions for scores relative to one prompt's options (multiple choice, votes)."""
    scoring = score(finals)
    ranked = scoring.ranked()[: settings.beam]
    logp = scoring.log_probabilities()
    beam = [(finals[s.index], logp[s.index]) for s in ranked]
    _record(steps, "answer", None, finals, scoring, [finals[s.index].code for s in ranked])

    done: Found = {}
    for _ in range(settings.max_filters):
        extended: Found = {}
        for program, base_score in beam:
            extra = filter_candidates(table, question, program, limit=settings.max_options - 1,
                                      neural=settings.neural)
            if not extra:
                _merge(done, program, base_score)
                continue
            options = [program] + [program.with_filter(c.step) for c in extra]
            scoring = score(options)
            logp = scoring.log_probabilities()
            _merge(done, program, base_score + logp[0])
            for i in range(1, len(options)):
                _merge(extended, options[i], base_score + logp[i])
            best_done = max(v for _, v in done.values())
            _record(steps, "condition", program, options, scoring,
                    [options[i].code for i in range(len(options)) if i == 0 or base_score + logp[i] >= best_done])
        best_done = max((v for _, v in done.values()), default=-math.inf)
        survivors = sorted((v for v in extended.values() if v[1] >= best_done), key=lambda v: -v[1])
        beam = survivors[: settings.beam]
        if not beam:
            break
    for program, value in beam:
        _merge(done, program, value)
    return done
