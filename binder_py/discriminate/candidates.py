"""Enumerate the valid next steps of a proposed program over a table, with a lexical prior.

Two kinds of step (see :mod:`binder_py.discriminate.ops`):

- :func:`final_candidates` — the answer expression on the whole table: ``len(df)``;
  ``sum/mean/max/min`` of each numeric column; for each numeric column and each
  other column, the row with the largest and the smallest value
  (``df.sort_values(by, ascending=…)[answer].iloc[0]``); each column's values, first
  and last value; for the (up to 3) cells the question mentions, each column's value in
  the row just before / after that cell's row
  (``df[df[c].shift(-1) == v][answer].iloc[0]``). Only expressions that give an
  answer on the table are kept.
- :func:`filter_candidates` — one more condition for a program: equality with a
  cell the question mentions; ``>``/``<``/``>=``/``<=``/``==`` with a number in the
  question, on numeric columns whose values fall on both sides of it; and
  ``f_col`` yes/no questions made from the question's condition phrases over text
  columns. A value filter must keep some rows and drop some (on the rows the
  program's value filters keep), and a filter already in the program is not repeated.

**The prior** (:attr:`Candidate.prior`) only orders and prunes what the language
model is shown — it never enters the model's score. It counts cue words
(``how many`` → count, ``most`` → largest, …), columns named in the question, and
how strongly a value is mentioned. Every function returns at most ``limit``
candidates, best prior first (ties: enumeration order), which is how the number of
candidates — and of prompts — stays bounded whatever the table's size.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, TypeVar

import pandas as pd

from binder_py.discriminate.ops import (Aggregate, Count, Filter, Final, Neighbour, NeuralFilter, ProposedCode,
                                        Select, Superlative, ValueFilter)
from binder_py.discriminate.question import (condition_phrases, cues, mentioned_values, neural_question,
                                             numbers_in, overlap)
from binder_py.vote import AnswerShape

__all__ = ["Candidate", "final_candidates", "filter_candidates", "fits_shape", "numeric_columns", "text_columns"]

T = TypeVar("T")


@dataclass(frozen=True)
class Candidate(Generic[T]):
    step: T
    prior: float


def numeric_columns(table: pd.DataFrame) -> list[str]:
    return [c for c in table.columns
            if pd.api.types.is_numeric_dtype(table[c]) and not pd.api.types.is_bool_dtype(table[c])
            and table[c].notna().any()]


def text_columns(table: pd.DataFrame) -> list[str]:
    return [c for c in table.columns if not pd.api.types.is_numeric_dtype(table[c]) and table[c].notna().any()]


def _named(column: str, question: str) -> float:
    """1.0 when all of the column's words occur in the question, else the share that does."""
    return overlap(question, str(column))


def _top(candidates: list[Candidate[T]], limit: int) -> list[Candidate[T]]:
    order = sorted(range(len(candidates)), key=lambda i: (-candidates[i].prior, i))
    return [candidates[i] for i in order[:max(limit, 0)]]


def fits_shape(final: Final, numeric: set[str], shape: AnswerShape | None) -> bool:
    """Whether the kind of ``final`` can give the kind of answer the question wants (``shape``, the task
    profile's reading; None: any): a "how many" question is not answered by a text column's cells nor by a
    column's values, and a which/who question not by a count or an aggregate."""
    if shape is None:
        return True
    if shape.expects_number and isinstance(final, (Select, Superlative, Neighbour)) and final.answer not in numeric:
        return False
    if shape.expects_number and isinstance(final, Select) and final.position == "all":
        return False  # a column's values are many numbers, not one
    return not (shape.expects_name and isinstance(final, (Count, Aggregate)))


