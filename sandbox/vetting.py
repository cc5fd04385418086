"""What a program may hold and call: vetted modules, classes and callables.

One rule (:func:`callable_problem`, :func:`class_problem`) serves the value check
(:mod:`sandbox.guards`, for every value that reaches a program) and the function-spec
checks (:mod:`sandbox.dispatch`, for every function pandas/numpy would call).
"""
from __future__ import annotations

import functools
import re
import types
from contextvars import ContextVar, Token
from collections.abc import Callable, Iterable
from typing import Any, Mapping

from .names import ENTRY_POINT_NAMES, PROGRAM_MODULE, check_attribute_name
from .outcome import PolicyError

VETTED_MODULE_PREFIXES = (
    "pandas", "numpy", "re", "_sre", "math", "datetime", "_datetime",
    "collections", "_collections", "statistics", "sandbox", PROGRAM_MODULE,
)
#: Public methods whose ``__name__`` differs from the public name pandas gives them.
_PRIVATE_NAMED_ALIASES = frozenset({"_get_level_values"})

_DESCRIPTOR_TYPES = (
    types.MethodDescriptorType, types.ClassMethodDescriptorType,
    types.WrapperDescriptorType, types.MethodWrapperType,
)
#: C functions and methods: ``builtin_function_or_method``, and ``builtin_method``, its subclass for C
#: methods that take their defining class (``re.compile(p).sub``, ``.match``, ``.search``: refused as
#: "a callable builtin_method object from module None" while ``.findall`` ran)
_BUILTIN_TYPES = frozenset({types.BuiltinFunctionType, type(re.compile("").match)})


#: callables the trusted caller placed in the program's namespace (callback proxies,
#: ``worker_globals`` functions), keyed by id; the dict holds them, so ids stay valid.
_TRUSTED: ContextVar[Mapping[int, Any]] = ContextVar("sandbox_trusted_callables", default={})


def trust_namespace(namespace: Mapping[str, Any]) -> Token:
    """Allow the callables already in ``namespace`` (before the program runs)."""
    trusted = {id(v): v for k, v in namespace.items() if k != "__builtins__" and callable(v)}
    return _TRUSTED.set(trusted)


def untrust(token: Token) -> None:
    _TRUSTED.reset(token)


def is_program_class(cls: Any) -> bool:
    try:
        return isinstance(cls, type) and cls.__dict__.get("__module__") == PROGRAM_MODULE
    except Exception:  # noqa: BLE001
        return False


def module_of(value: Any) -> str | None:
    try:
        mod = value.__module__
    except Exception:  # noqa: BLE001
        return None
    return mod if isinstance(mod, str) else None


def vetted_module(mod: str | None) -> bool:
    if mod is None:
        return False
    return mod in VETTED_MODULE_PREFIXES or mod.split(".", 1)[0] in VETTED_MODULE_PREFIXES


def _builtin_types() -> set[type]:
    import builtins as _b

    out = {
        int, float, str, bool, list, tuple, dict, set, frozenset, bytes, complex,
        range, slice, object, type(None),
    }
    for name in dir(_b):
        value = getattr(_b, name)
        if isinstance(value, type) and issubclass(value, BaseException):
            out.add(value)
    return out


#: what the modules that hand values to programs register (the facades, the sandbox builtins):
#: functions returning the values they hand out. Registering, instead of importing them here,
#: keeps this module below them (they import it).
_HANDED_OUT: list[Callable[[], Iterable[Any]]] = []


def register_handed_out(values: Callable[[], Iterable[Any]]) -> None:
    """Declare values a program is handed (their classes and callables are vetted)."""
    _HANDED_OUT.append(values)
    vetted_classes.cache_clear()
    _vetted_callables.cache_clear()


def _handed_out() -> list[Any]:
    return [value for values in _HANDED_OUT for value in values()]


@functools.cache
def vetted_classes() -> frozenset[type]:
    """Classes a program may hold and call: those the facades hand out, and builtins."""
    return frozenset({v for v in _handed_out() if isinstance(v, type)} | _builtin_types())


@functools.cache
def _vetted_callables() -> Mapping[int, Any]:
    """Facade members and sandbox builtins, by id (the dict keeps them alive)."""
    return {id(value): value for value in _handed_out() if callable(value)}


def warm() -> None:
    """Compute the cached allow-lists (the zygote does this once, before it forks workers)."""
    vetted_classes()
    _vetted_callables()


