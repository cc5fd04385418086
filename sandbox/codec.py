"""Plain-data encoding for values crossing the worker/parent boundary.

``encode`` turns a value into a tree of builtins (None, bool, int, float, str,
bytes, list, tuple) in which containers and pandas objects are tagged tuples.
``dumps``/``safe_loads`` serialise such trees with pickle; ``safe_loads`` uses
an unpickler whose ``find_class`` refuses everything, so a crafted message from
a compromised worker can never instantiate a class or call a function.
``decode`` rebuilds pandas/Python objects from the tree in the parent.
``encode`` never raises: anything it cannot represent becomes its repr.
``encode_answer`` (the program's answer) is bounded: shared references are
encoded once, and an answer of more than ``MAX_ANSWER_VALUES`` values,
``MAX_ANSWER_TEXT`` characters of text or ``MAX_DEPTH`` levels raises
``AnswerTooLarge`` instead of running for ever. Both counts are of the answer as
written out (a shared text or list counts every time it occurs): the parent prints,
joins and compares the answer as written out. The parent checks the same bounds on
what it receives (:func:`check_answer_size`), whatever the worker sent.
"""
from __future__ import annotations

import collections
import datetime as _dt
import io
import math
import pickle
import re
import reprlib
import sys
import threading
from typing import Any

import numpy as np
import pandas as pd

from . import labels  # noqa: F401 - installed on import: a decoded label never answers a protocol
from .outcome import PolicyError
MAX_DEPTH = 60
MAX_REPR = 10_000
#: An answer may hold at most this many values, counted as they would be written out
#: (a shared sub-structure counts every time it appears; a DataFrame counts its cells).
MAX_ANSWER_VALUES = 5_000_000
#: ... and at most this many characters of text (texts, bytes, reprs, the digits of ints over 64 bits),
#: counted as written out too: a value is one value whatever its length, so ``[s] * 2000`` with a
#: text ``s`` of a million characters was a 1 MB message and 2 GB in the parent once printed
#: (``[s] * 5_000_000``: 5 TB). As much text as the largest table file binder-py reads (100 MB).
MAX_ANSWER_TEXT = 100_000_000


class CodecError(ValueError):
    pass


class AnswerTooLarge(PolicyError):
    """The program's answer is too large or too deeply nested to send back."""


_REPR = reprlib.Repr()
_REPR.maxlevel = 6
_REPR.maxstring = _REPR.maxother = MAX_REPR
_REPR.maxlist = _REPR.maxtuple = _REPR.maxdict = _REPR.maxset = _REPR.maxfrozenset = _REPR.maxdeque = 1000


def _safe_repr(obj: Any) -> str:
    try:
        text = _REPR.repr(obj)  # bounded in depth and length, also for shared references
    except (AnswerTooLarge, MemoryError):
        raise
    except Exception:  # noqa: BLE001 - a hostile __repr__ must not crash us
        try:
            text = f"<unrepresentable {type(obj).__name__}>"
        except Exception:  # noqa: BLE001
            text = "<unrepresentable object>"
    if not isinstance(text, str):
        text = "<unrepresentable object>"
    return text[:MAX_REPR]


_FAST_KINDS = frozenset("biuf")
#: the years a time stamp's ISO text is read back in (``pd.Timestamp("20000-01-01T00:00:00")`` raises, and a
#: message the parent cannot decode is a killed worker's): pandas 3 keeps years past them in second units, and
#: such a time stamp crosses as its text (red team 14)
_LAST_YEAR = 9999
_SCALAR_TYPES = (type(None), bool, int, float, str)
#: the item types of a ``("plain", [...])`` node: a list of these crosses as one node, its type
#: check and its pickling done at C speed, not one ``encode``/``decode`` call per item
_PLAIN_TYPES = frozenset(_SCALAR_TYPES)
_STR_ONLY = frozenset({str})


def _all_plain(items: list) -> bool:
    return set(map(type, items)) <= _PLAIN_TYPES


#: an int of at most this many bits is a value like a float (at most 20 characters): its text is not counted
_SHORT_INT_BITS = 64
#: what an int too long for Python to write in decimal is shown as (:func:`_shown_int`), at most
_LONG_INT_SHOWN = 80


def _int_text(value: int) -> int:
    """The characters of an int written out that count as text: its decimal digits over 64 bits."""
    bits = value.bit_length()
    if bits <= _SHORT_INT_BITS:
        return 0
    return int(bits * _LOG10_2) + 1 if _int_fits(bits) else _LONG_INT_SHOWN


