"""Yes/no row questions that only ask in which year, decade or month a row's date falls, answered by computing.

"Is it in 1986?" over a column of dates is what pandas reads off the cells; asked row by row, the
embedded 1.5B model answered 14 of 63 such rows wrong (the seeded WikiTQ test sample of the twentieth
session), and "Is the month January?" over "january 8", "february 3", … 1 of 13. So, as with
:mod:`binder_py.neural.comparisons` and :mod:`binder_py.neural.equalities`, :func:`read_date_question`
reads the question, and when it is exactly one of these, the rows whose cell names one such year or
month are answered by computing:

* a year: "Is it in 1986?", "Is the year 1999?", "Was it released in 2005?" (one four-digit year from
  1000 to 2100, and no before/after: those are comparisons);
* a decade: "Is it in the 1990s?", "… the 1990's?"; "the 1900s", "the 1800s" are the century, as in
  WikiTQ's questions (nt-3280, nt-7956, nt-13312: their gold counts the century's years), and "the
  2000s" the decade;
* a month: "Is the month January?", "Is it in January?" (one month named in full);
* a day of a month: "Is the date July 8th?", "Is it on 8 July?" (one month named in full, with its
  day beside it), whatever the year.

The question's other words must be only the frame of a yes/no question about a row (is, it, the,
in, …), words about dates (year, month, date, held, played, released, …), or the column's own words.
A cell is read as its one year (a cell naming two years, "1980–1984", is asked), its one month
(named in full or in three letters, or the month of an ISO date, 2023-01-05), or its one day and
month ("8 july", "july 8, 1990", 1990-07-08); a cell with none is asked. Each computed row's raw output says so ("september 19, 1986: yes (computed, not asked: the
year 1986)").
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from binder_py.discriminate.question import words
from binder_py.neural.comparisons import YEAR_IN_CELL, Decision

__all__ = ["DateQuestion", "read_date_question", "cell_date_part", "date_reader"]

MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
          "november", "december")
_FRAME = frozenset("""is are was were be been it its it's the a an this that in on of during at from does do did has
have had year years month date day time season held played released built born founded opened made
happen happened took place start started end ended row""".split())
_YEAR = re.compile(r"(?<![\d.,:/-])(1\d{3}|20\d{2})(?![\d.,:/-]|'?s\b)")
_DECADE = re.compile(r"(?<![\d.,:/-])(1\d|20)(\d)0'?s\b")
_CELL_MONTH = re.compile(r"\b(" + "|".join(MONTHS) + "|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec" + r")\b")
_ISO = re.compile(r"\b(?:1\d{3}|20\d{2})-(\d{2})-\d{2}\b")
_ISO_DAY = re.compile(r"\b(?:1\d{3}|20\d{2})-(\d{2})-(\d{2})\b")
_MONTH_NAME = "(" + "|".join(MONTHS) + "|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec)"
_CELL_DAY_MONTH = re.compile(rf"(?<![\d-])(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTH_NAME}\b\.?")
_CELL_MONTH_DAY = re.compile(rf"\b{_MONTH_NAME}\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?(?![\d:])")


def _month_number(name: str) -> int:
    return next(i for i, m in enumerate(MONTHS, 1) if m.startswith(name[:3]))


@dataclass(frozen=True)
class DateQuestion:
    """What a question asks of a row's date: a ``year`` in [``low``, ``high``] (a decade: ten years), a
    ``month`` (1–12, in ``low``), or a ``day`` of a month (``month × 100 + day``, in ``low``)."""

    part: Literal["year", "month", "day"]
    low: int
    high: int
    shown: str

    def holds(self, value: int) -> bool:
        return self.low <= value <= self.high


def read_date_question(question: str, column: str) -> DateQuestion | None:
    """The year, decade or month a yes/no question asks a row's date to fall in, or None (see the module
    docstring)."""
    text = " ".join(question.casefold().replace("’", "'").split())
    if re.search(r"\b(?:before|after|since|until|till|between|earlier|later|not|or|and)\b", text):
        return None
    months = [i for i, m in enumerate(MONTHS, 1) if re.search(rf"\b{m}\b", text)]
    decades = list(_DECADE.finditer(text))
    years = list(_YEAR.finditer(text))
    found: DateQuestion | None = None
    span: tuple[int, int] = (0, 0)
    if len(decades) == 1 and not years and not months:
        first = int(decades[0].group(1) + decades[0].group(2) + "0")
        last = first + 99 if first % 100 == 0 and first < 2000 else first + 9  # "the 1900s": the century
        found, span = DateQuestion("year", first, last, f"the {first}s"), decades[0].span()
    elif len(years) == 1 and not decades and not months:
        year = int(years[0].group(1))
        found, span = DateQuestion("year", year, year, f"the year {year}"), years[0].span()
    elif len(months) == 1 and not years and not decades:
        month = months[0]
        name = MONTHS[month - 1]
        day = re.search(rf"\b(?:(?:the\s+)?(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?{name}|{name}\s+(\d{{1,2}})"
                        rf"(?:st|nd|rd|th)?)\b", text)
        if day is not None and 1 <= int(day.group(1) or day.group(2)) <= 31:
            number = int(day.group(1) or day.group(2))
            found, span = DateQuestion("day", month * 100 + number, month * 100 + number,
                                       f"{name} {number}"), day.span()
        else:
            where = re.search(rf"\b{name}\b", text)
            assert where is not None
            found, span = DateQuestion("month", month, month, name), where.span()
    if found is None or re.search(r"\d", text[:span[0]] + text[span[1]:]):
        return None
    rest = set(words(text[:span[0]] + " " + text[span[1]:]))
    column_words = set(words(str(column)))
    if rest - _FRAME - column_words:
        return None
    return found


def cell_date_part(cell: Any, asked: DateQuestion) -> int | None:
    """The one year (or month) the cell names, or None."""
    if isinstance(cell, bool) or cell is None:
        return None
    if isinstance(cell, (int, float)):
        if cell != cell or asked.part != "year" or not float(cell).is_integer():
            return None
        value = int(cell)
        return value if 1000 <= value <= 2100 else None
    text = str(cell).casefold()
    if asked.part == "year":
        found = set(YEAR_IN_CELL.findall(text))
        return int(found.pop()) if len(found) == 1 else None
    if asked.part == "day":
        days = {_month_number(m) * 100 + int(d) for d, m in _CELL_DAY_MONTH.findall(text) if 1 <= int(d) <= 31}
        days |= {_month_number(m) * 100 + int(d) for m, d in _CELL_MONTH_DAY.findall(text) if 1 <= int(d) <= 31}
        days |= {int(m) * 100 + int(d) for m, d in _ISO_DAY.findall(text) if 1 <= int(m) <= 12 and 1 <= int(d) <= 31}
        return days.pop() if len(days) == 1 else None
    names = {_month_number(g) for g in _CELL_MONTH.findall(text)}
    iso = {int(m) for m in _ISO.findall(text) if 1 <= int(m) <= 12}
    months = names | iso
    return months.pop() if len(months) == 1 else None


def date_reader(question: str, column: str, cells: Sequence[Any]) -> Callable[[Any], Decision] | None:
    """How a row's cell answers ``question`` when it only asks the year, decade or month of the row's date
    (see the module docstring); None for any other question."""
    asked = read_date_question(question, column)
    if asked is None:
        return None

    def decide(cell: Any) -> Decision:
        value = cell_date_part(cell, asked)
        if value is None:
            return None
        shown = {"year": lambda: f"the year {value}", "month": lambda: MONTHS[value - 1],
                 "day": lambda: f"{MONTHS[value // 100 - 1]} {value % 100}"}[asked.part]()
        return asked.holds(value), f"{shown}, asked {asked.shown}"

    return decide
