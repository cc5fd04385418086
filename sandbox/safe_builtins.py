"""The builtins a sandboxed program sees.

RestrictedPython 9.0's ``safe_builtins`` lacks ``sorted``, ``zip``, ``tuple``,
``bytes``, ``list``, ``dict``, ``sum``, ``min``, ``max``, ``enumerate``,
``any``, ``all``, ``map``, ``filter``: they are added back here, each feeding
its arguments through the guarded iterator first.
"""
from __future__ import annotations

import builtins as _b
import collections
import types
from typing import Any

import numpy as _np

from RestrictedPython.Guards import safe_builtins as _rp_safe_builtins

from .guards import (
    check_value,
    guarded_getattr,
    guarded_hasattr,
    guarded_import,
    guarded_iter,
    guarded_pow,
)
from .outcome import CallbackError, PolicyError
from .policy import COMPARISON_METHODS
from .vetting import is_program_class, register_handed_out


class _GuardedTypeMeta(type):
    """Metaclass making ``list`` & co. behave as types (isinstance, type(x) is
    list) while calling them guards the iteration of their argument."""

    def __instancecheck__(cls, obj: Any) -> bool:
        return isinstance(obj, cls._real)

    def __subclasscheck__(cls, sub: Any) -> bool:
        return issubclass(sub, cls._real)

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        return cls._build(*args, **kwargs)

    def __repr__(cls) -> str:
        return repr(cls._real)


def _guarded_type(real: type, build: Any) -> type:
    return _GuardedTypeMeta(real.__name__, (), {"_real": real, "_build": staticmethod(build), "__module__": "builtins"})


def _it(x: Any) -> Any:
    return guarded_iter(x)


def _list(*args: Any) -> list:
    return list(_it(args[0])) if args else list()


def _tuple(*args: Any) -> tuple:
    return tuple(_it(args[0])) if args else tuple()


def _set(*args: Any) -> set:
    return set(_it(args[0])) if args else set()


def _frozenset(*args: Any) -> frozenset:
    return frozenset(_it(args[0])) if args else frozenset()


def _dict(*args: Any, **kwargs: Any) -> dict:
    if args:
        src = args[0]
        if isinstance(src, dict):
            return dict(src, **kwargs)
        if hasattr(src, "keys") and hasattr(src, "__getitem__"):
            return dict(((k, src[k]) for k in _it(src.keys())), **kwargs)
        return dict(_it(src), **kwargs)
    return dict(**kwargs)


GUARDED_TYPES = {
    "list": _guarded_type(list, _list),
    "tuple": _guarded_type(tuple, _tuple),
    "set": _guarded_type(set, _set),
    "frozenset": _guarded_type(frozenset, _frozenset),
    "dict": _guarded_type(dict, _dict),
}
_REAL_TO_GUARDED = {t._real: t for t in GUARDED_TYPES.values()}


def _sorted(iterable: Any, /, *, key: Any = None, reverse: bool = False) -> list:
    return sorted(_it(iterable), key=key, reverse=reverse)


def _zip(*iterables: Any, strict: bool = False) -> Any:
    return zip(*(_it(i) for i in iterables), strict=strict)


def _enumerate(iterable: Any, start: int = 0) -> Any:
    return enumerate(_it(iterable), start)


def _map(fn: Any, *iterables: Any) -> Any:
    return map(fn, *(_it(i) for i in iterables))


def _filter(fn: Any, iterable: Any) -> Any:
    return filter(fn, _it(iterable))


def _reversed(seq: Any) -> Any:
    return reversed(_list(seq)) if not hasattr(seq, "__reversed__") else _it(reversed(seq))


def _sum(iterable: Any, /, start: Any = 0) -> Any:
    return sum(_it(iterable), start)


def _minmax(fn: Any) -> Any:
    def inner(*args: Any, **kwargs: Any) -> Any:
        if len(args) == 1:
            return fn(_it(args[0]), **kwargs)
        return fn(*args, **kwargs)

    inner.__name__ = fn.__name__
    return inner


def _any(iterable: Any) -> bool:
    return any(_it(iterable))


def _all(iterable: Any) -> bool:
    return all(_it(iterable))


def _iter(obj: Any, *sentinel: Any) -> Any:
    if sentinel:
        raise PolicyError("iter(callable, sentinel) is not allowed")
    return _it(obj)


def _next(it: Any, *default: Any) -> Any:
    return check_value(next(it, *default), "item")


def _type(*args: Any) -> Any:
    if len(args) != 1:
        raise PolicyError("type() with three arguments (creating classes) is not allowed")
    cls = type(args[0])
    if cls in _REAL_TO_GUARDED:
        return _REAL_TO_GUARDED[cls]
    return check_value(cls, "type(...)")


def _unwrap_types(spec: Any) -> Any:
    if isinstance(spec, tuple):
        return tuple(_unwrap_types(s) for s in spec)
    return getattr(spec, "_real", spec) if isinstance(spec, _GuardedTypeMeta) else spec


def _isinstance(obj: Any, spec: Any) -> bool:
    return isinstance(obj, _unwrap_types(spec))


def _issubclass(cls: Any, spec: Any) -> bool:
    return issubclass(_unwrap_types(cls), _unwrap_types(spec))


#: modules whose classes a program class may derive from, besides builtins and its own classes:
#: their methods are Python-level conveniences that library code does not trust for memory
_BASE_MODULES = frozenset({"builtins", "collections"})


