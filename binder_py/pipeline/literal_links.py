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
   at least 0.05 behind; literals of 200 characters or fewer) with the same digits in the same order
   (a date, a code or a score one digit off is another value: ``"2024-02-27"`` is not ``"2024-02-28"``);
5. text that reads as a number against a numeric column holding that number (``"2005"`` →
   ``2005``), and a number against a text column holding it as text (``2005`` → ``"2005"``).

A text the program searches a text column for (``T["col"].str.contains(lit)``, ``.startswith``,
``.endswith``; :func:`binder_py.pipeline.literal_hints.searched_literals`) that no cell holds as
written, but cells hold when case is set aside, all written one way, is replaced by that way
(``.str.contains("Chernobyl")`` → ``"chernobyl"`` in a table whose cells are lower-cased; rule
"case in text").

A text with an ASCII hyphen that a ``.str`` method splits a column at or searches it for
(``T["score"].str.split("-")``, ``.str.extract(r"(\\d+)-(\\d+)")``, ``.str.contains("2-1")``, ``.str.replace``;
:func:`binder_py.pipeline.literal_hints.dashed_literals`), where no cell of the column holds a hyphen but
its cells write one other dash (the en dash of ``"2–1"`` and ``"1990–91"``, an em dash, a minus sign), has
its hyphens written as that dash (rule "dash"): a model types ``-`` for the ``–`` it was shown, and the
split then finds nothing to split (``.str[1]`` is NaN, ``astype(int)`` fails, a sum is 0). Hyphens inside
a pattern's character class (``[a-z]``) are ranges and stay.

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

from binder_py.pipeline.literal_hints import compared_literals, dashed_literals, searched_literals

__all__ = ["LiteralLink", "changed_columns", "closest_value", "link_literals"]

#: distinct values of a column searched for a match (the first ones, in table order)
MAX_VALUES = 5_000
CLOSE_RATIO = 0.85
#: a literal longer than this is not matched by spelling (rule 4)
MAX_SPELLED_CHARS = 200
CLOSE_MARGIN = 0.05
_DIGIT_RUN = re.compile(r"[0-9]+")
#: the dashes that are not an ASCII hyphen (hyphens, figure dash, en and em dashes, horizontal bar, minus)
OTHER_DASHES = "\u2010\u2011\u2012\u2013\u2014\u2015\u2212"
_DASHES = dict.fromkeys(map(ord, OTHER_DASHES), "-")


@dataclass(frozen=True)
class LiteralLink:
    """One literal replaced: in ``table``'s ``column``, ``written`` now reads ``linked``."""

    table: str
    column: str
    written: Any
    linked: Any
    rule: str  # "case" | "inside value" | "value inside" | "spelling" | "number" | "text" | "case in text" | "dash"

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
    tree = marked.tree
    changed = changed_columns(tree, tables)
    in_fstrings = {id(n) for joined in ast.walk(tree) if isinstance(joined, ast.JoinedStr) for n in ast.walk(joined)}
    edits: list[tuple[int, int, str]] = []
    links: list[LiteralLink] = []
    columns = {} if columns is None else columns
    def values_of(table_name: str, column: str, node: ast.Constant) -> _Column | None:
        """The column a literal is compared with or searched for in, when its cells can be linked against."""
        table = tables.get(table_name)
        if (table is None or column not in table.columns or not isinstance(table[column], pd.Series)
                or table_name in changed or (table_name, column) in changed or id(node) in in_fstrings):
            # unknown, missing or duplicated column; a table or column the program changes before it
            # compares (df["name"] = df["name"].str.lower()), whose cells are then not the table's; a literal
            # inside an f-string, which has no text range of its own
            return None
        key = (table_name, column)
        if key not in columns:
            columns[key] = _Column.of(table[column])
        return columns[key]

    found_links: list[tuple[str, str, ast.Constant, Any, str]] = []
    for table_name, name, node in compared_literals(tree):
        values = values_of(table_name, name, node)
        if values is None or values.holds(node.value):
            continue
        found = values.link(node.value)
        if found is not None:
            found_links.append((table_name, name, node, *found))
    for table_name, name, method, node in searched_literals(tree):
        values = values_of(table_name, name, node)
        spelling = values.spelling_in_texts(node.value, method) if values is not None else None
        if spelling is not None:
            found_links.append((table_name, name, node, spelling, "case in text"))
    linked_nodes = {id(found[2]) for found in found_links}
    for table_name, name, node in dashed_literals(tree):
        values = values_of(table_name, name, node)
        dash = values.dash_in_texts() if values is not None and id(node) not in linked_nodes else None
        dashed = _with_dash(node.value, dash) if dash is not None else node.value
        if dashed != node.value:  # (not when every hyphen is inside a character class)
            linked_nodes.add(id(node))
            found_links.append((table_name, name, node, dashed, "dash"))
    for table_name, column_name, node, linked, rule in found_links:
        start, end = marked.get_text_range(node)
        written = program[start:end]
        if not _reads_as(written, node.value):
            continue  # the text range is not the literal's own: never edit what it does not cover
        # a number replaced by text takes the quotes the program mostly uses
        quote = written[0] if written[:1] in ("'", '"') else ('"' if program.count('"') >= program.count("'") else "'")
        edits.append((start, end, _raw_source(linked, written) or _source(linked, quote)))
        links.append(LiteralLink(table=table_name, column=column_name, written=node.value, linked=linked, rule=rule))
    if not edits:
        return None
    text = program
    for start, end, replacement in sorted(set(edits), reverse=True):
        text = text[:start] + replacement + text[end:]
    try:
        ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    return text, tuple(links)


