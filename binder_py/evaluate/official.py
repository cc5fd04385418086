"""WikiTQ's official evaluator (v1.0.2) behaviour, re-implemented for Python 3 from its documented rules.

* A denotation is a set of values: duplicates are removed, order does not matter.
  A prediction is correct iff gold and prediction have the same number of
  distinct values and every gold value matches some predicted value.
* Typing: a string that parses as int/float is a number; ``yyyy-mm-dd`` (with
  ``xx`` for unknown parts) is a date, and a date with only a year is the
  number of that year; anything else is a string. Gold values are typed from
  their CoreNLP canonical value (``targetCanon``) when given, predicted values
  from their own text.
* Gold T matches prediction P when (a) ``normalize(T's raw text) ==
  normalize(P's text)``, or (b) both are numbers within 1e-6, or (c) both are
  dates with the same (year, month, day), ``xx`` matching only ``xx``.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["normalize", "parse_number", "parse_date", "Value", "to_value", "to_value_list",
           "check_denotation", "official_match"]

_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u00b4": "'", "`": "'", "\u201c": '"', "\u201d": '"',
                         "\u2010": "-", "\u2011": "-", "\u2012": "-", "\u2013": "-", "\u2014": "-", "\u2212": "-"})
_TRAILING_CITATION = re.compile(r"(?:(?<=.)\[[^\[\]]*\]|\[\d+\]|[•♦†‡*#+])+$")
_TRAILING_PAREN = re.compile(r"(?<=.) \([^()]*\)$")
_OUTER_QUOTES = re.compile(r'^"(.*)"$', re.DOTALL)
_WHITESPACE = re.compile(r"\s+")


def normalize(text: str) -> str:
    """The official string normalisation (see the module docstring of :mod:`binder_py.evaluate.official`)."""
    text = "".join(c for c in unicodedata.normalize("NFKD", str(text)) if unicodedata.category(c) != "Mn")
    text = text.translate(_QUOTES)
    while True:
        before = text
        text = _TRAILING_CITATION.sub("", text.strip())
        text = _TRAILING_PAREN.sub("", text.strip())
        text = _OUTER_QUOTES.sub(r"\1", text.strip())
        if text == before:
            break
    if text.endswith("."):
        text = text[:-1]
    return _WHITESPACE.sub(" ", text).lower().strip()


_FLOAT_TEXT = re.compile(r"^\s*[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?\s*$")


def parse_number(text: str) -> float | None:
    """int/float-parsable text (Python 2 rules: no ``_``, no ``,``; NaN/inf rejected) -> the number, else None."""
    if not _FLOAT_TEXT.match(text):
        return None
    value = float(text)
    if math.isnan(value) or math.isinf(value):
        return None
    return value


_DATE = re.compile(r"^(\d+|xx|xxxx)-(\d+|xx)-(\d+|xx)$")


def parse_date(text: str) -> tuple[int, int, int] | None:
    """``yyyy-mm-dd`` with ``xx`` for unknown parts -> (year, month, day) with -1 for unknown, else None."""
    match = _DATE.match(text.strip().lower())
    if not match:
        return None
    y, m, d = (-1 if part.startswith("x") else int(part) for part in match.groups())
    return valid_date_parts(y, m, d)


def valid_date_parts(y: int, m: int, d: int) -> tuple[int, int, int] | None:
    """(year, month, day) with -1 for unknown parts, or None when nothing is known or a part is out of range."""
    if y == m == d == -1:
        return None
    if m != -1 and not 1 <= m <= 12:
        return None
    if d != -1 and not 1 <= d <= 31:
        return None
    return (y, m, d)


@dataclass(frozen=True)
class Value:
    """A typed denotation value. ``kind`` is "string", "number" or "date"."""

    kind: str
    normalized: str
    amount: float | None = None
    ymd: tuple[int, int, int] | None = None

    def match(self, other: "Value") -> bool:
        if self.normalized == other.normalized:
            return True
        if self.kind == "number" and other.kind == "number":
            return abs(self.amount - other.amount) < 1e-6  # type: ignore[operator]
        if self.kind == "date" and other.kind == "date":
            return self.ymd == other.ymd
        return False


def to_value(original: str, canon: str | None = None) -> Value:
    """Type one value from ``canon`` when given (gold with targetCanon), else from ``original`` itself."""
    original = str(original)
    typed = original if canon is None else str(canon)
    normalized = normalize(original)
    amount = parse_number(typed)
    if amount is not None:
        return Value("number", normalized, amount=amount)
    ymd = parse_date(typed)
    if ymd is not None:
        if ymd[1] == ymd[2] == -1:
            return Value("number", normalized, amount=float(ymd[0]))
        return Value("date", normalized, ymd=ymd)
    return Value("string", normalized)


def to_value_list(originals: Sequence[str], canons: Sequence[str] | None = None) -> list[Value]:
    """Typed values with duplicates removed (first occurrence kept)."""
    if canons is not None and len(canons) != len(originals):
        canons = None
    values = [to_value(o, None if canons is None else c) for o, c in zip(originals, canons or [None] * len(originals))]
    unique: list[Value] = []
    for v in values:
        if v not in unique:
            unique.append(v)
    return unique


def check_denotation(gold: Sequence[Value], predicted: Sequence[Value]) -> bool:
    """Same number of values, and every gold value matches some predicted value."""
    if len(gold) != len(predicted):
        return False
    return all(any(g.match(p) for p in predicted) for g in gold)


def official_match(gold: Sequence[str], predicted: Sequence[str], gold_canon: Sequence[str] | None = None) -> bool:
    """True iff ``predicted`` is correct for ``gold`` under the official WikiTQ rules."""
    return check_denotation(to_value_list(list(gold), gold_canon), to_value_list([str(p) for p in predicted]))
