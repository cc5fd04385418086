"""Voting over the answers of sampled candidate programs (Binder, appendix A.3).

Every sampled program is run in the sandbox; each run becomes a :class:`VoteCandidate`.
:func:`vote` normalises every answer with :func:`binder_py.normalize.normalize_answer`
(so ``3``, ``3.0`` and ``"3"`` are one answer) and returns the winner, the full
distribution and a confidence.

Rules
-----
0. **Answers of the wrong shape** (:func:`shape_fit`, applied by the callers before
   :func:`vote`): a program whose answer is an ``f_col`` column itself (``per_row``: one
   answer per row, not an answer to the question) is set aside; and for a question that
   asks for a count, so is a program that answered anything but one number (several
   values, even equal ones; text that is not a number); and for a question that offers a
   choice between options it names ("2007 or 2012?"), so is a program whose answer is not
   one of the question's own words; and for a statement to verify (TabFact), so is a program
   whose answer is not one yes/no verdict; and for a question that asks which or who (a name),
   so is a program whose answer is a bare yes/no or true/false. The question's expectations
   are one :class:`AnswerShape` (built by the task profile). Only when at least one program
   that ran has a non-empty answer of the right shape: otherwise nothing is set aside. For a count
   question, a program that counted 0 is set aside too when another that kept its vote counted more
   than 0: a count of nothing is what a filter that matched no row gives ("Germany" where the table
   writes "FRG"), and WikiTQ dev answers 0 to 8 of its 650 count questions.
   Before that, in a task whose answers take the first line of a cell (WikiTQ), an answer from a cell
   of several lines is read as its first line (:meth:`AnswerShape.read`, applied by the callers).
   Then, among the programs the shape kept, :func:`sure_fit` sets aside a program one of whose ``f_col``
   calls had the model unsure of every row (each P(yes) within 0.5 ± 0.2: "Does it contain chemicals?"
   asked of a column of countries) when a program without such a call ran with a non-empty answer.
   Then :func:`polarity_fit` sets aside a program that drops
   the question's negation (``negation="drops"``: "with no chemicals" asked as "Does it contain
   chemicals?", the yes rows kept) when a program whose neural calls keep it ran with a non-empty
   answer.
1. **Who votes.** A candidate with ``ok=False`` (it raised, timed out, ...) abstains
   when ``drop_failed`` (default). A candidate whose normalised answer is empty
   (``None``, NaN, ``""``, empty list/Series/DataFrame) abstains when ``drop_empty``
   (default). A failed candidate that is kept votes for its normalised ``value``
   (usually ``None``, i.e. the empty answer, which then abstains too unless
   ``drop_empty=False``). ``voters`` and ``abstained`` count *programs*: a
   candidate counts ``count`` times.
2. **Counts.** ``count`` is how many sampled programs were identical (the program
   was executed once and its answer stands for all of them). Weights below are per
   candidate and are summed per normalised answer.
3. **Weights** per strategy:

   - ``"majority"``: ``count``.
   - ``"probability"``: ``count × exp(mean_logprob)``; ``count × 1`` when
     ``mean_logprob`` is ``None`` or NaN (so a candidate without a log-probability
     weighs as much as a certain one: give all or none).
   - ``"answer_biased"``: ``count × answer_weights.get(answer, 1.0)``. The keys of
     ``answer_weights`` are normalised with the same rules and the same ``yes_no``
     as the answers, and compared with :func:`binder_py.normalize.key_text` of the
     answer (the value for a scalar, values joined by ``" | "`` for a list). With
     ``yes_no=True``, ``"yes"``, ``"true"``, ``1`` and ``True`` all name the yes
     answer. For TabFact (the paper gives four votes to answer 1, *entailed*) use
     ``yes_no=True, answer_weights=TABFACT_ANSWER_WEIGHTS`` (``{"yes": 4.0}``).
   - ``"program_biased"``: ``count × neural_weight`` (default 10) for candidates
     whose program has neural calls, ``count × 1`` for the others (the paper weighs
     Binder programs ×10 on WikiTQ and MMQA).

4. **Winner**: the answer with the largest total weight. Weights equal to 9
   significant digits tie. Among tied answers: if *every* tied answer has a score from
   ``answer_scores`` (the model's log-probability of the answer itself given the table and
   question, :mod:`binder_py.discriminate.answers`), the highest wins; else if every tied
   answer has a log-probability (the count-weighted mean of its candidates'
   ``mean_logprob``, ignoring candidates without one), the highest wins; otherwise — or if
   those are equal too — the answer seen earliest wins (smallest ``order`` of its
   candidates, then position in the input sequence). ``answer_scores`` only orders ties:
   weights, shares and the confidence are the vote's.
5. **Result.** ``distribution`` lists every answer that got votes, sorted by weight
   (descending) with ties ordered by rule 4, so ``distribution[0]`` is the winner.
   ``share`` = answer weight / total weight; ``confidence`` = the winner's share
   (0.0 when the total weight is 0). The winner's ``display`` (its earliest
   candidate's display, see ``normalize_answer``) is ``VoteResult.value``.
   With no voters, ``value=None``, ``key=None``, ``confidence=0.0`` and an empty
   distribution.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

import pandas as pd

from binder_py.normalize import (NormalizedAnswer, is_excluded, is_one_number, is_quantities, is_several_values,
                                 is_verdict, is_yes_no_answer, key_text, names_option, normalize_answer)

__all__ = [
    "Strategy",
    "STRATEGIES",
    "DEFAULT_NEURAL_WEIGHT",
    "TABFACT_ANSWER_WEIGHTS",
    "AnswerShape",
    "VoteCandidate",
    "VoteShare",
    "VoteResult",
    "polarity_fit",
    "sure_fit",
    "shape_fit",
    "vote",
    "top_tie",
    "vote_closeness",
    "vote_prefix",
    "NEAR_TIE_MARGIN",
]

Strategy = Literal["majority", "probability", "answer_biased", "program_biased"]
STRATEGIES: tuple[str, ...] = get_args(Strategy)

#: Weight of a program with neural calls under ``strategy="program_biased"`` (paper: 10).
DEFAULT_NEURAL_WEIGHT = 10.0

#: TabFact answer bias from the paper (4 votes for entailed, 1 for refuted); use with ``yes_no=True``.
TABFACT_ANSWER_WEIGHTS: Mapping[str, float] = {"yes": 4.0, "no": 1.0}

_TIE_DIGITS = 9
#: a Series or table answer longer than this keeps its cells as they are (its answer is no cell of a
#: question's table, and reading it costs its size)
_FIRST_LINE_ROWS = 10_000


@dataclass(frozen=True)
class VoteCandidate:
    """The executed answer of one (or ``count`` identical) sampled program(s).

    Attributes:
        value: the program's answer (anything; normalised before voting).
        count: how many sampled programs were identical to this one (≥ 1).
        mean_logprob: mean token log-probability of the program, when the model gave it.
        has_neural_calls: the program calls the language model (weighs
            ``neural_weight`` under ``"program_biased"``).
        order: sampling position of the (first) program, 0-based; ties go to the
            earliest and :func:`vote_prefix` keeps ``order < k``.
        ok: the program ran without error.
        sample_orders: optional sampling positions of all ``count`` identical
            programs; only :func:`vote_prefix` uses it (to count how many of them
            fall in the prefix). Empty: all ``count`` programs are taken to be at ``order``.
        per_row: the program's answer is an ``f_col`` column itself
            (:func:`binder_py.language.program.answers_per_row`); see rule 0.
        negation: ``"keeps"`` when a neural call of the program asks about what the question negates
            and negates it, else ``"drops"`` when one asks about it without negating it, None when the
            program asks the model nothing about it that this reading follows
            (:func:`binder_py.language.negation.negation_polarity`); see rule 0.
        unsure: an ``f_col`` of the program had the model unsure of every one of its rows (at least two, every
            P(yes) within 0.5 ± 0.2: :func:`binder_py.neural.yes_scores.unsure_of_every_row`); see rule 0.
    """

    value: Any
    count: int = 1
    mean_logprob: float | None = None
    has_neural_calls: bool = False
    order: int = 0
    ok: bool = True
    sample_orders: tuple[int, ...] = ()
    per_row: bool = False
    negation: str | None = None
    unsure: bool = False


@dataclass(frozen=True)
class VoteShare:
    """One distinct (normalised) answer in a vote.

    Attributes:
        key: the normalised key (``()`` for the empty answer when empties vote).
        display: display value of the earliest candidate with this answer.
        weight: summed weight of its candidates under the strategy.
        count: number of programs (sum of ``count``) that gave this answer.
        share: ``weight / total weight`` (0.0 when the total is 0).
        candidate_orders: ``order`` of each candidate that gave it, ascending.
        mean_logprob: count-weighted mean of its candidates' ``mean_logprob``
            (``None`` when none of them has one).
        note: the first ``NormalizedAnswer.note`` among its candidates (why the
            answer is not ideal, e.g. the first column of a wide DataFrame).
        score: the model's log-probability of this answer given the table and question, when
            it was scored to break a tie (``answer_scores``); ``None`` otherwise.
    """

    key: tuple[str, ...]
    display: Any
    weight: float
    count: int
    share: float
    candidate_orders: list[int]
    mean_logprob: float | None = None
    note: str | None = None
    score: float | None = None


@dataclass(frozen=True)
class VoteResult:
    """The outcome of :func:`vote`.

    Attributes:
        value: display value of the winning answer, or ``None`` (no voters, or the
            empty answer won with ``drop_empty=False``).
        key: normalised key of the winner; ``None`` when nobody voted.
        confidence: winner's weight / total weight (vote share), 0.0 with no voters.
        distribution: every answer with its weight, sorted by weight (descending,
            ties in tie-break order); ``distribution[0]`` is the winner.
        voters: programs (sum of ``count``) that voted.
        abstained: programs (sum of ``count``) that did not (failed or empty).
        tied: the winner was decided by the tie-break rule.
        strategy: the strategy used.
    """

    value: Any
    key: tuple[str, ...] | None
    confidence: float
    distribution: list[VoteShare] = field(default_factory=list)
    voters: int = 0
    abstained: int = 0
    tied: bool = False
    strategy: str = "majority"

    def to_dict(self) -> dict[str, Any]:
        """Plain-data form (for JSON): keys become lists."""
        return {
            "value": self.value,
            "key": None if self.key is None else list(self.key),
            "confidence": self.confidence,
            "voters": self.voters,
            "abstained": self.abstained,
            "tied": self.tied,
            "strategy": self.strategy,
            "distribution": [
                {**dataclasses.asdict(s), "key": list(s.key)} for s in self.distribution
            ],
        }


@dataclass
class _Group:
    key: tuple[str, ...]
    display: Any
    first: tuple[int, int]  # (order, input position) of the earliest candidate
    note: str | None
    weight: float = 0.0
    count: int = 0
    orders: list[int] = field(default_factory=list)
    lp_sum: float = 0.0
    lp_count: int = 0
    score: float | None = None  # the answer's own score (answer_scores), when it has one

    @property
    def mean_logprob(self) -> float | None:
        return self.lp_sum / self.lp_count if self.lp_count else None


def _finite_logprob(x: float | None) -> float | None:
    if x is None:
        return None
    x = float(x)
    return None if math.isnan(x) else x


def _answer_weight_table(answer_weights: Mapping[Any, float] | None, yes_no: bool) -> dict[str, float]:
    table: dict[str, float] = {}
    for raw, w in (answer_weights or {}).items():
        w = float(w)
        if not w >= 0 or math.isinf(w):
            raise ValueError(f"answer weight for {raw!r} must be a finite number ≥ 0, got {w!r}")
        k = normalize_answer(raw, yes_no=yes_no).text
        if k in table and table[k] != w:
            raise ValueError(
                f"answer_weights gives {raw!r} weight {w} but an equivalent answer ({k!r}) weight {table[k]}"
            )
        table[k] = w
    return table


def _candidate_weight(
    c: VoteCandidate, norm: NormalizedAnswer, strategy: str, table: Mapping[str, float], neural_weight: float
) -> float:
    if strategy == "majority":
        return float(c.count)
    if strategy == "probability":
        lp = _finite_logprob(c.mean_logprob)
        return c.count * (1.0 if lp is None else math.exp(lp))
    if strategy == "answer_biased":
        return c.count * table.get(norm.text, 1.0)
    return c.count * (neural_weight if c.has_neural_calls else 1.0)  # program_biased


def _weight_class(weight: float) -> float:
    """Weights equal to :data:`_TIE_DIGITS` significant digits tie (the one rule :func:`vote`,
    :func:`top_tie` and :func:`vote_closeness` share)."""
    return float(f"{weight:.{_TIE_DIGITS}g}")


def _rank(groups: list[_Group]) -> tuple[list[_Group], bool]:
    """Sort groups: weight desc; each tie class by the answers' scores (if all have one), else by
    log-prob (if all have one), then earliest."""
    rounded = _weight_class
    classes: dict[float, list[_Group]] = {}
    for g in groups:
        classes.setdefault(rounded(g.weight), []).append(g)
    ranked: list[_Group] = []
    for w in sorted(classes, reverse=True):
        tied = classes[w]
        lps = [g.mean_logprob for g in tied]
        if all(g.score is not None for g in tied):
            tied.sort(key=lambda g: (-(g.score or 0.0), g.first))
        elif all(lp is not None for lp in lps):
            tied.sort(key=lambda g: (-(g.mean_logprob or 0.0), g.first))
        else:
            tied.sort(key=lambda g: g.first)
        ranked.extend(tied)
    top_tied = bool(ranked) and len(classes[rounded(ranked[0].weight)]) > 1
    return ranked, top_tied


@dataclass(frozen=True)
class AnswerShape:
    """What shape of answer a question wants (rule 0), as the task profile reads the question
    (:meth:`binder_py.tasks.profile.TaskProfile.answer_shape`).

    ``expects_number``: a count question (:func:`binder_py.normalize.is_count_question`) wants one
    number — a list of several values (even equal ones: a column of 1s is not a count), or text
    that is not a number, is the wrong shape. ``choice_question``: the text of a question that
    offers options (:func:`binder_py.normalize.is_choice_question`); an answer that is none of
    the values it names is the wrong shape (:func:`binder_py.normalize.names_option`: "34" for
    "kansas or kansas state?"). ``expects_verdict``: a statement to verify (TabFact) wants one
    yes/no verdict (:func:`binder_py.normalize.is_verdict`: "10" would otherwise win and be
    reported as False). ``expects_no_verdict``: a question that asks what, which, who, when or how
    (:func:`binder_py.normalize.asks_what_not_whether`) is never answered by a bare yes/no or true/false
    ("how long is the season?" — ``True``), not even when no other answer fits: such an answer never
    votes (:func:`shape_fit`; "which shirt sold best?" — ``False``). ``expects_name``: a question that
    asks which or who (:func:`binder_py.normalize.is_name_question`; the warning says so, and the
    proposer of discriminate mode proposes no count for it). ``echo_question``: the text of a question
    that asks for something it does not name (:func:`binder_py.normalize.asks_beyond_itself`:
    which/who/what/name questions that offer no options and count nothing); one value it names,
    other than a number, is not its answer ("against which team did Man United play at Emirates
    Stadium?" — "Man United"; "what is the name of the building listed after idaho state capitol?"
    — "idaho state capitol"). In WikiTQ such a gold answer is 2 of the 1,484 such dev questions and
    4 of the 2,239 test ones. ``expects_text``: a which/what/who question that asks for no quantity
    (:func:`binder_py.normalize.asks_for_a_name`) is not answered by numbers, dates or amounts
    (:func:`binder_py.normalize.is_quantities`: "which south american city has the smallest population?" —
    2011000; "which concert was the earliest?" — "April 12, 2025"; in WikiTQ dev 11 of the 861 such
    questions have numbers for gold answers, 1 a date ("what is the first entered date?"), none an amount). ``expects_one``: a question that asks for one value (which, who, what, not plural)
    (:func:`binder_py.normalize.asks_for_one`: "which japanese product has the highest rating?") is not
    answered by several different values (in WikiTQ dev 1 of 517 such questions has several gold
    answers). ``excluded``: what the question sets aside by name
    (:func:`binder_py.normalize.excluded_phrase`: "other than 1927 what year …?" — 1927) is not its
    answer, a number included."""

    expects_number: bool = False
    choice_question: str | None = None
    expects_verdict: bool = False
    expects_no_verdict: bool = False
    expects_name: bool = False
    expects_text: bool = False
    expects_one: bool = False
    echo_question: str | None = None
    excluded: str | None = None
    first_line: bool = False
    magnitude: bool = False

    def fits(self, candidate: VoteCandidate) -> bool:
        """Whether the candidate's answer has this shape (an ``f_col`` column itself never has)."""
        return self.misfit(candidate) is None

    def misfit(self, candidate: VoteCandidate) -> str | None:
        """Why the candidate's answer does not have this shape, in words a repair prompt can quote; None
        when it has."""
        value = candidate.value
        if candidate.per_row:
            return "it is the f_col column itself, one answer per row; the question asks about the table"
        if self.expects_number and not is_one_number(value):
            return "the question asks how many: answer with one number"
        if self.choice_question is not None and not names_option(self.choice_question, value):
            return "it names none of the options the question offers: answer with one of them"
        if self.expects_verdict and not is_verdict(value):
            return "the statement is true or false: answer with one verdict"
        if self.never_fits(candidate):
            return "it is a bare yes/no, and the question asks what, which, who, when or how: answer with what it asks"
        if self.expects_text and is_quantities(value):
            return ("it is a number, a date or an amount, and the question asks which, who or what: answer with the "
                    "name, e.g. the cell of the row it picks in the column that names the rows")
        if self.expects_one and is_several_values(value):
            return "it lists several values, and the question asks for one"
        if (self.echo_question is not None and not is_one_number(value)
                and names_option(self.echo_question, value)):
            return "it is a value the question itself names, and the question asks for another"
        if self.excluded is not None and is_excluded(self.excluded, value):
            return "it is what the question sets aside by name"
        return None

    def never_fits(self, candidate: VoteCandidate) -> bool:
        """Whether the candidate's answer can answer no question of this shape, so that it never votes
        (:func:`shape_fit`): a bare yes/no where the question asks what, which, who, when or how."""
        return self.expects_no_verdict and is_yes_no_answer(candidate.value)

    def read(self, value: Any) -> Any:
        """The answer as it votes. With ``first_line`` (the task's answers take the first line of a cell,
        :attr:`binder_py.tasks.profile.TaskProfile.first_line_of_cells`), a text of several lines, alone or
        in a list, is its first line that is not blank. With ``magnitude`` (the question asks by how much
        two things differ, :func:`binder_py.normalize.asks_for_a_magnitude`), a negative number, alone or
        as the one item of a list, is its absolute value (``12 - 1`` and ``1 - 12`` answer the same). Any
        other answer as it is."""
        value = _first_lines(value) if self.first_line else value
        return _magnitude(value) if self.magnitude else value

    def why_set_aside(self) -> str:
        """Why candidates of another shape did not vote, for the answer's warning."""
        if self.expects_number:
            return ("their answer was not one number (the question asks how many), was a count of 0 where other "
                    "programs counted something (a filter that matched no row), or was an f_col column "
                    "itself; other programs answered with one number")
        if self.expects_verdict:
            return ("their answer was not one verdict (true/false, yes/no) or was an f_col column itself; "
                    "other programs answered with a verdict")
        if self.choice_question is not None:
            return ("their answer was none of the options the question names, or was an f_col column "
                    "itself; other programs answered with one of the options")
        if self.expects_name:
            return ("their answer was a number where the question asks for a name (or a date or an amount), "
                    "several values where it asks for one, or one value the question itself names, or was an f_col "
                    "column itself; other programs answered otherwise")
        if self.expects_one:
            aside = ", or what it sets aside (\"other than …\")" if self.excluded is not None else ""
            return ("their answer was several values (the question asks for one), or one value the question "
                    f"itself names (it asks for something else){aside}, or was an f_col column itself; other "
                    "programs answered otherwise")
        if self.excluded is not None:
            return ("their answer was one value the question itself names, or what it sets aside (\"other "
                    "than …\"), or was an f_col column itself; other programs answered otherwise")
        if self.echo_question is not None:
            return ("their answer was one value the question itself names (it asks for something else), or was "
                    "an f_col column itself; other programs answered otherwise")
        return ("their answer was an f_col column itself (one answer per row, not an answer about the "
                "table); other programs answered otherwise")


