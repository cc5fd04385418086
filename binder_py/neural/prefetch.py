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
from typing import Any

import pandas as pd

from binder_py.language.program import ParsedProgram
from binder_py.neural.requests import NeuralRequest, context_rows

_SIMPLE_STATEMENTS = (ast.Expr, ast.Assign, ast.AugAssign, ast.AnnAssign)
_CONDITIONAL = (ast.Lambda, ast.IfExp, ast.BoolOp, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
_TABLE_NAMES = ("df", "table")


def _mutates_unpredictably(tree: ast.AST) -> bool:
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id in _TABLE_NAMES and isinstance(node.ctx, (ast.Store, ast.Del)):
            return True
        if isinstance(node, ast.arg) and node.arg in _TABLE_NAMES:
            return True
        if isinstance(node, ast.keyword) and node.arg == "inplace":
            return True
        if isinstance(node, (ast.Subscript, ast.Attribute)) and isinstance(node.ctx, (ast.Store, ast.Del)):
            target = node.value
            if isinstance(target, ast.Attribute) or not isinstance(target, ast.Name):  # df.loc[...] = , x.y.z =
                return True
    return False


def _written_columns(tree: ast.AST) -> set[Any]:
    cols: set[Any] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Subscript) and isinstance(node.ctx, (ast.Store, ast.Del)):
            if isinstance(node.slice, ast.Constant):
                cols.add(node.slice.value)
            else:
                cols.add(None)  # unknown column written: nothing is predictable
    return cols


def _literal_columns(node: ast.expr) -> list[str] | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, (ast.List, ast.Tuple)) and node.elts and all(
            isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.elts):
        return [e.value for e in node.elts]  # type: ignore[attr-defined]
    return None


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


def build_request(kind: str, question: str, table: pd.DataFrame, columns: list[str], site: int,
                  title: str | None, dedup: bool = True) -> NeuralRequest:
    """The request the bridge would send for ``columns`` of ``table`` (same cells, keys, order)."""
    rows, keys, _ = context_rows(table[columns], distinct=kind == "col" and dedup)
    return NeuralRequest(kind, question.strip(), [str(c) for c in columns], rows, keys, site=site, title=title)


def predictable_requests(parsed: ParsedProgram, table: pd.DataFrame, title: str | None = None,
                         dedup: bool = True) -> list[NeuralRequest]:
    """The requests of the program's neural calls that can be known before it runs."""
    tree = parsed.tree
    if not parsed.sites or _mutates_unpredictably(tree):
        return []
    written = _written_columns(tree)
    if None in written:
        return []
    requests: list[NeuralRequest] = []
    for stmt in tree.body:
        if not isinstance(stmt, _SIMPLE_STATEMENTS):
            continue
        for call in _unconditional_calls(stmt):
            site_id = parsed.node_sites.get(id(call))
            if site_id is None:
                continue
            site = parsed.sites[site_id]
            if site.name not in ("f_col", "f_val", "f"):
                continue
            args = dict(zip(("question", "context"), call.args))
            args.update({k.arg: k.value for k in call.keywords if k.arg})
            question, context = args.get("question"), args.get("context")
            if not (isinstance(question, ast.Constant) and isinstance(question.value, str)) or context is None:
                continue
            columns = _literal_columns(context)
            if not columns or any(c not in table.columns or c in written for c in columns):
                continue
            if len(set(columns)) != len(columns):
                continue
            requests.append(build_request(site.kind, question.value, table, columns, site.id, title, dedup))
    return requests
