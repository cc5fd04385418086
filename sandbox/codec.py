"""Plain-data encoding for values crossing the worker/parent boundary.

``encode`` turns a value into a tree of builtins (None, bool, int, float, str,
bytes, list, tuple) in which containers and pandas objects are tagged tuples.
``dumps``/``safe_loads`` serialise such trees with pickle; ``safe_loads`` uses
an unpickler whose ``find_class`` refuses everything, so a crafted message from
a compromised worker can never instantiate a class or call a function.
``decode`` rebuilds pandas/Python objects from the tree in the parent.
``encode`` never raises: anything it cannot represent becomes its repr.
"""
from __future__ import annotations

import datetime as _dt
import io
import math
import pickle
from typing import Any

import numpy as np
import pandas as pd

MAX_DEPTH = 60
MAX_REPR = 10_000


class CodecError(ValueError):
    pass


def _safe_repr(obj: Any) -> str:
    try:
        text = repr(obj)
    except BaseException:  # noqa: BLE001 - a hostile __repr__ must not crash us
        try:
            text = f"<unrepresentable {type(obj).__name__}>"
        except BaseException:  # noqa: BLE001
            text = "<unrepresentable object>"
    if not isinstance(text, str):
        text = "<unrepresentable object>"
    return text[:MAX_REPR]


_FAST_KINDS = frozenset("biuf")


def _encode_values(values: Any, dtype: Any, depth: int) -> list:
    kind = getattr(dtype, "kind", "O")
    if kind in _FAST_KINDS and isinstance(dtype, np.dtype):
        return list(values.tolist())
    return [encode(v, depth + 1) for v in values.tolist()]


def _encode_index(idx: pd.Index, depth: int) -> tuple:
    if isinstance(idx, pd.RangeIndex):
        return ("range", idx.start, idx.stop, idx.step, encode(idx.name, depth + 1))
    if isinstance(idx, pd.MultiIndex):
        return (
            "mindex",
            [encode(t, depth + 1) for t in idx.tolist()],
            [encode(n, depth + 1) for n in idx.names],
        )
    return ("index", _encode_values(idx, idx.dtype, depth), encode(idx.name, depth + 1), str(idx.dtype))


def encode(obj: Any, depth: int = 0) -> Any:
    """Encode ``obj`` as a plain-data tree. Never raises."""
    try:
        return _encode(obj, depth)
    except BaseException:  # noqa: BLE001
        return ("repr", _safe_repr(obj))