def _plain_text(items: list) -> int:
    """The text of a list of plain scalars written out: its texts, and the digits of its long ints
    (:func:`_int_text`); at C speed unless it holds an int of more than 64 bits."""
    text = sum(map(len, filter(str.__instancecheck__, items)))
    ints = list(filter(int.__instancecheck__, items))
    if ints and max(map(int.bit_length, ints)) > _SHORT_INT_BITS:
        text += sum(map(_int_text, ints))
    return text


class _Encoder:
    """One encoding pass. Containers are memoised by identity, so a value built from shared
    references (a DAG) is encoded once per distinct object and pickled once per distinct
    object; ``count`` still adds up the value as written out, so it stays bounded.

    ``strict``: over :data:`MAX_ANSWER_VALUES` values or :data:`MAX_DEPTH` levels raises
    :class:`AnswerTooLarge` (the program's answer); otherwise deep values become their repr
    and size is not capped (callback arguments and results, which trusted code produces).
    """

    __slots__ = ("strict", "count", "text", "memo")

    def __init__(self, strict: bool) -> None:
        self.strict = strict
        self.count = 0
        self.text = 0
        self.memo: dict[int, tuple[Any, Any, int, int]] = {}  # id -> (object kept alive, tree, size, text)

    def add(self, n: int) -> None:
        self.count += n
        if self.strict and self.count > MAX_ANSWER_VALUES:
            raise AnswerTooLarge(
                f"the answer is too large to return (more than {MAX_ANSWER_VALUES:,} values); "
                "return an aggregate or a few rows (.head()) instead")

    def add_text(self, n: int) -> None:
        self.text += n
        if self.strict and self.text > MAX_ANSWER_TEXT:
            raise AnswerTooLarge(
                f"the answer holds too much text to return (more than {MAX_ANSWER_TEXT:,} characters, "
                "a text counted every time it occurs); return an aggregate, a few rows (.head()) or "
                "shorter texts instead")

    def encode(self, obj: Any, depth: int = 0) -> Any:
        t = type(obj)
        if t in _SCALAR_TYPES:
            self.count += 1
            if t is str:
                self.add_text(len(obj))
            elif t is int:
                self.add_text(_int_text(obj))
            return obj
        key = id(obj)
        hit = self.memo.get(key)
        if hit is not None and hit[0] is obj:
            self.add(hit[2])
            self.add_text(hit[3])
            return hit[1]
        if depth > MAX_DEPTH:
            if self.strict:
                raise AnswerTooLarge(f"the answer is too deeply nested to return (more than {MAX_DEPTH} levels)")
            self.add(1)
            return self.repr(obj)
        before, text_before = self.count, self.text
        try:
            tree = self._encode(obj, depth)
        except (AnswerTooLarge, MemoryError):
            raise
        except Exception:  # noqa: BLE001 - anything unrepresentable becomes its repr
            tree = self.repr(obj)
        self.add(1)
        self.memo[key] = (obj, tree, self.count - before, self.text - text_before)
        return tree

    def repr(self, obj: Any) -> tuple[str, str]:
        return self.repr_text(_safe_repr(obj))

    def repr_text(self, text: str) -> tuple[str, str]:
        """A value that crosses as ``text`` (counted)."""
        self.add_text(len(text))
        return ("repr", text)

    def plain(self, items: list) -> list:
        """A list of plain scalars, counted (values and text) at C speed."""
        self.add(len(items))
        self.add_text(_plain_text(items))
        return items

    def values(self, values: Any, dtype: Any, depth: int) -> list:
        kind = getattr(dtype, "kind", "O")
        if kind in _FAST_KINDS and isinstance(dtype, np.dtype):
            self.add(len(values))  # numbers of at most 64 bits: no text to count
            return list(values.tolist())
        return self._items(values.tolist(), depth)

    def index(self, idx: pd.Index, depth: int) -> tuple:
        if isinstance(idx, pd.RangeIndex):
            # a range crosses as three numbers but holds len(idx) labels, which the parent writes out
            # (list(index) for the vote and JSON): counted like any index's labels (red team 8)
            self.add(len(idx))
            return ("range", idx.start, idx.stop, idx.step, self.encode(idx.name, depth + 1))
        if isinstance(idx, pd.MultiIndex):
            return (
                "mindex",
                [self.encode(t, depth + 1) for t in idx.tolist()],
                [self.encode(n, depth + 1) for n in idx.names],
            )
        return ("index", self.values(idx, idx.dtype, depth), self.encode(idx.name, depth + 1), str(idx.dtype))

    def _items(self, items: Any, depth: int) -> list:
        self.add(len(items))  # checked before the items are converted
        self.count -= len(items)
        return [self.encode(v, depth + 1) for v in items]

    def _encode(self, obj: Any, depth: int) -> Any:
        t = type(obj)
        if t is list:
            if _all_plain(obj):
                return ("plain", self.plain(obj))
            return ("list", self._items(obj, depth))
        if t is tuple:
            return ("tuple", self._items(obj, depth))
        if t is dict:
            keys = list(obj)
            if set(map(type, keys)) <= _STR_ONLY:  # text keys (answers by row key): two flat lists
                self.plain(keys)
                values = list(obj.values())
                if _all_plain(values):
                    return ("sdict", ("plain", keys), ("plain", self.plain(values)))
                return ("sdict", ("plain", keys), ("list", self._items(values, depth)))
            return ("dict", [(self.encode(k, depth + 1), self.encode(v, depth + 1)) for k, v in obj.items()])
        if isinstance(obj, np.generic):
            if isinstance(obj, np.bool_):
                return bool(obj)
            if isinstance(obj, np.integer):
                return int(obj)
            if isinstance(obj, np.floating):
                return float(obj)
            if isinstance(obj, np.str_):
                self.add_text(len(obj))
                return str(obj)
            if isinstance(obj, np.datetime64):
                return self._encode(pd.Timestamp(obj), depth)
            if isinstance(obj, np.timedelta64):
                return self._encode(pd.Timedelta(obj), depth)
            return self.repr(obj)
        if obj is pd.NA:
            return ("na",)
        if obj is pd.NaT:
            return ("nat",)
        if isinstance(obj, pd.Timestamp):
            if -_LAST_YEAR <= obj.year <= _LAST_YEAR:
                return ("ts", obj.isoformat())
            return self.repr_text(str(obj))  # "20000-01-01 00:00:00"
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
        if t is range:  # its numbers, as a range index (counted like one), not the text "range(0, 3)"
            return ("pindex", self.index(pd.RangeIndex(obj), depth))
        if isinstance(obj, (pd.Period, pd.Interval)):  # as pandas shows them ("2020-01", "(0, 5]"), not
            return self.repr_text(str(obj))             # their repr ("Period('2020-01', 'M')")
        if isinstance(obj, bool):
            return bool(obj)
        if isinstance(obj, int):
            value = int(obj)
            self.add_text(_int_text(value))
            return value
        if isinstance(obj, float):
            return float(obj)
        if isinstance(obj, str):
            value = str(obj)
            self.add_text(len(value))
            return value
        if isinstance(obj, (bytes, bytearray)):
            self.add_text(len(obj))
            return ("bytes", bytes(obj))
        if isinstance(obj, pd.DataFrame):
            self.add(obj.shape[0] * obj.shape[1])  # checked before the cells are converted
            cols = [
                (self.values(obj.iloc[:, i], obj.dtypes.iloc[i], depth), str(obj.dtypes.iloc[i]))
                for i in range(obj.shape[1])
            ]
            self.count -= obj.shape[0] * obj.shape[1]
            return ("frame", cols, self.index(obj.columns, depth), self.index(obj.index, depth))
        if isinstance(obj, pd.Series):
            return ("series", self.values(obj, obj.dtype, depth), str(obj.dtype),
                    self.index(obj.index, depth), self.encode(obj.name, depth + 1))
        if isinstance(obj, pd.Index):
            return ("pindex", self.index(obj, depth))
        if isinstance(obj, np.ndarray):
            if obj.ndim == 0:
                return self.encode(obj.item(), depth + 1)
            self.add(obj.size)  # checked before tolist() materialises the elements
            self.count -= obj.size
            return ("list", self._items(obj.tolist(), depth))
        if isinstance(obj, pd.api.extensions.ExtensionArray):  # .unique() of a str/Int64/boolean column
            self.add(len(obj))  # checked before tolist() materialises the elements
            self.count -= len(obj)
            return ("list", self._items(obj.tolist(), depth))
        if isinstance(obj, (set, frozenset)):
            return ("set", self._items(obj, depth))
        if isinstance(obj, (list, collections.deque)):
            return ("list", self._items(list(obj), depth))
        if isinstance(obj, tuple):
            return ("tuple", self._items(tuple(obj), depth))
        if isinstance(obj, dict):
            return ("dict", [(self.encode(k, depth + 1), self.encode(v, depth + 1)) for k, v in dict(obj).items()])
        return self.repr(obj)