def final_candidates(table: pd.DataFrame, question: str, *, limit: int = 10,
                     shape: AnswerShape | None = None) -> list[Candidate[Final]]:
    """Answer expressions that give an answer on ``table`` and can have the question's ``shape``
    (:func:`fits_shape`), best prior first, at most ``limit``."""
    wanted = cues(question)
    numeric, columns = numeric_columns(table), [c for c in table.columns if table[c].notna().any()]
    text = set(text_columns(table))
    out: list[Candidate[Final]] = [Candidate(Count(), 3.0 * ("count" in wanted))]
    for column in numeric:
        named = _named(column, question)
        for func in ("sum", "mean", "max", "min"):
            cue = {"sum": "sum", "mean": "mean", "max": "max", "min": "min"}[func]
            # "most"/"least" usually ask for the row (a superlative), "total"/"average" for the value
            weight = 2.0 if cue in ("sum", "mean") else 0.5
            out.append(Candidate(Aggregate(column, func), weight * (cue in wanted) + named))
    for by in numeric:
        named_by = _named(by, question)
        for answer in columns:
            if answer == by:
                continue
            answer_prior = _named(answer, question) + 0.5 * (answer in text)
            for largest in (True, False):
                cue = 2.0 * (("max" if largest else "min") in wanted)
                out.append(Candidate(Superlative(by, answer, largest), cue + named_by + answer_prior))
    for answer in columns:
        answer_prior = _named(answer, question) + 0.5 * (answer in text)
        for position in ("all", "first", "last"):
            cue = 1.5 * (position in wanted) + 0.5 * (position == "all")
            out.append(Candidate(Select(answer, position), cue + answer_prior))
    for mention in mentioned_values(table, question, limit=3):
        for answer in columns:
            answer_prior = _named(answer, question) + 0.5 * (answer in text)
            for offset, cue in ((-1, "previous"), (1, "next")):
                out.append(Candidate(Neighbour(mention.column, mention.value, answer, offset),  # type: ignore[arg-type]
                                     2.0 * (cue in wanted) + mention.strength + answer_prior - 1.0))
    kinds = set(numeric)
    valid = [c for c in out if fits_shape(c.step, kinds, shape) and ProposedCode(c.step).answers_on(table)]
    return _top(valid, limit)


def _value_filters(rows: pd.DataFrame, question: str) -> list[Candidate[Filter]]:
    out: list[Candidate[Filter]] = []
    for mention in mentioned_values(rows, question):
        out.append(Candidate(ValueFilter(mention.column, "==", mention.value), 2.0 * mention.strength))
    text = question.casefold()
    for number in numbers_in(question):
        for column in numeric_columns(rows):
            values = rows[column].dropna()
            named = _named(column, question)
            if (values == number).any():
                out.append(Candidate(ValueFilter(column, "==", number), 1.0 + named))
            if values.min() < number < values.max() or (values == number).any():
                more = any(w in text for w in ("more than", "over", "above", "after", "greater", "larger",
                                               "higher", "at least", "exceed"))
                less = any(w in text for w in ("less than", "under", "below", "before", "fewer", "smaller",
                                               "lower", "at most"))
                for op, cue in ((">", more), ("<", less), (">=", more), ("<=", less)):
                    out.append(Candidate(ValueFilter(column, op, number),
                                         0.5 + 1.5 * cue - 0.25 * (len(op) == 2) + named))  # type: ignore[arg-type]
    return out


def _neural_filters(rows: pd.DataFrame, question: str, *, per_phrase: int) -> list[Candidate[Filter]]:
    out: list[Candidate[Filter]] = []
    columns = text_columns(rows)
    for phrase in condition_phrases(question, rows):
        ask = neural_question(phrase)
        ranked = []
        for column in columns:
            cells = " ".join(str(v) for v in pd.unique(rows[column].dropna())[:50])
            related = overlap(phrase.text, str(column)) + 0.5 * overlap(cells, phrase.text)
            distinct = rows[column].nunique()
            ranked.append(Candidate(NeuralFilter(ask, column),
                                    1.0 + related + 0.25 * (distinct < len(rows))))  # repeated cells: cheaper
        out.extend(_top(ranked, per_phrase))
    return out


def filter_candidates(table: pd.DataFrame, question: str, program: ProposedCode, *, limit: int = 9,
                      neural: bool = True, neural_per_phrase: int = 3) -> list[Candidate[Filter]]:
    """One more condition for ``program``, best prior first, at most ``limit``.

    ``neural=False`` leaves out ``f_col`` conditions (the pure-Python mode).
    """
    rows = program.known_rows(table)
    if rows.empty:
        return []
    present = set(program.filters)
    asked = {f.question for f in program.filters if isinstance(f, NeuralFilter)}
    found = _value_filters(rows, question)
    if neural:
        found += _neural_filters(rows, question, per_phrase=neural_per_phrase)
    out: list[Candidate[Filter]] = []
    seen: set[Filter] = set()
    for candidate in found:
        step = candidate.step
        if step in present or step in seen or (isinstance(step, NeuralFilter) and step.question in asked):
            continue  # a condition once; an f_col question over one column only
        mask = step.mask(rows)
        if mask is not None and (not mask.any() or mask.all()):
            continue
        extended = program.with_filter(step)
        if mask is not None and not extended.answers_on(table):
            continue
        seen.add(step)
        out.append(candidate)
    return _top(out, limit)

