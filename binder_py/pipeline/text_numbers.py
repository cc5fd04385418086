"""Sums over numbers the table holds as text: the column read as the numbers its cells write first.

Money, percentages, thousands commas, amounts with a scale word and measures with a unit stay text
(:mod:`binder_py.tables` keeps the analyst's cells as written), and text does no arithmetic:
``df[df["department"] == "Engineering"]["salary"].sum()`` over ``$124,000``, ``$131,000`` and ``$108,000``
joins the cells (refused: :mod:`binder_py.language.joined_text`), ``.mean()`` raises, and
``df["price"] * 2`` repeats the text. The embedded model writes such programs for "what is the total
salary of the Engineering department?", and when another sample answers anything, no repair is asked.

:func:`read_as_numbers` reads the program's syntax tree (it is never run here). A column counts when
the program does arithmetic with it — ``T["col"]`` or ``T.col`` (``T`` a table's name or a subscript of
one), or ``T.groupby(...)["col"]``, followed by ``sum``, ``mean``, ``median``, ``std``, ``var``,
``prod``, ``cumsum``, ``cumprod``, ``diff``, ``pct_change``, ``abs`` or ``round``, or on either side of
``+``, ``-``, ``*``, ``/``, ``//``, ``%``, ``**`` (as it is, or one of its values: ``.max()``, ``.iloc[0]``,
``T.loc[mask, "col"]`` …) — and it is a text column whose filled cells all write
amounts (:func:`binder_py.pipeline.text_order.amounts_written`), with at most
:data:`~binder_py.pipeline.text_order.MAX_ORDERED_VALUES` distinct cells, unless the program changes that
column or table first. The program then starts with ``df['salary'] = df['salary'].map({'$124,000':
124000, …})`` (empty cells become NaN), so its sum, mean and comparisons are the numbers'. The link
stage (:mod:`binder_py.pipeline.link`) runs it as a linked version with a note per column, which
votes in its source's place when it answers (:data:`binder_py.answer.VALUE_NOTE`).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping

import pandas as pd

from binder_py.answer import VALUE_NOTE
from binder_py.pipeline.literal_hints import column_of
from binder_py.pipeline.text_order import (MAX_ORDERED_VALUES, amounts_written, columns_read_unchanged, distinct_texts,
                                           table_name_of)

__all__ = ["cell_numbers", "read_as_numbers"]

#: a column's methods that do arithmetic with its values
_ARITHMETIC = frozenset({"sum", "mean", "median", "std", "var", "prod", "cumsum", "cumprod", "diff", "pct_change",
                         "abs", "round"})
_ARITHMETIC_OPS = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow)


def cell_numbers(column: pd.Series) -> dict[str, int | float] | None:
    """Each distinct filled cell's number (an int when it is a whole number), when the column is text whose
    filled cells all write amounts and it has at most :data:`MAX_ORDERED_VALUES` distinct cells; else None."""
    distinct = distinct_texts(column, MAX_ORDERED_VALUES)
    if distinct is None:
        return None
    cells = [v for v in distinct if v.strip()]
    numbers = amounts_written(cells) if cells else None
    if numbers is None:
        return None
    return {cell: int(n) if n.is_integer() and abs(n) < 2**53 else n for cell, n in zip(cells, numbers)}


def read_as_numbers(program: str, tables: Mapping[str, pd.DataFrame],
                    readings: dict[tuple[str, str], dict[str, int | float] | None] | None = None,
                    ) -> tuple[str, tuple[str, ...]] | None:
    """The program with each text column of amounts it does arithmetic with mapped to its numbers first,
    and one note per column; None when it does arithmetic with no such column (module docstring).
    ``readings`` keeps each column's :func:`cell_numbers` for the next program of the question."""
    readings = {} if readings is None else readings
    lines: list[str] = []
    notes: list[str] = []
    for table_name, column, cells in columns_read_unchanged(program, tables, _computed_columns):
        if (table_name, column) not in readings:
            readings[(table_name, column)] = cell_numbers(cells)
        numbers = readings[(table_name, column)]
        if numbers is None:
            continue
        where = f"{table_name}[{column!r}]"
        lines.append(f"{where} = {where}.map({numbers!r})")
        shown = ", ".join(f"{cell!r} = {number!r}" for cell, number in list(numbers.items())[:2])
        notes.append(f"{column!r} {VALUE_NOTE} ({shown}{', …' if len(numbers) > 2 else ''}), not as text")
    if not lines:
        return None
    return "\n".join(lines) + "\n" + program, tuple(notes)


def _computed_columns(tree: ast.AST) -> Iterator[tuple[str, str]]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _ARITHMETIC:
            found = _column_read(node.func.value)
            if found is not None:
                yield found
        elif isinstance(node, ast.BinOp) and isinstance(node.op, _ARITHMETIC_OPS):
            for side in (node.left, node.right):
                found = _column_read(_operand(side))
                if found is not None:
                    yield found


#: methods whose result is one of the column's values (or its values): ``df["salary"].max() - df["salary"].min()``
_PICKING = frozenset({"max", "min", "first", "last", "head", "tail", "nlargest", "nsmallest", "sort_values",
                      "dropna", "unique", "item"})


def _operand(node: ast.AST) -> ast.AST:
    """What an arithmetic operand picks its values from: ``df["salary"]`` for ``df["salary"].max()``,
    ``df["salary"].iloc[0]`` or ``df.loc[m, "salary"]``... (the node itself otherwise)."""
    while True:
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _PICKING):
            node = node.func.value
        elif isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute) and node.value.attr in (
                "iloc", "loc", "iat", "at"):
            picked = node.slice.elts if isinstance(node.slice, ast.Tuple) else []
            if len(picked) == 2:  # T.loc[rows, "col"]: that column of the table
                named = picked[1]
                if not (node.value.attr in ("loc", "at") and isinstance(named, ast.Constant)
                        and isinstance(named.value, str)):
                    return node
                return ast.Subscript(value=node.value.value, slice=named, ctx=ast.Load())
            node = node.value.value  # col.iloc[0]: a value of the column
        else:
            return node


def _column_read(node: ast.AST) -> tuple[str, str] | None:
    """``(table, column)`` for a column of a table or of its groups: ``T["col"]``, ``T[mask].col``,
    ``T.groupby(...)["col"]``."""
    found = column_of(node)
    if found is not None:
        return found
    if (isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str)
            and isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Attribute)
            and node.value.func.attr == "groupby"):
        table = table_name_of(node.value.func.value)
        return (table, node.slice.value) if table is not None else None
    return None
