"""Rewrite every neural call site into a call of the bridge with the site's id.

``f_col(q, ctx)`` at site 3 becomes ``binder_neural_call(3, 'f_col', q, ctx)``;
``qa_map(t, q, cols)`` becomes ``binder_neural_call(4, 'qa_map', t, q, cols)``.
Arguments are rewritten first, so nested calls are evaluated bottom-up by Python
itself. Line numbers are kept, so runtime errors point into the original program.
"""

from __future__ import annotations

import ast
import copy

from binder_py.language.program import BRIDGE_NAME, ParsedProgram, call_arguments


class _NeuralCallRewriter(ast.NodeTransformer):
    def __init__(self, node_sites: dict[int, int], kinds: dict[int, str]):
        self.node_sites = node_sites
        self.kinds = kinds

    def visit_Call(self, node: ast.Call) -> ast.AST:
        site_id = self.node_sites.get(id(node))
        if site_id is None:
            return self.generic_visit(node)
        name = node.func.id  # type: ignore[attr-defined]
        args = [self.visit(a) for a in call_arguments(node, name)]
        form = name if name != "f" else "f_" + self.kinds[site_id]
        new = ast.Call(
            func=ast.Name(id=BRIDGE_NAME, ctx=ast.Load()),
            args=[ast.Constant(value=site_id), ast.Constant(value=form), *args],
            keywords=[],
        )
        return ast.copy_location(new, node)


def rewrite(parsed: ParsedProgram) -> ast.Module:
    """A new module (the parsed tree is not modified) with every site rewritten."""
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
    rewritten = _NeuralCallRewriter(mapping, kinds).visit(new_tree)  # type: ignore[arg-type]
    ast.fix_missing_locations(rewritten)
    return rewritten  # type: ignore[return-value]


def rewritten_source(module: ast.Module) -> str:
    return ast.unparse(module)
