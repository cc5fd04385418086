"""The LM-made columns of an answer beside its table (one place for the answer, the notebook view and
the browser test)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd


def lm_made_columns(table: pd.DataFrame, calls: list[Any]) -> pd.DataFrame | None:
    """``table`` plus one column per ``f_col`` call whose context columns are columns of ``table``.

    Rows are matched by their key (the context cells), never by position; rows the call did
    not see stay empty.
    """
    from binder_py.neural.requests import cell_text, row_key

    out = table.copy()
    added = False
    for call in calls:
        if call.kind != "col" or not call.columns or not all(c in table.columns for c in call.columns):
            continue
        keys = [row_key([cell_text(v) for v in row]) for row in table[call.columns].itertuples(index=False, name=None)]
        name = call.question
        while name in out.columns:
            name += "'"
        out[name] = [call.answers.get(k) for k in keys]
        added = True
    return out if added else None


def place_calls(tables: Mapping[str | None, pd.DataFrame], calls: list[Any]) -> dict[int, str | None]:
    """Which table each ``f_col`` call (by ``id``) made a column of: the table that has all the
    call's context columns; when several have them (a join key), the one whose rows are exactly the
    call's context (the same distinct rows, as many rows as it had: ``products["product"]``, not
    ``sales`` with the same products in more rows), else the one whose rows match most of the
    rows the call was asked about, the first on a draw. Calls on a table the program built from
    columns of several tables are left out."""
    from binder_py.neural.requests import cell_text, row_key

    placed: dict[int, str | None] = {}
    for call in calls:
        if call.kind != "col" or not call.columns:
            continue
        holders = [name for name, table in tables.items() if all(c in table.columns for c in call.columns)]
        asked = set(call.keys)

        def fit(name: str | None) -> tuple[bool, int]:
            table = tables[name]
            keys = [row_key([cell_text(v) for v in row]) for row in table[call.columns].itertuples(index=False, name=None)]
            matched = sum(key in asked for key in keys)
            return len(table) == call.n_rows and set(keys) == asked, matched

        if holders:
            placed[id(call)] = max(holders, key=fit) if len(holders) > 1 else holders[0]
    return placed