def _first_line(text: str) -> str:
    lines = [line for line in text.splitlines() if line.strip()]
    return lines[0].strip() if len(lines) > 1 else text


def _magnitude(value: Any) -> Any:
    """A negative number's absolute value (alone, or the one item of a list or tuple); anything else as it is."""
    if isinstance(value, (list, tuple)) and len(value) == 1:
        item = _magnitude(value[0])
        return value if item is value[0] else type(value)([item])
    if isinstance(value, numbers.Real) and not isinstance(value, bool) and value < 0:
        return abs(value)
    return value


def _first_lines(value: Any) -> Any:
    """``value`` with each text of several lines (the text itself, an item of a list or tuple, a cell of
    a Series or table) cut to its first line that is not blank."""
    if isinstance(value, str):
        return _first_line(value)
    if isinstance(value, (list, tuple)) and any(isinstance(item, str) and "\n" in item for item in value):
        return type(value)(_first_line(item) if isinstance(item, str) else item for item in value)
    if isinstance(value, (pd.Series, pd.DataFrame)) and len(value) <= _FIRST_LINE_ROWS:
        return value.map(lambda item: _first_line(item) if isinstance(item, str) else item)
    return value


def sure_fit(candidates: Sequence[VoteCandidate]) -> list[VoteCandidate]:
    """The candidates that keep their vote given how sure the model was of their neural calls' rows (rule
    0): all but the ``unsure`` ones. Only when a candidate that is not unsure ran with a non-empty answer;
    otherwise every candidate is kept. Failed candidates are kept. Order is preserved."""
    if not any(c.ok and not c.unsure and not normalize_answer(c.value).is_empty for c in candidates):
        return list(candidates)
    return [c for c in candidates if not c.ok or not c.unsure]


