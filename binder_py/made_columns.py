"""The LM-made columns of an answer beside its table (one place for the answer, the notebook view and
the browser test)."""

from __future__ import annotations

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
