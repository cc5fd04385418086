"""Yes/no row questions that only ask whether a cell IS one of the column's own values, answered by computing.

Small models write ``f_col("Is the city Holon?", ["Common name"])`` where ``df["Common name"] ==
"holon"`` would do, and the embedded 1.5B model then said yes for 67 of the column's 75 cities (the
seeded WikiTQ test sample of the twentieth session: in 18 of the 31 such calls there, at least one
row was answered wrong). What the question asks is an equality with a cell the table holds, which
pandas computes; so, as with :mod:`binder_py.neural.comparisons`, the rows are answered without the
model when :func:`named_cell` finds that the question is exactly that:

* the question names one text cell of the call's one column whole ("holon", "greene county"; the
  longest, when one named cell holds another);
* its other words are only the frame of a yes/no question about a row (is, it, the, in, from, …),
  the column's own words, or a generic noun for what a row is (city, team, player, song, …): "Is
  the city Holon?", "Is it in Greene County?", "Is the position 'soldier'?"; any other word ("Is
  the song before 'part of your world'?", "Is it not in China?", "Does the representative live in
  San Antonio?") leaves the question to the model.

A row whose cell is that value (its words, casefolded) is yes; a row whose cell does not hold it as
a phrase is no; a row whose cell holds it within more ("100 m hurdles" for "Is the event 100 m?") is
asked.

When the question names no whole cell but a name that cells hold within more ("Is it Germany?" over
``germany (ger) germany i``, ``italy (ita) italy ii``, …: :func:`named_part`), the rows whose cell
holds it are yes, and the others are asked (a cell may name the same thing otherwise, "usa" for "the
United States"). Each computed row's raw output says so ("holon: yes (computed, not asked: the cell is
'holon')").
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from binder_py.discriminate.question import other_words, words
from binder_py.normalize import whole_phrase_in
from binder_py.neural.comparisons import Decision, is_missing

__all__ = ["FRAME_WORDS", "ROW_NOUNS", "phrase_of", "named_cell", "named_part", "equality_reader"]

#: the words of a yes/no question about one row that ask nothing of their own
FRAME_WORDS = frozenset("""is are was were be been it its it's the a an this that in from at on of for by to his her their
does do did has have had located based listed named called held played there row one value entry same""".split())
#: generic nouns for what a row is: "Is the city Holon?" asks whether the row's cell is holon
ROW_NOUNS = frozenset("""name city town village country nation state province region county place location venue
stadium team club side player person people athlete driver rider artist singer band song single album film movie
show series episode game match event race tournament competition school university college station building
company brand model car ship title book work position role party surface""".split())


def phrase_of(text: str) -> str:
    """The text's casefolded words joined by single spaces (how cells and questions are compared)."""
    return " ".join(words(text))


def named_cell(question: str, column: str, cells: Sequence[Any]) -> str | None:
    """The one cell (as the column writes it) whose equality with a row's cell is all the question asks,
    or None (see the module docstring)."""
    text = phrase_of(question)
    found: dict[str, str] = {}
    for cell in cells:
        if not isinstance(cell, str):
            continue
        phrase = phrase_of(cell)
        if len(phrase) < 2 or not re.search(r"[^\W\d_]", phrase):
            continue
        if whole_phrase_in(phrase, text):
            found.setdefault(phrase, cell)
    if not found:
        return None
    longest = max(found, key=len)
    if any(p != longest and p not in longest for p in found):
        return None  # two values named apart: "Is it Paris or Lyon?" is for the model
    rest = re.sub(rf"(?<!\w){re.escape(longest)}(?!\w)", " ", text)
    if other_words(rest, str(column), FRAME_WORDS | ROW_NOUNS):
        return None
    return found[longest]


def named_part(question: str, column: str, cells: Sequence[Any]) -> str | None:
    """The name the question asks a row's cell to hold when it names no whole cell: "Is it Germany?" over
    ``germany (ger) germany i``, … The one name the question writes — its one quoted text, else its one
    run of capitalised words after the first word ("Is it from the United States?") — when its other
    words are only the frame of a yes/no question, generic row nouns and the column's words ("Is it a
    major movie?" names nothing; "Is Germany present?" asks more), and at least one cell holds it."""
    original = " ".join(question.split())
    quoted = re.findall(r"['\"‘“]([^'\"’”]+)['\"’”]", original)
    if quoted:
        runs = quoted
    else:
        tokens = re.findall(r"[^\W_][\w'’.&-]*", original)[1:]
        runs, current = [], []
        for token in tokens + [""]:
            if token[:1].isupper() or token[:1].isdigit():
                current.append(token)
            elif current:
                runs.append(" ".join(current))
                current = []
    if len(runs) != 1:
        return None
    phrase = phrase_of(runs[0])
    if not phrase or not re.search(r"[^\W\d_]", phrase):
        return None
    text = phrase_of(question)
    rest = re.sub(rf"(?<!\w){re.escape(phrase)}(?!\w)", " ", text, count=1)
    if other_words(rest, str(column), FRAME_WORDS | ROW_NOUNS):
        return None
    if not any(whole_phrase_in(phrase, phrase_of(str(c))) for c in cells if c is not None):
        return None
    return phrase


def equality_reader(question: str, column: str, cells: Sequence[Any]) -> Callable[[Any], Decision] | None:
    """How a row's cell answers ``question`` when it only asks whether the cell is one of the column's values,
    or holds a name (see the module docstring); None for any other question."""
    value = named_cell(question, column, cells)
    if value is None:
        part = named_part(question, column, cells)
        if part is None:
            return None

        def holds(cell: Any) -> Decision:
            if is_missing(cell):
                return None
            if whole_phrase_in(part, phrase_of(str(cell))):
                return True, f"the cell holds {part!r}"
            return None  # another name for it, or another thing: the model reads it

        return holds
    target = phrase_of(value)

    def decide(cell: Any) -> Decision:
        if is_missing(cell):
            return None
        phrase = phrase_of(str(cell))
        if phrase == target:
            return True, f"the cell is {value!r}"
        if not whole_phrase_in(target, phrase):
            return False, f"the cell is not {value!r}"
        return None  # the value within more: the model reads it

    return decide
