"""The one JSON reader for every file binder-py reads (run config, results lines, oracles,
predictions, the demonstration pool, dataset metadata).

Each read enforces

* a **size limit** (the file, or one line of a JSON-lines file), checked before parsing;
* a **depth limit** (:data:`MAX_DEPTH` levels of nested arrays/objects), checked on the text
  before parsing, so deep nesting never reaches the recursive parser;
* the **expected shape**: the top-level type and the types of named fields (:class:`Shape`);

and fails with one line, a :class:`~binder_py.errors.BinderError` naming the file (and line) and
the field. JSON-lines files are streamed line by line (:func:`iter_json_lines`); files are opened
through :mod:`binder_py.safefiles` (no symlinks, regular files only).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from binder_py.errors import BinderError
from binder_py.safefiles import open_regular, read_regular_bytes

__all__ = ["MAX_DEPTH", "JsonLine", "Shape", "check_shape", "iter_json_lines", "parse_json", "read_json"]

#: nesting levels of arrays/objects any file may have (binder-py's own files use fewer than 10)
MAX_DEPTH = 64
#: default size limit of a whole JSON file
MAX_FILE_BYTES = 64 * 1024 * 1024

_BRACKETS = re.compile(rb'"(?:[^"\\]++|\\.)*+"|[\[\]{}]', re.S)

_TYPE_NAMES = {bool: "true/false", int: "an integer", float: "a number", str: "a string", list: "a list",
               dict: "an object", type(None): "null"}


@dataclass(frozen=True)
class Shape:
    """What a JSON value must look like: its type, and (for an object) the types of named fields.

    ``fields`` maps a field name to a type, a tuple of types or a nested :class:`Shape`; a field
    that is absent is allowed, one that is present must match. ``items`` is the shape of every
    element of a list. ``int`` never accepts ``True``/``False``; ``float`` accepts integers that
    a float can hold."""

    type: type | tuple[type, ...] = object
    fields: Mapping[str, Any] = field(default_factory=dict)
    items: Any = None


def _depth(data: bytes) -> int:
    deepest = level = 0
    for match in _BRACKETS.finditer(data):
        token = match.group(0)
        if token in (b"[", b"{"):
            level += 1
            deepest = max(deepest, level)
        elif token in (b"]", b"}"):
            level -= 1
    return deepest


def _matches(value: Any, expected: type | tuple[type, ...]) -> bool:
    types = expected if isinstance(expected, tuple) else (expected,)
    if object in types:
        return True
    if isinstance(value, bool):
        return bool in types
    if isinstance(value, int) and float in types:
        return int in types or abs(value) < 2**1023  # "a number" is one a float can hold
    return isinstance(value, tuple(types))


def _describe(expected: type | tuple[type, ...]) -> str:
    types = expected if isinstance(expected, tuple) else (expected,)
    return " or ".join(_TYPE_NAMES.get(t, t.__name__) for t in types)


def check_shape(value: Any, shape: Shape | type | tuple[type, ...], where: str, path: str = "") -> None:
    """Raise a one-line :class:`BinderError` (``where``, field ``path``) unless ``value`` fits ``shape``."""
    if not isinstance(shape, Shape):
        shape = Shape(type=shape)
    name = f"field {path!r}" if path else "the top level"
    if not _matches(value, shape.type):
        got = _TYPE_NAMES.get(type(value), type(value).__name__)
        raise BinderError(f"{where}: {name} must be {_describe(shape.type)}, not {got}")
    if isinstance(value, dict):
        for key, sub in shape.fields.items():
            if key in value:
                check_shape(value[key], sub, where, f"{path}.{key}" if path else key)
    if isinstance(value, list) and shape.items is not None:
        for index, item in enumerate(value):
            check_shape(item, shape.items, where, f"{path}[{index}]")


def parse_json(data: bytes | str, where: str, shape: Shape | type | tuple[type, ...] | None = None,
               *, max_depth: int = MAX_DEPTH) -> Any:
    """Parse one JSON document (``where`` names it in errors), checking depth, then shape."""
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    if raw.count(b"[") + raw.count(b"{") > max_depth and _depth(raw) > max_depth:
        raise BinderError(f"{where}: JSON nested deeper than {max_depth} levels; the file is damaged or crafted")
    try:
        value = json.loads(raw.decode("utf-8-sig"))  # a byte order mark (Excel, Notepad) is not part of the JSON
    except UnicodeDecodeError as error:
        raise BinderError(f"{where}: not UTF-8 text (byte {error.start}); the file is damaged") from None
    except json.JSONDecodeError as error:
        raise BinderError(f"{where}: not valid JSON ({error.msg} at line {error.lineno}, "
                          f"column {error.colno})") from None
    except ValueError as error:  # an integer of more than 4,300 digits
        raise BinderError(f"{where}: {error}; the file is damaged or crafted") from None
    except RecursionError:
        raise BinderError(f"{where}: JSON nested too deeply; the file is damaged or crafted") from None
    if shape is not None:
        check_shape(value, shape, where)
    return value


def read_json(path: str | os.PathLike[str], shape: Shape | type | tuple[type, ...] | None = None, *,
              max_bytes: int = MAX_FILE_BYTES, what: str = "JSON file", follow_symlinks: bool = False,
              hint: str = "") -> Any:
    """Read a whole JSON file (a regular file, at most ``max_bytes``; a symlink only with
    ``follow_symlinks``, for a file the user named) and check its shape. ``hint`` ends the
    message of a file over the limit (how to raise it)."""
    path = Path(path)
    data = read_regular_bytes(path, max_bytes, what=what, follow_symlinks=follow_symlinks, hint=hint)
    return parse_json(data, str(path), shape)


@dataclass(frozen=True)
class JsonLine:
    """One line of a JSON-lines file: its 1-based number, byte offset and length, and the parse."""

    number: int
    start: int
    raw: bytes
    value: Any = None
    error: str | None = None  # why the line is not a JSON value of the expected shape

    @property
    def end(self) -> int:
        return self.start + len(self.raw)

    @property
    def complete(self) -> bool:
        return self.raw.endswith(b"\n")


def iter_json_lines(path: str | os.PathLike[str], shape: Shape | type | tuple[type, ...] | None = None, *,
                    max_line_bytes: int = MAX_FILE_BYTES, skip_blank: bool = True,
                    follow_symlinks: bool = False) -> Iterator[JsonLine]:
    """Stream a JSON-lines file: one :class:`JsonLine` per line, in constant memory per line.

    A line that does not parse or fit ``shape`` is yielded with ``error`` set (the caller decides
    whether a bad *last* line is a cut-off write); a line longer than ``max_line_bytes`` is an error
    at once. Blank lines are skipped unless ``skip_blank`` is false."""
    path = Path(path)
    with open_regular(path, follow_symlinks=follow_symlinks) as handle:
        position, number = 0, 0
        while True:
            raw = handle.readline(max_line_bytes + 1)
            if not raw:
                return
            number += 1
            start, position = position, position + len(raw)
            if len(raw) > max_line_bytes:
                raise BinderError(f"{path}, line {number}: longer than the limit of {max_line_bytes:,} bytes; "
                                  "the file is damaged or crafted")
            if not raw.strip():
                if not skip_blank:
                    yield JsonLine(number, start, raw)
                continue
            try:
                value = parse_json(raw, f"{path}, line {number}", shape)
            except BinderError as error:
                yield JsonLine(number, start, raw, error=str(error))
            else:
                yield JsonLine(number, start, raw, value=value)
