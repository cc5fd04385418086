"""Resolve column names a program spells differently from the table (``df["Sales"]`` for ``sales``).

Language models often change a column name's case, spacing or underscores. A string
literal in a *column position* that is not a column of the table but matches exactly one
column once case, runs of white space and underscores are ignored (and how accents are encoded:
a header saved in decomposed form, ``e`` and a combining accent, looks the same as ``é``) is replaced
by that column's name. Column positions are subscripts (``x["c"]``, ``x[["a", "b"]]``,
``x.loc[:, "c"]``), the keywords ``by``, ``columns``, ``subset``, ``on``, ``left_on``,
``right_on``, ``index``, ``values``, ``column``, and the column arguments of
``sort_values``, ``groupby``, ``set_index``, ``nlargest``/``nsmallest`` (the second),
``drop_duplicates``, ``value_counts``, ``pivot_table``, ``explode`` and ``get``. Nothing
else is touched (values such as ``df[df.team == "Red"]`` keep their spelling), an
ambiguous spelling is left alone, and every replacement is reported in the trace.

A name the program gives a column itself is no misspelling: the new names of ``rename``
(a literal mapping or name), ``set_axis`` or ``X.columns = [...]`` (literal names),
``assign``'s keywords and a ``name=`` keyword are left as written. A program that renames
columns in a way not written out (``df.columns = df.columns.str.lower()``, ``rename(str.lower)``,
``add_prefix``) may use any spelling, so none of its literals is touched: ``df["product_name"]``
after lower-casing the headers was read as the table's ``Product Name``, which the program had
renamed (a KeyError in a correct program).
"""

from __future__ import annotations

import ast
import re
import unicodedata
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


def column_key(name: str) -> str:
    """What two spellings of one column share: case, runs of white space and underscores set aside, and
    how accented letters are encoded (``é`` as one character or as ``e`` and a combining accent)."""
    return re.sub(r"[\s_]+", " ", unicodedata.normalize("NFC", name)).strip().casefold()


_RENAMES = frozenset({"rename", "set_axis"})
_UNREAD_RENAMES = frozenset({"add_prefix", "add_suffix", "rename_axis"})


class _Unread(Exception):
    """The program renames columns in a way the syntax tree does not spell out."""


def _literal_names(node: ast.AST) -> set[str]:
    """The names a rename's argument gives: a literal text, the values of a literal mapping, the
    items of a literal list; :class:`_Unread` for anything else (a function, a variable)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return {node.value}
    items = node.values if isinstance(node, ast.Dict) else node.elts if isinstance(node, (ast.List, ast.Tuple)) \
        else None
    if items is None or not all(isinstance(item, ast.Constant) for item in items):
        raise _Unread
    return {item.value for item in items if isinstance(item.value, str)}


def written_names(module: ast.Module) -> set[str] | None:
    """The column names the program gives itself (see the module docstring), or ``None`` when it
    renames columns in a way not written out."""
    written: set[str] = set()
    try:
        for node in ast.walk(module):
            if isinstance(node, ast.Assign):
                for target in node.targets:
                    if isinstance(target, ast.Attribute) and target.attr == "columns":
                        written |= _literal_names(node.value)
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                method = node.func.attr
                if method in _UNREAD_RENAMES:
                    raise _Unread
                if method in _RENAMES:
                    for argument in [*node.args[:1], *(k.value for k in node.keywords
                                                       if k.arg in ("columns", "mapper", "labels"))]:
                        written |= _literal_names(argument)
                elif method == "assign":
                    written |= {k.arg for k in node.keywords if k.arg is not None}
                written |= {k.value.value for k in node.keywords if k.arg == "name"
                            and isinstance(k.value, ast.Constant) and isinstance(k.value.value, str)}
    except _Unread:
        return None
    return written


def renames_columns(module: ast.Module) -> bool:
    """Whether the program renames a table's columns (``T.columns = ...``, ``rename``, ``set_axis``,
    ``add_prefix``/``add_suffix``, ``rename_axis``), read from the syntax tree (not from text in
    strings or comments)."""
    for node in ast.walk(module):
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Attribute) and t.attr == "columns"
                                                for t in node.targets):
            return True
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr in _RENAMES | _UNREAD_RENAMES:
            return True
    return False


def resolve_columns(module: ast.Module, columns: Sequence[object]) -> list[ColumnFix]:
    """Rewrite misspelt column literals of ``module`` in place; return what was changed."""
    written = written_names(module)
    if written is None:
        return []
    names = [c for c in columns if isinstance(c, str)]
    exact = set(names) | written
    by_key: dict[str, list[str]] = {}
    for name in names:
        by_key.setdefault(column_key(name), []).append(name)
    fixes: list[ColumnFix] = []

    def fix(node: ast.AST) -> None:
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value not in exact:
            matches = by_key.get(column_key(node.value), [])
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

