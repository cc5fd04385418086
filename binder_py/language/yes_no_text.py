"""Comparisons of yes/no values with the text ``'yes'``/``'no'``: one rewrite rule and the function it calls.

A yes/no column made by ``f_col`` compares equal to ``'yes'``/``'no'`` by its own dtype
(:mod:`binder_py.neural.yesno`). A single value does not: a cell taken out of the column
(``s.iloc[0]``, ``row['q']`` in ``df.apply(..., axis=1)`` or ``iterrows``), a yes/no ``f_val`` answer, a
plain ``bool`` column (``df['a'] > 3``) are Python or numpy booleans, and ``True == 'yes'`` is
``False``: a program in the original Binder's style (``if row['is it a loss?'] == 'yes'``) silently
selected nothing.

So every comparison written with ``==`` or ``!=`` whose one side is the literal text yes, no, true
or false (any case, surrounding spaces and one trailing ``.`` ignored) is rewritten into a call of
:data:`YES_NO_COMPARE_NAME` (:class:`YesNoComparisons`). At run time, :func:`compare_yes_no` reads
the text as ``True``/``False`` when the other side is a boolean: a ``bool`` or numpy ``bool_``, or a
Series, Index, array or DataFrame whose values are all booleans (missing ones aside). Any other
value (a table's own text column of "Yes"/"No", a number, ``None``) is compared as written. Chained
comparisons (``a == 'yes' == b``) are left as written.
"""

from __future__ import annotations

import ast
import operator
from typing import Any

import numpy as np
import pandas as pd
from pandas.api.extensions import ExtensionArray

from binder_py.language.program import YES_NO_COMPARE_NAME

__all__ = ["YES_NO_COMPARE_NAME", "YesNoComparisons", "compare_yes_no", "read_yes_no_text"]

_WORDS = {"yes": True, "true": True, "no": False, "false": False}
_OPERATORS = {"==": operator.eq, "!=": operator.ne}


def read_yes_no_text(value: Any) -> bool | None:
    """``True``/``False`` for the text yes/true/no/false (any case, surrounding spaces, one trailing
    ``.``); None for anything else. Yes/no columns read text so too (:mod:`binder_py.neural.yesno`)."""
    if not isinstance(value, str):
        return None
    word = value.strip().casefold()
    if word.endswith("."):
        word = word[:-1].rstrip()
    return _WORDS.get(word)


def _is_yes_no_literal(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and read_yes_no_text(node.value) is not None


class YesNoComparisons(ast.NodeTransformer):
    """``x == 'yes'`` (or ``'No' != x``) → ``binder_yes_no_compare(x, '==', 'yes')``, the operands in
    their written order, so they are evaluated in it."""

    def visit_Compare(self, node: ast.Compare) -> ast.AST:
        node = self.generic_visit(node)  # type: ignore[assignment]
        if len(node.ops) != 1 or not isinstance(node.ops[0], (ast.Eq, ast.NotEq)):
            return node
        left, right = node.left, node.comparators[0]
        if _is_yes_no_literal(left) == _is_yes_no_literal(right):  # neither side, or two literals
            return node
        op = "==" if isinstance(node.ops[0], ast.Eq) else "!="
        call = ast.Call(func=ast.Name(id=YES_NO_COMPARE_NAME, ctx=ast.Load()),
                        args=[left, ast.Constant(value=op), right], keywords=[])
        return ast.copy_location(call, node)


def _holds_booleans(value: Any) -> bool:
    """Whether ``value`` is a Series, Index, array or DataFrame whose values are all booleans (missing
    ones aside, at least one present): numpy ``bool``, pandas ``boolean`` (yes/no included), or objects."""
    if isinstance(value, pd.DataFrame):
        return value.shape[1] > 0 and all(_holds_booleans(value.iloc[:, i]) for i in range(value.shape[1]))
    if not isinstance(value, (pd.Series, pd.Index, np.ndarray, ExtensionArray)):
        return False
    dtype = value.dtype
    if dtype == bool or isinstance(dtype, pd.BooleanDtype):
        return True
    if dtype != object or getattr(value, "ndim", 1) != 1:
        return False
    return pd.api.types.infer_dtype(value, skipna=True) == "boolean"


def compare_yes_no(left: Any, op: str, right: Any) -> Any:
    """``left == right`` (or ``!=``), where one side is the text yes/no/true/false: against a boolean,
    or values that are all booleans, the text is read as ``True``/``False``; otherwise as written."""
    compare = _OPERATORS[op]
    right_word, left_word = read_yes_no_text(right), read_yes_no_text(left)
    if right_word is not None and not isinstance(left, str):
        other, word, other_first = left, right_word, True
    elif left_word is not None and not isinstance(right, str):
        other, word, other_first = right, left_word, False
    else:
        return compare(left, right)
    if isinstance(other, (bool, np.bool_)):
        return compare(bool(other), word)
    if _holds_booleans(other):
        return compare(other, word) if other_first else compare(word, other)
    return compare(left, right)
