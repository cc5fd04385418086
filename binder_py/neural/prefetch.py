"""Ask a program's independent neural requests concurrently, before the program reaches them.

A program runs sequentially in the sandbox, so its neural calls would be answered
one after the other. Many calls are predictable from the program text alone: a
top-level statement's ``f_col``/``f_val`` with a literal question and literal
column names of the ORIGINAL table, in a program that never rebinds ``df``/``table``
nor writes those columns. Their requests are computed from the table and sent
through the shared cache concurrently while the program starts; when the program
reaches the call, single-flight hands it the answer. Prefetching never changes an
answer (every call still goes through the cache with the rows it really has); at
worst it asks for a request the program does not reach (e.g. after an error).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any

import pandas as pd

from binder_py.language.program import ParsedProgram
from binder_py.language.rewrite import filtered_tables
from binder_py.neural.answer_types import META_KEY, AnswerType, restated_column, site_answer_types
from binder_py.neural.requests import NeuralRequest, context_rows, distinct_context_rows

_SIMPLE_STATEMENTS = (ast.Expr, ast.Assign, ast.AugAssign, ast.AnnAssign)
_CONDITIONAL = (ast.Lambda, ast.IfExp, ast.BoolOp, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
_TABLE_NAMES = ("df", "table")


def _mutates_unpredictably(tree: ast.AST) -> bool:
    """Changes to the table that statement order cannot follow: ``inplace=``, ``df.loc[...] =``,
    a function or lambda that takes ``df``/``table``."""
    for node in ast.walk(tree):
        if isinstance(node, ast.arg) and node.arg in _TABLE_NAMES:
            return True
        if isinstance(node, ast.keyword) and node.arg == "inplace":
            return True
        if isinstance(node, (ast.Subscript, ast.Attribute)) and isinstance(node.ctx, (ast.Store, ast.Del)):
            target = node.value
            if isinstance(target, ast.Attribute) or not isinstance(target, ast.Name):  # df.loc[...] = , x.y.z =
                return True
    return False


def _rebinds_table(stmt: ast.stmt) -> bool:
    return any(isinstance(node, ast.Name) and node.id in _TABLE_NAMES and isinstance(node.ctx, (ast.Store, ast.Del))
               for node in ast.walk(stmt))


def _written_columns(tree: ast.AST) -> set[Any]:
    cols: set[Any] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Subscript) and isinstance(node.ctx, (ast.Store, ast.Del)):
            if isinstance(node.slice, ast.Constant):
                cols.add(node.slice.value)
            else:
                cols.add(None)  # unknown column written: nothing after it is predictable
    return cols


def _literal_columns(node: ast.expr) -> list[str] | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, (ast.List, ast.Tuple)) and node.elts and all(
            isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.elts):
        return [e.value for e in node.elts]  # type: ignore[attr-defined]
    return None


def _context_columns(node: ast.expr, table: pd.DataFrame) -> list[str] | None:
    """The columns of the original table a call's context names: literal names, ``df["A"]``,
    ``df[["A", "B"]]``, or ``df`` itself; None when the context is not known before the run."""
    if isinstance(node, ast.Name) and node.id in _TABLE_NAMES:
        return [str(c) for c in table.columns]
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id in _TABLE_NAMES:
        return _literal_columns(node.slice)
    return _literal_columns(node)


def _unconditional_calls(stmt: ast.stmt) -> list[ast.Call]:
    out: list[ast.Call] = []
    stack: list[ast.AST] = [stmt]
    while stack:
        node = stack.pop()
        if isinstance(node, _CONDITIONAL):
            continue
        if isinstance(node, ast.Call):
            out.append(node)
        stack.extend(ast.iter_child_nodes(node))
    return out


#: how many contexts (sets of columns, in order, by kind) :func:`predictable_requests` reads from the table
#: for one program: each costs the parent a pass over the table before the program runs
PREDICTED_CONTEXTS = 16

#: a context's rows and keys, by (every row?, its columns): what the calls of one program over the same
#: columns share (:func:`predictable_requests`)
Contexts = dict[tuple[bool, tuple[str, ...]], tuple[list[Any], list[str]]]


def build_request(kind: str, question: str, table: pd.DataFrame, columns: list[str], site: int,
                  title: str | None, dedup: bool = True, answer_type: AnswerType | None = None,
                  contexts: Contexts | None = None) -> NeuralRequest:
    """The request the bridge would send for ``columns`` of ``table`` (same cells, keys, order); with
    ``contexts``, the rows and keys read for the same columns before are reused (and new ones kept)."""
    every = not (kind == "col" and dedup)
    memo = (every, tuple(columns))
    if contexts is not None and memo in contexts:
        rows, keys = contexts[memo]
    else:
        if every:
            rows, keys, _ = context_rows(table[columns], distinct=False)
        else:
            rows, keys = distinct_context_rows(table[columns])
        if contexts is not None:
            contexts[memo] = (rows, keys)
    return NeuralRequest(kind, question.strip(), [str(c) for c in columns], rows, keys, site=site, title=title,
                         meta={META_KEY: answer_type} if answer_type is not None else {})


def predictable_requests(parsed: ParsedProgram, table: pd.DataFrame, title: str | None = None,
                         dedup: bool = True) -> list[NeuralRequest]:
    """The requests of the program's neural calls that can be known before it runs: top-level
    statements are followed in order while ``df``/``table`` is still the original table (a call
    in ``df = df[f_col(...)]`` is known; one after it is not).

    This runs in the parent, before the program and outside its limits, so its work is bounded by the
    table, not by the program: calls over the same columns share one read of them, and calls over more
    than :data:`PREDICTED_CONTEXTS` contexts are not predicted (red team 10: a 4 kB program of 100
    ``f_val`` calls with different questions over a 50,000-row table cost the parent 38 s and 2.4 GB,
    one read of the table per call, before its first line failed)."""
    tree = parsed.tree
    if not parsed.sites or _mutates_unpredictably(tree):
        return []
    written: set[Any] = set()
    requests: list[NeuralRequest] = []
    contexts: Contexts = {}
    types = site_answer_types(parsed)
    elsewhere = filtered_tables(tree)  # calls whose column names are another table's (merged[f_col(...)])
    for stmt in tree.body:
        if isinstance(stmt, _SIMPLE_STATEMENTS):
            for call in _unconditional_calls(stmt):
                if id(call) in elsewhere:
                    continue
                request = _request_of(parsed, call, table, written, title, dedup, types, contexts)
                if request is not None and restated_column(request, request.meta.get(META_KEY)) is None:
                    requests.append(request)  # (a filter that only names its column fails when it runs)
        if _rebinds_table(stmt):
            break
        written |= _written_columns(stmt)
        if None in written:
            break
    return requests


def _request_of(parsed: ParsedProgram, call: ast.Call, table: pd.DataFrame, written: set[Any],
                title: str | None, dedup: bool, types: dict[int, AnswerType],
                contexts: Contexts) -> NeuralRequest | None:
    site_id = parsed.node_sites.get(id(call))
    if site_id is None:
        return None
    site = parsed.sites[site_id]
    if site.name not in ("f_col", "f_val", "f"):
        return None
    args = dict(zip(("question", "context"), call.args))
    args.update({k.arg: k.value for k in call.keywords if k.arg})
    question, context = args.get("question"), args.get("context")
    if not (isinstance(question, ast.Constant) and isinstance(question.value, str)) or context is None:
        return None
    if isinstance(context, ast.Name) and written:
        return None  # the whole table, with columns the program added: not the original's
    columns = _context_columns(context, table)
    if not columns or any(c not in table.columns or c in written for c in columns):
        return None
    if len(set(columns)) != len(columns):
        return None
    if (not (site.kind == "col" and dedup), tuple(columns)) not in contexts and len(contexts) >= PREDICTED_CONTEXTS:
        return None  # the program's own call asks, when it runs
    return build_request(site.kind, question.value, table, columns, site.id, title, dedup, types.get(site.id),
                         contexts)


#: names a sub-table expression may use: the table and the modules the sandbox binds
_SUBTABLE_NAMES = frozenset({*_TABLE_NAMES, "pd", "np"})


@dataclass(frozen=True)
class SubtableCall:
    """An ``f_val`` whose context is a sub-table built from the ORIGINAL table by plain pandas
    (``df.head(15)[["Name", "Nation"]]``, ``df[df["Site"] == "x"][["Year"]]``): its request is known
    once ``context`` (Python source) is evaluated — in the sandbox, never in this process."""

    site: int
    question: str
    context: str
    answer_type: AnswerType | None = None


def _pure_table_expression(node: ast.expr) -> bool:
    """Only the table (and pd/np) by name, no bare function calls (so no neural call), no
    lambdas or comprehensions: what it computes depends on the original table alone."""
    names = [n for n in ast.walk(node) if isinstance(n, ast.Name)]
    if not any(n.id in _TABLE_NAMES for n in names) or any(n.id not in _SUBTABLE_NAMES for n in names):
        return False
    for n in ast.walk(node):
        if isinstance(n, (ast.Lambda, *_CONDITIONAL[2:], ast.NamedExpr, ast.Await, ast.Yield, ast.YieldFrom)):
            return False
        if isinstance(n, ast.Call) and not isinstance(n.func, ast.Attribute):
            return False
    return True


def subtable_value_calls(parsed: ParsedProgram, table: pd.DataFrame) -> list[SubtableCall]:
    """The program's ``f_val`` calls over sub-tables built by plain pandas from the original table,
    reached before the program writes any column or rebinds ``df``/``table`` (so the sub-table is
    the same whatever the neural calls answer); calls that :func:`predictable_requests` already
    knows (literal columns) are not listed."""
    tree = parsed.tree
    if not parsed.sites or _mutates_unpredictably(tree):
        return []
    types = site_answer_types(parsed)
    out: list[SubtableCall] = []
    for stmt in tree.body:
        if isinstance(stmt, _SIMPLE_STATEMENTS):
            for call in _unconditional_calls(stmt):
                site_id = parsed.node_sites.get(id(call))
                if site_id is None:
                    continue
                site = parsed.sites[site_id]
                if site.kind != "val" or site.name not in ("f_val", "f"):
                    continue
                args = dict(zip(("question", "context"), call.args))
                args.update({k.arg: k.value for k in call.keywords if k.arg})
                question, context = args.get("question"), args.get("context")
                if not (isinstance(question, ast.Constant) and isinstance(question.value, str)) or context is None:
                    continue
                if _context_columns(context, table) is not None or not _pure_table_expression(context):
                    continue
                out.append(SubtableCall(site_id, question.value.strip(), ast.unparse(context), types.get(site_id)))
        if _rebinds_table(stmt) or _written_columns(stmt):
            break
    return out