def polarity_fit(candidates: Sequence[VoteCandidate]) -> list[VoteCandidate]:
    """The candidates that keep their vote given the question's negation (rule 0): all but those
    that drop it (``negation="drops"``: "with no chemicals" asked as "Does it contain chemicals?",
    the yes rows kept). Only when a candidate that keeps it (``negation="keeps"``: its neural calls
    negate it; a program that asks the model nothing about it is no such witness) ran with a
    non-empty answer; otherwise every candidate is kept. Failed candidates are kept. Order is
    preserved."""
    if not any(c.ok and c.negation == "keeps" and not normalize_answer(c.value).is_empty for c in candidates):
        return list(candidates)
    return [c for c in candidates if not c.ok or c.negation != "drops"]


def shape_fit(candidates: Sequence[VoteCandidate], shape: AnswerShape = AnswerShape()) -> list[VoteCandidate]:
    """The candidates that keep their vote given the shape of their answers (rule 0): those whose
    answer :meth:`AnswerShape.fits` the question's shape. Only when at least one candidate that
    ran has a non-empty answer of the right shape; otherwise every candidate is kept but those whose
    answer can answer no such question (:meth:`AnswerShape.never_fits`: a bare yes/no where the
    question asks what, which, who, when or how). Failed candidates are kept (``vote`` decides about
    them). Order is preserved."""
    candidates = [c for c in candidates if not (c.ok and shape.never_fits(c))]
    keep = [not c.ok or shape.fits(c) for c in candidates]
    if not any(c.ok and k and not normalize_answer(c.value).is_empty for c, k in zip(candidates, keep)):
        return list(candidates)
    if shape.expects_number and any(c.ok and k and _count_of(c.value) > 0 for c, k in zip(candidates, keep)):
        keep = [k and not (c.ok and _count_of(c.value) == 0) for c, k in zip(candidates, keep)]
    return [c for c, k in zip(candidates, keep) if k]


