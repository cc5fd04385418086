"""Neural calls that filter rows but ask once: ``df[f_val("Is it in the US?", df["location"])]``.

``f_val`` answers one value for its whole context, so a program that selects rows with it
(``df[f_val(q, ctx)]``, ``df[f_val(q, ctx) > 1999]``, ``df.loc[f_val(q, ctx) & (df["x"] > 3), "y"]``)
indexes the table with one ``True`` or ``False``, and fails (``KeyError: True``) or selects a column
named so. Small models write it for the per-row question ``f_col`` asks: in the 1.5B model's WikiTQ
runs replayed in the twenty-fourth session (the seeded samples and 100 unseen questions), 93 failed
programs of 66 questions did. :func:`as_row_filters`
gives the program with every such ``f_val`` written as ``f_col``, its arguments unchanged; the link
stage runs it in its source's place (:mod:`binder_py.pipeline.link`).

A call counts as filtering rows when it is the row selector of a subscript of a name (``T[...]``,
``T.loc[...]``, ``T.loc[rows, cols]``), or reached from that selector through ``&``, ``|``, ``^``,
``~`` and the operands of a comparison with constants (``f_val(q, ctx) > 1999``; compared with a
column, ``df["year"] == f_val(...)``, one value is what is meant), as a mask is built.
"""

from __future__ import annotations

import ast

import asttokens

__all__ = ["as_row_filters"]


def _row_selector(node: ast.Subscript) -> ast.AST | None:
    """The row part of ``T[rows]`` or ``T.loc[rows, ...]`` for a name ``T``; None for other subscripts."""
    target, rows = node.value, node.slice
    if isinstance(target, ast.Attribute) and target.attr == "loc":
        target = target.value
        if isinstance(rows, ast.Tuple) and rows.elts:
            rows = rows.elts[0]
    return rows if isinstance(target, ast.Name) else None


def _filtering_calls(selector: ast.AST) -> list[ast.Call]:
    """The ``f_val(...)`` calls a row selector is built from."""
    found: list[ast.Call] = []
    stack = [selector]
    while stack:
        part = stack.pop()
        if isinstance(part, ast.Call) and isinstance(part.func, ast.Name) and part.func.id == "f_val":
            found.append(part)
        elif isinstance(part, ast.UnaryOp) and isinstance(part.op, ast.Invert):
            stack.append(part.operand)
        elif isinstance(part, ast.BinOp) and isinstance(part.op, (ast.BitAnd, ast.BitOr, ast.BitXor)):
            stack += [part.left, part.right]
        elif isinstance(part, ast.Compare):  # with constants only: against a column, one value is as meant
            operands = [part.left, *part.comparators]
            stack += [o for o in operands if all(isinstance(other, ast.Constant) for other in operands if other is not o)]
    return found


def as_row_filters(source: str) -> tuple[str, int] | None:
    """``(program, n)``: the program with its ``n`` row-filtering ``f_val`` calls written as ``f_col``;
    None when it has none (or does not parse)."""
    try:
        atok = asttokens.ASTTokens(source, parse=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    names: dict[int, ast.Name] = {}
    for node in ast.walk(atok.tree):
        if isinstance(node, ast.Subscript):
            selector = _row_selector(node)
            if selector is not None:
                for call in _filtering_calls(selector):
                    names[id(call.func)] = call.func  # type: ignore[assignment]
    if not names:
        return None
    spans = sorted((atok.get_text_range(name) for name in names.values()), reverse=True)
    program = source
    for start, end in spans:  # from the end, so earlier offsets stay valid
        program = program[:start] + "f_col" + program[end:]
    return program, len(spans)