#: methods whose result has the rows of the table they are called on, its cells unchanged
_ROW_METHODS = frozenset({"head", "tail", "sort_values", "sort_index", "drop_duplicates", "dropna", "reset_index",
                          "query", "nlargest", "nsmallest", "sample", "copy", "filter"})


def changed_columns(tree: ast.AST, tables: Mapping[str, pd.DataFrame]) -> set[Any]:
    """The tables (names) and ``(table, column)`` pairs whose cells the program may change before it
    compares them: a column assigned (``df["c"] = ...``, ``df.c = ...``, ``df.loc[m, "c"] = ...``), a
    table rebound to anything but its own rows (``df = df[df.x > 3]`` keeps its cells,
    ``df = df.assign(...)`` does not), a method called with ``inplace`` or ``update``/``insert``."""
    changed: set[Any] = set()

    def targets(node: ast.AST) -> list[ast.AST]:
        if isinstance(node, ast.Assign):
            return list(node.targets)
        if isinstance(node, (ast.AugAssign, ast.AnnAssign, ast.NamedExpr)):
            return [node.target]
        if isinstance(node, (ast.For, ast.comprehension)):
            return [node.target]
        if isinstance(node, ast.withitem) and node.optional_vars is not None:
            return [node.optional_vars]
        return []

    for node in ast.walk(tree):
        for target in targets(node):
            for item in ast.walk(target):
                if isinstance(item, ast.Name) and item.id in tables:
                    value = node.value if isinstance(node, ast.Assign) else None
                    if value is None or not _rows_of(value, item.id):
                        changed.add(item.id)
                elif isinstance(item, (ast.Subscript, ast.Attribute)) and isinstance(item.ctx, ast.Store):
                    base = item.value
                    while isinstance(base, (ast.Subscript, ast.Attribute)):
                        base = base.value
                    if isinstance(base, ast.Name) and base.id in tables:
                        names = ([item.attr] if isinstance(item, ast.Attribute) else
                                 [n.value for n in ast.walk(item.slice)
                                  if isinstance(n, ast.Constant) and isinstance(n.value, str)])
                        if names:
                            changed.update((base.id, name) for name in names)
                        else:
                            changed.add(base.id)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            base = node.func.value
            while isinstance(base, (ast.Subscript, ast.Attribute)):
                base = base.value
            if isinstance(base, ast.Name) and base.id in tables and (
                    node.func.attr in ("update", "insert") or any(k.arg == "inplace" for k in node.keywords)):
                changed.add(base.id)
    return changed


