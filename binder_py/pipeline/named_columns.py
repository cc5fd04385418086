"""A neural call asked about a column its context leaves out gets that column in its context.

Small models pick the rows and columns for a neural call and then ask about another column:
``f_val("Which model had the highest starting price?", df[df["Starting Price"].str.contains("$")][["Model"]])``
shows the model names only, so it guesses (the 1.5B model answered "vista" three times; the highest
price is the Tour's). :func:`with_named_columns` adds to such a call's context each column of the same
table that its question names and the context leaves out, when the context picks its columns
explicitly:

* ``T[...][["a", "b"]]`` or ``T[["a", "b"]]`` (a sub-table with a column list): the list grows;
* ``T[...]["a"]`` or ``T["a"]`` (one column): it becomes the list ``[["a", <named>]]``;
* a column name or a list of names (``"a"``, ``["a", "b"]``): the list grows;

``T`` being a table's name (``df``, ``table`` or a named table) with row selections (``T[mask]``,
``T.loc[mask]``) in between. A question names a column when it holds the column's name as a whole
phrase, case and spacing aside, or the name without a parenthesized part (``"population"`` for
``Population (2011)``), of at least four letters. Calls whose question names no left-out column, and
contexts that are a whole table (``df``, ``df[mask]``) or anything else, are left alone.

The link stage (:mod:`binder_py.pipeline.link`) runs the rewritten program as a linked version that
votes in its source's place when it answers (a source asked about a column it could not see answered
by guess). ``binder-py exec`` runs a program as written.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping

import pandas as pd

from binder_py.answer import WIDENED_NOTE
from binder_py.language.program import call_argument, call_question
from binder_py.pipeline.precedence import SourceSpans

__all__ = ["with_named_columns"]

_NEURAL = ("f_val", "f_col")
_PARENTHESIZED = re.compile(r"\s*[(\[][^)\]]*[)\]]\s*")
_MIN_LETTERS = 4


def with_named_columns(program: str, tables: Mapping[str, pd.DataFrame]) -> tuple[str, tuple[str, ...]] | None:
    """``program`` with each neural call's context widened by the columns its question names (module
    docstring), and one note per call; None when there is none (or the program does not parse)."""
    try:
        tree = ast.parse(program)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    spans = SourceSpans(program)
    replaced: dict[tuple[int, int], str] = {}
    notes: list[str] = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _NEURAL):
            continue
        question = call_question(node)
        context = call_argument(node, 1, "context")
        if not question or context is None:
            continue
        picked = _picked_columns(context, tables)
        if picked is None:
            continue
        table_name, columns, where = picked
        named = [c for c in _named_columns(question, tables[table_name]) if c not in columns]
        if not named:
            continue
        widened = [*columns, *named]
        if where is None:  # the context is column names
            text = repr(widened)
        else:  # T[...][cols]: the subscript's value, then the wider list
            value_start, value_end = spans.span(where)
            text = program[value_start:value_end] + "[" + repr(widened) + "]"
        replaced[spans.span(context)] = text
        notes.append(f"{', '.join(repr(c) for c in named)} {WIDENED_NOTE} `{node.func.id}({question!r}, …)`, "
                     "whose question names it")
    if not replaced:
        return None
    for (start, end), text in sorted(replaced.items(), reverse=True):
        program = program[:start] + text + program[end:]
    return program, tuple(notes)


def _named_columns(question: str, table: pd.DataFrame) -> list[str]:
    """The text-named columns of ``table`` that ``question`` names (module docstring), in table order."""
    asked = f" {_words(question)} "
    found: list[str] = []
    for column in table.columns:
        if not isinstance(column, str):
            continue
        for name in dict.fromkeys((column, _PARENTHESIZED.sub(" ", column))):
            words = _words(name)
            if sum(ch.isalpha() for ch in words) >= _MIN_LETTERS and f" {words} " in asked:
                found.append(column)
                break
    return found


def _words(text: str) -> str:
    return " ".join(re.findall(r"\w+", text.casefold()))


def _picked_columns(context: ast.AST, tables: Mapping[str, pd.DataFrame]
                    ) -> tuple[str, list[str], ast.AST | None] | None:
    """``(table name, the columns the context picks, the node the column pick subscripts)`` for a context
    that picks its columns explicitly (module docstring); the node is None when the context is column
    names (the call's table is then ``df``)."""
    names = _literal_names(context)
    if names is not None:
        return ("df", names, None) if "df" in tables else None
    if not isinstance(context, ast.Subscript):
        return None
    names = _literal_names(context.slice)
    table_name = _table_root(context.value, tables)
    if names is None or table_name is None:
        return None
    if not all(name in tables[table_name].columns for name in names):
        return None  # (a column the table lacks: the program fails as written anyway)
    return table_name, names, context.value


def _literal_names(node: ast.AST) -> list[str] | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if (isinstance(node, (ast.List, ast.Tuple)) and node.elts
            and all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.elts)):
        return [e.value for e in node.elts]  # type: ignore[attr-defined]
    return None


def _table_root(node: ast.AST, tables: Mapping[str, pd.DataFrame]) -> str | None:
    """The table name ``node`` selects rows of: ``T``, ``T[mask]``, ``T.loc[mask]``, ``T[m1][m2]`` …"""
    while True:
        if isinstance(node, ast.Name):
            return node.id if node.id in tables else None
        if isinstance(node, ast.Subscript) and _literal_names(node.slice) is None:
            node = node.value
        elif isinstance(node, ast.Attribute) and node.attr == "loc":
            node = node.value
        else:
            return None
