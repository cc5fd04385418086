"""Runtime guards wired into RestrictedPython's hooks.

Every attribute access, subscript, iteration, write and ``**`` in a program
goes through one of these functions.
"""
from __future__ import annotations


import functools
import inspect
import math
import operator
import sys
import string
import types
from typing import Any, Callable

import numpy as np
import pandas as pd
from RestrictedPython.Guards import guarded_iter_unpack_sequence, guarded_unpack_sequence
from RestrictedPython.transformer import INSPECT_ATTRIBUTES

from .facades import ALLOWED_MODULES, FACADES, Facade, vetted_classes
from .outcome import PolicyError

#: ``__name__`` of the program's globals; classes/functions it defines carry it.
PROGRAM_MODULE = "sandbox_program"

#: Attribute names refused on every object.
DENIED_NAMES = frozenset({
    # code evaluation and string dispatch
    "eval", "query", "pipe", "exec",
    # plotting / styling (imports matplotlib, renders files)
    "style", "plot", "plotting", "hist", "boxplot", "sparse_plot",
    # module-like members of pandas / numpy
    "io", "core", "compat", "api", "testing", "tests", "errors", "arrays",
    "tseries", "offsets", "util", "extensions", "interchange", "plotting",
    "ctypeslib", "ctypes", "lib", "libs", "f2py", "distutils",
    "polynomial", "ma", "rec", "char", "strings", "fft", "linalg", "emath",
    "typing", "exceptions",
    # options / global state
    "options", "set_option", "get_option", "reset_option", "describe_option",
    "option_context", "set_eng_float_format", "show_versions", "show_config",
    "seterr", "seterrcall", "set_printoptions", "setbufsize", "set_string_function",
    # files and raw memory
    "tofile", "fromfile", "dump", "dumps", "load", "loads", "save", "savez",
    "savez_compressed", "savetxt", "loadtxt", "genfromtxt", "memmap",
    "data_as", "string_at", "frombuffer", "DataSource",
    # introspection / interpreter internals
    "gi_frame", "gi_code", "gi_yieldfrom", "cr_frame", "cr_code",
    "cr_await", "cr_origin", "ag_frame", "ag_code", "ag_await", "tb_frame",
    "tb_next", "f_back", "f_globals", "f_locals", "f_builtins", "f_code",
    "f_trace", "co_code", "mro", "modules", "builtins", "system", "popen",
    "spawn", "fork", "import_module",
})

#: ``to_*`` members that only convert in memory.
TO_ALLOWED = frozenset({
    "to_dict", "to_list", "to_numpy", "to_string", "to_frame", "to_series",
    "to_period", "to_timestamp", "to_pydatetime", "to_pytimedelta",
    "to_datetime64", "to_timedelta64", "to_flat_index", "to_records",
    "to_numeric", "to_datetime", "to_timedelta", "to_julian_date", "to_tuples",
    "to_offset",
})

#: Function names allowed as strings in agg/aggregate/apply/transform.
AGG_ALLOWED = frozenset({
    "sum", "mean", "median", "min", "max", "count", "size", "nunique", "std",
    "var", "first", "last", "prod", "idxmin", "idxmax",
})

#: pandas callables whose ``func``/``aggfunc``/``arg`` may name a method.
AGG_METHODS = frozenset({"agg", "aggregate", "apply", "transform", "pivot_table", "crosstab"})

VETTED_MODULE_PREFIXES = (
    "pandas", "numpy", "re", "_sre", "math", "datetime", "_datetime",
    "collections", "_collections", "statistics", "sandbox", PROGRAM_MODULE,
)

_FAST_SAFE_TYPES = frozenset({
    int, float, str, bool, type(None), bytes, complex, list, tuple, dict, set,
    frozenset, range, slice, pd.Series, pd.DataFrame, pd.Index, pd.Timestamp,
    pd.Timedelta, np.ndarray, np.float64, np.int64, np.bool_,
})

_FORBIDDEN_VALUE_TYPES = (
    types.ModuleType, types.FrameType, types.CodeType, types.TracebackType,
)
_FUNCTION_TYPES = (
    types.FunctionType, types.BuiltinFunctionType, types.MethodType,
    functools.partial, types.MethodWrapperType,
)

_MISSING = object()


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


VETTED_CLASSES: frozenset[type] = frozenset(vetted_classes() | _builtin_types())


def _deny(message: str) -> PolicyError:
    return PolicyError(message)


def check_attribute_name(obj: Any, name: Any) -> None:
    if type(name) is not str:
        raise TypeError("attribute name must be a str")
    if name.startswith("_"):
        raise _deny(f"access to private or dunder attribute {name!r} is not allowed")
    if name in INSPECT_ATTRIBUTES or name in DENIED_NAMES:
        raise _deny(f"attribute {name!r} is not allowed in the sandbox")
    if name.startswith("read_"):
        raise _deny(f"attribute {name!r} reads files and is not allowed")
    if name.startswith("to_") and name not in TO_ALLOWED:
        raise _deny(f"attribute {name!r} writes or exports data and is not allowed")
    if name in ("format", "format_map", "vformat", "get_field", "get_value"):
        if isinstance(obj, (str, string.Formatter)) or (
            isinstance(obj, type) and issubclass(obj, (str, string.Formatter))
        ):
            raise _deny(f"str.{name} is not allowed (use f-strings or %)")
    if name == "obj" and isinstance(obj, BaseException):
        raise _deny("exception attribute 'obj' is not allowed")


