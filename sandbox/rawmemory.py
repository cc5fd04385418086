"""numpy members that read raw memory as object pointers, in guarded form.

Three numpy features turn integers, or memory that has been freed, into ``PyObject *``:

* ``np.ndarray(shape, dtype, buffer=...)`` with a dtype that holds Python objects (``"O"``,
  or a structured dtype with an object field) reads the buffer's bytes as object pointers:
  ``np.ndarray((1,), dtype="O", buffer=np.array([address]))[0]`` is "the object at
  ``address``". With a fake object written into a ``bytes`` that gives arbitrary memory read
  and write, and from there every module, ``os.environ`` and the audit hook's globals.
* ``a.resize(n, refcheck=False)`` reallocates ``a``'s memory while views still point at the
  old block (use after free); with ``refcheck=True`` it still resized an array pandas holds
  (``np.asarray(df.index).resize(n)``, whose length pandas trusts), so in-place resize is refused.
* the other direction: a *writable integer view* of an object array's pointers.
  ``np.ndarray((n,), "i8", buffer=objects)`` read an object array's buffer as integers, and so
  did ``np.asarray(objects.data.cast("B").cast("q"))`` (``ndarray.data`` is a ``memoryview``,
  whose ``cast`` changes the format of any buffer): writing an address into that view makes
  ``objects[0]`` "the object at that address" (``os.environ`` read in strict mode, red team 3).
  A program never holds a ``memoryview`` (the value check refuses it, like ``mmap``), and
  ``buffer=`` takes only ``bytes`` or an array without objects.

A program never holds the raw class or method: the value check (:func:`sandbox.guards.check_value`)
hands out :class:`NDArray` for ``np.ndarray`` (whichever route: the ``np`` facade, ``type(a)``,
an attribute, an item) and :func:`guard_member` for ``resize``, so every call of them, by the
program or by library code it passes them to (``s.apply(np.ndarray, buffer=...)``,
``map(np.ndarray, ...)``, a subclass), is checked.
"""
from __future__ import annotations

import math
import operator
import types
from typing import Any, Callable

import numpy as np

from .outcome import PolicyError

_RAW_NDARRAY = np.ndarray
_RESIZE = np.ndarray.resize


class StandInMeta(type):
    """The metaclass of a stand-in: ``isinstance(x, stand_in)`` and ``issubclass`` behave as with the
    real class (named by the stand-in's ``_stand_in_for``; a program's subclass of a stand-in is an
    ordinary class)."""

    def _real(cls) -> type | None:
        return cls.__dict__.get("_stand_in_for")

    def __instancecheck__(cls, obj: Any) -> bool:
        real = cls._real()
        return isinstance(obj, real) if real is not None else type.__instancecheck__(cls, obj)

    def __subclasscheck__(cls, sub: Any) -> bool:
        real = cls._real()
        return issubclass(sub, real) if real is not None else type.__subclasscheck__(cls, sub)

    def __repr__(cls) -> str:
        real = cls._real()
        return repr(real) if real is not None else type.__repr__(cls)


class NDArray(np.ndarray, metaclass=StandInMeta):
    """What a program gets for ``np.ndarray``: the same constructor, refusing a buffer read
    as object pointers (it returns a plain ``np.ndarray``)."""

    _stand_in_for = _RAW_NDARRAY

    def __new__(cls, shape: Any, dtype: Any = float, buffer: Any = None, offset: Any = 0,
                strides: Any = None, order: Any = None) -> Any:
        dt = np.dtype(dtype)  # converted once: numpy sees exactly the dtype checked here
        if buffer is not None:
            if dt.hasobject:
                raise PolicyError("np.ndarray(buffer=...) with a dtype holding Python objects would read raw "
                                  "memory as object pointers; build the array from values (np.array) instead")
            buffer_problem(buffer)
            # numpy checks offset + size against the buffer's length, but not that offset >= 0, and in
            # C integers (an offset near 2**63 wraps): offset=-8 read and wrote the memory before the
            # buffer, so a writable view below an integer array reached other arrays' object pointers
            shape, offset, strides = view_extent_problem(buffer, dt, shape, offset, strides)
        return _RAW_NDARRAY(shape, dt, buffer, offset, strides, order)


def _ints(value: Any, what: str) -> tuple[int, ...]:
    try:
        return (operator.index(value),)
    except TypeError:
        pass
    try:
        items = tuple(value)
    except TypeError:
        raise PolicyError(f"np.ndarray: {what} must be an integer or a sequence of integers") from None
    try:
        return tuple(operator.index(v) for v in items)
    except TypeError:
        raise PolicyError(f"np.ndarray: {what} must be an integer or a sequence of integers") from None


