"""Numbers reported as the table writes them: an answer ``10031`` that is the cell ``10,031`` is
reported as ``"10,031"``.

Why: :func:`binder_py.tables.prepare_table` types a column of numbers written with thousands
separators as numbers, so that programs can compare and add them; a program that returns such a
cell answers the number. WikiTQ's gold is the cell's text, and the official evaluator reads
``10,031`` as text (``int()`` and ``float()`` refuse the comma), so it judged ``10031`` wrong
when there are no canonical values (dev). On WikiTQ dev, 21 gold values are such a cell of the
question's table, and 1 is written without the separators that its table's cell has (nt-9008:
``17693``); a computed number is left alone (12 gold values with separators and 18 without that
no cell holds, in the same tables).

Only the task profile's ``numbers_as_written`` turns it on (WikiTQ; an analyst gets numbers).
The map of written forms comes from the question's raw cells (:func:`written_numbers`); an
evaluation records the entries its candidates' answers use on the results line
(``written_numbers``), so that ``binder-py report`` reports a re-vote the same way. A recorded
map is data from a file: anything but a small mapping of number texts to written number texts
is ignored (:func:`recorded_written_numbers`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

#: a cell written with thousands separators (the rule :func:`binder_py.tables.prepare_table` types)
WRITTEN_NUMBER = re.compile(r"^[+-]?[1-9]\d{0,2}(?:,\d{3})+(?:\.\d+)?$")
#: a recorded map holds at most this many entries (a line's candidates use a few)
MAX_RECORDED = 1000


def number_key(value: Any) -> str | None:
    """The text a number is looked up by (``10031`` and ``10031.0`` alike: ``"10031"``); None for
    anything that is not a finite number (text, booleans, missing values)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        return None
    number = float(value)
    if not math.isfinite(number):
        return None
    return str(int(number)) if number.is_integer() and abs(number) < 2 ** 53 else repr(number)


def written_numbers(cells: Iterable[str]) -> dict[str, str]:
    """``{number_key: cell text}`` for the cells written with thousands separators (the first
    spelling of a number wins)."""
    written: dict[str, str] = {}
    for cell in cells:
        text = str(cell).strip()
        if WRITTEN_NUMBER.match(text):
            key = number_key(float(text.replace(",", "")))
            if key is not None:
                written.setdefault(key, text)
    return written


def as_written(value: Any, written: Mapping[str, str]) -> Any:
    """``value`` with each number that ``written`` holds replaced by its written text (in a list or
    tuple too); anything else unchanged."""
    if not written:
        return value
    if isinstance(value, (list, tuple)):
        return type(value)(as_written(item, written) for item in value)
    key = number_key(value)
    return written.get(key, value) if key is not None else value


def numbers_in(value: Any) -> set[str]:
    """The number keys an answer holds (itself, or the items of a list or tuple, one level down)."""
    items = value if isinstance(value, (list, tuple)) else [value]
    return {key for item in items if (key := number_key(item)) is not None}


def used_written(written: Mapping[str, str], answers: Iterable[Any]) -> dict[str, str]:
    """The entries of ``written`` that ``answers`` use (what a results line records)."""
    if not written:
        return {}
    used: set[str] = set()
    for answer in answers:
        used |= numbers_in(answer)
    return {key: text for key, text in written.items() if key in used}


def recorded_written_numbers(recorded: Any) -> dict[str, str]:
    """A results line's ``written_numbers`` as a map, or ``{}`` when it is anything but a mapping of
    at most :data:`MAX_RECORDED` number keys to written numbers of the same value."""
    if not isinstance(recorded, dict) or len(recorded) > MAX_RECORDED:
        return {}
    checked: dict[str, str] = {}
    for key, text in recorded.items():
        if not (isinstance(key, str) and isinstance(text, str) and WRITTEN_NUMBER.match(text)):
            return {}
        if number_key(float(text.replace(",", ""))) != key:
            return {}
        checked[key] = text
    return checked