def _is_program_class(cls: type) -> bool:
    try:
        return isinstance(cls, type) and cls.__dict__.get("__module__") == PROGRAM_MODULE
    except Exception:  # noqa: BLE001
        return False


def _module_of(value: Any) -> str | None:
    try:
        mod = value.__module__
    except Exception:  # noqa: BLE001
        return None
    return mod if isinstance(mod, str) else None


def _vetted_module(mod: str | None) -> bool:
    if mod is None:
        return False
    return mod in VETTED_MODULE_PREFIXES or mod.split(".", 1)[0] in VETTED_MODULE_PREFIXES


def check_value(value: Any, name: str = "") -> Any:
    """Refuse values a program must never hold; wrap string-dispatching calls."""
    t = type(value)
    if t in _FAST_SAFE_TYPES:
        return value
    if isinstance(value, Facade):
        return value
    if isinstance(value, _FORBIDDEN_VALUE_TYPES):
        raise _deny(f"{name or 'value'!s} is a {t.__name__} object, which programs may not hold")
    if isinstance(value, type):
        if value in VETTED_CLASSES or _is_program_class(value):
            return value
        raise _deny(f"{name or 'value'} is a class that is not available in the sandbox")
    if isinstance(value, _FUNCTION_TYPES):
        owner = getattr(value, "__self__", None)
        if owner is None or isinstance(owner, types.ModuleType):
            mod = _module_of(value)
            if mod is None and isinstance(owner, types.ModuleType):
                mod = owner.__name__
            if not _vetted_module(mod):
                raise _deny(f"{name or 'function'} comes from module {mod!r}, which is not vetted")
        if name in AGG_METHODS and _vetted_module(_module_of(value)) and (
            (_module_of(value) or "").startswith("pandas")
        ):
            return _wrap_agg(value, name)
        if name == "to_string":
            return _wrap_to_string(value)
    return value


# ------------------------------------------------------------ string dispatch

def check_func_spec(spec: Any, where: str, depth: int = 0) -> None:
    """Refuse method names outside AGG_ALLOWED in an agg-like ``func``."""
    if depth > 4:
        return
    if isinstance(spec, str):
        if spec not in AGG_ALLOWED:
            raise _deny(
                f"{where}: function name {spec!r} is not allowed as a string "
                f"(allowed: {', '.join(sorted(AGG_ALLOWED))}); pass a function instead"
            )
    elif isinstance(spec, dict):
        for v in spec.values():
            check_func_spec(v, where, depth + 1)
    elif isinstance(spec, (list, tuple)):
        for v in spec:
            if isinstance(v, tuple) and len(v) == 2 and isinstance(v[0], str):
                check_func_spec(v[1], where, depth + 1)  # (name, func) pairs
            else:
                check_func_spec(v, where, depth + 1)


_SIG_CACHE: dict[Any, inspect.Signature | None] = {}
_FUNC_PARAMS = ("func", "aggfunc", "arg")


def _signature(fn: Callable) -> inspect.Signature | None:
    key = getattr(fn, "__func__", fn)
    try:
        return _SIG_CACHE[key]
    except (KeyError, TypeError):
        pass
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        sig = None
    try:
        _SIG_CACHE[key] = sig
    except TypeError:
        pass
    return sig


def _wrap_agg(fn: Callable, name: str) -> Callable:
    def guarded(*args: Any, **kwargs: Any) -> Any:
        sig = _signature(fn)
        if sig is None:
            for a in args[:2]:
                check_func_spec(a, name)
        else:
            try:
                bound = sig.bind_partial(*args, **kwargs)
            except TypeError as exc:
                raise TypeError(f"{name}(): {exc}") from None
            for pname, pvalue in bound.arguments.items():
                param = sig.parameters[pname]
                if pname in _FUNC_PARAMS:
                    check_func_spec(pvalue, name)
                elif param.kind is inspect.Parameter.VAR_KEYWORD and name in ("agg", "aggregate"):
                    for v in pvalue.values():  # named aggregation: col=("x", "sum")
                        if isinstance(v, tuple) and len(v) == 2:
                            check_func_spec(v[1], name)
        return fn(*args, **kwargs)

    guarded.__name__ = name
    guarded.__qualname__ = name
    guarded.__module__ = "sandbox.guards"
    return guarded


