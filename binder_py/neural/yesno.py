"""Yes/no columns: a boolean mask that also compares equal to ``'yes'``/``'no'``.

The original Binder's QA-map columns hold the strings ``yes``/``no`` and its authors'
programs compare them so (``table[table['is it a loss?'] == 'yes']``), while
binder-py's ``f_col`` types a yes/no column as a nullable boolean, which is what
``df[f_col(...)]``, ``&``, ``|``, ``~`` and ``.sum()`` need. A :class:`YesNoArray`
(dtype ``"yesno"``, :class:`YesNoDtype`) is both: it is pandas' nullable
``boolean`` array (a subclass), so it indexes, combines and counts like one, and
its comparisons also accept text:

* ``== 'yes'``/``'true'`` is ``== True`` and ``== 'no'``/``'false'`` is ``== False``
  (case, surrounding spaces and one trailing ``.`` ignored); ``!=`` likewise;
* any other text is equal to no row (``== 'maybe'`` is all False, ``!=`` all True);
* ``isin([...])`` reads its text items the same way, and so does ``map({'yes': 1, 'no': 0})``
  its keys;
* a missing answer stays ``<NA>``: unselected by a mask, in both ``x == 'yes'`` and
  ``x == 'no'`` (pandas' nullable semantics);
* ``<``/``>`` with text raise ``TypeError`` (an ordering of yes and no means nothing).

``&``, ``|``, ``^`` and ``~`` of yes/no arrays stay yes/no; comparisons give plain
``boolean`` masks. ``astype(str)`` gives ``"True"``/``"False"`` as a boolean column.

A yes/no index (``f_col(...).value_counts()``, ``df.groupby(f_col(...))``) is looked up by
``True``/``False`` (``[True]``, ``.loc[False]``) like a ``boolean`` one, and by yes/no text
read as in comparisons (``.get("yes", 0)``, ``["No"]``, ``.loc["yes"]``, ``"yes" in counts``):
the dtype is given a subclass of pandas' masked boolean index engine, which pandas keys by
dtype name. A list of text keys (``counts[["yes", "no"]]``) is not read so.

A single cell taken out of the column (``s.iloc[0]``, a row in ``df.apply(..., axis=1)``) is a
plain boolean: a program's comparison of one with the literal text yes/no is read so by the rewrite
(:mod:`binder_py.language.yes_no_text`), not by this dtype.
"""

from __future__ import annotations

import operator
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import pandas as pd
from pandas._libs import index as libindex
from pandas.api.extensions import register_extension_dtype
from pandas.core.arrays.boolean import BooleanArray, BooleanDtype
from pandas.core.indexes import base as index_base

from binder_py.language.yes_no_text import read_yes_no_text

__all__ = ["YesNoArray", "YesNoDtype", "yes_no_array", "yes_no_series"]

_NOT_YES_NO = object()


def _read_yes_no(value: Any) -> Any:
    """``True``/``False`` for a bool or yes/no/true/false text (any case, spaces, one trailing
    ``.``); ``pd.NA`` for a missing value; ``_NOT_YES_NO`` otherwise."""
    if value is None or value is pd.NA:
        return pd.NA
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, str):
        word = read_yes_no_text(value)
        return _NOT_YES_NO if word is None else word
    if isinstance(value, float) and np.isnan(value):
        return pd.NA
    return _NOT_YES_NO


@register_extension_dtype
class YesNoDtype(BooleanDtype):
    """The dtype of yes/no columns (``"yesno"``): ``boolean`` that compares with ``'yes'``/``'no'``."""

    name = "yesno"

    @classmethod
    def construct_array_type(cls) -> type[YesNoArray]:
        return YesNoArray

    def __repr__(self) -> str:
        return "YesNoDtype()"


def _as_index_key(key: Any) -> Any:
    """A yes/no index's lookup key: ``'yes'``/``'no'``/``'true'``/``'false'`` text read as
    True/False (as comparisons read it); any other key unchanged."""
    if isinstance(key, str):
        value = _read_yes_no(key)
        if value is not _NOT_YES_NO:
            return value
    return key


class _YesNoIndexEngine(libindex.MaskedBoolEngine):
    """pandas' masked boolean index engine, reading text keys as yes/no: so
    ``f_col(...).value_counts().get("yes", 0)``, ``counts["no"]``, ``.loc["yes"]`` and
    ``"yes" in counts`` find the True/False entries, as the original's string columns did."""

    def get_loc(self, val: Any) -> Any:
        return super().get_loc(_as_index_key(val))

    def __contains__(self, val: Any) -> bool:
        return super().__contains__(_as_index_key(val))


# pandas picks a masked array's index engine by dtype name and has none for "yesno": without this,
# ``f_col(...).value_counts()[True]`` raised "Argument 'values' has incorrect type", and
# ``.get("yes")`` found nothing.
# (a private table of pandas' (2.2 to 3.x): a pandas without it loses only these lookups, not the import)
try:
    index_base._masked_engines[YesNoDtype.name] = _YesNoIndexEngine
except AttributeError:  # pragma: no cover - a pandas version outside pyproject's range
    pass


