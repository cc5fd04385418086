"""Yes/no row questions about a column's largest or smallest value, or whether a count is more than none.

Two more kinds of question a program's ``f_col`` asks that the cells answer (see
:mod:`binder_py.neural.computed`), both written by the embedded 1.5B model in the seeded WikiTQ runs:

* **the extreme:** "Is it the heaviest?", "Is the weight the heaviest?" over ``73 kg (161 lb)``,
  ``76 kg (168 lb)``, …: yes for the rows whose value is the largest (or smallest) of the call's
  rows. The words: highest, largest, most, biggest, greatest, heaviest, tallest, longest,
  maximum (the largest); lowest, smallest, least, fewest, shortest, lightest, minimum (the smallest).
  Not best/worst/fastest/slowest, whose direction depends on what is measured. A cell's value is the
  first number it writes (after a currency sign); a call needs two rows with one, and a row without
  is asked.
* **any at all:** "Did the nation win gold?", "Did they win silver?" over a column of counts (the
  question names the column, and every cell that holds something is a whole number): yes when the
  count is above 0. The question must say win, won, have, has, get, got, receive, earn or score,
  and nothing else but its frame, the column's words and a generic noun for the row (nation,
  team, player, …); a negation ("Did they not win bronze?") or a number leaves it to the model.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from binder_py.discriminate.question import other_words, stem, words
from binder_py.neural.comparisons import Decision

__all__ = ["extreme_reader", "any_count_reader"]

_LARGEST = frozenset("highest largest most biggest greatest heaviest tallest longest maximum max".split())
_SMALLEST = frozenset("lowest smallest least fewest shortest lightest minimum min".split())
_FRAME = frozenset("""is are was were be it its it's the a an this that one value number amount of in for
row entry does do did has have had""".split())
_GAIN = frozenset("win won wins have has had get got gets receive received earn earned score scored".split())
_ROW_NOUNS = frozenset("nation country team club player person athlete driver they he she it medal medals".split())
_FIRST_NUMBER = re.compile(r"^[^\d\-+.]*?(?P<sign>[-+])?[$€£¥]?\s?(?P<num>(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?)")
_WHOLE = re.compile(r"^\s*\d+\s*$")


def first_number(cell: Any) -> float | None:
    """The first number a cell writes (``73 kg (161 lb)`` → 73), or None."""
    if isinstance(cell, bool) or cell is None:
        return None
    if isinstance(cell, (int, float)):
        return None if cell != cell else float(cell)
    match = _FIRST_NUMBER.match(str(cell))
    if match is None:
        return None
    value = float(match.group("num").replace(",", ""))
    return -value if match.group("sign") == "-" else value


def extreme_reader(question: str, column: str, cells: Sequence[Any]) -> Callable[[Any], Decision] | None:
    """Yes for the cells holding the largest (or smallest) value of the call, when that is all the question
    asks (see the module docstring)."""
    asked = set(words(question))
    largest, smallest = asked & _LARGEST, asked & _SMALLEST
    if len(largest) + len(smallest) != 1 or re.search(r"\d", question):
        return None
    if other_words(question, column, _FRAME | _LARGEST | _SMALLEST):
        return None
    values = [v for v in (first_number(c) for c in cells) if v is not None]
    if len(values) < 2:
        return None
    extreme = max(values) if largest else min(values)
    word = next(iter(largest or smallest))

    def decide(cell: Any) -> Decision:
        value = first_number(cell)
        if value is None:
            return None
        return value == extreme, f"{value:g} against the {word} {extreme:g}"

    return decide


def any_count_reader(question: str, column: str, cells: Sequence[Any]) -> Callable[[Any], Decision] | None:
    """Yes for the counts above 0, when the question only asks whether the row won (had, got, …) any of the
    counted thing (see the module docstring)."""
    asked = set(words(question))
    if not asked & _GAIN or re.search(r"\d", question) or asked & {"not", "no", "never", "without"}:
        return None
    if not {stem(w) for w in words(column)} & {stem(w) for w in asked}:
        return None  # the question must name the counted column
    if other_words(question, column, _FRAME | _GAIN | _ROW_NOUNS):
        return None
    present = [c for c in cells if c is not None and c == c and str(c).strip()]
    if not present or not all(_WHOLE.match(str(int(c) if isinstance(c, float) and c.is_integer() else c))
                              for c in present):
        return None  # not a column of counts

    def decide(cell: Any) -> Decision:
        value = first_number(cell)
        if value is None:
            return None
        return value > 0, f"a count of {value:g}"

    return decide
