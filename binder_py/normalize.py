"""Answer normalisation: turn whatever a program returned into a canonical, hashable key.

Candidates are voted on *normalised* answers (the original Binder code voted on raw
values, so ``3``, ``3.0`` and ``"3"`` split the vote). :func:`normalize_answer`
returns a :class:`NormalizedAnswer` whose ``key`` is what votes are counted on and
whose ``display`` is a plain-Python value to show or return.

Rules (applied in this order; the first that matches wins)
-----------------------------------------------------------
*Keys* are tuples of strings. A scalar answer has a one-element key, a multi-value
answer one string per distinct value (sorted), an empty answer the key ``()``.

1. **Empty**: ``None``, ``float("nan")``, ``numpy.nan``, ``pd.NA``, ``pd.NaT``,
   ``""`` / whitespace-only strings, empty list/tuple/set/array/Series/Index and
   DataFrames with no rows or no columns → ``key=()``, ``display=None``,
   ``is_empty=True``.
2. **Booleans** (``bool``, ``numpy.bool_``) → ``"yes"`` / ``"no"``, always (with or
   without ``yes_no``). ``display`` is ``True``/``False`` (``"yes"``/``"no"`` when
   ``yes_no=True``).
3. **Numbers** (``int``, ``float``, numpy numbers, ``Decimal``, ``Fraction``) →
   canonical number text: integral values print as integers (``3.0`` → ``"3"``,
   exactly below 2**53); other floats are rounded to 10 significant digits
   (``7.449999999999989`` → ``"7.45"``, ``2.9999999999999996`` → ``"3"``) and printed
   as integers when the rounded value is integral, else with Python's ``repr``.
   ``numpy.float32``/``float16`` are first read at their own precision
   (``np.float32(7.45)`` → ``"7.45"``); infinities → ``"inf"``/``"-inf"``.
   ``display`` is an ``int`` when integral, else the rounded ``float``.
4. **Dates**: ``pd.Timestamp``, ``datetime.datetime``, ``datetime.date``,
   ``numpy.datetime64`` → ``"YYYY-MM-DD"`` when the time is midnight and there is no
   time zone, else ``"YYYY-MM-DD HH:MM:SS[.ffffff][+HH:MM]"``. ``display`` is the
   same text. Time deltas → their pandas text (``"4 days 00:00:00"``); times of day
   (``datetime.time``) → ``"HH:MM:SS[.ffffff]"``; ``pd.Period`` and ``pd.Interval`` → their
   pandas text (``"2020-01"``, ``"(0, 5]"``).
5. **Strings** are cleaned: Unicode NFKC, strip, whitespace runs collapsed to one
   space, casefold, one trailing ``"."`` removed. Then, in order:

   - an ISO-like date (``"1998-03-03"``, ``"1998-03-03 00:00:00"``,
     ``"1998-03-03T12:30"``) that is a valid date → the date key of rule 4. Other
     date spellings (``"March 3, 1998"``, ``"3/3/98"``) are *not* parsed;
   - a plain number (optional sign, digits, optional ``,`` thousands groups of three,
     optional decimals and exponent: ``"3"``, ``" 3.0 "``, ``"1,234"``, ``"-1.5e3"``)
     → the number key of rule 3. Strings with a leading zero (``"007"``, ``"02134"``)
     stay strings; ``"50%"``, ``"$5"``, ``"nan"``, ``"inf"`` stay strings;
   - otherwise the cleaned text.

   ``display`` is the original string, stripped with whitespace collapsed (case kept).
6. **Yes/no** (only when ``yes_no=True``), applied to every value after rules 2–5:
   keys ``"yes"``, ``"true"``, ``"y"``, ``"1"`` → ``"yes"``; ``"no"``, ``"false"``,
   ``"n"``, ``"0"`` → ``"no"`` (so ``True``, ``1``, ``1.0``, ``"1"``, ``"Yes."`` are one
   answer). ``display`` becomes ``"yes"``/``"no"``. Without ``yes_no`` numbers never
   become yes/no (``1`` and ``True`` differ) and the strings ``"true"``/``"false"``
   stay as they are (``"yes"`` and ``True`` agree, since a bool is ``"yes"``).
7. **Multi-value**: list, tuple, set, frozenset, numpy array (any shape), Series,
   Index, pandas arrays → every element normalised (nested containers flattened,
   empty elements dropped), **duplicates removed and the key sorted** (WikiTQ
   denotations are sets: ``[a, a, b]``, ``[b, a]`` and ``{a, b}`` are one answer).
   ``display`` is a list of the elements' displays in their original order, first
   occurrence of each key kept. When exactly one distinct value remains the answer is
   that scalar (``[3]``, ``pd.Series([3])``, ``[[3]]`` → same as ``3``); when none
   remains, it is empty.
8. **DataFrames**: one column → that column as a multi-value answer (so 1×1 → a
   scalar). Several columns → **the first column only**, with ``note`` saying so
   (the other columns are ignored; such answers are not ideal and ``note`` lets
   callers flag them).
9. **Anything else** (dicts, complex numbers, arbitrary objects, values that make a
   rule raise) → the ``repr`` cleaned as a string (rule 5, without number/date
   parsing; memory addresses like `` at 0x7f..`` removed), ``display`` the ``repr``,
   ``note`` set. :func:`normalize_answer` never
   raises.
"""

