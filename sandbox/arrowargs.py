"""Integer options of Arrow compute kernels, bounded before Arrow sees them.

pandas 3 keeps text columns in Arrow (``str`` is ``string[pyarrow]``) and runs their ``.str``
methods, and those of ``int64[pyarrow]`` and list columns, as Arrow compute kernels, handing the
kernel the program's integers as options. Arrow does its size and position arithmetic on these in
C++ int64 (or int32), unchecked near the limits (red team 6, pyarrow 26):

* ``s.str.center(2**62)`` (``pad``, ``ljust``, ``rjust``, ``zfill`` alike): the output size
  ``rows * width * 4`` wraps to a small number, Arrow allocates that and writes the padding past
  it: a heap overflow, SIGSEGV in the worker;
* ``s.str.repeat(6148914691236517206)`` on three-character texts: ``3 * n`` wraps past 2**64 to a
  few bytes, the same heap overflow with the program's text;
* ``s.str.slice(2**63 - 1, 1, -1)``: ``start + 1`` overflows (SIGFPE), and with ``stop=0`` the
  result is texts of the right length never written (uninitialised memory);
* ``s.round(2**31 - 1)`` of an ``int64[pyarrow]`` column: SIGSEGV (from 5,310,692 on);
  ``.str.rsplit(n=2**28)``: SIGABRT.
* ``s.list[2**20:]`` of a list column (``list_slice``, red team 10): for each list Arrow appends the
  slice of its child values from ``offset + start`` without checking that position against the child,
  so a start past the lists reads the child's offsets ``start`` entries past their end (SIGSEGV from
  about 300,000 on, with the system allocator the workers use), a bound the data sets, not the kernel.

A program reaches Arrow only through pandas, and pandas calls the kernels as attributes of
:mod:`pyarrow.compute` (``pc.utf8_center(...)``). :func:`install` replaces every kernel there by a
wrapper that checks, before the call, every integer given as an *option* (the parameters after the
data arguments: widths, positions, steps, counts, digits) and the data arguments that are sizes or
positions (``num_repeats`` of ``binary_repeat``, ``index`` of ``list_element``; an integer array
there by its smallest and largest value): at most :data:`MAX_OPTION` in size, :data:`BOUNDS` for
the options Arrow fails on sooner. No text or list in a worker is that long, so only meaningless
values are refused. Data arguments (the values of ``pc.add(a, b)``) are not options and are not
checked. Installed process-wide on import (the zygote, so every worker; ``unsafe-inprocess``).
"""
from __future__ import annotations

import functools
import inspect
import operator
from typing import Any, Callable

from .outcome import PolicyError

#: the largest size an integer option of an Arrow kernel may have (positions, steps, widths, counts)
MAX_OPTION = 1 << 30
#: other bounds: options Arrow fails on below MAX_OPTION (``round``'s digits, a split's reserved pieces),
#: and None for an option Arrow converts to int32 with a check and computes with safely (the multiple of
#: ``floor``/``ceil``/``round_temporal``, tried at both int32 limits in every unit: ``dt.round("2000000000ns")``)
BOUNDS: dict[str, int | None] = {"ndigits": 1 << 20, "max_splits": 1 << 20, "multiple": None}
#: data arguments (positional-only) that are sizes or positions, checked like options
SIZE_DATA = frozenset({"num_repeats", "index"})
_NOT_OPTIONS = frozenset({"options", "memory_pool"})
#: kernels whose position options Arrow uses unchecked against the data: the options, fitted to the data
#: (by :func:`_fit_list_slice` and the like) before the kernel sees them
_FITTED: dict[str, Callable[..., tuple[tuple[Any, ...], dict[str, Any]]]] = {}
_MARK = "_binder_bounded_ints"


def _refuse(kernel: str, name: str, value: int, bound: int) -> PolicyError:
    return PolicyError(f"{value} is too large for {name!r} (Arrow's {kernel}: at most {bound:,} in size, beyond "
                       "which Arrow's integer arithmetic overflows)")