def is_vetted_callable(value: Any) -> bool:
    """A facade member or sandbox builtin (for example the guarded ``dict`` type)."""
    return id(value) in _vetted_callables()


def _name_problem(owner: Any, name: Any) -> str | None:
    if type(name) is not str:
        return "it has no name"
    if name in _PRIVATE_NAMED_ALIASES:
        return None
    try:
        check_attribute_name(owner, name)
    except PolicyError as exc:
        return str(exc)
    return None


def _dispatcher_problem(name: Any, mod: str | None) -> str | None:
    if name in ENTRY_POINT_NAMES and not (mod or "").startswith("sandbox"):
        return f"the method {name!r} may only be called as obj.{name}(...), where the sandbox checks its arguments"
    return None


def _function_problem(mod: str | None, name: Any) -> str | None:
    if not vetted_module(mod):
        return f"it comes from module {mod!r}, which is not vetted"
    return _name_problem(None, name) or _dispatcher_problem(name, mod)


def _owner_problem(owner: Any) -> str | None:
    """Why a method bound to ``owner`` (an object, or a class for a class method) may not be called:
    ``owner``'s class comes from a module that is not vetted. A program may hold such objects (a
    time stamp's ``tz`` is a ``zoneinfo.ZoneInfo``, an Arrow column's ``dtype.pyarrow_dtype`` a
    ``pyarrow.DataType``), but their methods were never reviewed: ``ts.tz.from_file(f)`` read a
    program object's ``read()`` as a TZif file, and CPython's C reader accepts a transition index
    one past its table (red team 8: an out-of-bounds read of object pointers)."""
    if owner is None or isinstance(owner, types.ModuleType):
        return None
    cls = owner if isinstance(owner, type) else type(owner)
    mod = module_of(cls)
    if mod == "builtins" or vetted_module(mod):
        return None
    return f"it is a method of {mod}.{getattr(cls, '__qualname__', '?')}, whose module is not vetted"


def class_problem(cls: Any) -> str | None:
    if cls in vetted_classes() or is_program_class(cls) or is_vetted_callable(cls):
        return None
    return "it is a class that is not available in the sandbox"


def callable_problem(fn: Any, name_checked: bool = False) -> str | None:
    """Why the sandbox does not allow calling ``fn``, or None if it does.

    ``name_checked``: ``fn`` was just obtained as an attribute whose name passed the
    attribute rule, so a method's own ``__name__`` (it may be an alias) is not checked again.
    """
    ident = id(fn)
    if ident in _vetted_callables() or ident in _TRUSTED.get():
        return None
    t = type(fn)
    if t is types.FunctionType:
        mod = module_of(fn)
        if mod == PROGRAM_MODULE:
            return None
        if name_checked:
            return None if vetted_module(mod) else f"it comes from module {mod!r}, which is not vetted"
        return _function_problem(mod, fn.__name__)
    if t is types.MethodType:
        func = fn.__func__
        if module_of(func) == PROGRAM_MODULE:
            return None
        problem = _owner_problem(fn.__self__)
        if problem is None and not vetted_module(module_of(func)):
            problem = f"it comes from module {module_of(func)!r}, which is not vetted"
        if problem is not None:
            return problem
        name = getattr(func, "__name__", None)
        return None if name_checked else (_name_problem(fn.__self__, name) or _dispatcher_problem(name, module_of(func)))
    if t in _BUILTIN_TYPES:
        owner = fn.__self__
        if owner is None or isinstance(owner, types.ModuleType):
            mod = module_of(fn)
            if mod is None and isinstance(owner, types.ModuleType):
                mod = owner.__name__
            return _function_problem(mod, fn.__name__)
        return _owner_problem(owner) or (None if name_checked else _name_problem(owner, fn.__name__))
    if t in _DESCRIPTOR_TYPES:
        owner = getattr(fn, "__objclass__", None) or getattr(fn, "__self__", None)
        return _owner_problem(owner) or (None if name_checked else _name_problem(owner, getattr(fn, "__name__", None)))
    if isinstance(fn, type):
        return class_problem(fn)
    if isinstance(fn, functools.partial):
        return "partial objects are not available in the sandbox"
    if not callable(fn):
        return f"a {t.__name__} object is not callable"
    if is_program_class(t):
        return None
    mod = module_of(fn)
    if not vetted_module(mod) and not vetted_module(module_of(t)):
        return f"it is a callable {t.__name__} object from module {mod!r}, which is not vetted"
    own_name = getattr(fn, "__name__", None) if not name_checked else None
    return _name_problem(None, own_name) if type(own_name) is str else None