def encode(obj: Any, depth: int = 0) -> Any:
    """Encode ``obj`` as a plain-data tree. Never raises (a CPU-time signal still propagates)."""
    try:
        return _Encoder(strict=False).encode(obj, depth)
    except Exception:  # noqa: BLE001
        return ("repr", "<unrepresentable object>")


def encode_answer(obj: Any) -> Any:
    """Encode a program's answer: :class:`AnswerTooLarge` past :data:`MAX_ANSWER_VALUES` values or
    :data:`MAX_DEPTH` levels of nesting."""
    return _Encoder(strict=True).encode(obj)


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


_UNIT = r"(?:ns|us|ms|s)"
_TZ = r"[A-Za-z][A-Za-z0-9_+\-]*(?:/[A-Za-z0-9_+\-]+)*|(?:UTC)?[+\-]\d\d:\d\d"
#: the dtype names the parent rebuilds a column or index with (what ``str(dtype)`` gives for the
#: dtypes of ordinary answers); any other name is not resolved, and the values (decoded by value)
#: make an inferred or object column. A dtype named by the worker must not size an allocation
#: (``"|S1000000000"``: a gigabyte per value, ``fixed_size_binary[...]``, ``Sparse[...]``) nor
#: make pandas read a file it names (``"datetime64[ns, dateutil//path]"``).
_DTYPE_NAME = re.compile(
    r"bool|u?int(?:8|16|32|64)|float(?:16|32|64)|complex(?:64|128)|object"
    r"|U?Int(?:8|16|32|64)|Float(?:32|64)|boolean|string|str|category"
    rf"|datetime64\[{_UNIT}(?:, (?:{_TZ}))?\]|timedelta64\[{_UNIT}\]"
    r"|(?:bool|u?int(?:8|16|32|64)|float|double|halffloat|string|large_string)\[pyarrow\]"
    r"|[A-Za-z_]+")  # a bare name (a registered extension dtype such as yesno): it cannot spell a size


