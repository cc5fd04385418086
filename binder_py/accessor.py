"""Jupyter and pandas support: ``df.binder.ask(...)`` (registered when :mod:`binder_py` is imported)."""

from __future__ import annotations

from typing import Any

import pandas as pd

from binder_py.answer import Answer
from binder_py.ask import Binder


@pd.api.extensions.register_dataframe_accessor("binder")
class BinderAccessor:
    """``df.binder.ask("question")``: answer a question about this DataFrame.

    The first call builds a default :class:`~binder_py.Binder` (``BINDER_LM`` or
    ``OPENAI_API_KEY``, else the embedded local model); pass ``binder=`` to use your own,
    or set one for all DataFrames with :func:`set_default_binder`.
    """

    def __init__(self, df: pd.DataFrame):
        self._df = df

    def ask(self, question: str, title: str | None = None, *, binder: Binder | None = None, **settings: Any) -> Answer:
        return (binder or default_binder()).ask(self._df, question, title, **settings)


_DEFAULT_BINDER: Binder | None = None


def default_binder() -> Binder:
    global _DEFAULT_BINDER
    if _DEFAULT_BINDER is None:
        _DEFAULT_BINDER = Binder(task="analyst")
    return _DEFAULT_BINDER


def set_default_binder(binder: Binder) -> None:
    """Use ``binder`` for every ``df.binder.ask`` call that does not name one."""
    global _DEFAULT_BINDER
    _DEFAULT_BINDER = binder
