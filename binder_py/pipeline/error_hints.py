"""Hints for a repair: what a failed program's error means for this table, and the pandas that avoids it.

A small model told only ``AttributeError: Can only use .str accessor with string values, not integer``
tends to write the same program again (the embedded model's greedy repair returned it unchanged). The
error says what went wrong, not what to write; the table says both. So for the errors small models
make most often (counted over the recorded candidates of WikiTQ dev runs: a filter that kept no row,
numbers held as text compared or added, one True/False where a mask was needed), the repair prompt
adds one line per column concerned that names the column, shows two of its cells, and gives the
expression that reads them. Each rule is a function of ``(syntax tree, error message, tables)``;
:data:`RULES` lists them in the order their lines are shown.

Only the program's syntax tree is read (it is never run here), and only columns the program names
(``T["col"]`` or ``T.col``, ``T`` a table's name or a subscript of one, as in
:func:`binder_py.pipeline.literal_hints.column_of`).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterator, Mapping

import pandas as pd

from binder_py.pipeline.literal_hints import column_of
from binder_py.pipeline.text_order import numeric_conversion

__all__ = ["RULES", "error_hints"]

Rule = Callable[[ast.AST, str, Mapping[str, pd.DataFrame]], list[str]]

MAX_HINTS = 3
#: distinct cells of a column read (the first ones, in table order)
MAX_VALUES = 2_000
#: a column counts as numbers held as text when at least this share of its filled cells hold a number
MIN_NUMBER_SHARE = 0.5

_NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?")
_SCALE_WORD = re.compile(r"\b(thousand|million|billion|trillion|bn|mn)\b", re.IGNORECASE)
_DATE_WORDS = re.compile(r"\b(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\b", re.IGNORECASE)
_ISO_OR_SLASHED_DATE = re.compile(r"^\s*(\d{4}-\d{1,2}-\d{1,2}|\d{1,2}/\d{1,2}/\d{2,4})\s*$")

#: errors raised when text is compared with, converted to or computed as numbers
_TEXT_AS_NUMBERS = re.compile(
    r"Invalid comparison between dtype=(str|object) and|could not convert string to float|"
    r"invalid literal for int\(\)|unsupported operand type\(s\) for|Cannot perform reduction|"
    r"not supported for dtype '(str|object)'|not supported between instances of '(str|int|float)' and "
    r"'(str|int|float)'|can only concatenate str|Unable to parse string")
_TEXT_METHODS_ON_NUMBERS = "Can only use .str accessor with string values"
_ONE_TRUTH_VALUE = re.compile(r"KeyError: (np\.)?(True|False)_?\s*$")
_NO_ROWS = re.compile(
    r"single positional indexer is out-of-bounds|list index out of range|index -?\d+ is out of bounds for axis 0 "
    r"with size 0|attempt to get arg(max|min) of an empty sequence|index 0 is out of bounds")


def error_hints(program: str, message: str, tables: Mapping[str, pd.DataFrame]) -> list[str]:
    """At most :data:`MAX_HINTS` lines that say what ``message`` (a failed run's error) means for the
    columns ``program`` reads, and what to write instead; none for an error no rule knows."""
    try:
        tree = ast.parse(program)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    hints: list[str] = []
    for rule in RULES:
        hints += [hint for hint in rule(tree, message, tables) if hint not in hints]
    return hints[:MAX_HINTS]


def numbers_held_as_text(tree: ast.AST, message: str, tables: Mapping[str, pd.DataFrame]) -> list[str]:
    """Text compared with, converted to or computed as numbers: for each text column of numbers the
    program reads, how to read them (a conversion, dates, or ``f_col`` for amounts in words)."""
    if not _TEXT_AS_NUMBERS.search(message):
        return []
    hints = []
    for table_name, column, series in _columns_read(tree, tables):
        if pd.api.types.is_numeric_dtype(series.dtype) or pd.api.types.is_bool_dtype(series.dtype):
            continue
        cells = _filled_cells(series)
        with_numbers = [cell for cell in cells if _NUMBER.search(cell)]
        if not cells or len(with_numbers) < MIN_NUMBER_SHARE * len(cells):
            continue
        shown = ", ".join(repr(cell) for cell in with_numbers[:2])
        where = f"{table_name}[{column!r}]"
        if all(_DATE_WORDS.search(cell) or _ISO_OR_SLASHED_DATE.match(cell) for cell in with_numbers):
            read = (f"read them as dates with pd.to_datetime({where}, format='mixed', errors='coerce') (then compare "
                    "dates, or take .dt.year)")
        elif any(_SCALE_WORD.search(cell) for cell in with_numbers):
            read = f"get its numbers with f_col('What is the {column} as a number?', [{column!r}])"
        elif all(len(_NUMBER.findall(cell)) == 1 for cell in with_numbers):
            read = f"read its numbers with {numeric_conversion(table_name, column)}"
        else:  # several numbers in a cell ("1,410 m (4,626 ft)", "2–1"): the first one
            read = (f"read the first number of each cell with pd.to_numeric({where}.str.replace(',', '')"
                    ".str.extract(r'(\\d+(?:\\.\\d+)?)')[0], errors='coerce')")
        hints.append(f"column {column!r} holds text such as {shown}, not numbers: {read}")
    return hints


def text_methods_on_numbers(tree: ast.AST, message: str, tables: Mapping[str, pd.DataFrame]) -> list[str]:
    """``.str`` on a column of numbers or dates: compare them as what they are."""
    if _TEXT_METHODS_ON_NUMBERS not in message:
        return []
    hints = []
    for table_name, column, series in _columns_read(tree, tables, through_str=True):
        where = f"{table_name}[{column!r}]"
        if pd.api.types.is_datetime64_any_dtype(series.dtype):
            hints.append(f"column {column!r} holds dates, not text: use {where}.dt (e.g. {where}.dt.year == 1990) "
                         "instead of .str")
        elif pd.api.types.is_numeric_dtype(series.dtype) and not pd.api.types.is_bool_dtype(series.dtype):
            filled = series.dropna()
            value = filled.iloc[len(filled) // 2] if len(filled) else 0
            hints.append(f"column {column!r} holds numbers, not text: write {where}.astype(str).str to use text "
                         f"methods on their digits, or compare them as numbers ({where} >= {value}, "
                         f"{where}.between(a, b))")
    return hints


def one_truth_value(tree: ast.AST, message: str, tables: Mapping[str, pd.DataFrame]) -> list[str]:
    """A table indexed with one True/False (``df[f_val(...)]``, ``df[x == 3]`` of one value)."""
    if not _ONE_TRUTH_VALUE.search(message):
        return []
    return ["a table was indexed with one True/False, not one per row: select rows with a condition on a "
            "column (df[df['c'] > 3]) or with f_col, which answers each row; f_val answers once for the whole "
            "table"]


def no_rows_left(tree: ast.AST, message: str, tables: Mapping[str, pd.DataFrame]) -> list[str]:
    """A row taken by position after filters that kept none."""
    if not _NO_ROWS.search(message):
        return []
    return ["the rows selected were none when the program took one by position (.iloc[0], [0], idxmax): a "
            "condition matched no row; compare with values as the table's cells write them, or match part of "
            "a cell with .str.contains(..., case=False)"]


RULES: tuple[Rule, ...] = (numbers_held_as_text, text_methods_on_numbers, one_truth_value, no_rows_left)


def _columns_read(tree: ast.AST, tables: Mapping[str, pd.DataFrame], *,
                  through_str: bool = False) -> Iterator[tuple[str, str, pd.Series]]:
    """``(table name, column, the column)`` for each distinct column the program names, in program order;
    ``through_str``: only columns read through ``.str``."""
    seen: set[tuple[str, str]] = set()
    nodes = sorted((n for n in ast.walk(tree) if hasattr(n, "lineno")),
                   key=lambda n: (n.lineno, n.col_offset))  # type: ignore[attr-defined]
    for node in nodes:
        if through_str:
            if not (isinstance(node, ast.Attribute) and node.attr == "str"):
                continue
            node = node.value
        found = column_of(node)
        if found is None or found in seen:
            continue
        table = tables.get(found[0])
        if table is None or found[1] not in table.columns:
            continue
        seen.add(found)
        column = table[found[1]]
        if isinstance(column, pd.Series):
            yield found[0], found[1], column


def _filled_cells(series: pd.Series) -> list[str]:
    values = series.dropna().unique()[:MAX_VALUES]
    return [v.strip() for v in values if isinstance(v, str) and v.strip()]
