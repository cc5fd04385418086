"""Yes/no row questions that only compare one column's cells with a number, answered by computing.

A small model cannot compare numbers row by row. Asked "Is the silver medal count over 12?" over a
column of counts, the embedded 1.5B model said no to 46 and yes to 22; asked "Is the run time less
than 1:19?", yes to 1:19.37 and 1:20.08 alike (the seeded WikiTQ runs of the nineteenth session:
22 such calls, most of them wrong in places). pandas can: such a question is a comparison, and
Binder's rule is that the model answers only what the program cannot compute. So before a yes/no
``f_col`` over ONE column goes to the model, :func:`read_comparison` reads its question, and when it
is exactly one comparison with a number, the rows whose cell holds a number of the same kind are
answered by computing (:func:`computed_answers`); the other rows still go to the model.

What counts as such a question (all of it, or the model is asked as before):

* one comparison, in words: ``more|greater|higher|larger|bigger|longer|later than X``, ``over X``,
  ``above X``, ``exceeds X``, ``after YEAR`` (>); ``less|fewer|lower|smaller|shorter|earlier than
  X``, ``under X``, ``below X``, ``before YEAR`` (<); ``at least X``, ``X or more``, ``no less
  than X``, ``more than or equal to X`` (>=); ``at most X``, ``X or less``, ``no more than X``, ``less than or
  equal to X`` (<=); and the signs ``>``, ``<``,
  ``>=``, ``<=`` (``Is the parking space > 0?``);
* X is a number (``12``, ``13.00``, ``10,000``, ``2.5%``, ``5 million``), a time (``1:19``,
  ``2:05.3``: minutes and seconds) or, after before/after, a year;
* nothing else that could be a condition: no ``and``/``or``/``but``/``not``, no second number,
  and the question's other words name the column ("Is the enrollment less than 600?" over
  ``Enrollment``) or nothing ("Less than 13.00"); "Is there at least 2 nationalities?" over a
  ``Fee`` column asks something else and goes to the model.

A cell is read as the same kind of value as X, or not at all: its one number (after a currency
sign, with its scale word: ``1.2 million``), its one time, or its one year (``june 22, 1984
(#84003236)`` → 1984); a cell with none or several, a scale word X lacks (or the reverse), or a
unit other than X's (``16 km`` against ``10 miles``) is left to the model. A cell that writes no
number (``n/a``, ``—``, ``?``, ``tba``: :data:`~binder_py.neural.requests.NO_NUMBER_CELLS`) is no,
as pandas compares a missing value, instead of going to the model, which answered "Is the attendance
less than or equal to 1,000?" yes for ``n/a`` in one call and no in another. Each computed row's
raw output says what was compared ("403 > 0: yes (computed, not asked)").
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from binder_py.discriminate.question import stem
from binder_py.neural.requests import NO_NUMBER_CELLS

__all__ = ["Comparison", "Decision", "read_comparison", "cell_quantity", "comparison_reader", "is_missing"]

#: a cell's answer (yes?) and what was compared, or None when the cell cannot be read so (the model is asked)
Decision = tuple[bool, str] | None


def is_missing(cell: Any) -> bool:
    """Whether a cell holds nothing a reader can read: None or a float NaN."""
    return cell is None or (isinstance(cell, float) and cell != cell)

Op = Literal[">", "<", ">=", "<="]
Kind = Literal["number", "time", "year"]

_NUM = r"(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?"
_TIME = r"\d{1,3}:[0-5]\d(?:\.\d+)?"
_SCALE = {"thousand": 1e3, "million": 1e6, "billion": 1e9, "trillion": 1e12}
_SCALE_WORDS = "|".join(_SCALE)
_VALUE = rf"(?P<value>{_TIME}|[$€£¥]?\s?{_NUM}(?:\s?%)?)(?:\s+(?P<scale>{_SCALE_WORDS})\b)?"
_MORE = r"more|greater|higher|larger|bigger|longer|later|heavier|taller|wider|deeper|farther|further"
_LESS = r"less|fewer|lower|smaller|shorter|earlier|lighter|narrower|shallower"

#: (pattern, operator, whether X must be a year); tried in order, the first that matches wins
_PHRASES: tuple[tuple[re.Pattern[str], Op, bool], ...] = tuple(
    (re.compile(pattern), op, year) for pattern, op, year in (
        (rf"\b(?:{_MORE}) than or equal to {_VALUE}", ">=", False),
        (rf"\b(?:{_LESS}) than or equal to {_VALUE}", "<=", False),
        (rf"\bequal to or (?:{_MORE}) than {_VALUE}", ">=", False),
        (rf"\bequal to or (?:{_LESS}) than {_VALUE}", "<=", False),
        (rf"\b(?:no|not) (?:{_MORE}) than {_VALUE}", "<=", False),
        (rf"\b(?:no|not) (?:{_LESS}) than {_VALUE}", ">=", False),
        (rf"\bat least {_VALUE}", ">=", False),
        (rf"\bat most {_VALUE}", "<=", False),
        (rf"(?<![\w.,:]){_VALUE} or (?:more|greater|higher|above|over)\b", ">=", False),
        (rf"(?<![\w.,:]){_VALUE} or (?:less|fewer|lower|below|under)\b", "<=", False),
        (rf"\b(?:{_MORE}) than {_VALUE}", ">", False),
        (rf"\b(?:{_LESS}) than {_VALUE}", "<", False),
        (rf"\b(?:over|above|exceeds?|exceeding|exceeded) {_VALUE}", ">", False),
        (rf"\b(?:under|below) {_VALUE}", "<", False),
        (rf"\bafter {_VALUE}", ">", True),
        (rf"\bbefore {_VALUE}", "<", True),
        (rf"(?:>=|≥)\s*{_VALUE}", ">=", False),  # what a program's author may write in a question
        (rf"(?:<=|≤)\s*{_VALUE}", "<=", False),
        (rf">\s*{_VALUE}", ">", False),
        (rf"<\s*{_VALUE}", "<", False),
    ))

_NOT_A_CONDITION = re.compile(r"\b(?:and|or|but|not|nor|except|between|than|without|neither|either|both|"
                              r"each|every|all|same|equal|equals|exactly|times|twice|half|double|ratio|"
                              r"difference|combined|rank|ranked|ranking|place|placed|position)\b")
_FRAME = frozenset("""is are was were be been does do did has have had it its it's the a an there they he she
this that these those any of in on at for to by with row value number amount count total score scored
""".split())
_WORD = re.compile(r"[^\W\d_]+")


@dataclass(frozen=True)
class Comparison:
    """``cell op value``, with ``value`` of a ``kind``; ``unit``: the word after X, if any (``matches``)."""

    op: Op
    value: float
    kind: Kind
    unit: str = ""
    scaled: bool = False  # X carries a scale word ("5 million")
    text: str = ""

    def holds(self, quantity: float) -> bool:
        return {">": quantity > self.value, "<": quantity < self.value,
                ">=": quantity >= self.value, "<=": quantity <= self.value}[self.op]


def _number(text: str) -> float:
    text = text.strip().lstrip("$€£¥").strip().rstrip("%").strip()
    return float(text.replace(",", ""))


def _seconds(text: str) -> float:
    minutes, seconds = text.split(":")
    return int(minutes) * 60 + float(seconds)


def _is_year(value: float) -> bool:
    return value.is_integer() and 1000 <= value <= 2100


def _words(text: str) -> set[str]:
    return {stem(w) for w in _WORD.findall(text.casefold())}


def read_comparison(question: str, column: str) -> Comparison | None:
    """The comparison a yes/no question about one column's cells makes, or None when it asks anything
    else (see the module docstring)."""
    q = " ".join(question.casefold().replace("’", "'").split())
    found = None
    for pattern, op, year in _PHRASES:
        match = pattern.search(q)
        if match is not None:
            found = (match, op, year)
            break
    if found is None:
        return None
    match, op, needs_year = found
    rest = (q[:match.start()] + " " + q[match.end():]).strip(" ?.!")
    if _NOT_A_CONDITION.search(rest) or re.search(r"\d", rest):
        return None  # another condition, a second number, or a question about something else
    text = match.group("value").strip()
    scale = match.group("scale")
    if re.fullmatch(_TIME, text):
        if scale or needs_year:
            return None
        kind: Kind = "time"
        value = _seconds(text)
    else:
        value = _number(text) * (_SCALE[scale] if scale else 1.0)
        kind = "year" if needs_year else "number"
        if needs_year and (scale or not _is_year(value) or not re.fullmatch(r"\d{4}", text)):
            return None  # "after 5" is no year: the model reads it
    after = _WORD.match(q[match.end():].lstrip())
    unit = after.group(0) if kind == "number" and after is not None and after.group(0) not in _FRAME else ""
    # the question's other words (and X's unit) must name the column, or be only the frame of a yes/no question
    other = (_words(rest) | _words(unit)) - _FRAME
    if other and not other & _words(str(column)):
        return None
    return Comparison(op, value, kind, unit, bool(scale), match.group(0))


_CELL_TIME = re.compile(rf"(?<![\d:.]){_TIME}(?![\d:])")
_CELL_NUMBER = re.compile(rf"(?<![\w.,:])(?P<sign>-)?[$€£¥]?\s?(?P<num>{_NUM})(?![\d:]|\.\d|,\d)\s?%?"
                          rf"(?:\s*(?P<after>[^\W\d_]+))?")
#: a year a cell writes (1000–2100, not inside a longer number)
YEAR_IN_CELL = re.compile(r"(?<!\d)(1\d{3}|20\d{2})(?!\d)")


def cell_quantity(cell: Any, comparison: Comparison) -> float | None:
    """The one value of ``comparison.kind`` the cell holds, or None (none, several, another scale or unit)."""
    if isinstance(cell, bool) or cell is None:
        return None
    if isinstance(cell, (int, float)):
        value = float(cell)
        if value != value or comparison.kind == "time" or (comparison.scaled and abs(value) < 1000):
            return None  # (13.9 in a column of millions against "5 million")
        return value if comparison.kind != "year" or _is_year(value) else None
    text = " ".join(str(cell).casefold().split())
    if not text:
        return None
    if comparison.kind == "time":
        times = _CELL_TIME.findall(text)
        return _seconds(times[0]) if len(times) == 1 and len(re.findall(r"\d+", text)) <= 3 else None
    if comparison.kind == "year":
        years = set(YEAR_IN_CELL.findall(text))
        return float(years.pop()) if len(years) == 1 else None
    if _CELL_TIME.search(text):
        return None  # "5:10.44" is no plain number
    numbers = list(_CELL_NUMBER.finditer(text))
    if len(numbers) != 1:
        return None
    match = numbers[0]
    value = float(match.group("num").replace(",", "")) * (-1 if match.group("sign") else 1)
    after = match.group("after") or ""
    scale = _SCALE.get(after)
    if scale is not None:
        return value * scale if comparison.scaled else None  # "1.2 million" against "5": left to the model
    if comparison.scaled and abs(value) < 1000:
        return None  # "13.9" (millions, say the column's name) against "5 million"
    if after and comparison.unit and after != comparison.unit and _words(after) != _words(comparison.unit):
        return None  # "16 km" against "10 miles"
    return value


def comparison_reader(question: str, column: str, cells: Sequence[Any]) -> Callable[[Any], Decision] | None:
    """How a row's cell answers ``question`` when it only compares the column with a number (see the module
    docstring): the cell's value compared, and what was compared; None for any other question."""
    comparison = read_comparison(question, column)
    if comparison is None:
        return None

    def decide(cell: Any) -> Decision:
        if isinstance(cell, str) and cell.strip().casefold() in NO_NUMBER_CELLS:
            return False, f"{cell.strip()!r} writes no number"  # as pandas compares NaN: never true
        quantity = cell_quantity(cell, comparison)
        if quantity is None:
            return None
        unit = " s" if comparison.kind == "time" else ""
        return comparison.holds(quantity), f"{quantity:g}{unit} {comparison.op} {comparison.value:g}{unit}"

    return decide