def _encode(obj: Any, depth: int) -> Any:
    t = type(obj)
    if obj is None or t is bool or t is int or t is float or t is str:
        return obj
    if depth > MAX_DEPTH:
        return ("repr", _safe_repr(obj))
    if t is list:
        return ("list", [encode(v, depth + 1) for v in obj])
    if t is tuple:
        return ("tuple", [encode(v, depth + 1) for v in obj])
    if t is dict:
        return ("dict", [(encode(k, depth + 1), encode(v, depth + 1)) for k, v in obj.items()])
    if isinstance(obj, np.generic):
        if isinstance(obj, np.bool_):
            return bool(obj)
        if isinstance(obj, np.integer):
            return int(obj)
        if isinstance(obj, np.floating):
            return float(obj)
        if isinstance(obj, np.str_):
            return str(obj)
        if isinstance(obj, np.datetime64):
            return encode(pd.Timestamp(obj), depth)
        if isinstance(obj, np.timedelta64):
            return encode(pd.Timedelta(obj), depth)
        return ("repr", _safe_repr(obj))
    if obj is pd.NA:
        return ("na",)
    if obj is pd.NaT:
        return ("nat",)
    if isinstance(obj, pd.Timestamp):
        return ("ts", obj.isoformat())
    if isinstance(obj, pd.Timedelta):
        return ("td", int(obj.value))
    if isinstance(obj, _dt.datetime):
        return ("dt", obj.isoformat())
    if isinstance(obj, _dt.date):
        return ("date", obj.isoformat())
    if isinstance(obj, _dt.time):
        return ("time", obj.isoformat())
    if isinstance(obj, _dt.timedelta):
        return ("pytd", obj.days, obj.seconds, obj.microseconds)
    if isinstance(obj, bool):
        return bool(obj)
    if isinstance(obj, int):
        return int(obj)
    if isinstance(obj, float):
        return float(obj)
    if isinstance(obj, str):
        return str(obj)
    if isinstance(obj, (bytes, bytearray)):
        return ("bytes", bytes(obj))
    if isinstance(obj, pd.DataFrame):
        cols = [
            (_encode_values(obj.iloc[:, i], obj.dtypes.iloc[i], depth), str(obj.dtypes.iloc[i]))
            for i in range(obj.shape[1])
        ]
        return ("frame", cols, _encode_index(obj.columns, depth), _encode_index(obj.index, depth))
    if isinstance(obj, pd.Series):
        return ("series", _encode_values(obj, obj.dtype, depth), str(obj.dtype),
                _encode_index(obj.index, depth), encode(obj.name, depth + 1))
    if isinstance(obj, pd.Index):
        return ("pindex", _encode_index(obj, depth))
    if isinstance(obj, np.ndarray):
        if obj.ndim == 0:
            return encode(obj.item(), depth + 1)
        return ("list", [encode(v, depth + 1) for v in obj.tolist()])
    if isinstance(obj, (set, frozenset)):
        return ("set", [encode(v, depth + 1) for v in obj])
    if isinstance(obj, list):
        return ("list", [encode(v, depth + 1) for v in obj])
    if isinstance(obj, tuple):
        return ("tuple", [encode(v, depth + 1) for v in obj])
    if isinstance(obj, dict):
        return ("dict", [(encode(k, depth + 1), encode(v, depth + 1)) for k, v in obj.items()])
    return ("repr", _safe_repr(obj))


# ---------------------------------------------------------------- decoding

def _hashable(v: Any) -> Any:
    try:
        hash(v)
        return v
    except TypeError:
        return _safe_repr(v)


def _decode_index(tree: Any) -> pd.Index:
    tag = tree[0]
    if tag == "range":
        _, start, stop, step, name = tree
        if not all(type(x) is int for x in (start, stop, step)):
            raise CodecError("bad range index")
        return pd.RangeIndex(start, stop, step, name=_hashable(decode(name)))
    if tag == "mindex":
        tuples = [decode(t) for t in tree[1]]
        names = [_hashable(decode(n)) for n in tree[2]]
        tuples = [t if isinstance(t, tuple) else (t,) for t in tuples]
        if not tuples:
            return pd.MultiIndex.from_arrays([[] for _ in names], names=names)
        return pd.MultiIndex.from_tuples(tuples, names=names)
    if tag == "index":
        values = _decode_list(tree[1])
        name = _hashable(decode(tree[2]))
        try:
            return pd.Index(values, name=name, dtype=_dtype(tree[3]))
        except Exception:  # noqa: BLE001
            return pd.Index(values, name=name, dtype=object)
    raise CodecError(f"unknown index tag {tag!r}")


def _dtype(name: Any) -> Any:
    if type(name) is not str or len(name) > 100:
        raise CodecError("bad dtype")
    return name


def _decode_list(items: Any) -> list:
    if type(items) is not list:
        raise CodecError("expected a list")
    return [decode(v) for v in items]


def _series(values: list, dtype: str, index: pd.Index, name: Any) -> pd.Series:
    try:
        return pd.Series(values, index=index, name=name, dtype=_dtype(dtype))
    except Exception:  # noqa: BLE001
        return pd.Series(values, index=index, name=name, dtype=object if not values else None)