def _wrap_to_string(fn: Callable) -> Callable:
    def to_string(*args: Any, **kwargs: Any) -> Any:
        if (args and args[0] is not None) or kwargs.get("buf") is not None:
            raise _deny("to_string(buf=...) writes to a file; call it without a buffer")
        return fn(*args, **kwargs)

    to_string.__module__ = "sandbox.guards"
    return to_string


# ------------------------------------------------------------------ the hooks

def guarded_getattr(obj: Any, name: Any, default: Any = _MISSING) -> Any:
    check_attribute_name(obj, name)
    if isinstance(obj, Facade):
        if obj.facade_has(name):
            return getattr(obj, name)
        if default is not _MISSING:
            return default
        return getattr(obj, name)  # raises a helpful AttributeError
    try:
        value = getattr(obj, name)
    except AttributeError:
        if default is not _MISSING:
            return default
        raise
    return check_value(value, name)


def guarded_hasattr(obj: Any, name: Any) -> bool:
    try:
        guarded_getattr(obj, name)
    except AttributeError:
        return False
    return True


def guarded_getitem(obj: Any, key: Any) -> Any:
    value = obj[key]
    if type(value) in _FAST_SAFE_TYPES:
        return value
    return check_value(value, "item")


def _checked(iterator: Any) -> Any:
    for item in iterator:
        if type(item) not in _FAST_SAFE_TYPES:
            check_value(item, "item")
        yield item


def guarded_iter(obj: Any) -> Any:
    t = type(obj)
    if t is str or t is range or t is bytes:
        return iter(obj)
    if isinstance(obj, (np.ndarray, pd.Series, pd.Index)) and getattr(obj.dtype, "kind", "O") in "biufcmM":
        return iter(obj)
    return _checked(iter(obj))


_INDEXER_TYPES: tuple[type, ...] = tuple(
    type(getattr(pd.DataFrame({"a": [1]}), n)) for n in ("loc", "iloc", "at", "iat")
)
_WRITABLE_TYPES: tuple[type, ...] = (
    list, dict, set, pd.DataFrame, pd.Series, np.ndarray,
) + _INDEXER_TYPES


def guarded_write(obj: Any) -> Any:
    if isinstance(obj, _WRITABLE_TYPES):
        return obj
    cls = type(obj)
    if _is_program_class(cls) and not isinstance(obj, (type, Facade)):
        return obj
    raise _deny(f"modifying a {cls.__name__} object is not allowed")


MAX_POW_BITS = 1 << 24


def guarded_pow(base: Any, exp: Any, mod: Any = None) -> Any:
    if mod is None:
        if type(base) in (int, bool) and type(exp) in (int, bool) and exp > 0 and abs(base) > 1:
            if exp * math.log2(abs(base)) > MAX_POW_BITS:
                raise MemoryError(f"integer power {base} ** {exp} would be too large")
        return base ** exp
    return pow(base, exp, mod)


_INPLACE_OPS: dict[str, Callable[[Any, Any], Any]] = {
    "+=": operator.iadd, "-=": operator.isub, "*=": operator.imul,
    "/=": operator.itruediv, "//=": operator.ifloordiv, "%=": operator.imod,
    "**=": lambda a, b: guarded_pow(a, b), "<<=": operator.ilshift,
    ">>=": operator.irshift, "|=": operator.ior, "^=": operator.ixor,
    "&=": operator.iand, "@=": operator.imatmul,
}


def guarded_inplacevar(op: str, x: Any, y: Any) -> Any:
    try:
        fn = _INPLACE_OPS[op]
    except KeyError:
        raise _deny(f"operator {op} is not allowed") from None
    return fn(x, y)


def guarded_apply(fn: Any, *args: Any, **kwargs: Any) -> Any:
    return fn(*args, **kwargs)


def guarded_import(name: str, globals: Any = None, locals: Any = None,
                   fromlist: Any = (), level: int = 0) -> Any:
    # C code (e.g. datetime.strftime needs ``time``) imports through the builtins of the
    # calling frame, i.e. through this guard, with a *list* as fromlist (PyImport_Import).
    # An import statement passes None or a tuple, and programs cannot call __import__
    # themselves, so a list marks an interpreter-internal import. It gets the module only
    # when it is already loaded: no new code is loaded, and the module goes to C code,
    # not to the program.
    if type(fromlist) is list and level == 0 and type(name) is str and name in sys.modules:
        return sys.modules[name]
    if level != 0 or type(name) is not str or name not in FACADES:
        raise _deny(
            f"import of module {name!r} is not allowed "
            f"(allowed: {', '.join(ALLOWED_MODULES)})"
        )
    return FACADES[name]


HOOKS: dict[str, Any] = {
    "_getattr_": guarded_getattr,
    "_getitem_": guarded_getitem,
    "_getiter_": guarded_iter,
    "_iter_unpack_sequence_": guarded_iter_unpack_sequence,
    "_unpack_sequence_": guarded_unpack_sequence,
    "_write_": guarded_write,
    "_inplacevar_": guarded_inplacevar,
    "_apply_": guarded_apply,
    "_binder_pow_": guarded_pow,
}
