"""The row-by-row neural backend, for small models: each distinct row of an ``f_col`` is one
short chat turn after a FIXED prefix (instruction + demonstrations), and a yes/no answer is
read from the next token's log-probabilities instead of a copied table.

Why: the paper's "QA map" prompt asks the model to copy the table with one more column. A
0.5B–1.5B model copies badly and answers the same for every row (measured in
docs/RESULTS.md); asked about one cell at a time it separates the rows. Because the prefix
never changes (no retrieval), the runtime evaluates it once and keeps it cached across rows,
calls and questions (:mod:`binder_py.lm.local` keeps one slot per prompt prefix), so a row
costs only its own few tokens plus one generated token.

How an answer is read, by the call's answer type (:mod:`binder_py.neural.answer_types`):

* yes/no: ``max_tokens=1`` with the top log-probabilities; P(yes) is the summed probability
  of every spelling of "yes" (``Yes``, `` yes``, …) against the same for "no"; unknown when
  neither is among the top tokens. The answer is a :class:`~binder_py.neural.yes_scores.ScoredYesNo`
  (P(yes) kept), read yes or no against the threshold of the call that reads it (centred on its
  rows: :mod:`binder_py.neural.yes_scores`). Models without log-probabilities generate under the
  type's grammar instead.
* **Contextual calibration, off by default** (Zhao et al. 2021, "Calibrate before use"):
  ``calibrate=True`` first asks the call's question of content-free rows (every cell ``N/A``,
  then every cell empty: two more short requests on the same cached prefix), takes their mean
  P(yes) as the model's prior q for the question, and answers yes when ``p > q`` (the
  calibrated P(yes), ``(p/q) / (p/q + (1-p)/(1-q))``, is shown beside the raw one). Measured on
  108 labelled cells (``python -m binder_py.bench.yes_no_cells``, docs/LM.md) it answered
  *worse* than ``p > 0.5`` with both embedded models, so the plain threshold is the default.
* a yes/no question that only compares the call's one column with a number ("Is the enrollment
  less than 600?", "Is the run time less than 1:19?"): the rows whose cell holds such a number are
  answered by computing (:mod:`binder_py.neural.comparisons`), not asked; the others are asked. So
  is one that only asks whether the cell is one of the column's own values ("Is the city Holon?":
  :mod:`binder_py.neural.equalities`), or in which year, decade or month its date falls ("Is it in
  1986?": :mod:`binder_py.neural.dates`).
* number, date, one of a set, free text: a short generation, under the type's GBNF grammar
  when the model takes one, read by the parser everywhere (:func:`enforce` downstream).

``f_val`` (one answer from a sub-table) keeps the table prompt of
:class:`~binder_py.neural.lm_backend.LMNeuralBackend`, which this backend holds, with FIXED
demonstrations (the pool's first ones, not retrieved), so that its instruction and
demonstrations are also evaluated once and then found in a slot.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from importlib import resources
from typing import Any

from binder_py.errors import BinderError
from binder_py.lm.types import Choice, LanguageModel, LMContextTooLong, LMRequest, Usage
from binder_py.neural.answer_types import (META_KEY, UNKNOWN, AnswerKind, AnswerType, question_answer_type)
from binder_py.neural.backends import NeuralAnswer
from binder_py.neural.computed import computed_answers
from binder_py.neural.lm_backend import LMNeuralBackend
from binder_py.neural.render import one_line
from binder_py.neural.requests import NeuralRequest, classify, shown_key
from binder_py.neural.yes_scores import ScoredYesNo

INSTRUCTION = ("Answer a question about one row of a table, using only what its cells say and what you know. "
               "Reply with the answer alone: yes or no for a yes/no question, a bare number for a quantity, "
               "a date as YYYY-MM-DD, otherwise a few words. Reply unknown when the row does not tell.")

#: tokens of a short typed answer (a number, a date, a choice, a few words)
ANSWER_TOKENS = 24
#: log-probabilities asked for the one token of a yes/no answer
TOP_LOGPROBS = 10
#: the content-free cell values whose mean P(yes) is a yes/no question's prior (each fills every cell)
CONTENT_FREE = ("N/A", "")
#: the prior is kept inside these bounds, so that one extreme reading cannot decide every row
PRIOR_BOUNDS = (0.02, 0.98)


@dataclass(frozen=True)
class RowDemo:
    """One demonstration: a question about one row's cells, and its answer."""

    question: str
    cells: tuple[tuple[str, str], ...]
    answer: str