from __future__ import annotations

import datetime as _dt
import math
import re
import unicodedata
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from typing import Any

import numpy as np
import pandas as pd

__all__ = [
    "NormalizedAnswer",
    "normalize_answer",
    "is_yes_no_question",
    "is_count_question",
    "is_name_question",
    "asks_for_a_name",
    "is_numbers",
    "is_quantities",
    "asks_for_one",
    "is_several_values",
    "asks_beyond_itself",
    "asks_what_not_whether",
    "HEIGHT_TEXT",
    "excluded_phrase",
    "whole_phrase_in",
    "is_excluded",
    "is_yes_no_answer",
    "is_choice_question",
    "names_option",
    "key_text",
    "YES",
    "NO",
]

YES = "yes"
NO = "no"

#: Cleaned-string / number keys that mean yes or no when ``yes_no=True``.
_YES_FORMS = frozenset({"yes", "true", "y", "1"})
_NO_FORMS = frozenset({"no", "false", "n", "0"})

_SIGNIFICANT_DIGITS = 10
_MAX_DEPTH = 32  # nesting depth of containers before falling back to repr

_WS_RE = re.compile(r"\s+")
_NUMBER_RE = re.compile(
    r"[+-]?"
    r"(?:0|[1-9]\d{0,2}(?:,\d{3})+|[1-9]\d*)?"  # integer part: 0, 1,234 or 1234 (no leading zero)
    r"(?:\.\d+)?"
    r"(?:e[+-]?\d+)?"
)
_ADDRESS_RE = re.compile(r" at 0x[0-9a-fA-F]+")
_DATE_RE = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})"
    r"(?:[ t](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?)?"
)


@dataclass(frozen=True, eq=False)
class NormalizedAnswer:
    """A normalised answer.

    Attributes:
        key: canonical, hashable, order-free key; ``()`` for an empty answer, one
            string for a scalar, sorted distinct strings for a multi-value answer.
        display: plain-Python value to show or return (``int``/``float``/``bool``/
            ``str``/``list``/``None``), see the module docstring.
        is_empty: True when the answer is empty (``key == ()``).
        note: why the answer is not ideal (e.g. only the first column of a wide
            DataFrame was used, or a repr fallback), else ``None``.

    Two ``NormalizedAnswer`` objects are equal (and hash equal) when their keys are.
    """

    key: tuple[str, ...]
    display: Any
    is_empty: bool
    note: str | None = None

    @property
    def text(self) -> str:
        """The key as one string (see :func:`key_text`)."""
        return key_text(self.key)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, NormalizedAnswer):
            return NotImplemented
        return self.key == other.key

    def __hash__(self) -> int:
        return hash(self.key)


def key_text(key: tuple[str, ...]) -> str:
    """One string for a key: ``""`` when empty, the value for a scalar, values joined by ``" | "``."""
    return " | ".join(key)


_EMPTY = NormalizedAnswer(key=(), display=None, is_empty=True)


# --------------------------------------------------------------------------- scalars


def _clean_text(text: str) -> str:
    """NFKC, strip, collapse whitespace, casefold, drop one trailing '.'."""
    text = unicodedata.normalize("NFKC", text)
    text = _WS_RE.sub(" ", text).strip().casefold()
    if text.endswith("."):
        text = text[:-1].rstrip()
    return text


def _display_text(text: str) -> str:
    return _WS_RE.sub(" ", text).strip()


def _number(x: float | int) -> tuple[str, int | float]:
    """Canonical (key, display) of a finite or infinite real number."""
    if isinstance(x, int):
        return str(x), x
    if math.isinf(x):
        return ("inf" if x > 0 else "-inf"), x
    if x.is_integer() and abs(x) < 2**53:
        i = int(x)  # exact: 12345678901.0 -> 12345678901
        return str(i), i
    rounded = float(f"{x:.{_SIGNIFICANT_DIGITS}g}")
    if rounded.is_integer():
        i = int(rounded)  # 2.9999999999999996 -> 3, 1e20 -> 100000000000000000000
        return str(i), i
    return repr(rounded), rounded


def _date(value: pd.Timestamp | _dt.datetime | _dt.date | np.datetime64) -> str:
    """Date key: 'YYYY-MM-DD' at midnight without time zone, else ISO with a space separator."""
    if isinstance(value, np.datetime64):
        value = pd.Timestamp(value)
    if isinstance(value, pd.Timestamp):
        if value.tz is None and value == value.normalize():
            return f"{value.year:04d}-{value.month:02d}-{value.day:02d}"
        return value.isoformat(sep=" ")
    if isinstance(value, _dt.datetime):
        if value.tzinfo is None and value.time() == _dt.time():
            return value.date().isoformat()
        return value.isoformat(sep=" ")
    return value.isoformat()


