"""Binder's WikiTQ judgement: ``Evaluator.eval_ex_match`` in semantic mode (xlang-ai/Binder ``utils/evaluator.py``).

Ported from the rules of Binder's code, not copied; it normalises with the library Binder used,
``recognizers-text-suite`` (pinned with ``emoji==1.7.0`` in ``pyproject.toml``, as Binder's environment file does).
The steps, in Binder's order:

1. Every gold and predicted value: ``str(v).lower().strip()``; the question: whitespace runs to one space,
   stripped, lowercased.
2. :func:`str_normalize` on every value: a literal backslash-n becomes ``"; "``; then, unless the text starts
   with ``digits/digits``, every date-time the recogniser finds with exactly one resolution is replaced by its
   TIMEX (``january 5, 2001`` -> ``2001-01-05``, ``4 years`` -> ``P4Y``, ``1990`` -> ``1990``), and then every
   number it finds whose value does not start with ``P`` by that value (``two`` -> ``2``, ``12,467`` ->
   ``12467``); a result shaped ``a-b-c 00:00:00`` loses the time. (A text over 256 characters skips the
   recogniser, whose time grows faster than the length; no WikiTQ gold value is that long.)
3. Both sides: duplicates removed and sorted.
4. One value on each side only:
   a. prediction ``0`` and gold ``no``, or ``1`` and ``yes`` -> correct;
   b. the question's first ``or`` token: prediction ``0`` and gold equal to the token after it, or ``1`` and
      gold equal to the token before it -> correct (tokens split on spaces, punctuation kept; an ``or`` as the
      first token takes the last token as "before");
   c. durations ``P3Y``/``PT3H`` are read as their number; if either side is a number with units (``$`` signs,
      a number, then spaces and ``%`` or one word) the word sets of the two sides, split on spaces, must be one a
      subset of the other; if either side starts with a date ``yyyy-m-d`` the same test on words split on spaces
      and ``-`` -> correct.
5. Otherwise the official check on the normalised texts with no canonical values, Python 3 dialect
   (:mod:`binder_py.evaluate.official`), called as Binder calls it: with the *prediction* as the target, so every
   predicted value must match some gold value.

Binder asserts that the question is a string; here a missing question is the empty string. The recogniser
reads relative dates ("today") against the current date, as in Binder.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from binder_py.evaluate.official import check_denotation, to_value_list

__all__ = ["binder_match", "str_normalize"]

_FRACTION_START = re.compile(r"\d+/\d+")
#: Binder drops the time of a text matching r"(.*)-(.*)-(.*) 00:00:00" (re.match: the start of the text);
#: that pattern backtracks in cubic time (800 dashes took 0.5 s): _ends_with_midnight is the same test in linear time
_MIDNIGHT = " 00:00:00"
#: texts longer than this are compared without the recogniser's number and date-time values: its time grows
#: faster than the length (1,000 characters of "12-12-..." took 9 s, 4,000 minutes), and no WikiTQ gold value
#: is half as long (the longest, 150 characters)
MAX_RECOGNIZED_CHARS = 256
_NUMBER_WITH_UNITS = re.compile(r"^\$*[+-]?([0-9]*[.])?[0-9]+(\s*%*|\s+\w+)$")
_DATE = re.compile(r"[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}\s*([0-9]{1,2}:[0-9]{1,2}:[0-9]{1,2})?")
_DURATION = re.compile(r"(P|PT)(\d+)(Y|M|D|H|S)")


class _Recognizers:
    """The English date-time and number models of recognizers-text, built once (building takes ~0.5 s)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._models: tuple[Any, Any] | None = None

    def parse(self, kind: str, text: str) -> list[Any]:
        with self._lock:  # the models are not documented as thread-safe
            if self._models is None:
                self._models = self._build()
            datetime_model, number_model = self._models
            return datetime_model.parse(text) if kind == "datetime" else number_model.parse(text)

    @staticmethod
    def _build() -> tuple[Any, Any]:
        try:
            from recognizers_date_time.date_time.date_time_recognizer import DateTimeRecognizer
            from recognizers_number.number.number_recognizer import NumberRecognizer
            from recognizers_text.culture import Culture
        except ImportError as error:
            raise RuntimeError(f"the 'binder' evaluator needs recognizers-text-suite==1.0.2a2 with emoji==1.7.0 "
                               f"({error}); reinstall binder-py to get them") from None
        return (DateTimeRecognizer(Culture.English).get_datetime_model(Culture.English, True),
                NumberRecognizer(Culture.English).get_number_model(Culture.English, True))