def _rows_of(value: ast.AST, table: str) -> bool:
    """``value`` is ``table`` or some of its rows, cells unchanged: subscripts, ``.loc``/``.iloc``
    and row methods (:data:`_ROW_METHODS`) of it."""
    while True:
        if isinstance(value, ast.Name):
            return value.id == table
        if isinstance(value, ast.Subscript):
            if isinstance(value.value, ast.Attribute) and value.value.attr in ("loc", "iloc"):
                value = value.value.value
            else:
                value = value.value
        elif (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute)
              and value.func.attr in _ROW_METHODS):
            value = value.func.value
        else:
            return False


def _reads_as(written: str, literal: Any) -> bool:
    try:
        read = ast.literal_eval(written)
        return type(read) is type(literal) and read == literal
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return False


def _numbers_in(text: str) -> list[int]:
    """The runs of digits in ``text``, as numbers: "2024-2-28" and "2024-02-28" hold the same
    (leading zeros are no difference), "2024-02-27" another."""
    return [int(run) for run in _DIGIT_RUN.findall(text)]


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
                       ("value inside", lambda p: 4 <= len(p) <= len(wanted) and p in wanted and _has_words(wanted, p))):
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
    # a digit is no misspelling: "2024-02-27" is another date than "2024-02-28", "ORD-1007" another order
    digits = _numbers_in(wanted)
    scored = []
    for value, p in plain.items():
        if _numbers_in(p) != digits:
            continue
        matcher.set_seq1(p)
        if p and matcher.real_quick_ratio() >= floor and matcher.quick_ratio() >= floor:
            scored.append((matcher.ratio(), value))
    scored.sort(reverse=True)
    if scored and scored[0][0] >= CLOSE_RATIO and (len(scored) == 1 or scored[1][0] <= scored[0][0] - CLOSE_MARGIN):
        return scored[0][1], "spelling"
    return None


@dataclass(frozen=True)
class _Column:
    """What linking needs of one column: whether it holds text or numbers, every distinct value (to
    tell whether a literal is held), and the first :data:`MAX_VALUES` distinct texts with their plain
    forms (where a text literal's match is searched)."""

    kind: str  # "text" | "number"
    held: frozenset[Any]  # every distinct text, or every distinct finite number (as float)
    texts: dict[str, str]  # a text column's first distinct values -> their plain forms

    @classmethod
    def of(cls, column: pd.Series) -> _Column | None:
        if pd.api.types.is_bool_dtype(column.dtype):
            return None
        distinct = column.dropna().unique()
        if pd.api.types.is_numeric_dtype(column.dtype):
            numbers = (_as_float(v) for v in distinct)
            return cls(kind="number", held=frozenset(x for x in numbers if x is not None), texts={})
        if not all(isinstance(v, str) for v in distinct):
            return None  # mixed cells (numbers among text, dates): too loose to link against
        return cls(kind="text", held=frozenset(distinct),
                   texts={v: _plain(v) for v in distinct[:MAX_VALUES]})

    def holds(self, literal: Any) -> bool:
        if self.kind == "text":
            return isinstance(literal, str) and literal in self.held
        return not isinstance(literal, (str, bool)) and _as_float(literal) in self.held

    def link(self, literal: Any) -> tuple[Any, str] | None:
        if isinstance(literal, bool):
            return None
        if self.kind == "text":
            if isinstance(literal, str):
                return _closest(literal, self.texts)
            number = _as_float(literal)
            if number is not None:
                text = str(int(number)) if number.is_integer() and abs(number) < 2**53 else str(literal)
                found = [v for v, p in self.texts.items() if p == text]
                return (found[0], "text") if len(found) == 1 else None
            return None
        if isinstance(literal, str):
            number = _number(literal)
            if number is not None and number in self.held:
                return (int(number) if number.is_integer() and abs(number) < 2**53 else number), "number"
        return None

    def spelling_in_texts(self, literal: str, method: str) -> str | None:
        """How the cells write ``literal`` where a text method (``contains``, ``startswith``,
        ``endswith``) finds it only with case set aside: the one spelling every such cell uses, else
        None (a cell holds it as written, no cell holds it, or cells write it two ways)."""
        if self.kind != "text" or not isinstance(literal, str) or len(literal.casefold()) != len(literal):
            return None
        folded, size = literal.casefold(), len(literal)
        spellings: set[str] = set()
        for text in self.held:
            if literal in text if method == "contains" else getattr(text, method)(literal):
                return None  # found as written: nothing to link
            low = text.casefold()
            if len(low) != len(text):
                continue  # casefolding moved the characters: positions would not line up
            if method == "startswith":
                starts = [0] if low.startswith(folded) else []
            elif method == "endswith":
                starts = [len(text) - size] if low.endswith(folded) else []
            else:
                starts, at = [], low.find(folded)
                while at >= 0:
                    starts.append(at)
                    at = low.find(folded, at + 1)
            spellings.update(text[i:i + size] for i in starts)
            if len(spellings) > 1:
                return None
        return spellings.pop() if spellings else None

    def dash_in_texts(self) -> str | None:
        """The one dash other than an ASCII hyphen that the column's cells write (:data:`OTHER_DASHES`),
        when no cell holds a hyphen; None otherwise (a hyphen somewhere, no dash, or two kinds of dash)."""
        if self.kind != "text":
            return None
        found: set[str] = set()
        for text in self.held:
            if "-" in text:
                return None
            found.update(ch for ch in OTHER_DASHES if ch in text)
            if len(found) > 1:
                return None
        return found.pop() if found else None