def decode(tree: Any) -> Any:
    """Rebuild a value from a plain-data tree (parent side). Raises CodecError."""
    t = type(tree)
    if tree is None or t is bool or t is int or t is float or t is str or t is bytes:
        return tree
    if t is not tuple or not tree or type(tree[0]) is not str:
        raise CodecError(f"malformed value of type {t.__name__}")
    tag = tree[0]
    if tag == "list":
        return _decode_list(tree[1])
    if tag == "tuple":
        return tuple(_decode_list(tree[1]))
    if tag == "set":
        out = set()
        for v in _decode_list(tree[1]):
            out.add(_hashable(v))
        return out
    if tag == "dict":
        if type(tree[1]) is not list:
            raise CodecError("bad dict")
        return {_hashable(decode(k)): decode(v) for k, v in tree[1]}
    if tag == "na":
        return pd.NA
    if tag == "nat":
        return pd.NaT
    if tag == "ts":
        return pd.Timestamp(_short_str(tree[1]))
    if tag == "td":
        if type(tree[1]) is not int:
            raise CodecError("bad timedelta")
        return pd.Timedelta(tree[1], unit="ns")
    if tag == "dt":
        return _dt.datetime.fromisoformat(_short_str(tree[1]))
    if tag == "date":
        return _dt.date.fromisoformat(_short_str(tree[1]))
    if tag == "time":
        return _dt.time.fromisoformat(_short_str(tree[1]))
    if tag == "pytd":
        return _dt.timedelta(days=tree[1], seconds=tree[2], microseconds=tree[3])
    if tag == "bytes":
        if type(tree[1]) is not bytes:
            raise CodecError("bad bytes")
        return tree[1]
    if tag == "repr":
        return str(tree[1])
    if tag == "series":
        _, values, dtype, index, name = tree
        return _series(_decode_list(values), dtype, _decode_index(index), _hashable(decode(name)))
    if tag == "frame":
        _, cols, columns, index = tree
        idx = _decode_index(index)
        colidx = _decode_index(columns)
        if type(cols) is not list or len(cols) != len(colidx):
            raise CodecError("bad frame")
        data = {i: _series(_decode_list(v), d, idx, None) for i, (v, d) in enumerate(cols)}
        frame = pd.DataFrame(data, index=idx)
        frame.columns = colidx
        return frame
    if tag == "pindex":
        return _decode_index(tree[1])
    raise CodecError(f"unknown tag {tag!r}")


def _short_str(v: Any) -> str:
    if type(v) is not str or len(v) > 200:
        raise CodecError("bad string field")
    return v


def to_plain(value: Any, depth: int = 0) -> Any:
    """Outcome conversion: NaN/NA/NaT scalars -> None, containers recursively."""
    t = type(value)
    if t is float:
        return None if math.isnan(value) else value
    if value is pd.NA or value is pd.NaT:
        return None
    if depth > MAX_DEPTH:
        return value
    if t is list:
        return [to_plain(v, depth + 1) for v in value]
    if t is tuple:
        return tuple(to_plain(v, depth + 1) for v in value)
    if t is dict:
        return {k: to_plain(v, depth + 1) for k, v in value.items()}
    if t is set:
        return {to_plain(v, depth + 1) for v in value}
    return value


# ---------------------------------------------------------------- transport

class _RefusingUnpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:  # noqa: D401
        raise CodecError(f"refusing to unpickle class {module}.{name}")

    def persistent_load(self, pid: Any) -> Any:
        raise CodecError("refusing persistent ids")


def dumps(tree: Any) -> bytes:
    return pickle.dumps(tree, protocol=5)


def safe_loads(data: bytes) -> Any:
    """Load a plain-data tree without ever resolving a class or callable."""
    try:
        return _RefusingUnpickler(io.BytesIO(data)).load()
    except CodecError:
        raise
    except Exception as exc:  # noqa: BLE001
        raise CodecError(f"malformed message: {type(exc).__name__}") from None
