"""An Index never hands out a writable alias of its labels (red team 7).

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
  :mod:`sandbox.codes`, which already wraps that ``view``);
* ``idx.view('i8')`` (``Index.view`` with a dtype: an ndarray view of the labels) and a
  MultiIndex's ``values`` (its cached tuples): copies now;
* the ``asi8`` of a read-only datetime-like array (``dti.array.asi8``: ``Index.array`` is pandas'
  read-only route, but ``asi8`` ignored ``_readonly``; red team 8): a copy now; and a view of a
  read-only NDArray-backed array (``idx.array.T``, ``.ravel()``, ``.reshape(-1)``, ``.transpose()``,
  ``.swapaxes(0, 0)``) was not read-only, so its ``asi8`` or ``view("i8")`` wrote the labels: such views
  keep ``_readonly`` now.

``a = np.asarray(df.index); a[0] = 99`` changed a frame's labels after pandas had cached their
hash table, so ``df.loc[99]`` found nothing and ``df.loc[0]`` the row now labelled 99 (wrong
answers; the positions pandas derives stay in bounds). :func:`install` routes each of them through
the ``values`` route (process-wide, like :mod:`sandbox.codes`, wherever programs run: in the
zygote, so in every worker, and in ``unsafe-inprocess`` mode; not in the caller's process in
strict mode, which never imports the guards, so a user's own pandas keeps numpy's view and its
speed: the copies cost, e.g. a datetime resample calls ``asi8``): ``np.array(index, copy=False)`` is the read-only
view, and where numpy allows a copy (``np.asarray(index)``, ``asi8``, ``np.asarray(mi)``) the
caller gets a copy of it, writable as before but no longer the labels. A read-only array there
broke pandas itself: its Cython functions that take a writable buffer refuse one, and
``pd.infer_freq`` passes an index to such a function (``inferred_freq`` then said None).

Not closed: labels the program's own array still aliases. pandas keeps the caller's array as the
labels in ``pd.Series(v, index=a)``, ``pd.DataFrame(..., index=a)`` / ``columns=a``, ``df.index = a``,
``set_axis(a)``, and ``pd.Index(s)`` shares the Series ``s``, whose ``s.array`` is writable (a Series is
mutable); writing ``a`` afterwards changes those labels alike (docs/SECURITY.md, "Known limits").
"""
from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from pandas._libs.arrays import NDArrayBacked
from pandas.core.arrays._mixins import NDArrayBackedExtensionArray
from pandas.core.arrays.datetimelike import DatetimeLikeArrayMixin
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
    result = np.array(_readonly(self._data), dtype=dtype, copy=copy)
    # read-only: the result is the Index's own memory. ``np.asarray`` may copy, and does: a read-only
    # array is refused by pandas' own Cython functions that take a writable buffer (``pd.infer_freq``
    # passes ``index.day_of_week`` to one), so only ``copy=False`` gets the read-only view
    return result.copy() if copy is None and not result.flags.writeable else result


def _wrap_multiindex_array(raw: Any) -> Any:
    def __array__(self: pd.MultiIndex, dtype: Any = None, copy: Any = None) -> np.ndarray:
        result = raw(self, dtype, copy)  # copy=False raises: the tuples are built, then cached
        return result if copy is True else np.array(result, dtype=dtype, copy=True)
    return __array__


def _wrap_asi8(raw: property) -> property:
    def asi8(self: Any) -> np.ndarray:
        return raw.fget(self).copy()
    asi8.__doc__ = raw.__doc__
    return property(asi8)


def _wrap_array_asi8(raw: property) -> property:
    def asi8(self: Any) -> np.ndarray:
        result = raw.fget(self)  # self._ndarray.view("i8"), whatever the array's _readonly says
        return result.copy() if getattr(self, "_readonly", False) else result
    asi8.__doc__ = raw.__doc__
    return property(asi8)


def _from_backing_data(self: Any, arr: np.ndarray) -> Any:
    """``NDArrayBacked._from_backing_data`` (which ``T``, ``transpose``, ``ravel``, ``reshape`` and
    ``swapaxes`` call in Cython): a view of a read-only array is read-only too."""
    result = _RAW_FROM_BACKING_DATA(self, arr)
    if self._readonly and np.may_share_memory(arr, self._ndarray):
        result._readonly = True
    return result


_RAW_FROM_BACKING_DATA = NDArrayBacked._from_backing_data


def _wrap_view(raw: Any) -> Any:
    def view(self: pd.Index, cls: Any = None) -> Any:
        result = raw(self, cls)  # an Index (immutable) for no dtype or an Index class, else an ndarray view
        # a writable view is the labels themselves: a copy; a read-only one (a CategoricalIndex's codes,
        # sandbox.codes) stays as it is, its writes refused
        return result.copy() if isinstance(result, np.ndarray) and result.flags.writeable else result
    return view


def _wrap_values(raw: property) -> property:
    def values(self: pd.MultiIndex) -> np.ndarray:
        return raw.fget(self).copy()  # the cached tuples pandas looks labels up in
    values.__doc__ = raw.__doc__
    return property(values)


def install() -> None:
    if pd.Index.__dict__.get(_MARK):
        return
    for cls, name, new in (
        (pd.Index, "__array__", _index_array),
        (pd.MultiIndex, "__array__", _wrap_multiindex_array(pd.MultiIndex.__dict__["__array__"])),
        (DatetimeIndexOpsMixin, "asi8", _wrap_asi8(DatetimeIndexOpsMixin.__dict__["asi8"])),
        # review of red team 7: ``idx.view('i8')`` was an ndarray view of the labels, and a MultiIndex's
        # ``values`` its cached tuples (``np.asarray(mi)`` before the fix above)
        (pd.Index, "view", _wrap_view(pd.Index.__dict__["view"])),
        (pd.MultiIndex, "values", _wrap_values(pd.MultiIndex.__dict__["values"])),
        # red team 8: the ``asi8`` of a read-only datetime-like array (``idx.array``, pandas' own read-only
        # route) was a writable view of its data, i.e. of the labels
        (DatetimeLikeArrayMixin, "asi8", _wrap_array_asi8(DatetimeLikeArrayMixin.__dict__["asi8"])),
        # ... and a view of such an array lost _readonly (``idx.array.T``, ``.ravel()``, ``.reshape(-1)``),
        # so its asi8 or view("i8") wrote the labels: views keep it (the Cython base's cpdef method is
        # overridden on the Python class every NDArray-backed array derives from)
        (NDArrayBackedExtensionArray, "_from_backing_data", _from_backing_data),
    ):
        old = cls.__dict__.get(name, _RAW_FROM_BACKING_DATA)
        if callable(new) and callable(old):
            new.__doc__, new.__name__, new.__qualname__ = old.__doc__, old.__name__, old.__qualname__
        setattr(cls, name, new)
    setattr(pd.Index, _MARK, True)


install()