def _check(kernel: str, name: str, value: Any, raw_min_max: Callable[..., Any]) -> None:
    bound = BOUNDS.get(name, MAX_OPTION)
    if bound is None or isinstance(value, bool):
        return
    try:
        number = operator.index(value)  # int, numpy integers
    except TypeError:
        number = None
    if number is not None:
        if not -bound <= number <= bound:
            raise _refuse(kernel, name, number, bound)
        return
    if name in SIZE_DATA:
        import pyarrow as pa

        if isinstance(value, (pa.Array, pa.ChunkedArray)) and pa.types.is_integer(value.type) and len(value):
            low_high = raw_min_max(value).as_py()
            for number in (low_high["min"], low_high["max"]):
                if number is not None and not -bound <= number <= bound:
                    raise _refuse(kernel, name, number, bound)


def _fit_list_slice(args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """``list_slice(lists, start, stop, step, return_fixed_size_list)`` with ``start`` no further than the
    longest list: Arrow reads the child values at ``offset + start`` for every list, unchecked. A start past
    every list gives empty lists either way; with a fixed-size result (whose size is ``stop - start``) it is
    refused instead."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if not args or not isinstance(args[0], (pa.Array, pa.ChunkedArray)) or "options" in kwargs:
        return args, kwargs
    start = args[1] if len(args) > 1 else kwargs.get("start")
    try:
        start = operator.index(start)
    except TypeError:
        return args, kwargs
    lengths = getattr(pc.list_value_length, "__wrapped__", pc.list_value_length)(args[0])
    longest = getattr(pc.max, "__wrapped__", pc.max)(lengths).as_py() or 0
    stop = args[2] if len(args) > 2 else kwargs.get("stop")
    if start <= longest or (stop is not None and stop <= start):  # (Arrow refuses start >= stop itself)
        return args, kwargs
    fixed = args[4] if len(args) > 4 else kwargs.get("return_fixed_size_list")
    if fixed or pa.types.is_fixed_size_list(args[0].type):
        raise PolicyError(f"list slice from {start}: every list is shorter (at most {longest} items)")
    if len(args) > 1:
        return (args[0], longest, *args[2:]), kwargs
    return args, {**kwargs, "start": longest}


_FITTED["list_slice"] = _fit_list_slice


def _wrap(kernel: Callable[..., Any], raw_min_max: Callable[..., Any]) -> Callable[..., Any] | None:
    try:
        params = list(inspect.signature(kernel).parameters.values())
    except (TypeError, ValueError):
        return None
    positional = [p.name for p in params if p.kind is inspect.Parameter.POSITIONAL_ONLY]
    variadic = any(p.kind is inspect.Parameter.VAR_POSITIONAL for p in params)
    # after the data arguments come the options, by position too (none after ``*values``)
    options = [] if variadic else [p.name for p in params if p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD]
    checked = {p.name for p in params if p.name not in _NOT_OPTIONS
               and p.kind not in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.VAR_POSITIONAL)}
    sized = [(i, n) for i, n in enumerate(positional) if n in SIZE_DATA]
    if not checked and not sized:
        return None
    arity = len(positional)
    name = kernel.__name__
    fit = _FITTED.get(name)

    @functools.wraps(kernel)
    def bounded(*args: Any, **kwargs: Any) -> Any:
        for i, pname in sized:
            if i < len(args):
                _check(name, pname, args[i], raw_min_max)
        if arity != len(args) or kwargs:  # options given positionally after the data, or by name
            for pname, value in zip(options, args[arity:]):
                _check(name, pname, value, raw_min_max)
            for pname, value in kwargs.items():
                if pname in checked:
                    _check(name, pname, value, raw_min_max)
        if fit is not None:
            args, kwargs = fit(args, kwargs)
        return kernel(*args, **kwargs)

    setattr(bounded, _MARK, True)
    return bounded


def install() -> None:
    """Replace the kernels of :mod:`pyarrow.compute` by their bounded form (idempotent; nothing
    without pyarrow)."""
    try:
        import pyarrow.compute as pc
    except ImportError:
        return
    raw_min_max = getattr(pc.min_max, "__wrapped__", pc.min_max)
    for attr, kernel in list(vars(pc).items()):
        if not hasattr(kernel, "__arrow_compute_function__") or getattr(kernel, _MARK, False):
            continue
        bounded = _wrap(kernel, raw_min_max)
        if bounded is not None:
            setattr(pc, attr, bounded)


def installed() -> bool:
    try:
        import pyarrow.compute as pc
    except ImportError:
        return True
    return all(getattr(getattr(pc, n), _MARK, False) for n in ("utf8_center", "binary_repeat", "utf8_slice_codeunits"))


install()
