"""Integer arrays pandas trusts as positions ("codes"), kept out of a program's reach.

A ``Categorical`` stores its values as codes into its categories, a ``MultiIndex`` as codes into
its levels. pandas checks codes when they are made from user input and then trusts them: Cython
loops index with them without bounds checks (``groupby(..., observed=False).sum()`` adds each
value at ``out[code]``, ``MultiIndex.tolist()`` takes ``levels[code]``). Codes the program can
still write to after pandas checked them were a heap write at a chosen distance and of a chosen
value (red team 4: the worker died with SIGSEGV). A program got writable codes by

* keeping the array it passed: ``Categorical.from_codes(codes, ...)``, ``pd.MultiIndex(levels,
  codes)`` and ``mi.set_codes(codes)`` store the caller's array (or a view of it) as it is;
* skipping the check: ``from_codes(..., validate=False)``, ``verify_integrity=False``;
* making a read-only view writable again: ``codes.setflags(write=True)``, or taking the
  writable array under it, ``codes.base`` (pandas hands out codes as read-only views);
* viewing a ``Categorical`` as integers: ``cat.view("i1")`` (also behind ``CategoricalIndex.view``).

So: the constructors run with the check on and copy what they were given (a stand-in for
``pd.MultiIndex``, guarded ``from_codes``/``set_codes``/``set_levels``), ``setflags(write=True)``
and the ``base`` of an array are refused, and a ``Categorical``'s integer view is read-only
(process-wide, :func:`install`, so pandas' own routes to it are covered too).
"""
from __future__ import annotations

import inspect
import types
from typing import Any, Callable

import numpy as np
import pandas as pd
from pandas.core.arrays._mixins import NDArrayBackedExtensionArray

from . import rawmemory
from .outcome import PolicyError

_RAW_MULTIINDEX = pd.MultiIndex
_MULTIINDEX_NEW = inspect.signature(pd.MultiIndex.__new__)
_FROM_CODES = pd.Categorical.from_codes.__func__
_SET_CODES = pd.MultiIndex.set_codes
_SET_LEVELS = pd.MultiIndex.set_levels
_SETFLAGS = np.ndarray.setflags
_RAW_VIEW = NDArrayBackedExtensionArray.view


def _bind(fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> inspect.BoundArguments:
    bound = inspect.signature(fn).bind(*args, **kwargs)  # a TypeError, as the call itself would raise
    return bound


class MultiIndex(pd.MultiIndex, metaclass=rawmemory.StandInMeta):
    """What a program gets for ``pd.MultiIndex``: the constructor always checks the codes against
    the levels and copies them (it returns a plain ``pd.MultiIndex``). pandas' own class methods
    (``from_tuples``, ``from_product``) call it too and pass ``verify_integrity=False``: checked
    anyway."""

    _stand_in_for = _RAW_MULTIINDEX

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        bound = _MULTIINDEX_NEW.bind(_RAW_MULTIINDEX, *args, **kwargs)
        bound.arguments["verify_integrity"] = True
        bound.arguments["copy"] = True
        return _RAW_MULTIINDEX(*bound.args[1:], **bound.kwargs)


MultiIndex.__module__ = _RAW_MULTIINDEX.__module__
MultiIndex.__name__ = MultiIndex.__qualname__ = "MultiIndex"
rawmemory.STAND_INS[_RAW_MULTIINDEX] = MultiIndex


def _checked_call(fn: Callable[..., Any], flag: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """``fn(*args, **kwargs)`` with the check ``flag`` on, then a copy of the result that owns its
    codes (the caller may hold the array it passed, or a view of it)."""
    bound = _bind(fn, args, kwargs)
    bound.arguments[flag] = True
    result = fn(*bound.args, **bound.kwargs)
    if isinstance(result, pd.Categorical):
        return result.copy()
    if isinstance(result, _RAW_MULTIINDEX):
        return result.copy(deep=True)
    return result


def _refuse_write(write: Any) -> None:
    if write:
        raise PolicyError("setflags(write=True) is not allowed: pandas hands out read-only views of data it "
                          "trusts (categorical and MultiIndex codes); use a.copy() for an array you can change")


def guard_member(value: Any) -> Callable[..., Any] | None:
    """A checked stand-in for the members above (bound or not), else None."""
    t = type(value)
    func = getattr(value, "__func__", None) if t is types.MethodType else None
    if func is _FROM_CODES:
        cls = value.__self__

        def from_codes(*args: Any, **kwargs: Any) -> Any:
            return _checked_call(_FROM_CODES, "validate", (cls, *args), kwargs)
        guarded: Callable[..., Any] = from_codes
    elif value is _SET_CODES or value is _SET_LEVELS or func is _SET_CODES or func is _SET_LEVELS:
        raw = func or value
        head = (value.__self__,) if func is not None else ()

        def set_codes_or_levels(*args: Any, **kwargs: Any) -> Any:
            return _checked_call(raw, "verify_integrity", (*head, *args), kwargs)
        guarded = set_codes_or_levels
        guarded.__name__ = raw.__name__
    elif value is _SETFLAGS:
        def setflags(self: Any, write: Any = None, align: Any = None, uic: Any = None) -> Any:
            _refuse_write(write)
            return _SETFLAGS(self, write, align, uic)
        guarded = setflags
    elif t is types.BuiltinMethodType and getattr(value, "__name__", None) == "setflags" \
            and isinstance(getattr(value, "__self__", None), np.ndarray):
        bound_setflags = value

        def setflags(write: Any = None, align: Any = None, uic: Any = None) -> Any:  # type: ignore[misc]
            _refuse_write(write)
            return bound_setflags(write, align, uic)
        guarded = setflags
    else:
        return None
    guarded.__module__ = __name__
    return guarded


rawmemory.MEMBER_GUARDS.append(guard_member)


def attribute_problem(obj: Any, name: str) -> str | None:
    """Why ``obj.<name>`` is refused by this module's rule, or None."""
    if name == "base" and isinstance(obj, (np.ndarray, np.generic)):
        return ("an array's 'base' is refused: under a read-only view pandas hands out (categorical and "
                "MultiIndex codes) it is the writable array pandas trusts; use the array itself or a.copy()")
    return None


def _view(self: Any, dtype: Any = None) -> Any:
    result = _RAW_VIEW(self, dtype)
    # a read-only array's view is read-only too: pandas' own view dropped ``_readonly``, so
    # ``idx.array.view()`` was a writable alias of an Index's labels (sandbox.indexdata)
    readonly = getattr(self, "_readonly", False) is True
    if isinstance(result, np.ndarray) and result.flags.writeable and (readonly or isinstance(self, pd.Categorical)):
        result = result.view(type(result))
        result.flags.writeable = False
    elif readonly and isinstance(result, NDArrayBackedExtensionArray):
        result._readonly = True
    return result


def install() -> None:
    """A ``Categorical`` viewed as integers is a read-only view of its codes, and a read-only array's
    view is read-only (process-wide wherever the guards are imported: in the zygote and in
    ``unsafe-inprocess`` mode; pandas never writes to such a view)."""
    if NDArrayBackedExtensionArray.__dict__.get("view") is _RAW_VIEW:
        _view.__doc__ = _RAW_VIEW.__doc__
        _view.__name__ = _RAW_VIEW.__name__
        _view.__qualname__ = _RAW_VIEW.__qualname__
        NDArrayBackedExtensionArray.view = _view  # type: ignore[method-assign]


install()
