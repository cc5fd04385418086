"""The official WikiTableQuestions evaluator (``evaluator.py`` v1.0.2), ported to Python 3 judgement for judgement.

Ported from the rules of github.com/ppasupat/WikiTableQuestions ``evaluator.py`` (a Python 2.7 script), not
copied. Its judgements, including its quirks, are kept:

* **Values.** A denotation is a set of typed values: a *number* (text that Python 2's ``int()`` or ``float()``
  reads, NaN and infinity excluded), a *date* (``yyyy-mm-dd``, ``xx`` for an unknown part; a date with only a
  year is the number of that year), else a *string*. Gold values are typed by their CoreNLP canonical value
  (``targetCanon``) when given (an empty one falls back to the raw text), predicted values by their own text.
* **Truncation.** A number within 1e-6 of an integer becomes ``int(number)``, which truncates: ``9.999999999999988``
  becomes 9 and so does not match a gold 10, while ``10.000000000000002`` becomes 10.
* **Duplicates.** Values equal by type and key (normalised text, number, or (year, month, day)) collapse to the
  first one, as Python's ``set()`` keeps it; ``["1", "1.0"]`` is one value.
* **Correct** iff gold and prediction have the same number of values and every gold value matches some
  predicted value: equal normalised text, or both numbers within 1e-6, or both dates with equal (y, m, d).
* **normalize():** NFKD and drop combining marks; curly quotes, backtick and acute accent to ``'``/``"``; the
  dashes ‐‑‒–—− to ``-``; then repeat until nothing changes: strip, drop trailing citations (``[...]`` not at
  the start, ``[digits]``, ``•♦†‡*#+``), strip, drop trailing `` (...)`` groups not at the start, strip, drop
  outer ``"..."`` only when no ``"`` is inside; then one final ``.``; collapse whitespace, lowercase, strip.

Python 2 behaviour kept by the ``python2`` dialect (the default): ``\\d`` in the citation pattern is ASCII only,
``int()``/``float()`` refuse ``_`` digit separators, lowercasing is per character (no final-sigma rule), and a
number with no original text shows as Python 2's ``unicode(float)`` (12 significant digits).
The ``python3`` dialect is the same code as run by Python 3 (Binder's copy of this file, ``utils/wtq/evaluator.py``).
Not reproduced: differences between Python 2.7's Unicode 5.2 character database and Python 3's (characters whose
category or case changed since), and crashes of the original (a ``targetCanon`` list of another length than
``targetValue`` raises :class:`ValueError` here; numbers too large for a float compare as not matching).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from math import isinf, isnan
from typing import Any, Literal

__all__ = ["Dialect", "Value", "check_denotation", "normalize", "official_match", "parse_date", "parse_number",
           "to_value", "to_value_list"]

Dialect = Literal["python2", "python3"]

_QUOTES_AND_DASHES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u00b4": "'", "`": "'", "\u201c": '"',
                                    "\u201d": '"', "\u2010": "-", "\u2011": "-", "\u2012": "-", "\u2013": "-",
                                    "\u2014": "-", "\u2212": "-"})
# The original drops trailing citations with re.sub(r"((?<!^)\[[^\]]*\]|\[\d+\]|[•♦†‡*#+])*$", "", x) and
# trailing parentheses with re.sub(r"(?<!^)( \([^)]*\))*$", "", x). Both patterns backtrack: the citation one
# takes time exponential in the number of "[1]" before a character that ends no citation (40 characters ran for
# hours), the parentheses one quadratic. _strip_citations and _strip_parentheses give the same results in linear
# time (tests/evaluate/test_official.py compares them with the patterns): the first match re.sub finds is at the
# leftmost position from which the rest of the text splits into pieces, and it removes that whole rest.
_SYMBOLS = frozenset("•♦†‡*#+")


def _ascii_digits(text: str) -> bool:
    return text != "" and all("0" <= c <= "9" for c in text)


def _unicode_digits(text: str) -> bool:  # what re's \d matches in a str pattern
    return text != "" and all(unicodedata.category(c) == "Nd" for c in text)


def _before_final_newline(strip: Any) -> Any:
    """``$`` also matches before a final newline: the pieces then end there and the newline stays."""
    def stripped(x: str, *args: Any) -> str:
        if x.endswith("\n"):
            return strip(x[:-1], *args) + "\n"
        return strip(x, *args)
    return stripped


@_before_final_newline
def _strip_citations(x: str, dialect: Dialect) -> str:
    digits = _ascii_digits if dialect == "python2" else _unicode_digits
    n = len(x)
    splits = [False] * (n + 1)  # splits[i]: x[i:] is a run of citations
    splits[n] = True
    close = -1  # the first "]" at or after i
    for i in range(n - 1, -1, -1):
        c = x[i]
        if c == "]":
            close = i
        if c in _SYMBOLS:
            splits[i] = splits[i + 1]
        elif c == "[" and close > i and splits[close + 1]:
            # "[...]" up to the first "]": any text except at the very start, "[digits]" anywhere
            splits[i] = i > 0 or digits(x[i + 1:close])
    return x[:splits.index(True)]


@_before_final_newline
def _strip_parentheses(x: str) -> str:
    n = len(x)
    splits = [False] * (n + 1)  # splits[i]: x[i:] is a run of " (...)" groups
    splits[n] = True
    close = -1  # the first ")" at or after i
    for i in range(n - 1, -1, -1):
        if x[i] == ")":
            close = i
        if x[i] == " " and i + 1 < n and x[i + 1] == "(" and close > i + 1:
            splits[i] = splits[close + 1]
    start = next((i for i in range(1, n + 1) if splits[i]), None)  # not at the start of the text
    return x if start is None else x[:start]
_OUTER_QUOTES = re.compile(r'^"([^"]*)"$')
_WHITESPACE = re.compile(r"\s+")


def _lower(text: str, dialect: Dialect) -> str:
    if dialect == "python3":
        return text.lower()
    # Python 2's unicode.lower(): the simple one-to-one mapping of each character
    return "".join("i" if c == "\u0130" else c.lower() for c in text)


def normalize(text: str, dialect: Dialect = "python2") -> str:
    """The official string normalisation (module docstring)."""
    x = "".join(c for c in unicodedata.normalize("NFKD", text) if unicodedata.category(c) != "Mn")
    x = x.translate(_QUOTES_AND_DASHES)
    while True:
        before = x
        x = _strip_citations(x.strip(), dialect)
        x = _strip_parentheses(x.strip())
        x = _OUTER_QUOTES.sub(r"\1", x.strip())
        if x == before:
            break
    if x and x[-1] == ".":
        x = x[:-1]
    return _lower(_WHITESPACE.sub(" ", x), dialect).strip()


def _to_int(text: str, dialect: Dialect) -> int:
    if dialect == "python2" and "_" in text:
        raise ValueError("Python 2 has no digit separators")
    return int(text)


def parse_number(text: str, dialect: Dialect = "python2") -> int | float | None:
    """``int(text)``, else ``float(text)`` unless NaN or infinite, else None (the original ``NumberValue.parse``)."""
    try:
        return _to_int(text, dialect)
    except ValueError:
        pass
    if dialect == "python2" and "_" in text:
        return None
    try:
        amount = float(text)
    except ValueError:
        return None
    return None if isnan(amount) or isinf(amount) else amount


def parse_date(text: str, dialect: Dialect = "python2") -> tuple[int, int, int] | None:
    """``yyyy-mm-dd`` with ``xx`` (year also ``xxxx``) for unknown parts -> (y, m, d), -1 unknown; else None."""
    parts = _lower(text, dialect).split("-")
    if len(parts) != 3:
        return None
    try:
        year = -1 if parts[0] in ("xx", "xxxx") else _to_int(parts[0], dialect)
        month = -1 if parts[1] == "xx" else _to_int(parts[1], dialect)
        day = -1 if parts[2] == "xx" else _to_int(parts[2], dialect)
    except ValueError:
        return None
    if year == month == day == -1 or not (month == -1 or 1 <= month <= 12) or not (day == -1 or 1 <= day <= 31):
        return None
    return (year, month, day)


def _number_text(amount: int | float, dialect: Dialect) -> str:
    if isinstance(amount, int) or dialect == "python3":
        return str(amount)
    text = "%.12g" % amount  # Python 2's str(float)
    return text if any(c in text for c in ".eEn") else text + ".0"


@dataclass(frozen=True)
class Value:
    """A typed value. ``key`` decides duplicates: the normalised text, the number, or (year, month, day)."""

    kind: Literal["string", "number", "date"]
    normalized: str
    key: object

    def match(self, other: Value) -> bool:
        """The original ``match``: equal normalised text, or numbers within 1e-6, or dates with equal parts."""
        if self.normalized == other.normalized:
            return True
        if self.kind == "number" and other.kind == "number":
            try:
                return abs(self.key - other.key) < 1e-6  # type: ignore[operator]
            except OverflowError:  # the original raises; a number past float range matches nothing
                return False
        if self.kind == "date" and other.kind == "date":
            return self.key == other.key
        return False


def _number_value(amount: int | float, original: str, dialect: Dialect) -> Value:
    if abs(amount - round(amount)) < 1e-6:
        amount = int(amount)  # truncates, as the original does
    else:
        amount = float(amount)
    normalized = normalize(original, dialect) if original else _number_text(amount, dialect)
    return Value("number", normalized, amount)


def to_value(original: str, canon: str | None = None, dialect: Dialect = "python2") -> Value:
    """One value, typed from ``canon`` when it is given and not empty, else from ``original``."""
    typed_from = canon if canon else original
    amount = parse_number(typed_from, dialect)
    if amount is not None:
        return _number_value(amount, original, dialect)
    ymd = parse_date(typed_from, dialect)
    if ymd is not None:
        if ymd[1] == ymd[2] == -1:
            return _number_value(ymd[0], original, dialect)
        if original:
            normalized = normalize(original, dialect)
        else:  # the original's format, with its bug: an unknown day shows as -1
            normalized = "-".join(("xx" if part == -1 else str(part)) for part in ymd[:2]) + f"-{ymd[2]}"
        return Value("date", normalized, ymd)
    return Value("string", normalize(original, dialect), normalize(original, dialect))


def _identity(value: Value) -> tuple[str, object]:
    return (value.kind, value.key)


def to_value_list(originals: Sequence[str], canons: Sequence[str] | None = None,
                  dialect: Dialect = "python2") -> list[Value]:
    """Typed values, duplicates (same type and key) collapsed to the first, as ``set()`` does."""
    if canons is not None and len(canons) != len(originals):
        raise ValueError(f"{len(canons)} canonical values for {len(originals)} gold values; give one per value")
    pairs = zip(originals, canons) if canons is not None else ((o, None) for o in originals)
    unique: dict[tuple[str, object], Value] = {}
    for original, canon in pairs:
        value = to_value(str(original), None if canon is None else str(canon), dialect)
        unique.setdefault(_identity(value), value)
    return list(unique.values())


def check_denotation(target: Sequence[Value], predicted: Sequence[Value]) -> bool:
    """Same number of values, and every target value matches some predicted value."""
    if len(target) != len(predicted):
        return False
    return all(any(t.match(p) for p in predicted) for t in target)


def official_match(gold: Sequence[str], predicted: Sequence[str], gold_canon: Sequence[str] | None = None) -> bool:
    """The official evaluator's judgement of ``predicted`` for ``gold`` (``gold_canon``: targetCanon, optional)."""
    return check_denotation(to_value_list(gold, gold_canon), to_value_list(predicted))