def _is_missing(value: Any) -> bool:
    if value is None or value is pd.NA or value is pd.NaT:
        return True
    if isinstance(value, (float, np.floating)):
        return bool(np.isnan(value))
    if isinstance(value, (np.datetime64, np.timedelta64)):
        return bool(np.isnat(value))
    return False


def _string_scalar(raw: str) -> tuple[str, Any] | None:
    """(key, display) of a string, or None when it is empty."""
    cleaned = _clean_text(raw)
    if not cleaned:
        return None
    display = _display_text(raw)
    m = _DATE_RE.fullmatch(cleaned)
    if m:
        try:
            ts = pd.Timestamp(cleaned.replace("t", " "))
            key = _date(ts)
            return key, key
        except (ValueError, OverflowError):
            pass
    if any(c.isdigit() for c in cleaned):
        num = cleaned.replace("\u2212", "-")  # Unicode minus sign
        if _NUMBER_RE.fullmatch(num) and any(c.isdigit() for c in num.split("e")[0]):
            try:
                return _number_from_text(num.replace(",", "")), display
            except (ValueError, OverflowError):
                pass
    return cleaned, display


def _number_from_text(num: str) -> str:
    if re.fullmatch(r"[+-]?\d+", num):
        return str(int(num))
    return _number(float(num))[0]


def _scalar(value: Any) -> tuple[str, Any, str | None] | None:
    """(key, display, note) of a non-container value, or None when it is empty."""
    if _is_missing(value):
        return None
    if isinstance(value, (bool, np.bool_)):
        b = bool(value)
        return (YES if b else NO), b, None
    if isinstance(value, np.integer):
        key, disp = _number(int(value))
        return key, disp, None
    if isinstance(value, np.floating):
        f = float(str(value)) if value.dtype.itemsize < 8 else float(value)
        key, disp = _number(f)
        return key, disp, None
    if isinstance(value, int):
        key, disp = _number(value)
        return key, disp, None
    if isinstance(value, float):
        key, disp = _number(value)
        return key, disp, None
    if isinstance(value, Decimal):
        if value.is_nan():
            return None
        if value.is_finite() and value == value.to_integral_value():
            key, disp = _number(int(value))
        else:
            key, disp = _number(float(value))
        return key, disp, None
    if isinstance(value, Fraction):
        if value.denominator == 1:
            key, disp = _number(int(value))
        else:
            key, disp = _number(float(value))
        return key, disp, None
    if isinstance(value, (pd.Timestamp, _dt.datetime, _dt.date, np.datetime64)):
        key = _date(value)
        return key, key, None
    if isinstance(value, (pd.Timedelta, _dt.timedelta, np.timedelta64)):
        text = str(pd.Timedelta(value))
        return _clean_text(text), text, None
    if isinstance(value, _dt.time):  # df["start"].dt.time.iloc[0]: "13:45:00", not "datetime.time(13, 45)"
        text = value.isoformat()
        return _clean_text(text), text, None
    if isinstance(value, (pd.Period, pd.Interval)):  # "2020-01" and "(0, 5]", not "Period('2020-01', 'M')"
        text = str(value)
        return _clean_text(text), text, None
    if isinstance(value, str):
        res = _string_scalar(value)
        return None if res is None else (res[0], res[1], None)
    if isinstance(value, (bytes, bytearray)):
        res = _string_scalar(bytes(value).decode("utf-8", errors="replace"))
        return None if res is None else (res[0], res[1], None)
    return _repr_scalar(value)


def _repr_scalar(value: Any) -> tuple[str, Any, str | None]:
    try:
        text = repr(value)
    except Exception:  # noqa: BLE001 - a broken __repr__ must not crash voting
        text = f"<{type(value).__name__}>"
    key = _clean_text(_ADDRESS_RE.sub("", text)) or text
    return key, text, f"unrecognised {type(value).__name__} value: compared by its repr"


# --------------------------------------------------------------------------- containers


def _is_container(value: Any) -> bool:
    return isinstance(
        value,
        (list, tuple, set, frozenset, np.ndarray, pd.Series, pd.Index, pd.api.extensions.ExtensionArray),
    )


def _elements(value: Any) -> list[Any]:
    if isinstance(value, np.ndarray):
        return list(value.ravel(order="C")) if value.ndim != 0 else [value.item()]
    return list(value)  # list, tuple, set, Series, Index, pandas arrays


def _flatten(value: Any, out: list[tuple[str, Any, str | None]], depth: int) -> None:
    if depth > _MAX_DEPTH:
        out.append(_repr_scalar(value))
        return
    if isinstance(value, pd.DataFrame):
        col, _ = _frame_column(value)
        if col is not None:
            _flatten(col, out, depth + 1)
        return
    if _is_container(value):
        for item in _elements(value):
            _flatten(item, out, depth + 1)
        return
    res = _scalar(value)
    if res is not None:
        out.append(res)


