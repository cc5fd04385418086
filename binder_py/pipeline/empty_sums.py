"""A program whose answer is a sum over no rows answered nothing, not 0.

pandas sums an empty selection to 0, so a filter on a value no cell holds, followed by ``.sum()``,
answers 0 as if it had added something up: ``df[df["Mountain Peak"] == "whitney"]["Elevation"].sum()``
for "what is the total elevation of mount whitney?". In the recorded 1.5B runs of the twenty-third
session (the seeded samples and 30 fresh unsolvable questions, both modes), such a 0 won 26 times and
was right twice (a sum over rows that held 0, and a count of votes where the table has none). So when
a program in the pipeline of a question that does not count ("how many …?", "what is the number of
…?" are answered 0 by a count of nothing, and vote rule 0 already sets such a 0 aside when another
program counted more) answers the number 0 and its last expression is a sum — ``E.sum(...)``, ``sum(E)`` or ``np.sum(E)`` — the program
runs once more with that expression replaced by ``len(E)`` (:func:`selection_probe`; its neural calls
are the program's own, answered from the question's cache). When ``E`` holds no rows, the program's run
becomes a failure that says so (:func:`sum_of_nothing`): it does not vote, and repair sends it back to
the model with that message. A sum over rows that add up to 0 stands.
"""

from __future__ import annotations

import ast
import numbers
from dataclasses import replace
from typing import Any

from binder_py.language import ProgramRun
from sandbox.outcome import ProgramFailure

__all__ = ["is_zero", "selection_probe", "sum_of_nothing"]


def is_zero(value: Any) -> bool:
    """The answer is the number 0 (not False)."""
    return isinstance(value, numbers.Number) and not isinstance(value, bool) and value == 0


def _summed(call: ast.expr) -> ast.expr | None:
    """What a sum call adds up: ``E`` of ``E.sum(...)``, ``sum(E)``, ``np.sum(E)``; None for any other
    expression."""
    if not isinstance(call, ast.Call):
        return None
    func = call.func
    if isinstance(func, ast.Name) and func.id == "sum" and len(call.args) == 1 and not call.keywords:
        return call.args[0]
    if isinstance(func, ast.Attribute) and func.attr == "sum":
        if isinstance(func.value, ast.Name) and func.value.id in ("np", "numpy"):
            return call.args[0] if call.args else None
        return func.value if not call.args else None
    return None


def selection_probe(program: str) -> tuple[str, str] | None:
    """The program that counts what ``program``'s last expression sums (the last expression replaced by
    ``len(E)``), and ``E`` as written; None when the program does not end in a sum."""
    try:
        tree = ast.parse(program)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    if not tree.body or not isinstance(tree.body[-1], ast.Expr):
        return None
    summed = _summed(tree.body[-1].value)
    if summed is None:
        return None
    tree.body[-1] = ast.Expr(ast.Call(ast.Name("len", ast.Load()), [summed], []))
    try:
        return ast.unparse(ast.fix_missing_locations(tree)), ast.unparse(summed)
    except (ValueError, RecursionError, MemoryError):
        return None


def sum_of_nothing(run: ProgramRun, selection: str) -> ProgramRun:
    """``run`` as a failure that says its answer 0 is a sum over no rows of ``selection``."""
    shown = selection if len(selection) <= 120 else selection[:117] + "..."
    message = (f"ValueError: the answer 0 is a sum over no rows: `{shown}` selected nothing, so it adds nothing "
               "up (a filter that compares a column with a value no cell holds selects no row; compare with the "
               "values the cells write)")
    return replace(run, outcome=replace(run.outcome, ok=False, value=None, error=ProgramFailure(
        kind="runtime", exception_type="ValueError", message=message)))
