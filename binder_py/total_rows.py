"""A table's last row that totals the rows above it, found so that programs can run without it.

Tables copied from the web or exported from a spreadsheet often end with a row such as
``Total | | 11 | 11 | 11 | 33`` under a medal table. A program reads it as one more row:
``df.loc[df["Total"].idxmax(), "Nation"]`` then answers the total row's empty nation,
``df["Laps led"].sum()`` counts every lap twice, and ``len(df)`` counts one nation too many
(in the seeded WikiTQ samples of docs/RESULTS.md, 15 of 290 questions are asked about such a
table, most of them medal tables). So before a question is asked (``Binder.ask``; not ``execute``, which runs the program
it is given on the table it is given), a **total row** is set aside and the answer says so
(``keep_total_row=True``, ``--keep-total-row``: keep it).

A last row is a total row when all of these hold (:func:`find_total_row`):

* the table has at least two other rows;
* one of its text cells reads ``Total``, ``Totals``, ``Grand total`` or ``Overall`` (any case,
  an optional trailing colon or ``*``), and no other row's cell in that column reads the same
  (a column of eclipse types where every row says ``Total`` is data);
* at least one column proves it: the last row's number, not 0, equals the sum of the other rows'
  numbers in a column where every other filled cell is a number (to 1e-6 of the total,
  thousands separators allowed). A total row that totals nothing is not recognised, nor one whose
  only agreement is a column of zeros (a scraped ``Total | 0 | 0 | 0`` under goals that add up to 54).

Only the last row is looked at; a table's other rows are never dropped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import pandas as pd

from binder_py.tables import parse_number, prepare_table

__all__ = ["TotalRow", "find_total_row", "without_total_row"]

_TOTAL_WORD = re.compile(r"(?:grand\s+)?totals?|overall", re.IGNORECASE)


@dataclass(frozen=True)
class TotalRow:
    """The table's last row, a total of the rows above: the cell that names it, and the columns
    whose sums it repeats."""

    label: str
    label_column: str
    summed_columns: tuple[str, ...]

    def note(self, table_name: str | None = None) -> str:
        where = f"table {table_name!r}" if table_name else "the table"
        columns = ", ".join(repr(c) for c in self.summed_columns[:3]) + (", ..." if len(self.summed_columns) > 3 else "")
        return (f"the last row of {where} ({self.label!r} in column {self.label_column!r}) adds up the rows above "
                f"it ({columns}), so the programs ran without it; keep it with keep_total_row=True (--keep-total-row)")


def _number(cell: object) -> float | None:
    if isinstance(cell, bool):
        return None
    if isinstance(cell, (int, float)):
        return None if cell != cell else float(cell)
    if isinstance(cell, str):
        value = parse_number(cell.strip())
        return None if value is None else float(value)
    return None


def _is_filled(cell: object) -> bool:
    return not (cell is None or (isinstance(cell, float) and cell != cell) or (isinstance(cell, str) and not cell.strip()))


def find_total_row(table: pd.DataFrame) -> TotalRow | None:
    """The table's last row when it totals the rows above (see the module docstring), else None."""
    if len(table) < 3:
        return None
    label = None
    for position, name in enumerate(table.columns):  # (the last row's cells first: every question asks this)
        cell = table.iat[-1, position]
        if isinstance(cell, str) and _TOTAL_WORD.fullmatch(cell.strip().rstrip(":*").strip()):
            if not any(isinstance(other, str) and other.strip().casefold() == cell.strip().casefold()
                       for other in table.iloc[:-1, position].tolist()):
                label = (cell.strip(), str(name))
                break
    if label is None:
        return None
    columns = [(str(name), table.iloc[:, position].tolist()) for position, name in enumerate(table.columns)]
    summed = []
    for name, values in columns:
        total = _number(values[-1])
        numbers = [_number(cell) for cell in values[:-1] if _is_filled(cell)]
        if total is None or len(numbers) < 2 or any(n is None for n in numbers):
            continue
        if total != 0 and abs(sum(numbers) - total) <= 1e-6 * max(1.0, abs(total)):  # type: ignore[arg-type]
            summed.append(name)
    return TotalRow(label[0], label[1], tuple(summed)) if summed else None


def without_total_row(table: pd.DataFrame) -> tuple[pd.DataFrame, TotalRow | None]:
    """``table`` without its total row, typed again (a ``Rank`` column that held ``Total`` is now
    numbers), and the row found; ``table`` itself and None when it has none."""
    found = find_total_row(table)
    if found is None:
        return table, None
    return prepare_table(table.iloc[:-1].reset_index(drop=True)), found