def _frame_column(df: pd.DataFrame) -> tuple[pd.Series | None, str | None]:
    if df.shape[0] == 0 or df.shape[1] == 0:
        return None, None
    col = df.iloc[:, 0]
    if df.shape[1] == 1:
        return col, None
    return col, f"answer is the first column of a {df.shape[0]}×{df.shape[1]} DataFrame; the other columns were ignored"


def _yes_no(key: str, display: Any) -> tuple[str, Any]:
    if key in _YES_FORMS:
        return YES, YES
    if key in _NO_FORMS:
        return NO, NO
    return key, display


# --------------------------------------------------------------------------- public


def normalize_answer(value: Any, *, yes_no: bool = False) -> NormalizedAnswer:
    """Normalise one program answer for voting (rules in the module docstring).

    Args:
        value: whatever the program returned (plain Python, numpy, pandas, ...).
        yes_no: the question is a yes/no question (or a TabFact statement): map
            ``True``/``1``/``"yes"``/``"true"``/``"y"`` to ``"yes"`` and
            ``False``/``0``/``"no"``/``"false"``/``"n"`` to ``"no"``.

    Never raises: values no rule understands are compared by their ``repr``.
    """
    try:
        return _normalize(value, yes_no)
    except Exception:  # noqa: BLE001 - voting must survive any answer
        key, disp, note = _repr_scalar(value)
        return NormalizedAnswer(key=(key,), display=disp, is_empty=False, note=note)


def _items(value: Any) -> tuple[list[tuple[str, Any, str | None]], str | None]:
    """Every value an answer holds, as (key, display, note), in order, repeats kept; and the
    answer's note."""
    note: str | None = None
    items: list[tuple[str, Any, str | None]]
    if isinstance(value, pd.DataFrame):
        col, note = _frame_column(value)
        if col is None:
            return [], None
        value = col
    if isinstance(value, dict):
        items = [_repr_scalar(value)]
    elif _is_container(value):
        items = []
        _flatten(value, items, 0)
    else:
        res = _scalar(value)
        items = [] if res is None else [res]
    return items, note


#: a number as an answer's key shows it (integral values without a decimal part), or as a
#: table cell may write it (thousands separators)
_NUMBER_TEXT = re.compile(r"^[+-]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?$|^[+-]?\.\d+$")


def is_one_number(value: Any) -> bool:
    """Whether an answer is exactly one number: one value (not a list of several, not even of
    equal ones) that is a number or the text of one. Never raises."""
    try:
        items, _ = _items(value)
    except Exception:  # noqa: BLE001 - an answer no rule understands is not a number
        return False
    return len(items) == 1 and bool(_NUMBER_TEXT.match(items[0][0].strip()))


def is_numbers(value: Any) -> bool:
    """Whether an answer is one number or a list of numbers only (each a number or the text of one).
    Never raises."""
    try:
        items, _ = _items(value)
    except Exception:  # noqa: BLE001 - an answer no rule understands is not a number
        return False
    return bool(items) and all(_NUMBER_TEXT.match(item[0].strip()) for item in items)


_MONTH = (r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|"
          r"oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?")
#: a date written as text: "April 12, 2025", "12 April 2025", "April 2025", "April 12", "2025-04-12", "12/04/2025"
_DATE_TEXT = re.compile(rf"^(?:{_MONTH}\s+\d{{1,2}}(?:st|nd|rd|th)?(?:,?\s+\d{{4}})?|\d{{1,2}}(?:st|nd|rd|th)?\s+{_MONTH}"
                        rf"(?:,?\s+\d{{4}})?|{_MONTH},?\s+\d{{4}}|\d{{4}}-\d{{1,2}}-\d{{1,2}}|\d{{1,2}}/\d{{1,2}}/\d{{4}})$",
                        re.IGNORECASE)
#: an amount of money or a percentage written as text: "$7.50", "£150,000", "$1.2 million", "12%"
_AMOUNT_TEXT = re.compile(r"^(?:[$€£¥]\s*\d[\d,]*(?:\.\d+)?(?:\s*(?:thousand|million|billion|k|m|bn))?|"
                          r"\d[\d,]*(?:\.\d+)?\s*%)$", re.IGNORECASE)
#: a height in feet and inches, as rosters write it: "6'5\"", "6′ 5″", "6 ft 5 in", "6–8", "6-11"
#: (groups: the feet, the inches; matched whole)
HEIGHT_TEXT = re.compile(r"(\d{1,2})\s*(?:'|′|ft\.?|[–—-])\s*(\d{1,2}(?:\.\d+)?)\s*(?:\"|″|′′|''|in\.?)?", re.IGNORECASE)