class YesNoArray(BooleanArray):
    """A nullable boolean array whose comparisons read ``'yes'``/``'no'`` text as True/False."""

    def __init__(self, values: np.ndarray, mask: np.ndarray, copy: bool = False) -> None:
        super().__init__(values, mask, copy=copy)
        self._dtype = YesNoDtype()

    @classmethod
    def _simple_new(cls, values: np.ndarray, mask: np.ndarray) -> YesNoArray:
        result = super()._simple_new(values, mask)
        result._dtype = YesNoDtype()
        return result

    @classmethod
    def _from_sequence(cls, scalars: Any, *, dtype: Any = None, copy: bool = False) -> YesNoArray:
        return yes_no_array(scalars)

    @property
    def dtype(self) -> YesNoDtype:
        return self._dtype

    def _cmp_method(self, other: Any, op: Any) -> Any:
        text = isinstance(other, str) or (pd.api.types.is_list_like(other) and not isinstance(other, BooleanArray)
                                          and _has_text(other))
        if text and op not in (operator.eq, operator.ne):
            raise TypeError(f"a yes/no column cannot be ordered against text ({op.__name__})")
        if isinstance(other, str):
            value = _read_yes_no(other)
            if value is _NOT_YES_NO:
                return self._text_mismatch(op)
            return super()._cmp_method(value, op)
        if text:
            if len(other) != len(self):
                raise ValueError("Lengths must match to compare")
            return self._compare_items(list(other), op)
        return super()._cmp_method(other, op)

    def _text_mismatch(self, op: Any) -> BooleanArray:
        data = np.full(len(self), op is operator.ne, dtype=bool)
        return BooleanArray(data, self._mask.copy())

    def _compare_items(self, items: list[Any], op: Any) -> BooleanArray:
        data = np.zeros(len(self), dtype=bool)
        mask = self._mask.copy()
        for i, item in enumerate(items):
            value = _read_yes_no(item)
            if value is pd.NA:
                mask[i] = True
            elif value is _NOT_YES_NO:
                data[i] = op is operator.ne
            else:
                data[i] = (self._data[i] == value) == (op is operator.eq)
        return BooleanArray(data, mask)

    def _logical_method(self, other: Any, op: Any) -> Any:
        result = super()._logical_method(other, op)
        if isinstance(result, BooleanArray) and not isinstance(result, YesNoArray):
            return YesNoArray(result._data, result._mask)
        return result

    def map(self, mapper: Any, na_action: Any = None) -> Any:
        """``map({'yes': 1, 'no': 0})`` (a dict or Series keyed by text, as the original Binder's
        "yes"/"no" columns were mapped) reads its yes/no keys as True/False; without this every row
        mapped to NaN, and a ``.sum()`` over it answered 0."""
        if isinstance(mapper, pd.Series) and mapper.index.is_unique:
            mapper = dict(zip(mapper.index, mapper.tolist()))
        if isinstance(mapper, dict) and any(isinstance(key, str) for key in mapper):
            read: dict[Any, Any] = {}
            for key, value in mapper.items():
                word = _read_yes_no(key) if isinstance(key, str) else _NOT_YES_NO
                read.setdefault(key if word is _NOT_YES_NO else word, value)
            # a defaultdict or Counter keeps its default for the keys it lacks
            mapper = _KeysRead(read, mapper) if hasattr(type(mapper), "__missing__") else read
        return super().map(mapper, na_action=na_action)

    def isin(self, values: Any) -> BooleanArray:
        wanted = {v for v in (_read_yes_no(x) for x in _iterable(values)) if isinstance(v, bool)}
        data = np.array([bool(x) in wanted for x in self._data], dtype=bool) & ~self._mask
        return BooleanArray(data, np.zeros(len(self), dtype=bool))


class _KeysRead(dict):  # type: ignore[type-arg]
    """A mapper's entries with its yes/no keys read as True/False, and its own default for the others."""

    def __init__(self, read: dict[Any, Any], original: dict[Any, Any]):
        super().__init__(read)
        self._original = original

    def __missing__(self, key: Any) -> Any:
        return self._original[key]


def _iterable(values: Any) -> Iterable[Any]:
    if isinstance(values, (str, bytes)) or not pd.api.types.is_list_like(values):
        raise TypeError(f"isin needs a list of values, got {type(values).__name__}")
    return values


def _has_text(values: Any) -> bool:
    dtype = getattr(values, "dtype", None)
    if dtype is not None and getattr(dtype, "kind", "O") in "biuf":
        return False
    return any(isinstance(v, str) for v in values)


def yes_no_array(values: Iterable[Any]) -> YesNoArray:
    """A :class:`YesNoArray` from bools and yes/no/true/false text; ``None``/NA/NaN are missing.
    Anything else is a :class:`ValueError` naming the value."""
    items = list(values)
    data = np.zeros(len(items), dtype=bool)
    mask = np.zeros(len(items), dtype=bool)
    for i, item in enumerate(items):
        value = _read_yes_no(item)
        if value is _NOT_YES_NO:
            raise ValueError(f"{item!r} is not a yes/no answer (expected yes, no, true, false or a missing value)")
        if value is pd.NA:
            mask[i] = True
        else:
            data[i] = value
    return YesNoArray(data, mask)


def yes_no_series(values: Sequence[Any] | pd.Series, index: pd.Index | None = None, name: Any = None) -> pd.Series:
    """A yes/no Series (dtype ``yesno``). A ``boolean`` Series keeps its index and name unless given."""
    if isinstance(values, pd.Series):
        index = values.index if index is None else index
        name = values.name if name is None else name
        values = values.tolist()
    return pd.Series(yes_no_array(values), index=index, name=name)
