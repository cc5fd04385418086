"""Private and dunder names are never label look-ups.

pandas answers a missing attribute from the labels: ``df.city`` is ``df["city"]``,
``s.x`` is ``s["x"]`` (``NDFrame``), and groupby, window and resample objects do the same
with their columns. Library code looks *protocols* up as attributes of the instance:
numpy asks ``obj.__array_interface__`` / ``obj.__array_struct__`` before anything else
when it converts an object, pyarrow asks ``__arrow_array__``, IPython ``_repr_html_``. A
label spelled like a protocol therefore let a program's data answer for it: an object
Series with a dict under the index label ``"__array_interface__"`` made
``np.asarray(series)`` build an array over any address the dict named (arbitrary memory
read and write in the worker).

Programs cannot write such names themselves (the compile rules and ``_getattr_`` refuse
``_``-names), so only library code asks for them, and it must get the object's own
attribute or an ``AttributeError``, never a label. :func:`install` wraps the
``__getattr__`` of every pandas class that serves labels so that a name starting with
``_`` goes straight to ``object.__getattribute__`` (which re-raises the real
``AttributeError``). It is installed when :mod:`sandbox.guards` or :mod:`sandbox.codec`
is imported, so in the zygote (before it forks workers), in ``unsafe-inprocess`` mode and
in the parent that decodes results; it changes pandas process-wide only for ``_``-names.

numpy's record types do the same with their fields: ``np.record`` (a row of
``df.to_records()``) and ``np.recarray`` answer a name they lack from the fields, in
``__getattribute__``. A table with a column ``"_typ"`` holding ``"dataframe"`` made a record
pass pandas' ``isinstance(x, ABCDataFrame)`` (pandas reads ``x._typ``) and its other fields
answer ``_mgr``/``_values`` (red team 4: ``pd.concat([rec])`` treated a record as a frame).
Their ``__getattribute__`` is wrapped alike: a ``_``-name is the type's own attribute or an
``AttributeError``, never a field.
"""
from __future__ import annotations

import functools
from typing import Any, Callable

_MARK = "_binder_no_private_labels"


def _classes() -> list[type]:
    from pandas.core.generic import NDFrame
    from pandas.core.groupby.groupby import GroupBy
    from pandas.core.resample import Resampler
    from pandas.core.window.rolling import BaseWindow

    return [NDFrame, GroupBy, BaseWindow, Resampler]


def _wrap(original: Callable[[Any, str], Any]) -> Callable[[Any, str], Any]:
    @functools.wraps(original)
    def __getattr__(self: Any, name: str) -> Any:
        if type(name) is not str or name.startswith("_"):
            return object.__getattribute__(self, name)
        return original(self, name)

    setattr(__getattr__, _MARK, True)
    return __getattr__


def _field_classes() -> list[tuple[type, Callable[[Any, str], Any]]]:
    """numpy classes whose ``__getattribute__`` falls back to fields, with their plain look-up."""
    import numpy as np

    return [(np.record, np.void.__getattribute__), (np.recarray, object.__getattribute__)]


def _wrap_fields(original: Callable[[Any, str], Any], plain: Callable[[Any, str], Any]) -> Callable[[Any, str], Any]:
    @functools.wraps(original)
    def __getattribute__(self: Any, name: str) -> Any:
        if type(name) is not str or name.startswith("_"):
            return plain(self, name)
        return original(self, name)

    setattr(__getattribute__, _MARK, True)
    return __getattribute__


def install() -> None:
    """Make ``_``-names never resolve to labels on pandas objects, nor to fields of numpy
    records (idempotent)."""
    for cls, plain in _field_classes():
        original = cls.__dict__.get("__getattribute__")
        if original is None:
            raise RuntimeError(f"numpy {cls.__qualname__} no longer defines __getattribute__; "
                               "sandbox.labels must be reviewed")
        if not getattr(original, _MARK, False):
            cls.__getattribute__ = _wrap_fields(original, plain)
    for cls in _classes():
        original = cls.__dict__.get("__getattr__")
        if original is None:
            raise RuntimeError(f"pandas {cls.__qualname__} no longer defines __getattr__; "
                               "sandbox.labels must be reviewed")
        if not getattr(original, _MARK, False):
            cls.__getattr__ = _wrap(original)


def installed() -> bool:
    return all(getattr(cls.__dict__.get("__getattr__"), _MARK, False) for cls in _classes()) and all(
        getattr(cls.__dict__.get("__getattribute__"), _MARK, False) for cls, _ in _field_classes())


install()