_RECOGNIZERS = _Recognizers()


def _replace_spans(text: str, replacements: list[str], spans: list[tuple[int, int]]) -> str:
    pieces, last_end = [], 0
    for (start, end), replacement in zip(spans, replacements):
        pieces += [text[last_end:start], replacement]
        last_end = end
    pieces.append(text[last_end:])
    return "".join(pieces)


def _ends_with_midnight(text: str) -> bool:
    """``re.match(r"(.*)-(.*)-(.*) 00:00:00", text)``: " 00:00:00" before the first newline with two
    dashes before it (``.`` matches no newline)."""
    line_end = text.find("\n")
    at = text.rfind(_MIDNIGHT, 0, len(text) if line_end < 0 else line_end)
    return at >= 0 and text.count("-", 0, at) >= 2


@lru_cache(maxsize=65536)
def str_normalize(text: str) -> str:
    """Binder's ``str_normalize`` (step 2 of the module docstring)."""
    text = text.replace("\\n", "; ")
    for kind in ("datetime", "number"):
        if len(text) > MAX_RECOGNIZED_CHARS:
            break
        if _FRACTION_START.match(text):
            continue
        replacements: list[str] = []
        spans: list[tuple[int, int]] = []
        for found in _RECOGNIZERS.parse(kind, text):
            if kind == "number":
                value = found.resolution["value"]
                if str(value).startswith("P"):
                    continue
            elif found.resolution and len(found.resolution["values"]) == 1:
                value = found.resolution["values"][0]["timex"]
            else:
                continue
            replacements.append(value)
            spans.append((found.start, found.end + 1))
        if replacements:
            text = _replace_spans(text, replacements, spans)
    if _ends_with_midnight(text):
        text = text[:-len("00:00:00") - 1]
    return text


def _choice_rule(question: str, pred: str, gold: str) -> bool:
    if (pred == "0" and gold == "no") or (pred == "1" and gold == "yes"):
        return True
    tokens = question.split()
    if "or" not in tokens:
        return False
    position = tokens.index("or")
    if position + 1 >= len(tokens):
        return False
    before, after = tokens[position - 1], tokens[position + 1]
    return (pred == "0" and gold == after) or (pred == "1" and gold == before)


def _as_duration_number(text: str) -> str:
    match = _DURATION.match(text)
    return match.group(2) if match else text


def _units_and_dates_rule(pred: str, gold: str) -> bool:
    p, g = _as_duration_number(pred), _as_duration_number(gold)
    if _NUMBER_WITH_UNITS.match(p) or _NUMBER_WITH_UNITS.match(g):
        p_words, g_words = set(p.split()), set(g.split())
        if p_words <= g_words or g_words <= p_words:
            return True
    if _DATE.match(p) or _DATE.match(g):
        p_words, g_words = set(p.replace("-", " ").split()), set(g.replace("-", " ").split())
        if p_words <= g_words or g_words <= p_words:
            return True
    return False


def binder_match(question: str | None, gold: Sequence[str], predicted: Sequence[str]) -> bool:
    """Binder's semantic-mode judgement of ``predicted`` for ``gold`` (module docstring)."""
    question_text = re.sub(r"\s+", " ", question or "").strip().lower()
    preds = sorted({str_normalize(str(p).lower().strip()) for p in predicted})
    golds = sorted({str_normalize(str(g).lower().strip()) for g in gold})
    if len(preds) == 1 and len(golds) == 1:
        if _choice_rule(question_text, preds[0], golds[0]) or _units_and_dates_rule(preds[0], golds[0]):
            return True
    return check_denotation(to_value_list(preds, dialect="python3"), to_value_list(golds, dialect="python3"))