def is_quantities(value: Any) -> bool:
    """Whether an answer is one quantity or a list of quantities only: numbers (:func:`is_numbers`), dates
    (a date or timestamp, or a date written as text: ``"April 12, 2025"``, ``"2025-04-12"``), amounts
    of money or percentages written as text (``"$7.50"``, ``"12%"``) and heights in feet and inches
    (``"6'5\""``, ``"6–8"``: in WikiTQ dev, none of the 863 questions that ask for a name has one for its
    gold answer). Not the name a which/who question asks for (rule 0 of the vote). Never raises."""
    try:
        items, _ = _items(value)
    except Exception:  # noqa: BLE001 - an answer no rule understands is no quantity
        return False
    texts = [str(item[0]).strip() for item in items]  # (as is_numbers reads them, dates and amounts too)
    return bool(texts) and all(_NUMBER_TEXT.match(text) or _DATE_TEXT.match(text) or _AMOUNT_TEXT.match(text)
                               or HEIGHT_TEXT.fullmatch(text) for text in texts)


def is_several_values(value: Any) -> bool:
    """Whether an answer is a list of two or more different values (as they vote). Never raises."""
    try:
        items, _ = _items(value)
    except Exception:  # noqa: BLE001 - an answer no rule understands is one value
        return False
    return len({item[0].strip() for item in items}) > 1


def is_verdict(value: Any) -> bool:
    """Whether an answer is one yes/no verdict (``True``, ``"yes"``, ``1``, ``"false"`` ...): the
    only answer a statement (TabFact) can have. Never raises."""
    try:
        return normalize_answer(value, yes_no=True).key in ((YES,), (NO,))
    except Exception:  # noqa: BLE001 - an answer no rule understands is no verdict
        return False


def _normalize(value: Any, yes_no: bool) -> NormalizedAnswer:
    items, note = _items(value)
    if not items:
        return NormalizedAnswer(key=(), display=None, is_empty=True, note=note)
    seen: dict[str, Any] = {}
    for key, disp, item_note in items:
        if yes_no:
            key, disp = _yes_no(key, disp)
        if key not in seen:
            seen[key] = disp
        note = note or item_note
    if len(seen) == 1:
        (key, disp), = seen.items()
        return NormalizedAnswer(key=(key,), display=disp, is_empty=False, note=note)
    return NormalizedAnswer(key=tuple(sorted(seen)), display=list(seen.values()), is_empty=False, note=note)


_AUX_VERBS = (
    "is", "are", "was", "were", "am",
    "do", "does", "did",
    "can", "could", "has", "have", "had",
    "will", "would", "should", "shall", "must",
    "isn't", "aren't", "wasn't", "weren't", "don't", "doesn't", "didn't",
    "can't", "cannot", "couldn't", "hasn't", "haven't", "hadn't", "won't", "wouldn't", "shouldn't",
)
_AUX_RE = re.compile(r"^(?:" + "|".join(re.escape(v) for v in _AUX_VERBS) + r")\b")
# " or " that does not make an A-or-B choice: "3 or more", "or not", ...
_OR_OK_RE = re.compile(
    r"\bor\s+(?:more|less|fewer|greater|higher|lower|above|below|over|under|later|earlier|"
    r"longer|shorter|after|before|not|equal|so)\b"
)


#: the keys of a bare yes/no or true/false answer (booleans normalise to yes/no)
_YES_NO_KEYS = frozenset({YES, NO, "true", "false"})


def yes_no_word(value: Any) -> bool | None:
    """True for a yes (``True``, ``1``, ``"yes"``, ``"Y"``, ``"true"``, ``"1"``), False for a no, None for
    anything else: the forms a yes/no answer is compared with, read as the vote reads them."""
    if isinstance(value, bool):
        return value
    if type(value) is int and value in (0, 1):
        return bool(value)
    if isinstance(value, str):
        word = value.strip().casefold()
        return True if word in _YES_FORMS else False if word in _NO_FORMS else None
    return None


def is_yes_no_answer(value: Any) -> bool:
    """Whether an answer is made only of yes/no/true/false (``True``, ``"no"``, ``[True, False]``), not
    ``1``/``0``: no answer to a question that asks which or who. Never raises."""
    try:
        key = normalize_answer(value).key
    except Exception:  # noqa: BLE001 - an answer no rule understands is not a yes/no
        return False
    return is_yes_no_key(key)


def is_yes_no_key(key: Any) -> bool:
    """:func:`is_yes_no_answer` of an answer already normalised: its ``normalize_answer(value).key``."""
    return bool(key) and all(item in _YES_NO_KEYS for item in key)


_COUNT_QUESTION = re.compile(r"^\W*(?:how many\b|(?:(?:what|which)(?:'s|\s+is|\s+was|\s+were|\s+are)\s+)?(?:the\s+)?"
                             r"(?:total\s+|overall\s+|combined\s+)?(?:number|count)\s+of\b)")


