"""Yes/no rows answered by computing instead of asking the model: the one place that decides it.

A yes/no ``f_col`` over one column whose question only asks what the table's cells already say — a
comparison with a number (:mod:`binder_py.neural.comparisons`), an equality with one of the column's
values (:mod:`binder_py.neural.equalities`), a date's year, decade or month
(:mod:`binder_py.neural.dates`), the largest or smallest value, or a count above none
(:mod:`binder_py.neural.extremes`), a word the cells mention (:mod:`binder_py.neural.mentions`) — is answered from the cells for every row whose cell reads so, and
only the other rows are asked. Each reader turns the question into a function of a cell, or declines;
the first that answers some row is used. The row-by-row backend
(:class:`~binder_py.neural.rowwise.RowwiseNeuralBackend`) calls :func:`computed_answers` before it asks.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from binder_py.neural.comparisons import Decision, comparison_reader
from binder_py.neural.dates import date_reader
from binder_py.neural.equalities import equality_reader
from binder_py.neural.extremes import any_count_reader, extreme_reader
from binder_py.neural.mentions import mention_reader

__all__ = ["READERS", "computed_answers"]

Reader = Callable[[str, str, Sequence[Any]], Callable[[Any], Decision] | None]

#: tried in order: a comparison first (its "before 2010" is no date question), then an equality, a date, the
#: largest or smallest value, a count above none, and last a word the cells mention
READERS: tuple[Reader, ...] = (comparison_reader, equality_reader, date_reader, extreme_reader, any_count_reader,
                               mention_reader)


def computed_answers(question: str, columns: Sequence[str], rows: Sequence[Sequence[Any]],
                     keys: Sequence[str]) -> tuple[dict[str, str], list[str]]:
    """The rows of a yes/no call that the first reader able to answers: ``{key: "yes"|"no"}`` and one
    raw-output line each (``"46: yes (computed, not asked: 46 > 12)"``); nothing when no reader reads the
    question or the call has more than one column."""
    if len(columns) != 1:
        return {}, []
    cells = [row[0] if row else None for row in rows]
    for reader in READERS:
        decide = reader(question, str(columns[0]), cells)
        if decide is None:
            continue
        answers: dict[str, str] = {}
        lines: list[str] = []
        for key, cell in zip(keys, cells):
            decision = decide(cell)
            if decision is not None:
                answers[key] = "yes" if decision[0] else "no"
                lines.append(f"{key}: {answers[key]} (computed, not asked: {decision[1]})")
        if answers:
            return answers, lines
    return {}, []