def _with_dash(literal: str, dash: str) -> str:
    """``literal`` with each ASCII hyphen (``\\-`` too) written as ``dash``, except inside a character
    class (``[a-z]``, ``[\\d-]``), where a hyphen is a range or itself."""
    out: list[str] = []
    in_class = False
    index = 0
    while index < len(literal):
        char = literal[index]
        if char == "\\" and index + 1 < len(literal):
            pair = literal[index:index + 2]
            out.append(dash if pair == "\\-" and not in_class else pair)
            index += 2
            continue
        if char == "[" and not in_class:
            in_class = True
        elif char == "]" and in_class:
            in_class = False
        elif char == "-" and not in_class:
            char = dash
        out.append(char)
        index += 1
    return "".join(out)


def _as_float(value: Any) -> float | None:
    """``value`` as a finite float; None for what is not one (a 400-digit int, inf, NaN, text)."""
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError):
        return None
    return number if math.isfinite(number) else None


def _source(value: Any, quote: str) -> str:
    """``value`` as Python source, a text in ``quote`` marks where it can be."""
    text = repr(value)
    if isinstance(value, str) and quote == '"' and text.startswith("'") and '"' not in value:
        text = '"' + text[1:-1].replace("\\'", "'") + '"'
    return text


def _raw_source(value: Any, written: str) -> str | None:
    """``value`` as a raw text literal in ``written``'s prefix and quotes (``r"(\\d+)–(\\d+)"`` for the
    pattern written ``r"(\\d+)-(\\d+)"``), or None when ``written`` is no raw text or ``value`` cannot be
    written so."""
    prefix = written[:1]
    if prefix not in ("r", "R") or not isinstance(value, str):
        return None
    quote = written[1:4] if written[1:4] in ('"""', "'''") else written[1:2]
    text = f"{prefix}{quote}{value}{quote}"
    return text if _reads_as(text, value) else None


def _plain(text: str) -> str:
    """``text`` with case, accents, dash kinds, surrounding quotes and runs of spaces set aside."""
    decomposed = unicodedata.normalize("NFKD", text.translate(_DASHES))
    bare = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    return " ".join(bare.casefold().strip().strip("\"'").split())


def _has_words(text: str, words: str) -> bool:
    """``words`` occurs in ``text`` as a run of whole words."""
    return re.search(rf"(?<!\w){re.escape(words)}(?!\w)", text) is not None


def _number(text: str) -> float | None:
    return _as_float(text.replace(",", "").strip())