def _count_of(value: Any) -> float:
    """The number a one-number answer holds (NaN for any other answer)."""
    norm = normalize_answer(value)
    if len(norm.key) != 1:
        return math.nan
    try:
        return float(norm.key[0])
    except ValueError:
        return math.nan


def vote(
    candidates: Sequence[VoteCandidate],
    *,
    strategy: Strategy = "majority",
    yes_no: bool = False,
    answer_weights: Mapping[Any, float] | None = None,
    neural_weight: float = DEFAULT_NEURAL_WEIGHT,
    drop_empty: bool = True,
    drop_failed: bool = True,
    answer_scores: Mapping[tuple[str, ...], float] | None = None,
) -> VoteResult:
    """Vote on the normalised answers of ``candidates`` (exact rules in the module docstring).

    Args:
        candidates: one per distinct executed program, in any order.
        strategy: ``"majority"`` (weight = count), ``"probability"`` (count ×
            exp(mean_logprob), 1 when missing), ``"answer_biased"`` (count ×
            ``answer_weights`` of the normalised answer, default 1), or
            ``"program_biased"`` (count × ``neural_weight`` for programs with neural
            calls, count × 1 otherwise).
        yes_no: normalise answers as yes/no (``True``/``1``/``"yes"`` are one answer).
        answer_weights: per-answer weights for ``"answer_biased"``; keys are
            normalised like answers (e.g. ``{"yes": 4.0}`` with ``yes_no=True``).
        neural_weight: weight factor of programs with neural calls (``"program_biased"``).
        drop_empty: candidates with an empty answer do not vote.
        drop_failed: candidates with ``ok=False`` do not vote.
        answer_scores: a score per normalised answer key (higher is better) that orders answers
            tied on weight (rule 4): :func:`binder_py.discriminate.answers.score_answers`.

    Raises:
        ValueError: unknown strategy, ``count < 1``, negative or non-finite weights.
    """
    if strategy not in STRATEGIES:
        raise ValueError(f"unknown voting strategy {strategy!r}; choose one of {', '.join(STRATEGIES)}")
    if not neural_weight >= 0 or math.isinf(neural_weight):
        raise ValueError(f"neural_weight must be a finite number ≥ 0, got {neural_weight!r}")
    table = _answer_weight_table(answer_weights, yes_no) if strategy == "answer_biased" else {}

    groups: dict[tuple[str, ...], _Group] = {}
    voters = abstained = 0
    for pos, c in enumerate(candidates):
        if c.count < 1:
            raise ValueError(f"VoteCandidate.count must be at least 1, got {c.count} (order {c.order})")
        if not c.ok and drop_failed:
            abstained += c.count
            continue
        norm = normalize_answer(c.value, yes_no=yes_no)
        if norm.is_empty and drop_empty:
            abstained += c.count
            continue
        voters += c.count
        first = (c.order, pos)
        g = groups.get(norm.key)
        if g is None:
            g = groups[norm.key] = _Group(key=norm.key, display=norm.display, first=first, note=norm.note)
        elif first < g.first:
            g.display, g.first = norm.display, first
        g.note = g.note or norm.note
        g.weight += _candidate_weight(c, norm, strategy, table, neural_weight)
        g.count += c.count
        g.orders.append(c.order)
        lp = _finite_logprob(c.mean_logprob)
        if lp is not None:
            g.lp_sum += lp * c.count
            g.lp_count += c.count

    if not groups:
        return VoteResult(value=None, key=None, confidence=0.0, distribution=[], voters=voters,
                          abstained=abstained, tied=False, strategy=strategy)

    for key, score in (answer_scores or {}).items():
        if key in groups and score is not None and math.isfinite(score):
            groups[key].score = float(score)
    ranked, tied = _rank(list(groups.values()))
    total = sum(g.weight for g in ranked)
    distribution = [
        VoteShare(
            key=g.key,
            display=g.display,
            weight=g.weight,
            count=g.count,
            share=(g.weight / total) if total > 0 else 0.0,
            candidate_orders=sorted(g.orders),
            mean_logprob=g.mean_logprob,
            note=g.note,
            score=g.score,
        )
        for g in ranked
    ]
    winner = distribution[0]
    return VoteResult(
        value=winner.display,
        key=winner.key,
        confidence=winner.share,
        distribution=distribution,
        voters=voters,
        abstained=abstained,
        tied=tied,
        strategy=strategy,
    )