def load_row_demos(name: str = "row_demos.jsonl") -> list[RowDemo]:
    """The fixed demonstrations (``prompts/neural/row_demos.jsonl``)."""
    text = resources.files("prompts").joinpath("neural", name).read_text(encoding="utf-8")
    demos = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
            demos.append(RowDemo(str(item["question"]), tuple((str(k), str(v)) for k, v in item["cells"].items()),
                                 str(item["answer"])))
        except (ValueError, KeyError, AttributeError) as error:
            raise BinderError(f"prompts/neural/{name} line {number} is not a row demonstration "
                              f"({{\"question\", \"cells\", \"answer\"}}): {error}") from None
    return demos


#: a row whose request does not fit the model's context (left unanswered, with a warning)
_TOO_LONG = object()


def row_turn(question: str, cells: Sequence[tuple[str, str]], *, question_first: bool = True) -> str:
    """The user turn for one row: the question, then its cells, one ``column: value`` line each
    (``question_first=False``: the cells, then the question).

    The question comes first so that the rows of one call share it with the fixed prefix: the
    runtime then evaluates only each row's cells (108 labelled cells: 42% fewer evaluated tokens;
    docs/BENCHMARKS.md). Asked last, the question is answered better on labelled cells (325 of
    them, ``python -m binder_py.bench.yes_no_cells``: 276 against 260 right with the 1.5B model,
    188 against 179 with the 0.5B one), but end to end it gained nothing on 100 unseen WikiTQ
    questions and 91 analyst questions and lost the quick start's question, so the cheaper turn
    stays (docs/LANGUAGE.md, "Why the question comes first"). Every part is on one line (a cell
    has no tab, CR or LF already; here no other line break either, such as U+2028 or \\x85), so a
    cell cannot add a ``Question:`` line of its own."""
    lines = [f"{one_line(str(column))}: {one_line(str(value))}" for column, value in cells]
    asked = f"Question: {one_line(question)}"
    return "\n".join([asked, *lines] if question_first else [*lines, asked])


def yes_probability(choice: Choice) -> float | None:
    """P(yes | yes or no) from the first generated token's top log-probabilities; None when
    neither word is among them."""
    if not choice.top_logprobs:
        return None
    totals = {"yes": 0.0, "no": 0.0}
    for token, logprob in choice.top_logprobs[0]:
        word = token.strip().lower()
        if word in totals:
            totals[word] += math.exp(logprob)
    both = totals["yes"] + totals["no"]
    if not 0 < both < math.inf:  # neither word, or a reading that is no probability (a non-finite log-prob)
        return None
    return totals["yes"] / both


def calibrated_yes_probability(p_yes: float, prior: float | None) -> float:
    """P(yes) after dividing out the question's prior ``prior`` (the mean P(yes) of content-free
    rows): ``(p/q) / (p/q + (1-p)/(1-q))``, which is above 0.5 exactly when ``p > q``. No prior:
    ``p_yes`` unchanged."""
    if prior is None:
        return p_yes
    low, high = PRIOR_BOUNDS
    q = min(max(prior, low), high)
    yes, no = p_yes / q, (1.0 - p_yes) / (1.0 - q)
    return yes / (yes + no)


def fixed_prefix(demos: Sequence[RowDemo], *, question_first: bool = True) -> tuple[tuple[str, str], ...]:
    """The instruction and the demonstrations as chat turns."""
    turns: list[tuple[str, str]] = [("system", INSTRUCTION)]
    for demo in demos:
        turns += [("user", row_turn(demo.question, demo.cells, question_first=question_first)),
                  ("assistant", demo.answer)]
    return tuple(turns)


