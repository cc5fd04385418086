"""The LM-made columns of an answer beside its table (one place for the answer, the notebook view and
the browser test)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

import pandas as pd


def lm_made_columns(table: pd.DataFrame, calls: list[Any]) -> pd.DataFrame | None:
    """``table`` plus one column per ``f_col`` call whose context columns are columns of ``table``.

    Rows are matched by their key (the context cells), never by position; rows the call did
    not see stay empty. A column is named after its call's question; a question asked again gets
    ``'``, ``''``, ``'''``, then `` (5)``, `` (6)`` ... (:func:`_free_name`).

    The work is linear in the calls: the rows' keys are computed once per set of context columns,
    and a name once per call. They were computed per call, and a repeated question's name found by
    adding a ``'`` until it was free, each step looking the name up among the columns: a program that
    asked one question 4,000 times (a loop of ``f_col`` calls, cheap through the cache: 14,000 fit in
    a run's CPU time) cost 58 s when its answer was shown in a notebook, and names 4,000 characters
    long (red team 14)."""
    from binder_py.neural.requests import cell_text, row_key

    keys_of: dict[tuple[Any, ...], list[str]] = {}
    made: dict[str, list[Any]] = {}
    taken: set[Any] = set(table.columns)
    repeats: dict[str, int] = {}
    for call in calls:
        if call.kind != "col" or not call.columns or not all(c in table.columns for c in call.columns):
            continue
        columns = tuple(call.columns)
        keys = keys_of.get(columns)
        if keys is None:
            rows = table[list(columns)].itertuples(index=False, name=None)
            keys = keys_of[columns] = [row_key([cell_text(v) for v in row]) for row in rows]
        made[_free_name(call.question, taken, repeats)] = [call.answers.get(k) for k in keys]
    if not made:
        return None
    return pd.concat([table, pd.DataFrame(made, index=table.index)], axis=1)


#: how many times a repeated question is marked with primes before it is numbered instead
_PRIMES = 3


def _free_name(question: str, taken: set[Any], repeats: dict[str, int]) -> str:
    """The first name for ``question`` not in ``taken`` (added to it): ``question``, then ``question'``
    up to :data:`_PRIMES` primes, then ``question (5)``, ``question (6)`` ...; ``repeats`` keeps how far
    each question got, so a name is found in constant time however often the question was asked."""
    n = repeats.get(question, 0)
    while True:
        name = question + "'" * n if n <= _PRIMES else f"{question} ({n + 1})"
        n += 1
        if name not in taken:
            repeats[question] = n
            taken.add(name)
            return name


def place_calls(tables: Mapping[str | None, pd.DataFrame], calls: list[Any]) -> dict[int, str | None]:
    """Which table each ``f_col`` call (by ``id``) made a column of: the table that has all the
    call's context columns; when several have them (a join key), the one whose rows are exactly the
    call's context (the same distinct rows, as many rows as it had: ``products["product"]``, not
    ``sales`` with the same products in more rows), else the one whose rows match most of the
    rows the call was asked about, the first on a draw. Calls on a table the program built from
    columns of several tables are left out.

    A table's row keys are counted once per set of context columns, and each call compares its own keys
    with them: they were computed again for every call, so a loop of calls on a join key cost the
    table's rows per call (35 ms per call beside two tables of 5,000 rows; red team 14)."""
    from binder_py.neural.requests import cell_text, row_key

    counted: dict[tuple[str | None, tuple[Any, ...]], Counter[str]] = {}

    def key_counts(name: str | None, columns: tuple[Any, ...]) -> Counter[str]:
        found = counted.get((name, columns))
        if found is None:
            rows = tables[name][list(columns)].itertuples(index=False, name=None)
            found = counted[(name, columns)] = Counter(row_key([cell_text(v) for v in row]) for row in rows)
        return found

    placed: dict[int, str | None] = {}
    for call in calls:
        if call.kind != "col" or not call.columns:
            continue
        holders = [name for name, table in tables.items() if all(c in table.columns for c in call.columns)]
        asked = set(call.keys)

        def fit(name: str | None) -> tuple[bool, int]:
            counts = key_counts(name, tuple(call.columns))
            matched = sum(counts[key] for key in asked)  # the table's rows whose key the call asked about
            exact = len(tables[name]) == call.n_rows and len(counts) == len(asked) and all(k in counts for k in asked)
            return exact, matched

        if holders:
            placed[id(call)] = max(holders, key=fit) if len(holders) > 1 else holders[0]
    return placed
