"""Hints for a repair: string literals a failed program compared with a column that holds no such value.

A model that sees only the first rows of a table (the embedded model's prompt shows at most 20)
guesses the cells it needs: ``df[df["notes"] == "tallest building in boise"]`` selects nothing
when the cell reads ``"tallest building in boise, 1920–1975"``. The repair prompt then says so,
with the column's closest values (:func:`difflib.get_close_matches`), so that the corrected
program can name a real one.

Only the program's syntax tree is read (it is never run here). Recognised: ``T["col"] == "lit"``
and ``!=`` (either side), ``T["col"].isin(["lit", ...])``, where ``T`` is a table's name (``df``,
``table``, or a named table) or a subscript of one (``df[mask]["col"]``); a column read as an
attribute (``df.col``, ``df[mask].col``) too.
"""

from __future__ import annotations

import ast
import difflib
from collections.abc import Iterator, Mapping
from typing import TypeGuard

import pandas as pd

__all__ = ["column_of", "compared_literals", "dashed_literals", "literal_hints", "literal_texts", "searched_literals"]

#: distinct values of a column searched for close matches (the first ones, in table order)
MAX_VALUES = 5_000
MAX_HINTS = 3
#: values longer than this (and than 3× the literal) are not offered as its closest values
MAX_HINT_CHARS = 200


def literal_hints(program: str, tables: Mapping[str, pd.DataFrame]) -> list[str]:
    """One line per (column, literal) the program compares and the column does not hold."""
    try:
        tree = ast.parse(program)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    hints: list[str] = []
    seen: set[tuple[str, str, str]] = set()
    for table_name, column, node in compared_literals(tree):
        literal = node.value
        if not isinstance(literal, str):
            continue
        table = tables.get(table_name)
        if table is None or column not in table.columns or (table_name, column, literal) in seen:
            continue
        seen.add((table_name, column, literal))
        values = _text_values(table[column])
        if values is None or literal in values:
            continue
        # values much longer than the literal are no misspelling of it, and comparing one costs its length
        short = [v for v in values if len(v) <= max(MAX_HINT_CHARS, 3 * len(literal))][:MAX_VALUES]
        close = difflib.get_close_matches(literal[:MAX_HINT_CHARS], short, n=3, cutoff=0.0)
        shown = ", ".join(repr(v) for v in close)
        hints.append(f"no row of column {column!r} equals {literal!r}; its closest values are: {shown}")
        if len(hints) >= MAX_HINTS:
            break
    return hints


def _text_values(column: pd.Series) -> dict[str, None] | None:
    """The column's distinct non-missing values as text, in order (None: not a text column)."""
    if pd.api.types.is_numeric_dtype(column.dtype) or pd.api.types.is_bool_dtype(column.dtype):
        return None
    return dict.fromkeys(str(v) for v in column.dropna().unique())


def compared_literals(tree: ast.AST) -> Iterator[tuple[str, str, ast.Constant]]:
    """``(table name, column, literal node)`` for every text or number literal the program compares
    with a column: ``T["col"] == lit`` and ``!=`` (either side), ``T["col"].isin([lit, ...])``."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], (ast.Eq, ast.NotEq)):
            left, right = node.left, node.comparators[0]
            for side, other in ((left, right), (right, left)):
                found = column_of(side)
                if found is not None and _is_literal(other):
                    yield (*found, other)
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "isin"
              and len(node.args) == 1 and isinstance(node.args[0], (ast.List, ast.Tuple, ast.Set))):
            found = column_of(node.func.value)
            if found is not None:
                for element in node.args[0].elts:
                    if _is_literal(element):
                        yield (*found, element)


#: ``.str`` methods that search a column's texts for a literal
SEARCH_METHODS = ("contains", "startswith", "endswith")
_REGEX_CHARACTERS = frozenset(".^$*+?{}[]\\|()")


def searched_literals(tree: ast.AST) -> Iterator[tuple[str, str, str, ast.Constant]]:
    """``(table name, column, method, literal node)`` for every text literal the program searches a
    column's texts for, case and all: ``T["col"].str.contains(lit)`` (a plain text: no pattern
    characters, or ``regex=False``), ``.str.startswith(lit)``, ``.str.endswith(lit)``; not with
    ``case=False`` or ``flags=``, which already set case aside."""
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr in SEARCH_METHODS and node.args and isinstance(node.func.value, ast.Attribute)
                and node.func.value.attr == "str"):
            continue
        literal = node.args[0]
        if not (isinstance(literal, ast.Constant) and isinstance(literal.value, str) and literal.value):
            continue
        keywords = {k.arg: k.value for k in node.keywords}
        if "case" in keywords or "flags" in keywords:
            continue
        if node.func.attr == "contains":
            regex = keywords.get("regex")
            plain = isinstance(regex, ast.Constant) and regex.value is False
            if len(node.args) > 1 or (not plain and _REGEX_CHARACTERS & set(literal.value)):
                continue
        found = column_of(node.func.value.value)
        if found is not None:
            yield (*found, node.func.attr, literal)


#: ``.str`` methods whose first argument (or ``pat=``/``sep=``) is a text or pattern the column's cells are
#: split at, searched for or matched against
DASH_METHODS = frozenset({"split", "rsplit", "partition", "rpartition", "contains", "startswith", "endswith",
                          "replace", "count", "extract", "extractall", "findall", "match", "fullmatch"})


def dashed_literals(tree: ast.AST) -> Iterator[tuple[str, str, ast.Constant]]:
    """``(table name, column, literal node)`` for every text literal with an ASCII hyphen that a ``.str``
    method of :data:`DASH_METHODS` splits a column at or searches it for: ``T["score"].str.split("-")``,
    ``T["years"].str.extract(r"(\\d+)-(\\d+)")``, ``T["col"].str.contains("2-1")``."""
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr in DASH_METHODS and isinstance(node.func.value, ast.Attribute)
                and node.func.value.attr == "str"):
            continue
        keywords = {k.arg: k.value for k in node.keywords}
        literal = node.args[0] if node.args else keywords.get("pat", keywords.get("sep"))
        if not (isinstance(literal, ast.Constant) and isinstance(literal.value, str) and "-" in literal.value):
            continue
        found = column_of(node.func.value.value)
        if found is not None:
            yield (*found, literal)


def _is_literal(node: ast.AST) -> TypeGuard[ast.Constant]:
    return (isinstance(node, ast.Constant) and isinstance(node.value, (str, int, float))
            and not isinstance(node.value, bool))


def literal_texts(node: ast.AST) -> list[str]:
    """The texts a literal names: a text, or the text items of a literal list or tuple (``["a", "b"]``)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, (ast.List, ast.Tuple)):
        return [e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    return []


def column_of(node: ast.AST) -> tuple[str, str] | None:
    """``(table name, column)`` for ``T["col"]``, ``T[...]["col"]``, ``T.col`` or ``T[...].col``."""
    if isinstance(node, ast.Attribute):
        column, base = node.attr, node.value
    elif isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str):
        column, base = node.slice.value, node.value
    else:
        return None
    while isinstance(base, ast.Subscript):
        base = base.value
    return (base.id, column) if isinstance(base, ast.Name) else None
