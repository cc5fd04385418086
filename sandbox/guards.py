"""Runtime guards wired into RestrictedPython's hooks.

Every attribute access, subscript, iteration, write and ``**`` in a program
goes through one of these functions.
"""
from __future__ import annotations

import inspect
import math
import mmap
import operator
import string
import sys
import types
from typing import Any, Callable

import numpy as np
import pandas as pd
from RestrictedPython.Guards import guarded_iter_unpack_sequence, guarded_unpack_sequence

from . import arrowargs, codes, dispatch, indexdata, labels, rawmemory, reentry, vetting  # noqa: F401 - arrowargs, labels, codes, indexdata, reentry: installed on import
from .vetting import is_program_class
from .facades import ALLOWED_MODULES, FACADES, Facade
from .names import (  # noqa: F401 - re-exported: the name rule lives in sandbox.names
    DENIED_NAMES,
    PROGRAM_MODULE,
    TO_ALLOWED,
    check_attribute_name,
)
from .outcome import PolicyError

_FAST_SAFE_TYPES = frozenset({
    int, float, str, bool, type(None), bytes, complex, list, tuple, dict, set,
    frozenset, range, slice, pd.Series, pd.DataFrame, pd.Index, pd.Timestamp,
    pd.Timedelta, np.ndarray, np.float64, np.int64, np.bool_,
})

_FORBIDDEN_VALUE_TYPES = (
    types.ModuleType, types.FrameType, types.CodeType, types.TracebackType,
    mmap.mmap,  # the mapping that carries a job's table (sandbox.handoff), reachable as array.base.base.obj
    # raw memory of any buffer (``ndarray.data``, ``np.float64(1).data``): ``cast`` reinterprets an object
    # array's pointers as integers, which numpy then wraps in a writable array (sandbox.rawmemory)
    memoryview,
    # a class's property (``pd.Index.names`` read on the class): its fget/fset are the functions behind it,
    # private ones included (``Index._set_names``), and fset changes objects ``_write_`` refuses (red team 11)
    property,
)

#: modules of pandas' own bookkeeping of a table's memory (block managers, blocks, block placements): no
#: program needs them, and their public methods take names to look up (``BlockManager.apply("__reduce_ex__")``
#: called a dunder method of every block) and positions to use unchecked. Red team 14 reached a Series'
#: manager through its ``__dict__``, which ``s.agg(x="__dict__")`` handed out.
_INTERNAL_MODULES = ("pandas.core.internals", "pandas._libs.internals")

_MISSING = object()


def _deny(message: str) -> PolicyError:
    return PolicyError(message)


def check_value(value: Any, name: str = "", name_checked: bool = False, replace: bool = True) -> Any:
    """The value check: refuse values a program must never hold; guard entry points.

    Applied to every attribute result, item, iterated value, call result and argument.
    ``name_checked``: ``value`` is ``obj.<name>`` and ``name`` passed the attribute rule.
    ``replace=False``: the caller cannot substitute the result (a function's arguments),
    so a value that would be replaced by its guarded form is refused instead.
    """
    t = type(value)
    if t in _FAST_SAFE_TYPES:
        return value
    if isinstance(value, Facade):
        return value
    if isinstance(value, _FORBIDDEN_VALUE_TYPES) or (getattr(t, "__module__", None) or "").startswith(_INTERNAL_MODULES):
        raise _deny(f"{name or 'value'!s} is a {t.__name__} object, which programs may not hold")
    if isinstance(value, type):
        guarded_class = rawmemory.stand_in(value)
        if guarded_class is not None:
            return guarded_class
        if vetting.class_problem(value) is None:
            return value
        raise _deny(f"{name or 'value'} is a class that is not available in the sandbox")
    if callable(value):
        guarded = dispatch.guard_entry_point(value, name) or rawmemory.guard_member(value)
        if guarded is not None:
            if not replace:
                raise _deny(f"{name or 'value'}: the method {guarded.__name__!r} may only be called as "
                            f"obj.{guarded.__name__}(...), where the sandbox checks its arguments")
            return guarded
        problem = vetting.callable_problem(value, name_checked)
        if problem is not None:
            raise _deny(f"{name or 'value'} is not available in the sandbox: {problem}")
        if name == "to_string" and (vetting.module_of(value) or "").startswith("pandas"):
            return _wrap_to_string(value)
    return value


def _format_fields_problem(fmt: str, depth: int = 0) -> str | None:
    """Why ``fmt.format(x)`` would reach more than ``x`` itself (an attribute or item of it, such as
    ``{0.__class__.__mro__}``, also in a nested format spec), or None."""
    try:
        parts = list(string.Formatter().parse(fmt))
    except ValueError as exc:
        return str(exc)
    for _literal, field, spec, _conversion in parts:
        if field is not None and not (field == "" or field.isdigit()):
            return f"the field {{{field}}} looks up attributes or items"
        if spec and "{" in spec and (depth > 2 or _format_fields_problem(spec, depth + 1)):
            return "a nested field in a format spec"
    return None


