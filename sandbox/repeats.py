"""``repeat`` with counts whose total numpy cannot count.

numpy's ``repeat`` (``np.repeat``, ``ndarray.repeat``) adds up the counts in a C integer without
an overflow check, allocates the wrapped total, then copies every element as many times as its
count says: ``np.repeat(np.arange(4), 2**62)`` allocated ``4 * 2**62 = 2**64``, wrapped to 0,
elements and wrote past the end (a heap overflow, SIGSEGV in the worker; red team 6), and so did
``[2**62, 2**62, 2**62, 2**62 + 5]`` (a total of 5). Every pandas ``repeat`` ends there
(``Series``, ``Index``, ``MultiIndex``, ``Categorical``, datetime, masked, interval, Arrow-backed
and sparse arrays: ``ExtensionArray.repeat`` repeats positions).

So the counts are added up in Python integers first (:func:`check`): a total over
:data:`MAX_TOTAL` elements (no array that long fits in memory) is refused. The check sits in front
of numpy's ``repeat`` where a program reaches it (the ``np.repeat`` facade member, ``a.repeat`` and
``np.ndarray.repeat``: :func:`guard_member`, registered with :mod:`sandbox.rawmemory`) and in front
of every pandas class's ``repeat`` (:func:`install`, process-wide, since pandas calls numpy's method
itself).
"""
from __future__ import annotations

import functools
import operator
import types
from typing import Any, Callable

import numpy as np

from . import rawmemory
from .outcome import PolicyError

#: the most elements a repeat may make (numpy counts in 64-bit integers; no such array fits in memory)
MAX_TOTAL = 1 << 48
_RAW_NP_REPEAT = np.repeat
_RAW_REPEAT = np.ndarray.repeat
_MARK = "_binder_checked_repeat"


def check(length: int, repeats: Any) -> None:
    """Refuse ``repeats`` if repeating ``length`` elements by it would make more than :data:`MAX_TOTAL`."""
    try:
        counts = np.asarray(repeats)
    except Exception:  # noqa: BLE001 - numpy raises its own error on the call
        return
    if counts.size == 0 or counts.dtype.kind not in "iub":
        return
    largest = max(int(counts.max()), -int(counts.min()))
    total = largest * (length if counts.size == 1 else counts.size)
    if total > MAX_TOTAL:
        raise PolicyError(f"repeat(): {largest:,} repeats of {length:,} elements would make more than {MAX_TOTAL:,} "
                          "elements (numpy's count of them overflows)")


def _length(shape: tuple[int, ...], size: int, axis: Any) -> int:
    if axis is None:
        return size
    try:
        return shape[operator.index(axis)]
    except (TypeError, IndexError):
        return size  # numpy raises its own error on the call


def _repeats_axis(args: tuple[Any, ...], kwargs: dict[str, Any], axis_default: Any = None) -> tuple[Any, Any]:
    repeats = args[0] if args else kwargs.get("repeats")
    axis = args[1] if len(args) > 1 else kwargs.get("axis", axis_default)
    return repeats, axis


def _np_repeat(a: Any, repeats: Any, axis: Any = None) -> Any:
    arr = np.asanyarray(a)
    check(_length(arr.shape, arr.size, axis), repeats)
    return _RAW_NP_REPEAT(arr, repeats, axis)


_np_repeat.__name__ = _np_repeat.__qualname__ = "repeat"
_np_repeat.__doc__ = _RAW_NP_REPEAT.__doc__


def guard_member(value: Any) -> Callable[..., Any] | None:
    """A checked stand-in for ``np.repeat``, ``np.ndarray.repeat`` and ``a.repeat``, else None."""
    if value is _RAW_NP_REPEAT:
        return _np_repeat
    if value is _RAW_REPEAT:
        def repeat(self: Any, *args: Any, **kwargs: Any) -> Any:
            repeats, axis = _repeats_axis(args, kwargs)
            if isinstance(self, np.ndarray):
                check(_length(self.shape, self.size, axis), repeats)
            return _RAW_REPEAT(self, *args, **kwargs)
    elif type(value) is types.BuiltinMethodType and getattr(value, "__name__", None) == "repeat" \
            and isinstance(getattr(value, "__self__", None), np.ndarray):
        bound, owner = value, value.__self__

        def repeat(*args: Any, **kwargs: Any) -> Any:  # type: ignore[misc]
            repeats, axis = _repeats_axis(args, kwargs)
            check(_length(owner.shape, owner.size, axis), repeats)
            return bound(*args, **kwargs)
    else:
        return None
    repeat.__module__ = __name__
    return repeat


rawmemory.MEMBER_GUARDS.append(guard_member)


def _checked(original: Callable[..., Any], axis_default: Any) -> Callable[..., Any]:
    @functools.wraps(original)
    def repeat(self: Any, *args: Any, **kwargs: Any) -> Any:
        repeats, axis = _repeats_axis(args, kwargs, axis_default)
        shape = getattr(self, "shape", (len(self),))
        check(_length(tuple(shape), int(np.prod(shape, dtype=object)), axis), repeats)
        return original(self, *args, **kwargs)

    setattr(repeat, _MARK, True)
    return repeat


def _classes() -> list[tuple[type, Callable[..., Any], Any]]:
    """The pandas classes that define ``repeat``, their own ``repeat`` and its default axis."""
    import pandas as pd
    from pandas._libs.arrays import NDArrayBacked
    from pandas.core.arrays._mixins import NDArrayBackedExtensionArray
    from pandas.core.arrays.base import ExtensionArray
    from pandas.core.arrays.interval import IntervalArray

    out: list[tuple[type, Callable[..., Any], Any]] = []
    for cls in (pd.Series, pd.Index, pd.MultiIndex, ExtensionArray, IntervalArray):
        out.append((cls, cls.__dict__["repeat"], None))
    # Categorical, datetime and string arrays inherit NDArrayBacked.repeat (a Cython method): a
    # checked one on their Python base class stands in front of it
    own = NDArrayBackedExtensionArray.__dict__.get("repeat")
    out.append((NDArrayBackedExtensionArray, own if own is not None else NDArrayBacked.repeat, 0))
    return out


def install() -> None:
    """Check the counts of every pandas ``repeat`` first (idempotent, process-wide)."""
    for cls, original, axis_default in _classes():
        if not getattr(original, _MARK, False):
            setattr(cls, "repeat", _checked(original, axis_default))


def installed() -> bool:
    return all(getattr(original, _MARK, False) for _cls, original, _axis in _classes())


install()
