"""Comparisons joined by ``&``/``|`` without parentheses, regrouped as a pandas author means them.

In Python, ``&`` and ``|`` bind tighter than ``==``, ``<``, …: ``df["a"] == "x" & df["b"] == "y"``
is the chained comparison ``df["a"] == ("x" & df["b"]) == "y"``, which pandas refuses
(``TypeError: operation 'rand_' not supported``), and ``mask & df["b"] != "m1"`` is ``(mask &
df["b"]) != "m1"``, which runs and is silently wrong. Small models write both all the time (in the
nineteenth session's seeded WikiTQ runs of the 1.5B model, 3% of the sampled programs, in 4–8% of
the questions). :func:`regroup_comparisons` rewrites each such comparison as its author meant it:
the operands and operators read left to right, cut at every unparenthesized ``&``/``|``, each piece
one comparison, the pieces joined by ``&`` (then ``|``, which binds looser):
``(df["a"] == "x") & (df["b"] == "y")``.

Left alone: parts the program already parenthesized (``(m1 & m2) == True``), and a bit test —
``df["flags"] & 4 == 4``, an ``&``/``|`` on the left of one comparison whose right-hand operand is
an integer — which Python already reads as meant.

The link stage (:mod:`binder_py.pipeline.link`) runs the regrouped program as a sibling that votes
in its source's place; ``binder-py exec`` runs a program as written.
"""

from __future__ import annotations

import ast

__all__ = ["SourceSpans", "regroup_comparisons"]

_BOOL_OPS = (ast.BitAnd, ast.BitOr)


class SourceSpans:
    """Character positions of nodes in the program text (ast's columns count UTF-8 bytes)."""

    def __init__(self, text: str):
        self.text = text
        self.lines = text.splitlines(keepends=True)
        self.starts = [0]
        for line in self.lines:
            self.starts.append(self.starts[-1] + len(line))

    def offset(self, line: int, column: int) -> int:
        return self.starts[line - 1] + len(self.lines[line - 1].encode("utf-8")[:column].decode("utf-8", "replace"))

    def span(self, node: ast.AST) -> tuple[int, int]:
        return (self.offset(node.lineno, node.col_offset),  # type: ignore[attr-defined]
                self.offset(node.end_lineno, node.end_col_offset))  # type: ignore[attr-defined]

    def parenthesized(self, node: ast.AST) -> bool:
        start, end = self.span(node)
        before = self.text[:start].rstrip()
        after = self.text[end:].lstrip()
        return before.endswith("(") and after.startswith(")")


def _is_int(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and type(node.value) is int


class _Regroup(ast.NodeTransformer):
    def __init__(self, source: SourceSpans):
        self.source = source
        self.changed: list[tuple[int, int, str, str]] = []  # (start, end, before, after)

    def _joined(self, node: ast.AST) -> bool:
        return (isinstance(node, ast.BinOp) and isinstance(node.op, _BOOL_OPS)
                and hasattr(node, "lineno") and not self.source.parenthesized(node))

    def _flatten(self, node: ast.expr) -> list[ast.AST]:
        if self._joined(node):
            assert isinstance(node, ast.BinOp)
            return [*self._flatten(node.left), node.op, *self._flatten(node.right)]
        return [node]

    def visit_Compare(self, node: ast.Compare) -> ast.AST:
        span = self.source.span(node) if hasattr(node, "lineno") else None
        operands = [node.left, *node.comparators]
        joined = [self._joined(o) for o in operands]
        self.generic_visit(node)
        if not any(joined) or span is None:
            return node
        if len(node.ops) == 1 and joined[0] and not joined[1]:
            left = node.left
            while isinstance(left, ast.BinOp) and self._joined(left):
                left = left.right
            if _is_int(left):  # flags & 4 == 4: a bit test, read as written
                return node
        items: list[ast.AST] = [*self._flatten(node.left)]
        for op, comparator in zip(node.ops, node.comparators):
            items += [op, *self._flatten(comparator)]
        pieces: list[ast.expr] = []
        joins: list[ast.operator] = []
        current: list[ast.AST] = []
        for item in [*items, None]:
            if item is None or isinstance(item, _BOOL_OPS):
                if not current:
                    return node
                left, ops, comparators = current[0], current[1::2], current[2::2]
                pieces.append(ast.Compare(left=left, ops=ops, comparators=comparators) if ops else left)  # type: ignore[arg-type]
                if item is not None:
                    joins.append(item)  # type: ignore[arg-type]
                current = []
            else:
                current.append(item)
        # & binds tighter than |: the runs of & first, then | between them
        groups: list[ast.expr] = [pieces[0]]
        for join, piece in zip(joins, pieces[1:]):
            if isinstance(join, ast.BitAnd):
                groups[-1] = ast.BinOp(left=groups[-1], op=ast.BitAnd(), right=piece)
            else:
                groups.append(piece)
        result = groups[0]
        for group in groups[1:]:
            result = ast.BinOp(left=result, op=ast.BitOr(), right=group)
        ast.copy_location(result, node)
        start, end = span
        self.changed.append((start, end, self.source.text[start:end], ast.unparse(result)))
        return result


def regroup_comparisons(program: str) -> tuple[str, tuple[str, ...]] | None:
    """``program`` with each comparison joined by an unparenthesized ``&``/``|`` regrouped (see the module
    docstring), and one line per regrouped comparison saying how; None when there is none (or the program
    does not parse)."""
    try:
        tree = ast.parse(program)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    regroup = _Regroup(SourceSpans(program))
    try:
        regroup.visit(tree)
    except RecursionError:
        return None
    if not regroup.changed:
        return None
    # an outer comparison's new text already holds its inner ones: splice the outermost, last first
    outermost = [c for c in regroup.changed
                 if not any(o is not c and o[0] <= c[0] and c[1] <= o[1] for o in regroup.changed)]
    text = program
    for start, end, _, after in sorted(outermost, key=lambda c: -c[0]):
        text = text[:start] + after + text[end:]
    notes = tuple(f"`{before}` regrouped as `{after}` (& and | bind tighter than comparisons in Python)"
                  for _, _, before, after in sorted(outermost))
    return text, notes