def _wrap_to_string(fn: Callable) -> Callable:
    def to_string(*args: Any, **kwargs: Any) -> Any:
        if (args and args[0] is not None) or kwargs.get("buf") is not None:
            raise _deny("to_string(buf=...) writes to a file; call it without a buffer")
        # pandas turns a float_format without '%' into float_format.format, i.e. str.format on the
        # program's string, whose fields reach attributes: '{0.__class__.__mro__}' listed classes
        try:
            float_format = inspect.signature(fn).bind(*args, **kwargs).arguments.get("float_format")
        except (TypeError, ValueError):
            float_format = None
        if isinstance(float_format, str):
            problem = _format_fields_problem(float_format)
            if problem is not None:
                raise _deny(f"to_string(float_format={float_format!r}): {problem}; use a plain format "
                            "such as '{:.2f}' or '%.2f'")
        return fn(*args, **kwargs)

    to_string.__module__ = "sandbox.guards"
    return to_string


# ------------------------------------------------------------------ the hooks

def guarded_getattr(obj: Any, name: Any, default: Any = _MISSING) -> Any:
    check_attribute_name(obj, name)
    problem = codes.attribute_problem(obj, name)
    if problem is not None:
        raise _deny(problem)
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
    return check_value(value, name, name_checked=True)


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
        yield item if type(item) in _FAST_SAFE_TYPES else check_value(item, "item")


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


#: array attributes a program may set: they write the array's contents, never its layout
ARRAY_CONTENT_ATTRIBUTES = frozenset({"flat", "real", "imag"})


class _ArrayWrites:
    """What ``_write_`` hands back for an array: item writes go to the array, and so do attribute
    writes of its contents (:data:`ARRAY_CONTENT_ATTRIBUTES`); its layout (``strides``, ``shape``,
    ``dtype``) cannot be changed in place.

    * ``strides``: numpy checks new strides against the memory under the array, but for an array
      over a buffer that is not an array (the job's table in the worker, ``bytes``) it adds the
      view's offset into that buffer to the buffer's length: ``y = x[k:]; y.strides = (2 * s,)``
      reached up to ``k`` elements past the end of the buffer, writable (red team 4).
    * ``shape`` and ``dtype``: numpy keeps them inside the array's memory, but the array may be the
      very object pandas holds (``np.asarray(index)`` is the Index's own array), and pandas trusts
      its length: ``a = np.asarray(df.index); a.dtype = "i1"`` made a 3-row frame's index 24 long,
      and ``df.take([20])`` read past the end of the column (red team 5). ``a.reshape(...)`` and
      ``a.view(...)`` make a new array instead.
    """

    __slots__ = ("_array",)

    def __init__(self, array: np.ndarray) -> None:
        object.__setattr__(self, "_array", array)

    def __setitem__(self, key: Any, value: Any) -> None:
        self._array[key] = value

    def __delitem__(self, key: Any) -> None:
        del self._array[key]

    def __setattr__(self, name: str, value: Any) -> None:
        if name not in ARRAY_CONTENT_ATTRIBUTES:
            raise _deny(f"setting an array's {name!r} is not allowed: an array's layout cannot change in place "
                        "(pandas may hold the same array and trust its length); make a new array with "
                        "a.reshape(...), a.view(...) or a.astype(...)")
        setattr(self._array, name, value)

    def __delattr__(self, name: str) -> None:
        raise _deny(f"deleting an array's {name!r} is not allowed")


def guarded_write(obj: Any) -> Any:
    if _refused() is not None:
        raise PolicyError(_refused())
    if isinstance(obj, np.ndarray):
        return _ArrayWrites(obj)
    if isinstance(obj, _WRITABLE_TYPES):
        return obj
    cls = type(obj)
    if is_program_class(cls) and not isinstance(obj, (type, Facade)):
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
    """``x op= y`` (a write: refused, like calls, while a library comparison or copy runs)."""
    if _refused() is not None:
        raise PolicyError(_refused())
    try:
        fn = _INPLACE_OPS[op]
    except KeyError:
        raise _deny(f"operator {op} is not allowed") from None
    return fn(x, y)


def guarded_apply(fn: Any, *args: Any, **kwargs: Any) -> Any:
    """A call with ``*args``/``**kwargs``: the unpacked values are items taken out of a
    container, so each passes the value check before the callee (perhaps a program
    function) receives it."""
    guarded_args(*args, **kwargs)
    return guarded_call(fn, *args, **kwargs)


#: why program code may not run now, or None (:mod:`sandbox.reentry`); read inline where program code
#: enters (a function's first statement, a call, a write): one C call, no Python frame
_refused = reentry.REFUSED.get


def guarded_args(*args: Any, **kwargs: Any) -> bool:
    """First statement of every program function: what it was called with passes the value
    check (library code calls program functions with items of containers). Returns True.
    While a library comparison or copy runs (:mod:`sandbox.reentry`) no program function may run at all."""
    if _refused() is not None:
        raise PolicyError(_refused())
    for value in args:
        if type(value) not in _FAST_SAFE_TYPES:
            check_value(value, "argument", replace=False)
    for value in kwargs.values():
        if type(value) not in _FAST_SAFE_TYPES:
            check_value(value, "argument", replace=False)
    return True


def guarded_call(fn: Any, *args: Any, **kwargs: Any) -> Any:
    """Every call a program makes: its result passes the value check."""
    if _refused() is not None:
        raise PolicyError(_refused())
    value = fn(*args, **kwargs)
    if type(value) in _FAST_SAFE_TYPES:
        return value
    return check_value(value, "call result")


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
    "_binder_call_": guarded_call,
    "_binder_args_": guarded_args,
    "_binder_pow_": guarded_pow,
}
