"""Turn answers, outcomes and traces into JSON-safe values (never raising)."""

from __future__ import annotations

import datetime as _dt
import math
from typing import Any

import numpy as np
import pandas as pd


#: how many items of a collection (rows of a DataFrame) :func:`to_jsonable` keeps
MAX_ITEMS = 10_000


def to_jsonable(value: Any, *, max_items: int = MAX_ITEMS, infinity_as_text: bool = False) -> Any:
    """A JSON-serialisable copy of ``value``.

    Scalars map to JSON scalars (NaN/NA/NaT → None, timestamps → ISO text),
    containers recursively, a Series to a list, a DataFrame to
    ``{"columns": [...], "rows": [[...], ...]}``; anything else to its ``repr``.
    Collections longer than ``max_items`` are cut. JSON has no infinity: ±inf becomes None, or
    with ``infinity_as_text`` (an answer's value, where None would read as "no answer") the
    text ``"inf"``/``"-inf"``.
    """
    try:
        return _convert(value, max_items, infinity_as_text)
    except Exception:  # a trace must never fail to serialise
        return repr(value)


def has_labels(value: Any) -> bool:
    """Whether ``value`` is a Series or DataFrame whose row labels say something (not 0, 1, 2, ...)."""
    from binder_py.tables import is_row_numbers

    return isinstance(value, (pd.Series, pd.DataFrame)) and not is_row_numbers(value.index)


def index_labels(value: Any, *, max_items: int = MAX_ITEMS) -> list[Any] | None:
    """The row labels of a Series or DataFrame answer, JSON-safe, when they say something (a grouped
    sum's keys: ``df.groupby("city")["amount"].sum()``): :func:`to_jsonable` keeps a Series' values
    and a DataFrame's rows only. None for another value, or the default labels 0, 1, 2, ..."""
    if not has_labels(value):
        return None
    labels = [list(label) if isinstance(label, tuple) else label for label in value.index[:max_items]]
    return to_jsonable(labels, max_items=max_items, infinity_as_text=True)


def cut_note(value: Any, *, max_items: int = MAX_ITEMS) -> str | None:
    """Says so when :func:`to_jsonable` cuts ``value`` itself (a list of 20,000 answers, a table of
    20,000 rows): a cut JSON value would otherwise read as the whole answer."""
    try:
        size = (len(value) if isinstance(value, (pd.DataFrame, pd.Series, pd.Index, np.ndarray, dict, list, tuple,
                                                 set, frozenset)) else 0)
    except TypeError:  # a 0-d array
        return None
    if size <= max_items:
        return None
    what = "rows" if isinstance(value, pd.DataFrame) else "items"
    return f"the value has {size:,} {what}; the JSON shows the first {max_items:,}"


def _convert(value: Any, max_items: int, infinity_as_text: bool) -> Any:
    if value is None or isinstance(value, (bool, str, int)):
        return value
    if isinstance(value, float):
        if math.isinf(value):
            return ("inf" if value > 0 else "-inf") if infinity_as_text else None
        return None if math.isnan(value) else value
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        return _convert(float(value), max_items, infinity_as_text)
    if isinstance(value, (pd.Timestamp, _dt.datetime, _dt.date)):
        return None if pd.isna(value) else value.isoformat()
    if value is pd.NA or value is pd.NaT:
        return None
    if isinstance(value, pd.DataFrame):
        rows = value.head(max_items).itertuples(index=False, name=None)
        return {"columns": [str(c) for c in value.columns],
                "rows": [[_convert(cell, max_items, infinity_as_text) for cell in row] for row in rows]}
    if isinstance(value, (pd.Series, pd.Index, np.ndarray)):
        return [_convert(item, max_items, infinity_as_text) for item in list(value)[:max_items]]
    if isinstance(value, dict):
        return {str(k): _convert(v, max_items, infinity_as_text) for k, v in list(value.items())[:max_items]}
    if isinstance(value, (list, tuple, set, frozenset)):
        items = sorted(value, key=repr) if isinstance(value, (set, frozenset)) else value
        return [_convert(item, max_items, infinity_as_text) for item in list(items)[:max_items]]
    if hasattr(value, "to_json") and callable(value.to_json):
        return value.to_json()
    return repr(value)
