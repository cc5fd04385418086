"""Jupyter and pandas support: ``df.binder.ask(...)`` (registered when :mod:`binder_py` is imported)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import pandas as pd

from binder_py.errors import BinderError

if TYPE_CHECKING:  # imported when first used: registering the accessor stays light
    from binder_py.answer import Answer
    from binder_py.ask import Binder, TableArg


@pd.api.extensions.register_dataframe_accessor("binder")
class BinderAccessor:
    """``df.binder.ask("question")``: answer a question about this DataFrame.

    The first call builds a default :class:`~binder_py.Binder` (``BINDER_LM`` or
    ``OPENAI_API_KEY``, else the embedded local model); pass ``binder=`` to use your own,
    or set one for all DataFrames with :func:`set_default_binder`.
    """

    def __init__(self, df: pd.DataFrame):
        self._df = df

    def ask(self, question: str, title: str | None = None, *, binder: Binder | None = None,
            others: Mapping[str, TableArg] | None = None, name: str = "df", **settings: Any) -> Answer:
        """Answer ``question`` about this DataFrame; ``others`` adds more tables by name
        (``{"customers": customers_df}``), which programs see beside this one (``df``, or
        ``name`` when given)."""
        if others is not None and not isinstance(others, Mapping):  # others=customers, others=[customers]
            raise BinderError(f"others is a mapping of names to tables, e.g. others={{'customers': customers}}, "
                              f"not a {type(others).__name__}")
        if not others:
            return (binder or default_binder()).ask(self._df, question, title, **settings)
        if name in others:
            raise BinderError(f"others has a table named {name!r}, the name of this DataFrame; "
                              "rename it or pass name= for this one")
        return (binder or default_binder()).ask({name: self._df, **others}, question, title, **settings)


_DEFAULT_BINDER: Binder | None = None


def default_binder() -> Binder:
    global _DEFAULT_BINDER
    if _DEFAULT_BINDER is None:
        from binder_py.ask import Binder

        _DEFAULT_BINDER = Binder(task="analyst")
    return _DEFAULT_BINDER


def set_default_binder(binder: Binder) -> None:
    """Use ``binder`` for every ``df.binder.ask`` call that does not name one."""
    global _DEFAULT_BINDER
    _DEFAULT_BINDER = binder
