"""A one-value neural call used as a row filter, asked of every row instead.

Small models write ``df[f_val("Is the surface hard?", "Surface")].shape[0]`` for "how many times
was a hard surface used?". ``f_val`` answers once, about the whole context (yes → ``True``), and
``df[True]`` looks up a column named True: ``KeyError: True``. The program means ``f_col``, one
answer per row, a mask. In the twenty-seventh session's 16 first unseen unsolvable questions the
embedded 1.5B model wrote such a filter in 6 (about one sample in ten there).

:func:`as_row_filters` rewrites such an ``f_val`` as ``f_col`` with the same arguments when

* it filters the rows of a table, by itself or joined with ``&``, ``|``, ``^`` or negated with ``~``:
  ``T[…]``, ``T.loc[…]`` or ``T.loc[…, columns]`` with ``T`` a table's name;
* it is asked of columns of that same table — a column name, a list of names, ``T["col"]`` or
  ``T[["a", "b"]]`` — so that its answers line up with the rows it filters (a sub-table,
  ``df[df["Name"] == "x"]``, does not: a mask over some rows cannot filter all of them);
* its question does not start with a question word (``what``, ``which``, ``who``, ``how`` …): "What
  is the highest Qual?" names a value, not a condition a row meets.

The link stage (:mod:`binder_py.pipeline.link`) runs the rewritten program as a linked version; its
source failed (``df[True]``), so the linked version votes in its place when it answers.
``binder-py exec`` runs a program as written.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Collection

from binder_py.language.program import call_argument, call_question, parent_map
from binder_py.pipeline.literal_hints import literal_texts
from binder_py.pipeline.precedence import SourceSpans

__all__ = ["as_row_filters"]

_QUESTION_WORD = re.compile(r"^\s*(what|which|who|whom|whose|where|when|why|how)\b", re.I)
_MASK_OPS = (ast.BitAnd, ast.BitOr, ast.BitXor)


def as_row_filters(program: str, table_names: Collection[str]) -> tuple[str, tuple[str, ...]] | None:
    """``program`` with each ``f_val`` call that filters a table's rows (module docstring) written as
    ``f_col``, and one note per call; None when there is none (or the program does not parse)."""
    try:
        tree = ast.parse(program)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    parents = parent_map(tree)
    names: list[ast.Name] = []
    notes: list[str] = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "f_val"):
            continue
        question = call_question(node)
        if not question or _QUESTION_WORD.match(question):
            continue
        table = _filtered_table(node, parents, table_names)
        context = call_argument(node, 1, "context")
        if table is None or context is None or not _columns_of(context, table):
            continue
        names.append(node.func)
        notes.append(f"`f_val({question!r}, …)` filters the rows of {table}: asked of every row, as f_col")
    if not names:
        return None
    spans = SourceSpans(program)
    text = program
    for name in sorted(names, key=lambda n: -spans.span(n)[0]):
        start, end = spans.span(name)
        text = text[:start] + "f_col" + text[end:]
    return text, tuple(notes)


def _filtered_table(call: ast.Call, parents: dict[int, ast.AST], table_names: Collection[str]) -> str | None:
    """The name of the table whose rows ``call`` filters (``T[call]``, ``T.loc[call]``,
    ``T.loc[call, cols]``, through ``&``/``|``/``^``/``~``), else None."""
    node: ast.AST = call
    parent = parents.get(id(node))
    while (isinstance(parent, ast.BinOp) and isinstance(parent.op, _MASK_OPS)) or (
            isinstance(parent, ast.UnaryOp) and isinstance(parent.op, ast.Invert)):
        node, parent = parent, parents.get(id(parent))
    if isinstance(parent, ast.Tuple) and parent.elts and parent.elts[0] is node:
        outer = parents.get(id(parent))
        if not (isinstance(outer, ast.Subscript) and outer.slice is parent and isinstance(outer.value, ast.Attribute)
                and outer.value.attr == "loc"):
            return None
        node, parent = parent, outer
    if not (isinstance(parent, ast.Subscript) and parent.slice is node):
        return None
    subscripted = parent.value
    if isinstance(subscripted, ast.Attribute) and subscripted.attr == "loc":
        subscripted = subscripted.value
    if isinstance(subscripted, ast.Name) and subscripted.id in table_names:
        return subscripted.id
    return None


def _column_names(node: ast.AST) -> bool:
    """A column name or a non-empty list (or tuple) of them, as literals (and nothing else in the list)."""
    names = literal_texts(node)
    return bool(names) and (isinstance(node, ast.Constant) or len(names) == len(node.elts))  # type: ignore[attr-defined]


def _columns_of(context: ast.AST, table: str) -> bool:
    """``context`` names columns of all of ``table``'s rows: names, ``T["c"]`` or ``T[["a", "b"]]``."""
    if _column_names(context):
        return True
    return (isinstance(context, ast.Subscript) and isinstance(context.value, ast.Name) and context.value.id == table
            and _column_names(context.slice))