def _dtype(name: Any) -> Any:
    if type(name) is not str or len(name) > 100 or not _DTYPE_NAME.fullmatch(name) or "dateutil" in name:
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


_decoding = threading.local()


#: log10(2): an int of ``b`` bits has at most ``floor(b * _LOG10_2) + 1`` decimal digits
_LOG10_2 = math.log10(2)


def _int_fits(bits: int) -> bool:
    """An int of ``bits`` bits can be written in decimal (``str``, ``repr``, JSON): Python refuses
    ints of more than ``sys.get_int_max_str_digits()`` digits (4,300 by default) with ValueError."""
    limit = sys.get_int_max_str_digits()
    return limit == 0 or int(bits * _LOG10_2) + 1 <= limit


def _shown_int(value: int) -> Any:
    """``value``, or a text naming its size when Python could not write it in decimal: an answer
    such as ``2 ** 100000`` made ``str()``, ``repr()`` and ``json.dumps`` raise in the parent (a
    traceback from ``binder-py exec``, an ``ask --json`` or results line that could not be written)."""
    bits = value.bit_length()
    if _int_fits(bits):
        return value
    return f"<an integer of about {int(bits * _LOG10_2) + 1:,} digits, too long to show>"


def _plain_items(items: list) -> list:
    """A ``plain`` node's items, an int too long to write in decimal replaced (checked at C speed)."""
    widest = max(map(int.bit_length, filter(int.__instancecheck__, items)), default=0)
    if _int_fits(widest):
        return items
    return [_shown_int(v) if type(v) is int else v for v in items]


def decode(tree: Any) -> Any:
    """Rebuild a value from a plain-data tree (parent side). Raises CodecError.

    A node that occurs several times in the tree (the encoder shares repeated objects) is
    decoded once, so a crafted tree of shared references cannot cost exponential time.
    An int too long to write in decimal arrives as a text naming its size (:func:`_shown_int`)."""
    t = type(tree)
    if t is int:
        return _shown_int(tree)
    if tree is None or t is bool or t is float or t is str or t is bytes:
        return tree
    memo = getattr(_decoding, "memo", None)
    if memo is None:
        _decoding.memo = {}
        try:
            return decode(tree)
        finally:
            _decoding.memo = None
    hit = memo.get(id(tree))
    if hit is not None and hit[0] is tree:
        return hit[1]
    value = _decode_node(tree, t)
    memo[id(tree)] = (tree, value)
    return value


