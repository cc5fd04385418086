"""Stage 7, rescope: a program that ran and answered about rows where the question is about the
table gets a sibling that answers the question, planned and run like the samples; the vote then
sets the source's answer aside when the sibling's has the right shape (rule 0 of
:mod:`binder_py.vote`). No model call is spent on writing a sibling.

* An ``f_col`` column itself asked its question of every row (small models write
  ``f_col("Who was the first judge from Florida?", df[["Judge"]])``): the sibling asks it once of the
  same context, ``f_val(question, context)`` — as a bare ``f(...)`` as the last statement already
  is; its neural call is one ``f_val``. Not in python mode.
* A row label answered a question that asks for a name (``df["lifespan"].idxmax()`` → ``6`` for "which
  animal lives the longest?"; :func:`binder_py.normalize.asks_for_a_name`): the sibling reads that
  row's cell in the column the question names, else in the table's first text column,
  ``df.loc[df["lifespan"].idxmax(), "animal"]`` (:func:`binder_py.language.program.as_row_name`);
  so does a program that hands the row label to a neural call, ``f_val("Which book is the cheapest?",
  df["price"].idxmin())``, whatever the model answered from that bare number. In every program mode.
* A cell that is a number, a date or an amount answered such a question (``df["date"].min()`` →
  ``"April 12, 2025"`` for "which concert was the earliest?"; the vote sets such answers aside,
  :func:`binder_py.normalize.is_quantities`), and exactly one column of the table other than the name
  column holds it: the sibling reads the name of the row(s) holding it, ``df.loc[df["date"] ==
  (df["date"].min()), "artist"]`` (:func:`binder_py.language.program.as_cell_row_name`). In every
  program mode."""

from __future__ import annotations

import numbers

import pandas as pd

from binder_py.answer import Candidate
from binder_py.discriminate.candidates import text_columns
from binder_py.language.program import as_cell_row_name, as_row_name, as_value_question, wraps_row_label
from binder_py.normalize import is_quantities, whole_phrase_in
from binder_py.pipeline.plan import plan_candidates
from binder_py.pipeline.run import run_programs
from binder_py.pipeline.sample import program_identity
from binder_py.pipeline.state import QuestionState


def rescope(state: QuestionState) -> QuestionState:
    if not state.settings.rescope:
        return state
    candidates = state.standing()  # a linked version that answered stands for its source, with its count
    known = {program_identity(c.program) for c in state.candidates}
    index_of = {id(c): i for i, c in enumerate(state.candidates)}
    order = 1 + max((o for c in candidates for o in c.sample_orders), default=-1)
    siblings: list[Candidate] = []
    name_column = _name_column(state)
    for candidate in candidates:
        if not candidate.ok:
            continue
        program = as_value_question(candidate.program) if state.neural_allowed else None
        if program is None and name_column is not None and (_is_row_label(candidate.value)
                                                            or wraps_row_label(candidate.program)):
            program = as_row_name(candidate.program, name_column)
        if program is None and name_column is not None and is_quantities(candidate.value):
            column = _cell_column(state.table, candidate.value, name_column)
            program = as_cell_row_name(candidate.program, column, name_column) if column is not None else None
        if program is None or program_identity(program) in known:
            continue
        known.add(program_identity(program))
        siblings.append(Candidate(program=program, count=1, origin="rescope", sample_orders=(order,),
                                  repaired_from=index_of[id(candidate)]))
        order += 1
    if not siblings:
        return state
    state.services.say(f"{len(siblings)} program(s) answered about rows (an f_col column, a row label); adding "
                       "the program that answers the question instead")
    state = plan_candidates(state, siblings)
    done, state = run_programs(state, siblings)
    return state.evolve(candidates=state.candidates + done)


def _name_column(state: QuestionState) -> str | None:
    """The column a row label of ``df`` is read in when the question asks for a name: the text column
    the question names (the longest), else the table's first text column; None when the question asks
    for something else, the table has no text column, or its row labels are not its row numbers."""
    table = state.table
    if not state.profile.answer_shape(state.question).expects_text or not isinstance(table.index, pd.RangeIndex):
        return None
    text = [str(c) for c in text_columns(table)]
    named = sorted((c for c in text if whole_phrase_in(c.casefold(), state.question.casefold())), key=len)
    return named[-1] if named else (text[0] if text else None)


def _cell_column(table: pd.DataFrame, value: object, name_column: str) -> str | None:
    """The one column of ``table`` other than ``name_column`` with a cell equal to ``value`` (a text, a
    number or a date), None when no column or several have one."""
    if isinstance(value, bool) or not isinstance(value, (str, numbers.Number, pd.Timestamp)):
        return None
    found: list[str] = []
    for position, column in enumerate(table.columns):
        cells = table.iloc[:, position]
        if str(column) == name_column:
            continue
        if isinstance(value, str) != (cells.dtype == object or pd.api.types.is_string_dtype(cells.dtype)):
            continue  # (text against text columns, numbers and dates against the others)
        try:
            if bool((cells == value).any()):
                found.append(str(column))
        except (TypeError, ValueError):
            continue
        if len(found) > 1:
            return None
    return found[0] if found else None


def _is_row_label(value: object) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)
