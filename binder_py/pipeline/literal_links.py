"""Value linking: a literal a program compares with a column that holds no such value, replaced by
the one cell value it unmistakably means.

A model that sees only the first rows of a table guesses the cells it names, and small models
guess loosely: ``df[df["name"] == "naanmugan"]`` selects nothing when the cell reads
``"naanmugan thiruvandhadhi"``, ``df[df["year"] == "2005"]`` selects nothing when the column
holds the number 2005, and a count over such a filter answers 0 instead of failing. Binder's
authors name fuzzy matching of such values as the fix for this class of error (section 4.4).

:func:`link_literals` reads the program's syntax tree (it is never run here) and links each
compared literal (``T["col"] == lit`` or ``T.col == lit``, ``!=``, either side, and the elements of
``T["col"].isin([...])``; :func:`binder_py.pipeline.literal_hints.compared_literals`) that no
cell of the column equals, by the first rule that picks exactly ONE distinct value:

1. text against a text column: equal once case, accents, dashes and spacing are set aside
   (``"Fàbregas"`` → ``"fabregas"``);
2. the literal's words are a run of words inside exactly one value (``"naanmugan"`` →
   ``"naanmugan thiruvandhadhi"``; literals of 3 characters or more);
3. exactly one value's words are a run of words inside the literal (``"the boston celtics"`` →
   ``"boston celtics"``; values of 4 characters or more);
4. one value is a close spelling (:class:`difflib.SequenceMatcher` ratio ≥ 0.85, the runner-up
   at least 0.05 behind; literals of 200 characters or fewer);
5. text that reads as a number against a numeric column holding that number (``"2005"`` →
   ``2005``), and a number against a text column holding it as text (``2005`` → ``"2005"``).

Two or more values that fit the same rule are ambiguous: that literal is left as written. A
literal some cell equals is never touched. The linked program is a new candidate (the link
stage, :mod:`binder_py.pipeline.link`); the program as written stays in the answer's candidates.
"""

from __future__ import annotations

import ast
import difflib
import math
import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import asttokens
import pandas as pd

from binder_py.pipeline.literal_hints import compared_literals

__all__ = ["LiteralLink", "closest_value", "link_literals"]

#: distinct values of a column searched for a match (the first ones, in table order)
MAX_VALUES = 5_000
CLOSE_RATIO = 0.85
#: a literal longer than this is not matched by spelling (rule 4)
MAX_SPELLED_CHARS = 200
CLOSE_MARGIN = 0.05
_DASHES = dict.fromkeys(map(ord, "\u2010\u2011\u2012\u2013\u2014\u2015\u2212"), "-")


@dataclass(frozen=True)
class LiteralLink:
    """One literal replaced: in ``table``'s ``column``, ``written`` now reads ``linked``."""

    table: str
    column: str
    written: Any
    linked: Any
    rule: str  # "case" | "inside value" | "value inside" | "spelling" | "number" | "text"

    def describe(self) -> str:
        return f"{self.column!r}: {self.written!r} → {self.linked!r} ({self.rule})"