def vote_prefix(candidates: Sequence[VoteCandidate], k: int, *, shape: AnswerShape = AnswerShape(),
                **kwargs: Any) -> VoteResult:
    """Vote with only the first ``k`` sampled programs (for accuracy-vs-n analyses).

    Keeps candidates with ``order < k`` (``order`` is the 0-based sampling position),
    applies :func:`shape_fit`, :func:`sure_fit` and :func:`polarity_fit` to them (rule 0, with the
    question's ``shape``)
    and calls :func:`vote`
    with ``kwargs``. A candidate with ``sample_orders`` counts
    only its samples with position ``< k`` (its ``order`` becomes the smallest of
    them); without ``sample_orders`` its whole ``count`` is kept. ``k <= 0`` gives
    the no-voters result.
    """
    kept = sample_prefix(candidates, k)
    return vote(polarity_fit(sure_fit(shape_fit(kept, shape))), **kwargs)


def sample_prefix(candidates: Sequence[VoteCandidate], k: int) -> list[VoteCandidate]:
    """The candidates as they stood with only the first ``k`` sampled programs (see
    :func:`vote_prefix`): counts and orders cut to the sample positions below ``k``."""
    kept: list[VoteCandidate] = []
    for c in candidates:
        if c.sample_orders:
            inside = [o for o in c.sample_orders if o < k]
            if inside:
                kept.append(dataclasses.replace(c, count=len(inside), order=min(inside),
                                                sample_orders=tuple(inside)))
        elif c.order < k:
            kept.append(c)
    return kept


#: the runner-up's share within this of the winner's makes a near tie
NEAR_TIE_MARGIN = 0.10


def vote_closeness(distribution: Sequence[VoteShare], margin: float = NEAR_TIE_MARGIN) -> Literal["tie", "near_tie"] | None:
    """How close a vote was (the one rule every view uses): ``"tie"`` when the top two answers
    have equal weight (to 9 significant digits, as :func:`vote` compares them), ``"near_tie"``
    when the runner-up's share is within ``margin`` of the winner's, else ``None``."""
    if len(distribution) < 2:
        return None
    first, second = distribution[0], distribution[1]
    if _weight_class(first.weight) == _weight_class(second.weight):
        return "tie"
    return "near_tie" if first.share - second.share <= margin + 1e-12 else None


def top_tie(distribution: Sequence[VoteShare]) -> list[VoteShare]:
    """The answers sharing the top weight (as :func:`vote_closeness` compares weights): one entry when
    there is no tie, none for an empty vote."""
    if not distribution:
        return []
    top = _weight_class(distribution[0].weight)
    return [s for s in distribution if _weight_class(s.weight) == top]