class RowwiseNeuralBackend:
    """Answer ``f_col`` row by row after a fixed, cached prefix (see the module's docstring);
    ``f_val`` with the table prompt of :class:`LMNeuralBackend`."""

    def __init__(self, lm: LanguageModel, *, demos: list[RowDemo] | None = None, max_workers: int | None = None,
                 title: str | None = None, calibrate: bool = False, question_first: bool = True):
        self.lm = lm
        self.calibrate = calibrate
        self.question_first = question_first  # False: the question after the cells (for comparison)
        protocol = "rows-calibrated" if calibrate else "rows"
        self.name = f"lm-{protocol}{'' if question_first else '-question-last'}:{lm.name}"
        self.cache_id = self.name
        self.prefetch = True
        self.dedup = True
        self.demos = load_row_demos() if demos is None else demos
        self.max_workers = max(1, max_workers or lm.capabilities.parallel_requests)
        self.table_backend = LMNeuralBackend(lm, title=title, fixed_demos=True)
        self._prefix = fixed_prefix(self.demos, question_first=question_first)

    def prefix(self) -> tuple[tuple[str, str], ...]:
        """The fixed chat turns every row's request starts with (the same for every call)."""
        return self._prefix

    def answer(self, request: NeuralRequest) -> NeuralAnswer:
        if request.kind != "col":
            return self.table_backend.answer(request)
        answer_type = request.meta.get(META_KEY)
        if not isinstance(answer_type, AnswerType):
            answer_type = question_answer_type(request.question)
        result = NeuralAnswer()
        if not request.rows:
            return result
        prefix = self.prefix()
        tags = {"kind": "col", "question": request.question[:200], "protocol": "rows"}
        if request.site is not None:
            tags["site"] = str(request.site)
        if answer_type.kind is AnswerKind.YES_NO:  # a comparison with a number, or with a cell: computed, not asked
            computed, lines = computed_answers(request.question, request.columns, request.rows, request.keys)
            result.answers.update(computed)
            result.raw_outputs.extend(lines)
        asked = [i for i, key in enumerate(request.keys) if key not in result.answers]
        if not asked:
            return result
        by_logprobs = answer_type.kind is AnswerKind.YES_NO and self.lm.capabilities.logprobs
        prior: float | None = None
        if by_logprobs and self.calibrate:
            prior, usage = self._yes_prior(prefix, request, tags)
            result.usage += usage
            shown = "none (neither yes nor no among the likeliest tokens)" if prior is None else f"{prior:.2f}"
            result.raw_outputs.append(f"prior P(yes) of a content-free row: {shown}")

        def ask(index: int) -> tuple[str, Any, str, Usage]:
            cells = list(zip(request.columns, request.rows[index]))
            messages = (*prefix, ("user", row_turn(request.question, cells, question_first=self.question_first)))
            try:
                if by_logprobs:
                    return (request.keys[index], *self._yes_no_row(messages, prior, tags))
                return (request.keys[index], *self._typed_row(messages, answer_type, tags))
            except LMContextTooLong:  # one long cell (a review, an article) must not fail the whole call
                return request.keys[index], _TOO_LONG, "does not fit the model's context", Usage()

        unanswered: list[str] = []
        with ThreadPoolExecutor(max_workers=min(self.max_workers, len(asked))) as pool:
            for key, answer, raw, usage in pool.map(ask, asked):
                if answer is _TOO_LONG:  # unanswered, as the table prompt leaves such a row: not cached
                    result.warnings.append(f"row {shown_key(key)} does not fit the model's context")
                else:
                    result.answers[key] = answer
                    if answer is None or answer == UNKNOWN:
                        unanswered.append(f"{shown_key(key)}: {raw[:120] or '(no text)'}")
                result.raw_outputs.append(f"{shown_key(key, 200)[1:-1] if answer is _TOO_LONG else key}: {raw}")
                result.usage += usage
        if unanswered:  # (every row unknown, from a server that sends no log-probabilities, read as no row chosen)
            result.warnings.append(f"{len(unanswered)} of {len(asked)} row(s) got no answer from the model and "
                                   "are unknown (NA): " + "; ".join(unanswered[:5]))
        result.prompts.append(_shown_prompt(prefix, request, self.question_first))
        return result

    def _yes_no_probability(self, messages: tuple[tuple[str, str], ...],
                            tags: dict[str, str]) -> tuple[float | None, str, Usage, bool]:
        """P(yes), the generated text, the usage, and whether the model sent log-probabilities at all."""
        lm_request = LMRequest(messages=messages, max_tokens=1, temperature=0.0, logprobs=True,
                               top_logprobs=TOP_LOGPROBS)
        completion = self.lm.complete(lm_request, purpose="neural", tags=tags)
        choice = completion.choices[0]
        return yes_probability(choice), completion.text, completion.usage, bool(choice.top_logprobs)

    def _yes_prior(self, prefix: tuple[tuple[str, str], ...], request: NeuralRequest,
                   tags: dict[str, str]) -> tuple[float | None, Usage]:
        """The question's prior P(yes): the mean over content-free rows (:data:`CONTENT_FREE`)."""
        usage = Usage()
        readings = []
        for filler in CONTENT_FREE:
            cells = [(column, filler) for column in request.columns]
            messages = (*prefix, ("user", row_turn(request.question, cells, question_first=self.question_first)))
            probability, _, spent, _ = self._yes_no_probability(messages, {**tags, "calibration": filler or "empty"})
            usage += spent
            if probability is not None:
                readings.append(probability)
        return (sum(readings) / len(readings) if readings else None), usage

    def _yes_no_row(self, messages: tuple[tuple[str, str], ...], prior: float | None,
                    tags: dict[str, str]) -> tuple[Any, str, Usage]:
        probability, text, usage, reported = self._yes_no_probability(messages, tags)
        if probability is None and not reported:  # a server that ignores top_logprobs: read the word it wrote
            kind, value = classify(text)
            answer = ("yes" if value else "no") if kind == "bool" else UNKNOWN  # another word would make it text
            return answer, f"{answer} (read from the text {text!r}: the model sent no log-probabilities)", usage
        if probability is None:
            return UNKNOWN, f"{text!r} (neither yes nor no among the likeliest tokens)", usage
        calibrated = calibrated_yes_probability(probability, prior)
        # decided against the call's rows when a call reads it (yes_scores); calibrated: at 0.5, the
        # prior already divided out
        answer = ScoredYesNo(calibrated) if prior is None else ("yes" if calibrated > 0.5 else "no")
        shown = f"P(yes)={probability:.2f}" if prior is None else f"P(yes)={probability:.2f}, calibrated {calibrated:.2f}"
        return answer, f"{answer} at 0.5 ({shown})", usage

    def _typed_row(self, messages: tuple[tuple[str, str], ...], answer_type: AnswerType,
                   tags: dict[str, str]) -> tuple[Any, str, Usage]:
        caps = self.lm.capabilities
        grammar = answer_type.gbnf() if caps.grammar else None
        lm_request = LMRequest(messages=messages, max_tokens=ANSWER_TOKENS, temperature=0.0, stop=("\n",),
                               grammar=grammar)
        completion = self.lm.complete(lm_request, purpose="neural", tags=tags)
        text = completion.text.strip()
        return (text or None), text, completion.usage


def _shown_prompt(prefix: Sequence[tuple[str, str]], request: NeuralRequest, question_first: bool) -> str:
    """The prompt of the call as a trace shows it: the fixed prefix once, then the first row's turn
    (every row's turn has the same shape)."""
    first = row_turn(request.question, list(zip(request.columns, request.rows[0])), question_first=question_first)
    turns = [f"[{role}] {text}" for role, text in prefix] + [f"[user] {first}"]
    if len(request.rows) > 1:
        turns.append(f"... and {len(request.rows) - 1} more row(s), one request each")
    return "\n".join(turns)