def _base_problem(base: Any) -> str | None:
    """Why a program class may not derive from ``base``, or None.

    pandas and numpy call the public methods of their own classes and trust what they return:
    ``reindex`` takes the positions the index's ``get_indexer`` gives with Cython's unchecked
    ``take`` (red team 8: ``class R(pd.RangeIndex)`` whose ``get_indexer`` returned ``[10**8]``
    read far past the column, SIGSEGV). A program subclass overrides them (in its body, or by
    an instance attribute), so a class of a library is never a base."""
    if isinstance(base, _GuardedTypeMeta) or is_program_class(base):
        return None
    if not isinstance(base, type):
        return f"{base!r} is not a class"
    if issubclass(base, BaseException):
        return None  # an exception class: raised and caught, never called into by library code
    if issubclass(base, type):
        return "a metaclass makes classes without this check"
    if getattr(base, "__module__", None) in _BASE_MODULES:
        return None
    return (f"{getattr(base, '__module__', '?')}.{getattr(base, '__qualname__', '?')} is a library class: "
            "pandas and numpy call its methods and trust what they return, so a program may not "
            "override them; derive from a builtin class (or none) and hold the pandas object in an attribute")


def _build_class(func: Any, name: Any, *bases: Any, **kwargs: Any) -> Any:
    """The ``class`` statement: only bases :func:`_base_problem` allows, no metaclass but ``type`` (which
    RestrictedPython names in every class statement, as ``metaclass=__metaclass__``)."""
    if kwargs.get("metaclass", type) is not type:
        raise PolicyError(f"class {name}: a metaclass is not available in the sandbox")
    for base in bases:
        problem = _base_problem(base)
        if problem is not None:
            raise PolicyError(f"class {name}: {problem}")
    cls = _b.__build_class__(func, name, *bases, **kwargs)
    problem = _class_problem(cls)
    if problem is not None:
        raise PolicyError(f"class {name}: {problem}")
    return cls


def _class_problem(cls: Any) -> str | None:
    """Why a class built from allowed bases may still not be handed to the program, or None.

    A program class may not define comparisons (:data:`sandbox.policy.COMPARISON_METHODS`): numpy's
    loops over object arrays call them holding the array's objects without a reference. It may not
    inherit comparisons that run program code either: ``collections.Counter``'s are written in Python
    and read ``other[key]`` for every key of ``self``, and with ``defaultdict``'s ``__missing__`` first
    in the order of bases (``class K(defaultdict, Counter)``) a missing key calls the instance's
    ``default_factory``, a program function: one that replaced the items of an object array in the
    middle of ``a.sort()`` freed the sort's pivot, which the sort then wrote back (red team 9: a use
    after free, the worker died with SIGSEGV; ``tests/sandbox/test_raw_memory.py``)."""
    if getattr(cls, "__missing__", None) is not collections.defaultdict.__missing__:
        return None
    inherited = sorted(n for n in COMPARISON_METHODS if isinstance(getattr(cls, n, None), types.FunctionType))
    if not inherited:
        return None
    return (f"it would compare with {inherited[0]} written in Python (from "
            f"{getattr(cls, inherited[0]).__qualname__.split('.')[0]}) while defaultdict's __missing__ calls "
            "its default_factory, program code run in the middle of numpy's sorts and loops; derive from "
            "Counter or defaultdict, not both")


def _refuse(name: str) -> Any:
    def refused(*args: Any, **kwargs: Any) -> Any:
        raise PolicyError(f"{name}() is not available in the sandbox")

    refused.__name__ = name
    return refused


REFUSED_BUILTINS = (
    "open", "exec", "eval", "compile", "globals", "locals", "vars", "dir",
    "breakpoint", "input", "help", "exit", "quit", "memoryview", "setattr",
    "delattr", "super", "classmethod", "staticmethod", "property",
    "bytearray", "copyright", "credits", "license",
)


def build_builtins() -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, value in _rp_safe_builtins.items():
        if name in ("setattr", "delattr", "_getattr_"):
            continue
        out[name] = value
    for name in REFUSED_BUILTINS:
        out[name] = _refuse(name)
    out.update(GUARDED_TYPES)
    out.update({
        "__import__": guarded_import,
        "__build_class__": _build_class,
        "sorted": _sorted,
        "zip": _zip,
        "enumerate": _enumerate,
        "map": _map,
        "filter": _filter,
        "reversed": _reversed,
        "sum": _sum,
        "min": _minmax(min),
        "max": _minmax(max),
        "any": _any,
        "all": _all,
        "iter": _iter,
        "next": _next,
        "type": _type,
        "isinstance": _isinstance,
        "issubclass": _issubclass,
        "getattr": guarded_getattr,
        "hasattr": guarded_hasattr,
        "pow": guarded_pow,
        "bin": bin,
        "format": format,
        "ascii": ascii,
        "bytes": _refuse("bytes"),
        # the name `object` is numpy's object scalar type, which programs reach as np.object_ anyway: the
        # real class is the root of every class (its __subclasses__ and slot wrappers reach everything), but
        # programs name it as a dtype (astype(object), dtype=object, select_dtypes(include=object)), which
        # np.object_ means to numpy and pandas alike
        "object": _np.object_,
        "CallbackError": CallbackError,
        "ExceptionGroup": _refuse("ExceptionGroup"),
        "BaseExceptionGroup": _refuse("BaseExceptionGroup"),
    })
    for name in ("StopAsyncIteration", "RecursionError", "TimeoutError", "PermissionError",
                 "FileNotFoundError", "NotADirectoryError"):
        out[name] = getattr(_b, name)
    return out


SAFE_BUILTINS: dict[str, Any] = build_builtins()

register_handed_out(lambda: SAFE_BUILTINS.values())
