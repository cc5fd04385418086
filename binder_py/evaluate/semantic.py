"""binder-py's own semantic match for WikiTQ: the official judgement plus documented leniencies.

Each rule, and why, is in docs/RESULTS.md ("Evaluators"). In short: a prediction is correct when the official
evaluator accepts it, or when, after removing duplicates (by normalised text), gold and prediction have the same
number of values and they pair up both ways (every gold value matches some predicted value and every predicted
value matches some gold value) under :func:`value_match`:

1. equal text after the official normalisation;
2. equal text after also dropping punctuation outside numbers and a leading "the" (not when both are numbers);
3. yes/no answered by a boolean: gold ``yes`` ~ ``true``/``1``, gold ``no`` ~ ``false``/``0``;
4. equal numbers: within 1e-6 absolute or 1e-9 relative (float noise, never a fixed slack on large numbers),
   or the prediction rounded to the gold's written decimals; numbers may carry thousands separators, a
   currency sign, ``%`` or a unit word on one side (a dropped unit), equal units when both carry one
   (a final "s" ignored), and the words zero to twenty count as numbers;
5. equal dates in any common written form (``January 5, 2001`` ~ ``2001-01-05``); a part the gold leaves
   out may appear in the prediction only as pandas fills it (month 1, day 1), except the year, which may be
   added to a gold without one.

A gold's canonical value (``targetCanon``) stands in for rules 4 and 5 only when the gold itself reads as no
number (rule 4, without rounding) or no date (rule 5).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

from binder_py.evaluate.official import normalize, official_match

__all__ = ["parse_date_text", "parse_number_text", "semantic_match", "value_match"]

_WS = re.compile(r"\s+")

# ----------------------------------------------------------------------------- 2. text

_LEADING_THE = re.compile(r"^the\s+")
_PUNCTUATION_OUTSIDE_NUMBERS = re.compile(r"(?<!\d)[^\w\s]|[^\w\s](?!\d)")


def loose_text(text: str) -> str:
    """Official normalisation, then no leading "the" and no punctuation outside numbers."""
    text = _WS.sub(" ", _PUNCTUATION_OUTSIDE_NUMBERS.sub(" ", normalize(text))).strip()
    return _LEADING_THE.sub("", text)


# ----------------------------------------------------------------------------- 3. yes/no

_YES = {"yes", "true", "1"}
_NO = {"no", "false", "0"}


def _yes_no_match(gold: str, predicted: str) -> bool:
    g, p = normalize(gold), normalize(predicted)
    return (g == "yes" and p in _YES) or (g == "no" and p in _NO)


# ----------------------------------------------------------------------------- 4. numbers

_NUMBER_WORDS = {word: i for i, word in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen twenty".split())}
_NUMBER = re.compile(
    r"^(?P<currency>[$£€¥])?\s*(?P<number>[+-]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?|[+-]?\.\d+)"
    r"(?:e(?P<exponent>[+-]?\d+))?\s*(?P<unit>%|[a-z][a-z.'/-]*(?:\s+[a-z][a-z.'/-]*){0,2})?$")
_MONTH_NAMES = {"january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
                "november", "december", "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov",
                "dec"}


def parse_number_text(text: str) -> tuple[float, int, str] | None:
    """A written number -> (value, decimals written, unit), or None.

    The unit is ``""``, ``"%"``, the currency sign, or the words after the number without a final "s":
    ``"12,467"`` -> (12467.0, 0, ""); ``"4 years"`` -> (4.0, 0, "year"); ``"$1.50"`` -> (1.5, 2, "$");
    ``"two"`` -> (2.0, 0, ""); ``"5 january"`` -> None (a date).
    """
    text = _WS.sub(" ", text.strip().lower())
    if text in _NUMBER_WORDS:
        return float(_NUMBER_WORDS[text]), 0, ""
    match = _NUMBER.match(text)
    if not match:
        return None
    number, exponent = match.group("number").replace(",", ""), match.group("exponent")
    value = float(number + (f"e{exponent}" if exponent else ""))
    if math.isinf(value):
        return None
    decimals = len(number.split(".", 1)[1]) if "." in number and not exponent else 0
    unit = (match.group("unit") or "").strip(".")
    if unit.split(" ")[0] in _MONTH_NAMES:
        return None
    if unit.endswith("s") and len(unit) > 1:
        unit = unit[:-1]
    currency = match.group("currency") or ""
    if currency and unit:
        return None  # "$5 million": leave such phrases to the text rules
    return value, decimals, currency or unit


def _numbers_match(gold: str, predicted: str, rounding: bool = True) -> bool:
    g, p = parse_number_text(gold), parse_number_text(predicted)
    if g is None or p is None:
        return False
    (gv, gold_decimals, gold_unit), (pv, predicted_decimals, predicted_unit) = g, p
    if gold_unit and predicted_unit and gold_unit != predicted_unit:
        return False
    if abs(gv - pv) < 1e-6 or abs(gv - pv) <= 1e-9 * max(abs(gv), abs(pv)):
        return True
    return rounding and 0 < gold_decimals < predicted_decimals and round(pv, gold_decimals) == round(gv, gold_decimals)


# ----------------------------------------------------------------------------- 5. dates

_MONTHS = {name: i + 1 for i, name in enumerate(
    ["january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
     "november", "december"])}
_MONTHS.update({name[:3]: number for name, number in list(_MONTHS.items())})
_MONTHS["sept"] = 9
_MONTH = r"(?P<month>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_DAY = r"(?P<day>\d{1,2})(?:st|nd|rd|th)?"
_YEAR = r"(?P<year>\d{4})"
_DATE_FORMS = [re.compile(p) for p in (
    rf"^{_YEAR}-(?P<mnum>\d{{1,2}})-(?P<day>\d{{1,2}})(?:[ t]\d\d:\d\d(?::\d\d)?)?$",
    rf"^{_YEAR}/(?P<mnum>\d{{1,2}})/(?P<day>\d{{1,2}})$",
    rf"^(?P<mnum>\d{{1,2}})/(?P<day>\d{{1,2}})/{_YEAR}$",
    rf"^{_YEAR}-(?P<mnum>\d{{1,2}})$",
    rf"^(?:the\s+)?{_DAY}\s+(?:of\s+)?{_MONTH},?\s+{_YEAR}$",
    rf"^{_MONTH}\s+{_DAY},?\s+{_YEAR}$",
    rf"^{_MONTH},?\s+{_YEAR}$",
    rf"^{_MONTH}\s+{_DAY}$",
    rf"^(?:the\s+)?{_DAY}\s+(?:of\s+)?{_MONTH}$",
    rf"^{_YEAR}$",
)]
_UNKNOWN_PARTS = re.compile(r"^(\d{4}|xxxx|xx)-(\d{1,2}|xx)-(\d{1,2}|xx)$")


def parse_date_text(text: str) -> tuple[int, int, int] | None:
    """A written date -> (year, month, day), -1 for a part not given; None if not a date.

    ``"January 5, 2001"``, ``"5 Jan 2001"``, ``"2001-01-05"``, ``"1/5/2001"`` (month first) -> (2001, 1, 5);
    ``"January 2001"`` -> (2001, 1, -1); ``"May 5"`` -> (-1, 5, 5); ``"2001"`` -> (2001, -1, -1);
    ``xx`` parts of ``yyyy-mm-dd`` are unknown.
    """
    text = _WS.sub(" ", text.strip().lower())
    unknown = _UNKNOWN_PARTS.match(text)
    if unknown and "x" in text:
        year, month, day = (-1 if "x" in part else int(part) for part in unknown.groups())
    else:
        for form in _DATE_FORMS:
            match = form.match(text)
            if match:
                parts = match.groupdict()
                year = int(parts["year"]) if parts.get("year") else -1
                month = (_MONTHS[parts["month"]] if parts.get("month")
                         else int(parts["mnum"]) if parts.get("mnum") else -1)
                day = int(parts["day"]) if parts.get("day") else -1
                break
        else:
            return None
    if year == month == day == -1 or not (month == -1 or 1 <= month <= 12) or not (day == -1 or 1 <= day <= 31):
        return None
    return year, month, day


def _dates_match(gold: str, predicted: str) -> bool:
    g, p = parse_date_text(gold), parse_date_text(predicted)
    if g is None or p is None or (g[1:] == (-1, -1) and p[1:] == (-1, -1)):
        return False  # two bare years are numbers (rule 4)
    (gy, gm, gd), (py, pm, pd_) = g, p
    if gm == -1 and gd != -1:
        return False  # "xxxx-xx-05" names no day of a month
    year_ok = gy == py or gy == -1
    month_ok = gm == pm or (gm == -1 and pm == 1 and gd == -1)
    day_ok = gd == pd_ or (gd == -1 and pd_ == 1)
    return year_ok and month_ok and day_ok


# ----------------------------------------------------------------------------- the judgement

def value_match(gold: str, predicted: str, gold_canon: str | None = None) -> bool:
    """One gold value against one predicted value under rules 1-5 (module docstring)."""
    if normalize(gold) == normalize(predicted):
        return True
    both_numbers = parse_number_text(gold) is not None and parse_number_text(predicted) is not None
    loose = loose_text(gold)
    if loose and not both_numbers and loose == loose_text(predicted):  # numbers are compared by rule 4
        return True
    if _yes_no_match(gold, predicted):
        return True
    if _numbers_match(gold, predicted) or _dates_match(gold, predicted):
        return True
    if not gold_canon:
        return False
    # the canonical value types a gold the rules cannot read; its decimals and lost unit are not the annotator's
    if parse_number_text(gold) is None and _numbers_match(gold_canon, predicted, rounding=False):
        return True
    return parse_date_text(gold) is None and _dates_match(gold_canon, predicted)


def _distinct(values: Sequence[str]) -> list[str]:
    seen: dict[str, str] = {}
    for value in values:
        seen.setdefault(normalize(value), value)
    return list(seen.values())


def semantic_match(gold: Sequence[str], predicted: Sequence[str], gold_canon: Sequence[str] | None = None) -> bool:
    """binder-py's semantic judgement of ``predicted`` for ``gold`` (module docstring; docs/RESULTS.md)."""
    if official_match(gold, predicted, gold_canon):
        return True
    canon_of = dict(zip(gold, gold_canon)) if gold_canon is not None else {}
    golds, preds = _distinct(gold), _distinct(predicted)
    if not golds or len(golds) != len(preds):
        return False
    return (all(any(value_match(g, p, canon_of.get(g)) for p in preds) for g in golds)
            and all(any(value_match(g, p, canon_of.get(g)) for g in golds) for p in preds))