def view_extent_problem(buffer: Any, dt: np.dtype, shape: Any, offset: Any,
                        strides: Any) -> tuple[tuple[int, ...], int, tuple[int, ...] | None]:
    """Refuse an ``np.ndarray(buffer=...)`` whose elements would lie outside the buffer; return
    ``shape``, ``offset`` and ``strides`` as the plain integers that were checked (numpy gets
    exactly these, so an ``__index__`` cannot answer differently the second time)."""
    dims = _ints(shape, "shape")
    try:
        off = operator.index(offset if offset is not None else 0)
    except TypeError:
        raise PolicyError("np.ndarray: offset must be an integer") from None
    steps = None if strides is None else _ints(strides, "strides")
    with memoryview(buffer) as view:
        length = view.nbytes
    if off < 0 or off > length:
        raise PolicyError(f"np.ndarray(buffer=..., offset={off}) points outside the buffer's {length} bytes")
    if any(d < 0 for d in dims) or (steps is not None and len(steps) != len(dims)):
        return dims, off, steps  # numpy refuses these itself
    if 0 in dims:
        return dims, off, steps
    low, high = 0, dt.itemsize
    if steps is None:
        high = dt.itemsize * math.prod(dims)
    else:
        for d, s in zip(dims, steps):
            if s < 0:
                low += (d - 1) * s
            else:
                high += (d - 1) * s
    if off + low < 0 or off + high > length:
        raise PolicyError(f"np.ndarray(buffer=...): shape {dims}, offset {off} and strides {steps} reach "
                          f"outside the buffer's {length} bytes")
    return dims, off, steps


def buffer_problem(buffer: Any) -> None:
    """Refuse a ``buffer=`` whose memory may hold object pointers: only ``bytes`` and arrays
    (or numpy scalars) without objects are read as raw memory."""
    if type(buffer) is bytes:
        return
    if isinstance(buffer, (_RAW_NDARRAY, np.generic)) and not buffer.dtype.hasobject:
        return
    kind = "an array holding Python objects" if isinstance(buffer, (_RAW_NDARRAY, np.generic)) \
        else f"a {type(buffer).__name__}"
    raise PolicyError(f"np.ndarray(buffer=...) cannot read {kind} as raw memory (its bytes may be object "
                      "pointers); pass bytes or an array of numbers")


NDArray.__module__ = "numpy"
NDArray.__name__ = NDArray.__qualname__ = "ndarray"

#: classes a program gets only in guarded form: the raw class -> its stand-in
STAND_INS: dict[type, type] = {_RAW_NDARRAY: NDArray}


def stand_in(cls: type) -> type | None:
    """The guarded stand-in for ``cls``, or None if ``cls`` is handed out as it is."""
    try:
        return STAND_INS.get(cls)
    except TypeError:  # an unhashable metaclass
        return None


def _refuse_resize(kwargs: dict[str, Any]) -> None:
    """Refuse every in-place resize. ``refcheck=False`` leaves views pointing at freed memory; and
    with the check on, numpy counts references to the array, which an array pandas holds passes
    (pandas' own reference plus the call's): ``np.asarray(index)`` is the Index's own array, so
    ``np.asarray(df.index).resize(200000)`` made a 3-row frame's index 200,000 long, and
    ``df.take([150000])`` read far past the end of the column (red team 5)."""
    raise PolicyError("a.resize(...) changes an array in place, and pandas may hold the same array and trust "
                      "its length; make a new array instead: np.concatenate([a, np.zeros(k)]) or a[:n]")


#: further member guards (:mod:`sandbox.codes`): each returns a checked stand-in for a value, or None
MEMBER_GUARDS: list[Callable[[Any], Callable[..., Any] | None]] = []


def guard_member(value: Any) -> Callable[..., Any] | None:
    """A checked stand-in if ``value`` is ``ndarray.resize`` (bound or not) or a member another
    module guards (:data:`MEMBER_GUARDS`), else None."""
    for guard in MEMBER_GUARDS:
        guarded = guard(value)
        if guarded is not None:
            return guarded
    if value is _RESIZE:
        def resize(*args: Any, **kwargs: Any) -> Any:
            _refuse_resize(kwargs)
            return _RESIZE(*args, **kwargs)
    elif type(value) is types.BuiltinMethodType and getattr(value, "__name__", None) == "resize" \
            and isinstance(getattr(value, "__self__", None), _RAW_NDARRAY):
        bound = value  # not its __self__: numpy's refcheck counts the references to the array

        def resize(*args: Any, **kwargs: Any) -> Any:
            _refuse_resize(kwargs)
            return bound(*args, **kwargs)
    else:
        return None
    resize.__module__ = __name__
    return resize
