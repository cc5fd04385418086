"""Resolve column names a program spells differently from the table (``df["Sales"]`` for ``sales``).

Language models often change a column name's case, spacing or underscores. A string
literal in a *column position* that is not a column of the table but matches exactly one
column once case, runs of white space and underscores are ignored is replaced by that
column's name. Column positions are subscripts (``x["c"]``, ``x[["a", "b"]]``,
``x.loc[:, "c"]``), the keywords ``by``, ``columns``, ``subset``, ``on``, ``left_on``,
``right_on``, ``index``, ``values``, ``column``, and the column arguments of
``sort_values``, ``groupby``, ``set_index``, ``nlargest``/``nsmallest`` (the second),
``drop_duplicates``, ``value_counts``, ``pivot_table``, ``explode`` and ``get``. Nothing
else is touched (values such as ``df[df.team == "Red"]`` keep their spelling), an
ambiguous spelling is left alone, and every replacement is reported in the trace.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence
from dataclasses import dataclass

_KEYWORDS = frozenset({"by", "columns", "subset", "on", "left_on", "right_on", "index", "values", "column"})
_FIRST_ARG_METHODS = frozenset({"sort_values", "groupby", "set_index", "drop_duplicates", "value_counts",
                                "pivot_table", "explode", "get"})
_SECOND_ARG_METHODS = frozenset({"nlargest", "nsmallest"})


@dataclass(frozen=True)
class ColumnFix:
    written: str
    column: str
    line: int
    col: int

    def __str__(self) -> str:
        return f"line {self.line}: column {self.written!r} read as {self.column!r}"


def _key(name: str) -> str:
    return re.sub(r"[\s_]+", " ", name).strip().casefold()


def resolve_columns(module: ast.Module, columns: Sequence[object]) -> list[ColumnFix]:
    """Rewrite misspelt column literals of ``module`` in place; return what was changed."""
    names = [c for c in columns if isinstance(c, str)]
    exact = set(names)
    by_key: dict[str, list[str]] = {}
    for name in names:
        by_key.setdefault(_key(name), []).append(name)
    fixes: list[ColumnFix] = []

    def fix(node: ast.AST) -> None:
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value not in exact:
            matches = by_key.get(_key(node.value), [])
            if len(matches) == 1:
                fixes.append(ColumnFix(node.value, matches[0], node.lineno, node.col_offset + 1))
                node.value = matches[0]
        elif isinstance(node, (ast.List, ast.Tuple)):
            for element in node.elts:
                fix(element)

    for node in ast.walk(module):
        if isinstance(node, ast.Subscript):
            fix(node.slice)
        elif isinstance(node, ast.Call):
            for keyword in node.keywords:
                if keyword.arg in _KEYWORDS:
                    fix(keyword.value)
            method = node.func.attr if isinstance(node.func, ast.Attribute) else None
            if method in _FIRST_ARG_METHODS and node.args:
                fix(node.args[0])
            elif method in _SECOND_ARG_METHODS and len(node.args) > 1:
                fix(node.args[1])
    return sorted(fixes, key=lambda f: (f.line, f.col))