def is_count_question(question: str) -> bool:
    """Whether a question asks for a count: it starts with "how many", or with "(what is) (the) (total)
    number of" or "count of" (after stripping and casefolding); or it asks "how many" further on ("in
    how many years …?", "jimmy johnson won how many consecutive espy awards?") and neither asks which
    or who nor asks yes/no. Its answer is one number: in WikiTQ dev, 640 of the 650 questions that
    start with "how many", 254 of the 257 that start otherwise, and 46 of the 49 that ask it further on
    have one number for gold (until the twenty-fourth session those 49 were not read as counts)."""
    q = str(question).strip().casefold()
    if _COUNT_QUESTION.match(q):
        return True
    return (_HOW_MANY.search(q) is not None and not _NAME_QUESTION.match(_question_text(q))
            and not is_yes_no_question(q))


_HOW_MANY = re.compile(r"\bhow many\b")

#: a question that asks by how much two things differ: "how many more …", "how much older …", "the
#: difference … between …", "by how many …", "how far apart …"
_MAGNITUDE_QUESTION = re.compile(
    r"\bhow (many|much) (more|fewer|less|longer|shorter|higher|lower|older|younger|bigger|larger|smaller|greater|"
    r"later|earlier|further|farther|taller|heavier|faster|slower)\b|\bdifference\b[^?]*\bbetween\b|"
    r"\bby how (many|much)\b|\bhow far apart\b")


def asks_for_a_magnitude(question: str) -> bool:
    """Whether a question asks by how much two things differ ("how many more gold medals must qatar win
    …?", "what is the difference in gauge between …?"): its answer is never negative, whichever way round
    a program subtracts. In WikiTQ dev 79 questions match, and none has a negative gold answer. ("what
    was the team's goal difference?" names no two things, and may be negative.)"""
    return _MAGNITUDE_QUESTION.search(_question_text(question)) is not None


def _question_text(question: str) -> str:
    return unicodedata.normalize("NFKC", str(question)).replace("\u2019", "'").strip().casefold()


#: an ``or`` inside what the question negates or after "either" joins no options: "which country won a
#: silver but didn't win a gold or bronze?", "which region is the only one without midwife or
#: midwives?", "who was not last elected in either 2005 or 2009?" (at most four words from the
#: negation to the ``or``, no comma: "which nation was not in the top 10 iran or germany?" offers two)
_NOT_A_CHOICE_RE = re.compile(r"(?:\b(?:not|never|without)|n't)(?:\s+[\w'.&-]+){1,4}\s+or\b|\beither\b[^,?]*?\bor\b")


def is_choice_question(question: str) -> bool:
    """Whether a question offers a choice between options it names: it has an ``or`` that makes
    an A-or-B choice (not "3 or more", "or not", ..., as :func:`is_yes_no_question` reads it, nor
    one inside what the question negates or after "either") and asks neither for a count nor for
    yes/no ("which year had more venues, 2007 or 2012?"). Setting aside the negated and "either" ``or``
    changes 4 WikiTQ dev questions, none of them a choice of its answer among the options."""
    q = _question_text(question)
    if is_count_question(q) or is_yes_no_question(q):
        return False
    return re.search(r"\bor\b", _NOT_A_CHOICE_RE.sub(" ", _OR_OK_RE.sub(" ", q))) is not None


_NAME_QUESTION = re.compile(r"^\W*(?:(?:against|in|for|with|by|from|to|at|on|of|under|during|after|before|between|"
                            r"into|over|through|among|within|behind|toward|towards)\s+)?(which|who|whom|whose)\b")


def is_name_question(question: str) -> bool:
    """Whether a question asks which or who (it starts so, or with a preposition and then so:
    "against which team …?", "to whom …?", after stripping and casefolding) and is neither a yes/no
    nor a choice question: its answer names something, never a bare yes/no. "where" is left out:
    WikiTQ writes "where there at least 10 wins?" for "were"."""
    q = _question_text(question)
    return bool(_NAME_QUESTION.match(q)) and not is_yes_no_question(q) and not is_choice_question(q)


#: words of a which/what/who question that can ask for a number ("which year …", "which ranking is
#: mexico?", "what is the difference …", "what was his best finish?")
_QUANTITY_WORDS = re.compile(
    r"\b(years?|seasons?|dates?|days?|weeks?|months?|decades?|century|centuries|times?|numbers?|no|#|rounds?|"
    r"ranks?|rankings?|ranked|places?|positions?|tiers?|levels?|divisions?|grades?|population|totals?|scores?|"
    r"points?|ages?|heights?|weights?|lengths?|sizes?|amounts?|percent\w*|%|seeds?|editions?|olympics?|games?|"
    r"laps?|episodes?|matches|terms?|floors?|tracks?|picks?|draft|order|version|chapter|volume|issue|code|"
    r"models?|series|records?|results?|attendance|votes?|money|price|cost|figure|value|count|difference|"
    r"average|sum|mean|median|ratio|margin|distance|speed|combined|many|much|long|far|old|tall|high|big|km|"
    r"miles?|meters?|feet|kg|pounds|minutes?|seconds?|hours?|capacity|elevation|area|"
    r"depth|width|diameter|radius|duration|gdp|revenue|income|salary|budget|sales|gap|increase|decrease|"
    r"change|rating|best(?!-)|worst(?!-)|finish|record|(?:birth|air|release|start|end|due)dates?|fees?|"
    r"winnings|prizes?|wages?|earnings|purse)\b")