def _decode_node(tree: Any, t: type) -> Any:
    if t is not tuple or not tree or type(tree[0]) is not str:
        raise CodecError(f"malformed value of type {t.__name__}")
    tag = tree[0]
    if tag == "plain":
        items = tree[1]
        if type(items) is not list or not _all_plain(items):
            raise CodecError("bad plain list")
        return _plain_items(items)
    if tag == "list":
        return _decode_list(tree[1])
    if tag == "tuple":
        return tuple(_decode_list(tree[1]))
    if tag == "set":
        out = set()
        for v in _decode_list(tree[1]):
            out.add(_hashable(v))
        return out
    if tag == "sdict":
        keys, values = decode(tree[1]), decode(tree[2])
        if type(keys) is not list or not set(map(type, keys)) <= _STR_ONLY or type(values) is not list \
                or len(keys) != len(values):
            raise CodecError("bad dict")
        return dict(zip(keys, values))
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


def to_plain(value: Any, depth: int = 0, memo: dict[int, tuple[Any, Any]] | None = None) -> Any:
    """Outcome conversion: NaN/NA/NaT scalars -> None, containers recursively (a container
    that occurs several times is converted once)."""
    t = type(value)
    if t is float:
        return None if math.isnan(value) else value
    if value is pd.NA or value is pd.NaT:
        return None
    if depth > MAX_DEPTH or t not in (list, tuple, dict, set):
        return value
    memo = {} if memo is None else memo
    hit = memo.get(id(value))
    if hit is not None and hit[0] is value:
        return hit[1]
    if t is list:
        out: Any = [to_plain(v, depth + 1, memo) for v in value]
    elif t is tuple:
        out = tuple(to_plain(v, depth + 1, memo) for v in value)
    elif t is dict:
        out = {k: to_plain(v, depth + 1, memo) for k, v in value.items()}
    else:
        out = {to_plain(v, depth + 1, memo) for v in value}
    memo[id(value)] = (value, out)
    return out


def check_answer_size(tree: Any, what: str = "the answer", used: list[int] | None = None) -> None:
    """Refuse (CodecError) a plain-data tree that written out holds more than
    :data:`MAX_ANSWER_VALUES` values or :data:`MAX_ANSWER_TEXT` characters of text.
    ``what`` names the tree in the error (``"the answer"``, or a callback request, which the parent
    checks alike: :func:`sandbox.executor.Sandbox._handle_call`). ``used``: ``[values, text]`` that
    earlier trees of the same run already took from the bounds (every callback request of a run
    shares one budget, since the parent keeps them all in the run's trace); added to when ``tree``
    fits.

    The parent's own check of an answer, whatever the worker sent: pickle shares repeated objects,
    so a message of a few megabytes can be a list holding one long text, or one list, millions of
    times; decoding keeps the sharing (:func:`decode` memoises), but printing, joining or comparing
    the answer writes every occurrence out. Each distinct node is walked once (a node that occurs
    again adds the size found the first time), and the walk stops as soon as a bound is passed."""
    memo: dict[int, tuple[int, int]] = {}

    def walk(node: Any, depth: int) -> tuple[int, int]:
        t = type(node)
        if t is str or t is bytes:
            return 1, len(node)
        if t is int:
            return 1, _int_text(node)
        if t is not list and t is not tuple:
            return 1, 0
        hit = memo.get(id(node))
        if hit is not None:
            return hit
        if depth > _MAX_TREE_DEPTH:
            raise CodecError(f"{what} is nested too deeply")
        labels = _range_labels(node)
        kinds = set(map(type, node)) if labels is None else set()
        if labels is not None:  # a RangeIndex: its labels, as written out, and its name
            name_values, name_text = walk(node[4], depth + 1)
            size = (labels + name_values, name_text)
        elif kinds <= _STR_ONLY:  # texts alone (a request's cells and keys): one pass at C speed
            size = (len(node), sum(map(len, node)))
        elif kinds <= _PLAIN_TYPES | _BYTES_ONLY:
            size = (len(node), _plain_text(node) + sum(map(len, filter(bytes.__instancecheck__, node))))
        else:
            values = text = 0
            for item in node:
                v, c = walk(item, depth + 1)
                values += v
                text += c
                if values > MAX_ANSWER_VALUES or text > MAX_ANSWER_TEXT:
                    break
            size = (values, text)
        memo[id(node)] = size
        return size

    before = used or [0, 0]
    values, text = walk(tree, 0)
    values += before[0]
    text += before[1]
    if values > MAX_ANSWER_VALUES or text > MAX_ANSWER_TEXT:
        so_far = " with the calls before it" if used and any(used) else ""
        raise CodecError(f"{what} is too large{so_far} (written out, more than {MAX_ANSWER_VALUES:,} values "
                         f"or {MAX_ANSWER_TEXT:,} characters of text)")
    if used is not None:
        used[:] = [values, text]


