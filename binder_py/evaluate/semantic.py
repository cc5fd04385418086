"""Binder's "semantic match" evaluator for WikiTQ (paper appendix A.5, Table 9), written from its documented rules.

A prediction is correct when the official evaluator accepts it, or when the
gold and predicted denotations (duplicates removed after lower-casing and
stripping) have the same size and every gold value matches some predicted value
under these extra rules, tried in order:

1. **Official value match** (normalised strings, numbers within 1e-6, ``yyyy-mm-dd`` dates);
   the gold is also typed by its ``targetCanon`` when given.
2. **Yes/no**: a gold ``yes`` matches ``1``, ``true``, ``yes``; a gold ``no``
   matches ``0``, ``false``, ``no`` (a program returns booleans or 1/0).
3. **A-or-B choice** (single-valued gold, question containing `` or ``): a
   prediction ``1``/``true`` means the first option, ``0``/``false`` the second
   (``yes``/``no`` pick no option). The gold is the first option when the text just before `` or ``
   ends with it, the second when the text just after `` or `` starts with it.
   ("Are there at least 13 different components on the chart?" gold ``Yes``,
   predicted ``1`` -> correct.)
4. **Numbers** (lenient): both sides read as numbers allowing thousands
   separators (``12,467``), a leading currency sign (``$ £ € ¥``), a trailing
   ``%``, and **units**: a number followed by words (``4 years``, ``56 laps``,
   ``3.5 km``) reads as that number. Two numbers match when they are within
   1e-6 (absolute or relative), or, for **float precision**, when the gold is
   written with d >= 1 decimals and the prediction rounded to d decimals equals
   it (gold ``7.45``, predicted ``7.449999999999989``; gold ``33.3``, predicted
   ``33.333``). An integer gold needs the prediction within 1e-6.
5. **Dates**: both sides parsed by :func:`parse_date_text` (``2001-01-05``,
   ``January 5, 2001``, ``5 Jan 2001``, ``Jan. 5th 2001``, ``1/5/2001`` (month
   first), ``January 2001``, ``5 January``, a 4-digit year ...) match when
   (year, month, day) are equal, unknown parts included.
6. **Normalisation**: after the official normalisation, which already drops a
   trailing parenthetical (gold ``oil pressure``, predicted ``oil pressure (56
   laps)``), values also match when they are equal after removing a leading
   article (``the``, ``a``, ``an``) and all punctuation other than inside numbers.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from binder_py.evaluate.official import normalize, official_match, valid_date_parts

__all__ = ["semantic_match", "value_match", "parse_number_text", "parse_date_text", "choice_options"]

_TRUE = {"1", "1.0", "true", "yes"}
_FALSE = {"0", "0.0", "false", "no"}

_NUMBER_CORE = r"[+-]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?|[+-]?\.\d+"
_NUMBER_WITH_UNITS = re.compile(
    rf"^(?:[$£€¥]\s*)?(?P<number>{_NUMBER_CORE})(?:[eE](?P<exp>[+-]?\d+))?\s*"
    r"(?P<unit>%|[a-z][a-z.'/-]*(?:\s+[a-z][a-z.'/-]*){0,2})?$")


def parse_number_text(text: str) -> tuple[float, int, bool] | None:
    """Read a number leniently: (value, decimals written, had a unit) or None.

    ``"12,467"`` -> (12467.0, 0, False); ``"4 years"`` -> (4.0, 0, True);
    ``"7.45"`` -> (7.45, 2, False); ``"48.4%"`` -> (48.4, 1, True).
    """
    text = text.strip().lower()
    match = _NUMBER_WITH_UNITS.match(text)
    if not match:
        return None
    number = match.group("number").replace(",", "")
    exponent = match.group("exp")
    value = float(number + (f"e{exponent}" if exponent else ""))
    decimals = len(number.split(".", 1)[1]) if "." in number and not exponent else 0
    return value, decimals, match.group("unit") is not None


def _numbers_match(gold: str, predicted: str) -> bool:
    g = parse_number_text(gold)
    p = parse_number_text(predicted)
    if g is None or p is None:
        return False
    if _unit(gold).split(" ")[0] in _MONTHS or _unit(predicted).split(" ")[0] in _MONTHS:
        return False  # "5 january" is a date, not a number with a unit
    if g[2] and p[2] and _unit(gold) != _unit(predicted):
        return False  # "4 years" vs "4 months"
    gv, gd, _ = g
    pv = p[0]
    if abs(gv - pv) <= 1e-6 or abs(gv - pv) <= 1e-6 * max(abs(gv), abs(pv)):
        return True
    if gd >= 1:
        return abs(round(pv, gd) - gv) <= 10 ** -(gd + 3)
    return False


def _unit(text: str) -> str:
    match = _NUMBER_WITH_UNITS.match(text.strip().lower())
    return (match.group("unit") or "").strip(".") if match else ""


# ----------------------------------------------------------------------------- dates

_MONTHS = {name: i + 1 for i, name in enumerate(
    ["january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
     "november", "december"])}
_MONTHS.update({name[:3]: number for name, number in list(_MONTHS.items())})
_MONTHS["sept"] = 9
_MONTH = r"(?P<month>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_DAY = r"(?P<day>\d{1,2})(?:st|nd|rd|th)?"
_YEAR = r"(?P<year>\d{4})"
_DATE_PATTERNS = [re.compile(p) for p in (
    rf"^{_YEAR}-(?P<mnum>\d{{1,2}})-(?P<day>\d{{1,2}})(?:[ t]00:00(?::00)?)?$",
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


def parse_date_text(text: str) -> tuple[int, int, int] | None:
    """Recognise a written date -> (year, month, day), -1 for parts not given; None if not a date.

    ``"January 5, 2001"``, ``"5 Jan 2001"``, ``"2001-01-05"``, ``"1/5/2001"``
    (month first) -> (2001, 1, 5); ``"January 2001"`` -> (2001, 1, -1);
    ``"May 5"`` -> (-1, 5, 5); ``"2001"`` -> (2001, -1, -1); ``xx`` parts of
    ``yyyy-mm-dd`` are unknown (-1).
    """
    text = _WS.sub(" ", text.strip().lower())
    xx = re.match(r"^(\d{4}|xxxx|xx)-(\d{1,2}|xx)-(\d{1,2}|xx)$", text)
    if xx and "x" in text:
        y, m, d = (-1 if "x" in part else int(part) for part in xx.groups())
        return valid_date_parts(y, m, d)
    for pattern in _DATE_PATTERNS:
        match = pattern.match(text)
        if not match:
            continue
        parts = match.groupdict()
        year = int(parts["year"]) if parts.get("year") else -1
        if parts.get("month"):
            month = _MONTHS[parts["month"]]
        elif parts.get("mnum"):
            month = int(parts["mnum"])
        else:
            month = -1
        day = int(parts["day"]) if parts.get("day") else -1
        return valid_date_parts(year, month, day)
    return None


def _dates_match(gold: str, predicted: str) -> bool:
    g = parse_date_text(gold)
    p = parse_date_text(predicted)
    if g is None or p is None or (g[1] == g[2] == -1 and p[1] == p[2] == -1):
        return False  # two bare years are numbers, compared by the number rule
    return g == p


# ----------------------------------------------------------------------------- choices and text

_WS = re.compile(r"\s+")
_ARTICLE = re.compile(r"^(?:the|a|an)\s+")
_PUNCT = re.compile(r"(?<!\d)[^\w\s]|[^\w\s](?!\d)")


def _loose(text: str) -> str:
    text = _ARTICLE.sub("", normalize(text))
    return _WS.sub(" ", _PUNCT.sub(" ", text)).strip()


def choice_options(question: str) -> tuple[str, str] | None:
    """The text before and after the first `` or `` of a question (normalised), or None."""
    q = _WS.sub(" ", normalize(question).rstrip("?").strip())
    match = re.search(r"\bor\b", q)
    if not match:
        return None
    before, after = q[:match.start()].strip(" ,"), q[match.end():].strip(" ,?")
    if not before or not after:
        return None
    return before, after


def _choice_match(question: str | None, gold: str, predicted: str) -> bool:
    p = normalize(predicted)
    if p not in _TRUE and p not in _FALSE:
        return False
    g = normalize(gold)
    if g in ("yes", "true"):
        return p in _TRUE
    if g in ("no", "false"):
        return p in _FALSE
    if not question or not g or p in ("yes", "no"):
        return False  # "yes"/"no" do not pick an option of an A-or-B question
    options = choice_options(question)
    if options is None:
        return False
    before, after = options
    gold_words = _loose(g)
    if not gold_words:
        return False
    first = _loose(before) == gold_words or _loose(before).endswith(" " + gold_words)
    second = _loose(after) == gold_words or _loose(after).startswith(gold_words + " ")
    if first and not second:
        return p in _TRUE
    if second and not first:
        return p in _FALSE
    return False


def value_match(gold: str, predicted: str, question: str | None = None, gold_canon: str | None = None) -> bool:
    """One gold value against one predicted value under the semantic rules (module docstring)."""
    if official_match([gold], [predicted], None if gold_canon is None else [gold_canon]):
        return True
    if _choice_match(question, gold, predicted):
        return True
    if _numbers_match(gold, predicted) or (gold_canon is not None and _numbers_match(gold_canon, predicted)):
        return True
    if _dates_match(gold, predicted) or (gold_canon is not None and _dates_match(gold_canon, predicted)):
        return True
    loose_gold = _loose(gold).replace(" ", "")
    return bool(loose_gold) and loose_gold == _loose(predicted).replace(" ", "")


def _dedupe(values: Sequence[object]) -> list[str]:
    seen: dict[str, str] = {}
    for v in values:
        text = str(v).strip()
        key = text.lower()
        if key not in seen:
            seen[key] = text
    return list(seen.values())


def semantic_match(question: str | None, gold: Sequence[str], predicted: Sequence[str],
                   gold_canon: Sequence[str] | None = None) -> bool:
    """True iff ``predicted`` is correct for ``gold`` under Binder's semantic match (module docstring)."""
    predicted = [str(p) for p in predicted]
    if official_match(gold, predicted, gold_canon):
        return True
    canon_of = dict(zip(gold, gold_canon)) if gold_canon is not None and len(gold_canon) == len(gold) else {}
    golds = _dedupe(gold)
    preds = _dedupe(predicted)
    if len(golds) != len(preds) or not golds:
        return False
    return all(any(value_match(g, p, question, canon_of.get(g)) for p in preds) for g in golds)