#: the words that say what a which/what/who question asks for: the four after its which/what/who/name
_ASKED_FOR = re.compile(r"\b(?:which|who|whom|whose|what|name)\b((?:\W+[\w#'%]+){0,4})")


def asks_for_a_name(question: str) -> bool:
    """Whether a which/who question (:func:`is_name_question`), or a what/name question that asks for
    something it does not name (:func:`asks_beyond_itself`), asks for no quantity: none of the four words
    after its which/what/who/name is one (:data:`_QUANTITY_WORDS`: "which year …", "which was the only
    year …", "which ranking is mexico?", "what is the difference …"). Its answer is then a name, not a
    number (rule 0 of the vote: "which south american city has the smallest population?" is not
    answered by the population, "what country won more gold medals than any other?" not by 0). In
    WikiTQ dev, 2 of the 541 which/who questions that name no such word have numbers for gold answers
    ("which show had the highest rating?" — 1), and 9 of the 345 what/name ones ("what is the largest
    penalty?" — 10). (With the words of dates and pay added in the twenty-second session — "birthdate",
    "fee", "winnings" —, 861 dev questions ask for a name: 11 have numbers for gold answers, 1 a date,
    none an amount.)"""
    q = _question_text(question)
    if not (is_name_question(q) or (asks_beyond_itself(q) and _WHAT_QUESTION.match(q))):
        return False
    asked = _ASKED_FOR.search(q)
    return asked is not None and not _QUANTITY_WORDS.search(asked.group(1))


_WHAT_QUESTION = re.compile(r"^\W*(?:what|name)\b")

#: a question that asks what, which, who, when or how, from its start (after a preposition: "in which
#: year …?"), or anywhere in a question that ends with "?" ("as of 2013, what is the total …?")
_WH_START = re.compile(r"^\W*(?:(?:against|in|for|with|by|from|to|at|on|of|under|during|after|before|between|"
                       r"into|over|through|among|within|behind|toward|towards)\s+)?(?:what|which|who|whom|whose|"
                       r"when|how)\b")
_WH_WORD = re.compile(r"\b(?:what|which|who|whom|whose|when|how)\b")


def asks_what_not_whether(question: str) -> bool:
    """Whether a question asks what, which, who, when or how (it starts so, after an optional
    preposition, or it ends with "?" and has one of these words) and is not a yes/no question
    (:func:`is_yes_no_question`). Its answer is never a bare yes/no: in WikiTQ dev none of the 2,513
    such questions has one for gold (the 6 other dev questions that do are statements to judge, "true
    or false. …", or a misspelt "where any women faster than any men?"). A statement ("the hotel
    opened before 1900") asks neither."""
    q = _question_text(question)
    if is_yes_no_question(q):
        return False
    return bool(_WH_START.match(q)) or (q.rstrip().endswith("?") and _WH_WORD.search(q) is not None)


def asks_beyond_itself(question: str) -> bool:
    """Whether a question asks for something it does not name: it asks which or who
    (:func:`is_name_question`), or starts with "what" or "name", and offers no options, asks no
    yes/no and counts nothing. Its answer is then not one of its own words (rule 0 of the vote): in
    WikiTQ a gold answer other than a number that such a question names is 2 of the 1,484 dev
    questions and 4 of the 2,239 test ones (two of those offer options in words the question
    reader does not take for a choice: "out of brown, nixon, and wyckoff")."""
    q = _question_text(question)
    if is_name_question(q):
        return True
    return (bool(_WHAT_QUESTION.match(q)) and not is_yes_no_question(q) and not is_choice_question(q)
            and not is_count_question(q))


#: words of what a question asks for that make it plural ("which teams …", "which two players …")
_PLURAL = re.compile(r"\b(?:are|were|have|two|three|four|five|six|both|all|top|each|every|\w{2,}[^su\W]s)\b|\(s\)")
_ASKED_BY_WHAT = re.compile(r"\b(?:which|who|whom|whose|what|name)\b((?:\W+[\w#'()]+){0,4})")


def asks_for_one(question: str) -> bool:
    """Whether a question asks for one value (:func:`asks_beyond_itself`: it asks which, who, what or
    name, and the four words after that word are not plural: "which teams …", "which two …", "what
    were …", "who are …" ask for several). Several different values are then not its answer (rule 0
    of the vote: "which japanese product has the highest rating?" is not answered by every japanese
    product, nor "which child was born after elizabeth churchill?" by every later child). In WikiTQ
    dev, such questions have one gold answer 1,230 times in 1,238; those with a superlative ("the
    highest", "most", "first", not "at least"), which was the rule before, 516 times in 517."""
    q = _question_text(question)
    if not asks_beyond_itself(q):
        return False
    asked = _ASKED_BY_WHAT.search(q)
    return asked is not None and not _PLURAL.search(asked.group(1))