def _range_labels(node: Any) -> int | None:
    """How many labels a ``("range", start, stop, step, name)`` node holds (None: not such a node).
    Three numbers make an index of any length: ``pd.RangeIndex(0, 10**8)`` was a 100-byte answer that
    the parent listed out (4 GB for ``binder-py exec --json``, 20 GB for the vote's normalisation)."""
    if type(node) is not tuple or len(node) != 5 or node[0] != "range":
        return None
    start, stop, step = node[1:4]
    if type(start) is not int or type(stop) is not int or type(step) is not int or step == 0:
        return None  # decoding refuses it
    return max(0, -((start - stop) // step))  # len(range(start, stop, step)), for any size of int


#: how deep a tree an answer of MAX_DEPTH levels makes (each level is a tagged tuple and its list)
_MAX_TREE_DEPTH = 4 * MAX_DEPTH + 16
_BYTES_ONLY = frozenset({bytes})


# ---------------------------------------------------------------- transport

class _RefusingUnpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:  # noqa: D401
        raise CodecError(f"refusing to unpickle class {module}.{name}")

    def persistent_load(self, pid: Any) -> Any:
        raise CodecError("refusing persistent ids")


def dumps(tree: Any) -> bytes:
    return pickle.dumps(tree, protocol=5)


#: a UTF-16 surrogate (U+D800..U+DFFF) as pickle writes text: UTF-8 with ``surrogatepass`` (binary
#: protocols; valid UTF-8 never holds these 3 bytes) or a raw-unicode-escape (protocol 0's UNICODE
#: opcode). A message without either holds no text with a lone surrogate; all 3 bytes are matched so
#: that the numbers of a large message rarely do by chance (2 bytes matched 32 times in a 1.9 MB request
#: of 100,000 rows, and the walk then cost 0.2 s)
_SURROGATE_BYTES = re.compile(rb"\xed[\xa0-\xbf][\x80-\xbf]|\\(?:u|U0000)[dD][89a-fA-F][0-9a-fA-F]{2}")


def _without_surrogates(tree: Any, memo: dict[int, Any]) -> Any:
    """``tree`` with every text holding a lone surrogate written with a backslash escape instead.

    Each distinct object is rewritten once and the result shared where the object was (texts too): this
    runs before the parent checks a message's size, and pickle sends a repeated text once, so copying
    each occurrence made 100,000 escaped copies of one 1,000-surrogate text out of a message of a few
    hundred kilobytes, 1.3 GB of the parent (red team 11, ``tests/sandbox/test_surrogate_sharing.py``)."""
    t = type(tree)
    if t is not str and t is not list and t is not tuple and t is not dict:
        return tree
    hit = memo.get(id(tree))
    if hit is not None and hit[0] is tree:
        return hit[1]
    if t is str:
        out: Any = tree.encode("utf-8", "backslashreplace").decode("utf-8")
    elif t is dict:
        out = {_without_surrogates(k, memo): _without_surrogates(v, memo) for k, v in tree.items()}
    else:
        out = t(_without_surrogates(v, memo) for v in tree)
    memo[id(tree)] = (tree, out)
    return out


def safe_loads(data: bytes) -> Any:
    """Load a plain-data tree without ever resolving a class or callable.

    Text holding a lone surrogate (``chr(0xD800)``, which a program can make) is written with a
    backslash escape (``"\\ud800"``): such text cannot be encoded as UTF-8, so printing it, or
    writing it to a results file, raised UnicodeEncodeError in the parent."""
    try:
        tree = _RefusingUnpickler(io.BytesIO(data)).load()
        if _SURROGATE_BYTES.search(data) is not None:
            tree = _without_surrogates(tree, {})
        return tree
    except CodecError:
        raise
    except Exception as exc:  # noqa: BLE001
        raise CodecError(f"malformed message: {type(exc).__name__}") from None
