"""Rewrite every neural call site into a call of the bridge with the site's id.

``f_col(q, ctx)`` at site 3 becomes ``binder_neural_call(3, 'f_col', q, ctx, df)``: the
table whose columns ``ctx`` names is handed over explicitly, as the name ``df`` (or
``table``) that the call site sees. The innermost enclosing function that binds ``df`` or
``table`` (a parameter or an assignment) supplies it, else the program's global ``df``.
``qa_map(t, q, cols)`` becomes ``binder_neural_call(4, 'qa_map', t, q, cols)`` (its table is
its first argument). Arguments are rewritten first, so nested calls are evaluated bottom-up
by Python itself. Line numbers are kept, so runtime errors point into the original program.

A comparison with the literal text yes/no (``x == 'yes'``) becomes a call that reads the text as a
boolean when ``x`` is one (:mod:`binder_py.language.yes_no_text`).
"""

from __future__ import annotations

import ast
import copy

from binder_py.language.program import BRIDGE_NAME, ParsedProgram, call_arguments
from binder_py.language.yes_no_text import YesNoComparisons


#: the names a call's table may be bound to, in the order they are preferred within one scope
TABLE_NAMES = ("df", "table")


def _bound_names(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> set[str]:
    """The table names a function binds locally: its parameters and the names it assigns
    (less those it declares ``global``)."""
    args = node.args
    bound = {a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]}
    bound |= {a.arg for a in (args.vararg, args.kwarg) if a is not None}
    body = node.body if isinstance(node.body, list) else [node.body]
    declared_global: set[str] = set()
    for stmt in body:
        for sub in ast.walk(stmt):
            if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store):
                bound.add(sub.id)
            elif isinstance(sub, ast.Global):
                declared_global.update(sub.names)
    return (bound - declared_global) & set(TABLE_NAMES)


def filtered_tables(tree: ast.AST) -> dict[int, str]:
    """The calls that filter the rows of a table variable other than ``df``/``table``, by node id: the
    ``f_col(...)`` of ``merged[f_col(q, ["country"])]`` or ``merged.loc[f_col(...), "amount"]`` (reached
    through ``~``, ``&``, ``|`` and comparisons, as a mask is built), mapped to ``merged``."""
    found: dict[int, str] = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.Subscript):
            continue
        target, rows = node.value, node.slice
        if isinstance(target, ast.Attribute) and target.attr == "loc":
            target = target.value
            if isinstance(rows, ast.Tuple) and rows.elts:
                rows = rows.elts[0]
        if not isinstance(target, ast.Name) or target.id in TABLE_NAMES:
            continue
        stack = [rows]
        while stack:
            part = stack.pop()
            if isinstance(part, ast.Call):
                found[id(part)] = target.id
            elif isinstance(part, ast.UnaryOp):
                stack.append(part.operand)
            elif isinstance(part, ast.BinOp) and isinstance(part.op, (ast.BitAnd, ast.BitOr, ast.BitXor)):
                stack += [part.left, part.right]
            elif isinstance(part, ast.Compare):
                stack += [part.left, *part.comparators]
    return found


class _NeuralCallRewriter(ast.NodeTransformer):
    def __init__(self, node_sites: dict[int, int], kinds: dict[int, str], filtered: dict[int, str] | None = None):
        self.node_sites = node_sites
        self.kinds = kinds
        self.filtered = filtered or {}
        self.scopes: list[set[str]] = []  # table names bound by each enclosing function, outermost first

    def _scoped(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> ast.AST:
        self.scopes.append(_bound_names(node))
        try:
            return self.generic_visit(node)
        finally:
            self.scopes.pop()

    visit_FunctionDef = _scoped
    visit_AsyncFunctionDef = _scoped
    visit_Lambda = _scoped

    def _table_name(self) -> str:
        for bound in reversed(self.scopes):
            for name in TABLE_NAMES:
                if name in bound:
                    return name
        return TABLE_NAMES[0]

    def visit_Call(self, node: ast.Call) -> ast.AST:
        site_id = self.node_sites.get(id(node))
        if site_id is None:
            return self.generic_visit(node)
        name = node.func.id  # type: ignore[attr-defined]
        args = [self.visit(a) for a in call_arguments(node, name)]
        form = name if name != "f" else "f_" + self.kinds[site_id]
        if form in ("f_col", "f_val"):
            args.append(ast.Name(id=self._table_name(), ctx=ast.Load()))
            if form == "f_col" and id(node) in self.filtered:  # the table whose rows it filters
                args.append(ast.Name(id=self.filtered[id(node)], ctx=ast.Load()))
        new = ast.Call(
            func=ast.Name(id=BRIDGE_NAME, ctx=ast.Load()),
            args=[ast.Constant(value=site_id), ast.Constant(value=form), *args],
            keywords=[],
        )
        return ast.copy_location(new, node)


def rewrite(parsed: ParsedProgram) -> ast.Module:
    """A new module (the parsed tree is not modified) with every site rewritten, and every comparison
    with the text yes/no."""
    # node ids of the original tree identify the sites; deep-copy after mapping them
    originals: dict[int, int] = dict(parsed.node_sites)
    tree = parsed.tree
    mapping: dict[int, int] = {}

    def clone(node: ast.AST) -> ast.AST:
        memo: dict[int, object] = {}
        new = copy.deepcopy(node, memo)
        for old_id, site in originals.items():
            if old_id in memo:
                mapping[id(memo[old_id])] = site  # type: ignore[index]
        return new

    new_tree = clone(tree)
    kinds = {site.id: site.kind for site in parsed.sites}
    filtered = filtered_tables(new_tree)
    rewritten = _NeuralCallRewriter(mapping, kinds, filtered).visit(new_tree)  # type: ignore[arg-type]
    rewritten = YesNoComparisons().visit(rewritten)
    ast.fix_missing_locations(rewritten)
    return rewritten  # type: ignore[return-value]


def rewritten_source(module: ast.Module) -> str:
    return ast.unparse(module)