def link_literals(program: str, tables: Mapping[str, pd.DataFrame],
                  columns: dict[tuple[str, str], Any] | None = None) -> tuple[str, tuple[LiteralLink, ...]] | None:
    """The program with every linkable literal replaced, and the links; None when nothing links
    (or the program does not parse). ``columns``: a dict kept across the programs of one question,
    so each compared column's values are read once."""
    try:
        marked = asttokens.ASTTokens(program, parse=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    assert marked.tree is not None
    edits: list[tuple[int, int, str]] = []
    links: list[LiteralLink] = []
    columns = {} if columns is None else columns
    for table_name, column, node in compared_literals(marked.tree):
        table = tables.get(table_name)
        if table is None or column not in table.columns or not isinstance(table[column], pd.Series):
            continue  # unknown, missing or duplicated column: nothing to link against
        key = (table_name, column)
        if key not in columns:
            columns[key] = _Column.of(table[column])
        values = columns[key]
        if values is None or values.holds(node.value):
            continue
        found = values.link(node.value)
        if found is None:
            continue
        linked, rule = found
        start, end = marked.get_text_range(node)
        written = program[start:end]  # a number replaced by text takes the quotes the program mostly uses
        quote = written[0] if written[:1] in ("'", '"') else ('"' if program.count('"') >= program.count("'") else "'")
        edits.append((start, end, _source(linked, quote)))
        links.append(LiteralLink(table=table_name, column=column, written=node.value, linked=linked, rule=rule))
    if not edits:
        return None
    text = program
    for start, end, replacement in sorted(set(edits), reverse=True):
        text = text[:start] + replacement + text[end:]
    return text, tuple(links)


def closest_value(literal: str, values: list[str]) -> tuple[str, str] | None:
    """The one value of ``values`` that text ``literal`` means, and the rule that found it (rules
    1–4 of the module docstring); None when no rule picks exactly one."""
    return _closest(literal, {v: _plain(v) for v in values})


def _closest(literal: str, plain: Mapping[str, str]) -> tuple[str, str] | None:
    """:func:`closest_value` over the values' :func:`_plain` forms (``value -> plain``)."""
    wanted = _plain(literal)
    if not wanted:
        return None
    inside = re.compile(rf"(?<!\w){re.escape(wanted)}(?!\w)")
    for rule, fits in (("case", lambda p: p == wanted),
                       ("inside value", lambda p: len(wanted) >= 3 and inside.search(p) is not None),
                       ("value inside", lambda p: len(p) >= 4 and _has_words(wanted, p))):
        found = {v for v, p in plain.items() if fits(p)}
        if len(found) == 1:
            return found.pop(), rule
        if found:
            return None  # ambiguous: more than one value fits
    if len(wanted) > MAX_SPELLED_CHARS:
        return None  # no cell is a misspelling of a paragraph, and comparing one costs more than it finds
    matcher = difflib.SequenceMatcher()
    matcher.set_seq2(wanted)  # the literal's index is built once
    floor = CLOSE_RATIO - CLOSE_MARGIN  # below it a value can be neither the match nor a close runner-up
    scored = []
    for value, p in plain.items():
        matcher.set_seq1(p)
        if p and matcher.real_quick_ratio() >= floor and matcher.quick_ratio() >= floor:
            scored.append((matcher.ratio(), value))
    scored.sort(reverse=True)
    if scored and scored[0][0] >= CLOSE_RATIO and (len(scored) == 1 or scored[1][0] <= scored[0][0] - CLOSE_MARGIN):
        return scored[0][1], "spelling"
    return None


@dataclass(frozen=True)
class _Column:
    """What linking needs of one column: its distinct values as text, or as numbers."""

    texts: dict[str, str]  # a text column's distinct values -> their plain forms (empty for a numeric column)
    numbers: frozenset[float]  # a numeric column's distinct finite values

    @classmethod
    def of(cls, column: pd.Series) -> _Column | None:
        if pd.api.types.is_bool_dtype(column.dtype):
            return None
        distinct = column.dropna().unique()[:MAX_VALUES]
        if pd.api.types.is_numeric_dtype(column.dtype):
            return cls(texts={}, numbers=frozenset(float(v) for v in distinct if math.isfinite(float(v))))
        if not all(isinstance(v, str) for v in distinct):
            return None  # mixed cells (numbers among text, dates): too loose to link against
        return cls(texts={v: _plain(v) for v in distinct}, numbers=frozenset())

    def holds(self, literal: Any) -> bool:
        if self.texts:
            return isinstance(literal, str) and literal in self.texts
        return isinstance(literal, (int, float)) and not isinstance(literal, bool) and float(literal) in self.numbers

    def link(self, literal: Any) -> tuple[Any, str] | None:
        if isinstance(literal, bool):
            return None
        if self.texts:
            if isinstance(literal, str):
                return _closest(literal, self.texts)
            if isinstance(literal, (int, float)) and math.isfinite(literal):
                text = str(int(literal)) if float(literal).is_integer() else str(literal)
                found = [v for v, p in self.texts.items() if p == text]
                return (found[0], "text") if len(found) == 1 else None
            return None
        if isinstance(literal, str):
            number = _number(literal)
            if number is not None and number in self.numbers:
                return (int(number) if number.is_integer() else number), "number"
        return None


def _source(value: Any, quote: str) -> str:
    """``value`` as Python source, a text in ``quote`` marks where it can be."""
    text = repr(value)
    if isinstance(value, str) and quote == '"' and text.startswith("'") and '"' not in value:
        text = '"' + text[1:-1].replace("\\'", "'") + '"'
    return text


def _plain(text: str) -> str:
    """``text`` with case, accents, dash kinds, surrounding quotes and runs of spaces set aside."""
    decomposed = unicodedata.normalize("NFKD", text.translate(_DASHES))
    bare = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    return " ".join(bare.casefold().strip().strip("\"'").split())


def _has_words(text: str, words: str) -> bool:
    """``words`` occurs in ``text`` as a run of whole words."""
    return re.search(rf"(?<!\w){re.escape(words)}(?!\w)", text) is not None


def _number(text: str) -> float | None:
    try:
        value = float(text.replace(",", "").strip())
    except ValueError:
        return None
    return value if math.isfinite(value) else None