_EXCLUSION = re.compile(r"\b(?:other than|besides|beside|apart from|aside from|except for|except|excluding|"
                        r"not counting|not including)\s+(.*)")
_EXCLUSION_END = re.compile(r"[,.;:?!]|\b(?:what|which|who|whom|whose|how|when|where|did|does|do|was|were|is|are|"
                            r"has|have|had|also|that|in|on|at|to|for|with)\b")


def excluded_phrase(question: str) -> str | None:
    """What the question sets aside by name ("other than 1927 what year …?" → ``1927``, "name another
    region for the 1985 release other than greece." → ``greece``): the words after "other than",
    "besides", "apart from", "aside from", "except (for)", "excluding", "not counting" or "not
    including", up to the next punctuation or wh-word, auxiliary or preposition, at most five, a
    leading "the" or "a" dropped; None when there are none."""
    match = _EXCLUSION.search(_question_text(question))
    if match is None:
        return None
    rest = match.group(1)
    end = _EXCLUSION_END.search(rest)
    words = (rest[:end.start()] if end else rest).split()[:5]
    if words and words[0] in ("the", "a", "an"):
        words = words[1:]
    return " ".join(words) or None


def is_excluded(phrase: str, value: Any) -> bool:
    """Whether ``value`` is one value that says exactly ``phrase`` (:func:`excluded_phrase`), casefolded, a
    leading "the" aside. In WikiTQ the gold answer is what the question excludes in none of the 39 dev
    questions that exclude something and none of the 54 test ones."""
    norm = normalize_answer(value)
    if norm.is_empty or len(norm.key) != 1:
        return False
    for text in {key_text(norm.key), str(norm.display)}:
        text = _question_text(text)
        if text.startswith(("the ", "a ")):
            text = text.split(" ", 1)[1]
        if text == phrase:
            return True
    return False


def names_option(question: str, value: Any) -> bool:
    """Whether ``value`` is one value that the question names word for word (casefolded, as a
    whole phrase): its normalised key or its display text ("kansas" in "... kansas or kansas
    state?"). The answer to a choice question (:func:`is_choice_question`) is one of its options."""
    norm = normalize_answer(value)
    if norm.is_empty or len(norm.key) != 1:
        return False
    q = _question_text(question)
    for text in {key_text(norm.key), str(norm.display)}:
        text = _question_text(text)
        if text and (whole_phrase_in(text, q) or _named_in_latin(text, q)):
            return True
    return False


def _named_in_latin(text: str, q: str) -> bool:
    """Whether ``text`` with its letters of other scripts set aside is a whole phrase of ``q``, a question
    written in Latin letters: a cell that adds the name in its own script (``su song 蘇頌``, ``tokyo 東京``)
    names the option the question writes (``su song``)."""
    if text.isascii() or not q.isascii():
        return False
    latin = " ".join("".join(c if c.isascii() or not c.isalpha() or "LATIN" in unicodedata.name(c, "") else " "
                             for c in text).split())
    return bool(latin) and latin != text and any(c.isalpha() for c in latin) and whole_phrase_in(latin, q)


def _word_char(c: str) -> bool:
    return c.isalnum() or c == "_"  # what ``\w`` matches in a str pattern


def whole_phrase_in(text: str, q: str) -> bool:
    r"""Whether ``text`` occurs in ``q`` not inside a longer word: ``re.search(r"(?<!\w)" +
    re.escape(text) + r"(?!\w)", q)``, without compiling ``text`` into a pattern. ``text`` is a
    program's answer (up to 100,000,000 characters): compiled, a 9-million-character answer took 21 s
    and 1 GB of the parent, and ``re`` kept the compiled pattern in its cache (red team 7)."""
    start = q.find(text)
    while start >= 0:
        end = start + len(text)
        if (start == 0 or not _word_char(q[start - 1])) and (end == len(q) or not _word_char(q[end])):
            return True
        start = q.find(text, start + 1)
    return False


def is_yes_no_question(question: str) -> bool:
    """Heuristic: is this a yes/no question?

    True when the question (after stripping, casefolding and normalising curly
    apostrophes) starts with an auxiliary verb as a whole word: is, are, was, were,
    am, do, does, did, can, could, has, have, had, will, would, should, shall, must,
    or a negated form (isn't, don't, didn't, can't, cannot, ...) — *unless* it
    offers a choice with `` or `` (``"was it X or Y?"`` asks for X or Y). ``or``
    followed by more/less/fewer/greater/higher/lower/above/below/over/under/later/
    earlier/longer/shorter/after/before/not/equal/so does not count as a choice
    (``"are there 3 or more ..."``). TabFact statements are not questions: callers
    pass ``yes_no=True`` for them directly.
    """
    q = unicodedata.normalize("NFKC", question).replace("\u2019", "'").strip().casefold()
    q = q.lstrip("\"'([ ")
    if not _AUX_RE.match(q):
        return False
    without_ok = _OR_OK_RE.sub(" ", q)
    return re.search(r"\bor\b", without_ok) is None
