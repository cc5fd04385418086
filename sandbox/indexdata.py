"""An Index hands out its labels read-only, by every route (red team 7).

An Index is immutable, and pandas relies on it: it caches the Index's hash table (``get_loc``,
``get_indexer``), uniqueness and sortedness, and a MultiIndex its tuples. pandas 3 keeps this
with its own read-only route: ``Index.values`` is a read-only view of the Index's array (an
extension array is viewed with ``_readonly = True``), ``Index.array`` alike. Other routes did
not take it and handed out a *writable* alias of the labels:

* ``np.asarray(index)`` (``Index.__array__``): the Index's own array, also for an
  IntervalIndex's ``left``/``right`` and a ``string[python]`` index;
* ``np.asarray(mi)`` (``MultiIndex.__array__``): the MultiIndex's cached tuples;
* ``dti.asi8`` (datetime, timedelta and period indexes): an integer view of the labels;
* a read-only extension array's ``view()`` (``idx.array.view()``) lost ``_readonly`` (fixed in
  :mod:`sandbox.codes`, which already wraps that ``view``).

``a = np.asarray(df.index); a[0] = 99`` changed a frame's labels after pandas had cached their
hash table, so ``df.loc[99]`` found nothing and ``df.loc[0]`` the row now labelled 99 (wrong
answers; the positions pandas derives stay in bounds). :func:`install` makes each of these routes
the ``values`` route (process-wide, like :mod:`sandbox.codes`: in the zygote, in
``unsafe-inprocess`` mode and in the parent). pandas never writes into an Index's array, and a
copy (``np.array(index)``, ``index.to_numpy(copy=True)``) is writable as before.

Not closed: labels the program's own array still aliases. pandas keeps the caller's array as the
labels in ``pd.Series(v, index=a)``, ``pd.DataFrame(..., index=a)`` / ``columns=a``, ``df.index = a``,
``set_axis(a)``, and ``pd.Index(s)`` shares the Series ``s``, whose ``s.array`` is writable (a Series is
mutable); writing ``a`` afterwards changes those labels alike (docs/SECURITY.md, "Known limits").
"""
from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from pandas.core.indexes.datetimelike import DatetimeIndexOpsMixin

_MARK = "_binder_readonly_labels"


def _readonly(data: Any) -> Any:
    """A view of ``data`` (an ndarray or an extension array) that cannot write it."""
    if isinstance(data, np.ndarray):
        if data.flags.writeable:
            data = data.view()
            data.flags.writeable = False
        return data
    data = data.view()
    data._readonly = True
    return data


def _index_array(self: pd.Index, dtype: Any = None, copy: Any = None) -> np.ndarray:
    if copy is True:
        return np.array(self._data, dtype=dtype, copy=True)
    data = _readonly(self._data)
    return np.asarray(data, dtype=dtype) if copy is None else np.array(data, dtype=dtype, copy=copy)


def _wrap_multiindex_array(raw: Any) -> Any:
    def __array__(self: pd.MultiIndex, dtype: Any = None, copy: Any = None) -> np.ndarray:
        result = raw(self, dtype, copy)
        return result if copy is True else _readonly(result)
    return __array__


def _wrap_asi8(raw: property) -> property:
    def asi8(self: Any) -> np.ndarray:
        return _readonly(raw.fget(self))
    asi8.__doc__ = raw.__doc__
    return property(asi8)


def install() -> None:
    if pd.Index.__dict__.get(_MARK):
        return
    for cls, name, new in (
        (pd.Index, "__array__", _index_array),
        (pd.MultiIndex, "__array__", _wrap_multiindex_array(pd.MultiIndex.__dict__["__array__"])),
        (DatetimeIndexOpsMixin, "asi8", _wrap_asi8(DatetimeIndexOpsMixin.__dict__["asi8"])),
    ):
        old = cls.__dict__[name]
        if callable(new) and callable(old):
            new.__doc__, new.__name__, new.__qualname__ = old.__doc__, old.__name__, old.__qualname__
        setattr(cls, name, new)
    setattr(pd.Index, _MARK, True)


install()
