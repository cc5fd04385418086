"""Turning a program's answer into a denotation: the list of strings that evaluators compare.

Rules of :func:`answer_to_strings`:

* ``None``, NaN, ``pd.NA``, ``NaT`` -> no value (they are skipped inside containers too).
* ``bool`` / ``numpy.bool_`` -> ``"True"`` / ``"False"``.
* integers -> decimal text; floats -> ``"3"`` for integral values (3.0), otherwise
  ``repr`` (``"7.449999999999989"``; the evaluators tolerate float noise).
* ``pd.Timestamp``/``datetime`` -> ``"yyyy-mm-dd"`` at midnight, else ``"yyyy-mm-dd HH:MM:SS"``;
  ``date`` -> ``"yyyy-mm-dd"``.
* ``str`` -> itself, stripped of surrounding whitespace.
* ``list``/``tuple``/``set``/``numpy`` array/``pd.Index``/``pd.Series`` -> their items in order,
  flattened (nested containers too); sets are sorted by text for determinism.
* ``dict`` -> its values.
* ``pd.DataFrame`` -> one column: its values; one row: that row's values; otherwise every
  cell in row-major order.
* anything else -> ``str(value)``.
"""

from __future__ import annotations

import datetime as _dt
import math
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["answer_to_strings", "value_to_string"]


def _missing(value: Any) -> bool:
    if value is None or value is pd.NA or value is pd.NaT:
        return True
    if isinstance(value, (float, np.floating)):
        return math.isnan(float(value))
    return False


def value_to_string(value: Any) -> str | None:
    """One scalar as text (``None`` for missing values). See :func:`answer_to_strings`."""
    if _missing(value):
        return None
    if isinstance(value, (bool, np.bool_)):
        return "True" if value else "False"
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        number = float(value)
        if math.isinf(number):
            return "inf" if number > 0 else "-inf"
        if number.is_integer() and abs(number) < 1e16:
            return str(int(number))
        return repr(number)
    if isinstance(value, (pd.Timestamp, _dt.datetime)):
        ts = pd.Timestamp(value)
        if ts.hour == ts.minute == ts.second == ts.microsecond == 0 and ts.nanosecond == 0:
            return ts.strftime("%Y-%m-%d")
        return ts.strftime("%Y-%m-%d %H:%M:%S")
    if isinstance(value, _dt.date):
        return value.strftime("%Y-%m-%d")
    if isinstance(value, np.datetime64):
        return value_to_string(pd.Timestamp(value))
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace").strip()
    return str(value).strip()


def answer_to_strings(value: Any) -> list[str]:
    """The predicted denotation (list of strings) of a program's answer; rules in the module docstring."""
    out: list[str] = []
    _collect(value, out)
    return out


def _collect(value: Any, out: list[str]) -> None:
    if isinstance(value, pd.DataFrame):
        if value.shape[1] == 1:
            _collect(value.iloc[:, 0].tolist(), out)
        elif value.shape[0] == 1:
            _collect(value.iloc[0].tolist(), out)
        else:
            for row in value.itertuples(index=False):
                _collect(list(row), out)
        return
    if isinstance(value, (pd.Series, pd.Index)):
        _collect(value.tolist(), out)
        return
    if isinstance(value, np.ndarray):
        _collect(value.ravel().tolist() if value.ndim else value.item(), out)
        return
    if isinstance(value, dict):
        _collect(list(value.values()), out)
        return
    if isinstance(value, (set, frozenset)):
        items: list[str] = []
        for item in value:
            _collect(item, items)
        out.extend(sorted(items))
        return
    if isinstance(value, (list, tuple)):
        for item in value:
            _collect(item, out)
        return
    text = value_to_string(value)
    if text is not None:
        out.append(text)
