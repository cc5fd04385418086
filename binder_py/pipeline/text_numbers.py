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
``T.loc[mask, "col"]`` …), or on one side of ``<``, ``>``, ``<=``, ``>=`` with a number or a text literal
that writes one on the other (``df["Power"] >= "5"`` over ``5 kw`` and ``10 kw``: as text, ``"10 kw" <
"5"``; such a literal becomes its number, ``>= 5``) — and it is a text column whose filled cells all write
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
from binder_py.neural.requests import NO_NUMBER_CELLS
from binder_py.pipeline.precedence import SourceSpans
from binder_py.pipeline.literal_hints import column_of
from binder_py.pipeline.text_order import (MAX_ORDERED_VALUES, amounts_written, columns_read_unchanged, distinct_texts,
                                           table_name_of)

__all__ = ["cell_numbers", "read_as_numbers"]

#: a column's methods that do arithmetic with its values
_ARITHMETIC = frozenset({"sum", "mean", "median", "std", "var", "prod", "cumsum", "cumprod", "diff", "pct_change",
                         "abs", "round"})
_ARITHMETIC_OPS = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow)
_ORDER_OPS = (ast.Lt, ast.Gt, ast.LtE, ast.GtE)


def cell_numbers(column: pd.Series) -> dict[str, int | float] | None:
    """Each distinct filled cell's number (an int when it is a whole number), when the column is text whose
    filled cells all write amounts and it has at most :data:`MAX_ORDERED_VALUES` distinct cells; else None.
    A cell of :data:`~binder_py.neural.requests.NO_NUMBER_CELLS` counts as empty (NaN once mapped), so that
    ``2008``, ``?``, ``1955`` still reads as years."""
    distinct = distinct_texts(column, MAX_ORDERED_VALUES)
    if distinct is None:
        return None
    cells = [v for v in distinct if v.strip() and v.strip().casefold() not in NO_NUMBER_CELLS]
    numbers = amounts_written(cells) if cells else None
    if numbers is None:
        return None
    return {cell: _as_written(n) for cell, n in zip(cells, numbers)}


def read_as_numbers(program: str, tables: Mapping[str, pd.DataFrame],
                    readings: dict[tuple[str, str], dict[str, int | float] | None] | None = None,
                    ) -> tuple[str, tuple[str, ...]] | None:
    """The program with each text column of amounts it does arithmetic with mapped to its numbers first,
    and one note per column; None when it does arithmetic with no such column (module docstring).
    ``readings`` keeps each column's :func:`cell_numbers` for the next program of the question."""
    readings = {} if readings is None else readings
    lines: list[str] = []
    notes: list[str] = []
    read = columns_read_unchanged(program, tables, _computed_columns)
    for table_name, column, cells in read:
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
    mapped = {(table_name, column): numbers for (table_name, column, _) in read
              if (numbers := readings[(table_name, column)]) is not None}
    return "\n".join(lines) + "\n" + _literals_as_numbers(program, mapped), tuple(notes)


def _literal_number(node: ast.AST) -> float | None:
    """The number a literal writes: an int or float constant, or text that writes one amount ("5", "5 kw")."""
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return float(node.value)
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.strip():
        numbers = amounts_written([node.value])
        return numbers[0] if numbers else None
    return None


def _ordered_against_literals(node: ast.Compare) -> Iterator[tuple[ast.AST, ast.AST]]:
    """``(column side, literal)`` for each ``<``/``>``/``<=``/``>=`` of a comparison between one operand and a
    literal that writes a number."""
    operands = [node.left, *node.comparators]
    for position, op in enumerate(node.ops):
        if not isinstance(op, _ORDER_OPS):
            continue
        left, right = operands[position], operands[position + 1]
        for side, literal in ((left, right), (right, left)):
            if _literal_number(literal) is not None and _literal_number(side) is None:
                yield side, literal


def _literals_as_numbers(program: str, mapped: Mapping[tuple[str, str], dict[str, int | float]]) -> str:
    """``program`` with each text literal ordered against a column of ``mapped`` written as its number, and each
    one compared with ``==``/``!=`` to such a column that is one of its cells written as that cell's number (the
    column holds numbers once mapped: ``== "$124,000"`` would match no row)."""
    tree = ast.parse(program)
    spans = SourceSpans(program)
    replaced: dict[tuple[int, int], str] = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.Compare):
            continue
        for side, literal in _ordered_against_literals(node):
            if (isinstance(literal, ast.Constant) and isinstance(literal.value, str)
                    and _column_read(_operand(side)) in mapped):
                number = _literal_number(literal)
                assert number is not None
                replaced[spans.span(literal)] = repr(_as_written(number))
        operands = [node.left, *node.comparators]
        for position, op in enumerate(node.ops):
            if not isinstance(op, (ast.Eq, ast.NotEq)):
                continue
            left, right = operands[position], operands[position + 1]
            for side, literal in ((left, right), (right, left)):
                numbers = mapped.get(_column_read(_operand(side)) or ("", ""))
                if (numbers is not None and isinstance(literal, ast.Constant) and isinstance(literal.value, str)
                        and literal.value in numbers):
                    replaced[spans.span(literal)] = repr(numbers[literal.value])
    for (start, end), text in sorted(replaced.items(), reverse=True):
        program = program[:start] + text + program[end:]
    return program


def _as_written(number: float) -> int | float:
    return int(number) if number.is_integer() and abs(number) < 2**53 else number


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
        elif isinstance(node, ast.Compare):
            for side, _ in _ordered_against_literals(node):
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
