"""An answer that is a text column's cells joined together is a failure, not an answer.

``df["Amount"].sum()`` over a column of text such as ``$1,234.50`` (currencies, percentages and dates
stay text: :mod:`binder_py.tables`) concatenates the cells: the answer
``"$1,234.50$987.00$12,000.00"`` voted and won, with nothing to say it was no total (the embedded
model wrote that program for "what is the total amount of all orders?", 4 of 5 samples). Such an
answer is made a runtime error that says to convert the column to numbers first, for the user and
for the repair prompt, which quotes it.

The rule: the answer is text made of two or more non-empty cells of one text column of a table,
in row order (a sum over all rows or over a row selection), and is longer than any one cell.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

import pandas as pd

from sandbox.outcome import Outcome, ProgramFailure

__all__ = ["refuse_joined_text"]


def refuse_joined_text(outcome: Outcome, table: pd.DataFrame, named: Mapping[str, pd.DataFrame]) -> Outcome:
    """``outcome`` made a failure when its answer is a text column's cells joined (module docstring)."""
    value = outcome.value
    if not outcome.ok or not isinstance(value, str) or not value:
        return outcome
    tables = dict(named) or {"df": table}
    for name, other in tables.items():
        for column in other.columns:
            cells = other[column]
            if not pd.api.types.is_string_dtype(cells.dtype) or not len(value) > cells.str.len().max():
                continue  # (most answers are no longer than a cell: no row is read one by one)
            if _joins(value, cells.tolist()):
                return replace(outcome, ok=False, value=None, error=ProgramFailure(
                    kind="runtime", exception_type="TypeError", message=(
                        f"TypeError: the answer {_shown(value)} is the text cells of column {column!r} of {name} "
                        "joined together (sum() of a text column joins its text); to add numbers written as text "
                        f"(currencies, percentages), convert them first, e.g. pd.to_numeric({name}[{column!r}]"
                        ".str.replace(r'[^0-9.\\-]', '', regex=True), errors='coerce').sum()")))
    return outcome


def _joins(value: str, cells: list[object]) -> bool:
    """Whether ``value`` is two or more of ``cells`` (non-empty text), in order, joined."""
    position = used = 0
    for cell in cells:
        if isinstance(cell, str) and cell and value.startswith(cell, position):
            position += len(cell)
            used += 1
            if position == len(value):
                return used >= 2
    return False


def _shown(value: str) -> str:
    return repr(value if len(value) <= 60 else value[:57] + "...")
