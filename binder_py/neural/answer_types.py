"""Typed neural answers: what kind of answer an ``f_col``/``f_val`` request wants, and reading it.

An :class:`AnswerType` is one of yes/no, number, date, free text, or one of a given set
of choices. :func:`infer_answer_type` infers it from the question's wording and — more
reliably — from how the program uses the call's result (:func:`usage_of_call` on the
call's AST node; :func:`site_answer_types` does every call site of a parsed program):

* a boolean mask (``df[f_col(...)]``, ``.loc[...]``), ``&``/``|``/``~``, ``not``/``if``,
  a comparison with ``'yes'``/``'no'``/``True``/``False`` → yes/no;
* an ordering comparison (``<``, ``>=``) or ``==`` with a number, arithmetic,
  ``.mean()``/``.median()``/``.std()``, ``pd.to_numeric``/``int``/``float`` → number, except for a
  yes/no question (``"is it …?"``), whose answers take part as 1/0 and stay yes/no;
* ``.dt``, ``pd.to_datetime`` → date; ``.str`` → text; ``==`` with other text → text;
* ``.sum()``/``.max()``/``.min()``, a sort → yes/no, date or number when the question says so, else
  the question's type (a use that any kind allows is no evidence);
* a result assigned to ``df["name"]`` or to a variable is followed to its uses.

Each type gives a JSON schema (:meth:`AnswerType.json_schema`, one answer;
:func:`rows_json_schema`, an ``f_col`` batch keyed by row id) and a GBNF grammar
(:meth:`AnswerType.gbnf`, one answer) for backends that constrain decoding, and
:func:`parse_typed_answer` reads an answer text as the type everywhere: the typed value,
missing (``unknown``), or a :class:`ParsedAnswer` with an ``error`` that says what was
expected — never a silent NaN. :func:`typed_column` builds an ``f_col`` Series from
per-row answers (yes/no → the ``yesno`` dtype of :mod:`binder_py.neural.yesno`) and
lists the rows that failed.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

import pandas as pd

from binder_py.grammar.gbnf import gbnf_literal
from binder_py.language.columns import column_key
from binder_py.language.program import call_question, parent_map
from binder_py.neural.requests import (FALSE_ANSWERS, MISSING_ANSWERS, TRUE_ANSWERS, NeuralRequest, classify, parse_number,
                                      shown_key)
from binder_py.neural.yesno import yes_no_series

__all__ = ["DATE", "NUMBER", "TEXT", "UNKNOWN", "YES_NO", "AnswerKind", "AnswerType", "ParsedAnswer", "TypedColumn",
           "Usage", "as_choice", "date_column_sites", "date_column_texts", "infer_answer_type", "parse_typed_answer",
           "question_answer_type", "rows_json_schema", "schema_text", "site_answer_types",
           "typed_column", "usage_of_call"]

#: what a backend writes for "I don't know" (read as missing, not as a failure)
UNKNOWN = "unknown"


class AnswerKind(StrEnum):
    YES_NO = "yes_no"
    NUMBER = "number"
    DATE = "date"
    TEXT = "text"
    CHOICE = "choice"


@dataclass(frozen=True)
class AnswerType:
    """The answer a neural request wants. ``choices`` only for :attr:`AnswerKind.CHOICE`;
    ``reason`` says what the inference saw (for traces)."""

    kind: AnswerKind
    choices: tuple[str, ...] = ()
    reason: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        if (self.kind is AnswerKind.CHOICE) != bool(self.choices):
            raise ValueError("choices are given exactly for the choice kind (two or more)")
        if self.kind is AnswerKind.CHOICE and len(set(self.choices)) < 2:
            raise ValueError("a choice answer needs two or more distinct choices")

    def json_schema(self) -> dict[str, Any]:
        """JSON schema of one answer (``"unknown"`` allowed: the model may not know)."""
        unknown = {"const": UNKNOWN}
        if self.kind is AnswerKind.YES_NO:
            return {"type": "string", "enum": ["yes", "no", UNKNOWN]}
        if self.kind is AnswerKind.NUMBER:
            return {"anyOf": [{"type": "number"}, unknown]}
        if self.kind is AnswerKind.DATE:
            return {"anyOf": [{"type": "string", "pattern": r"^[0-9]{4}(-[0-9]{2}(-[0-9]{2})?)?$"}, unknown]}
        if self.kind is AnswerKind.CHOICE:
            return {"type": "string", "enum": [*self.choices, UNKNOWN]}
        return {"type": "string", "minLength": 1, "maxLength": 200}

    def gbnf(self) -> str:
        """A llama.cpp GBNF grammar for one answer written as plain text on one line."""
        unknown = gbnf_literal(UNKNOWN)
        if self.kind is AnswerKind.YES_NO:
            body = f'"yes" | "no" | {unknown}'
        elif self.kind is AnswerKind.NUMBER:
            body = f'"-"? [0-9]+ ("," [0-9][0-9][0-9])* ("." [0-9]+)? | {unknown}'
        elif self.kind is AnswerKind.DATE:
            body = f'[0-9][0-9][0-9][0-9] ("-" [0-1][0-9] ("-" [0-3][0-9])?)? | {unknown}'
        elif self.kind is AnswerKind.CHOICE:
            body = " | ".join(gbnf_literal(c) for c in self.choices) + f" | {unknown}"
        else:
            body = "[^\\n] [^\\n]*"
        return f"root ::= {body}\n"

    def instruction(self) -> str:
        """A short sentence for a prompt that says how to answer."""
        return {
            AnswerKind.YES_NO: "Answer yes or no.",
            AnswerKind.NUMBER: "Answer with a number only.",
            AnswerKind.DATE: "Answer with a date as YYYY-MM-DD (or YYYY-MM, or YYYY).",
            AnswerKind.TEXT: "Answer briefly.",
            AnswerKind.CHOICE: "Answer with one of: " + ", ".join(self.choices) + ".",
        }[self.kind]


#: how a typed question is shown to the model (after the question, in parentheses)
HINTS: dict[AnswerKind, str] = {AnswerKind.YES_NO: "yes/no", AnswerKind.NUMBER: "a number",
                                AnswerKind.DATE: "a date"}
#: the key of a request's ``meta`` that holds its answer type
META_KEY = "answer_type"


def shown_question(question: str, answer_type: AnswerType | None) -> str:
    """The question as a prompt shows it: with the expected kind of answer, when it is typed."""
    hint = HINTS.get(answer_type.kind) if answer_type is not None else None
    return f"{question} ({hint})" if hint and not question.rstrip().endswith(f"({hint})") else question


def question_of(shown: str) -> str:
    """The question a prompt line shows, without its kind-of-answer hint (the inverse of
    :func:`shown_question`; for scripted models and tools that read prompts)."""
    for hint in HINTS.values():
        suffix = f" ({hint})"
        if shown.endswith(suffix):
            return shown[: -len(suffix)]
    return shown


#: the kind of answer (:func:`~binder_py.neural.requests.classify`) an ``f_col`` column of each
#: enforced type is built from: an accepted answer of another kind is handed over as what it was
#: read as, else the column would not be of the type ("Yes, it is." read as yes made the column text)
_COLUMN_KIND = {AnswerKind.YES_NO: "bool", AnswerKind.NUMBER: "num"}


def _handed_over(raw: Any, parsed: ParsedAnswer, kind: AnswerKind) -> Any:
    """What the program gets for an accepted answer: the answer as written when the column typing
    reads it as ``kind`` already (``"Yes"``, ``"1,234"``), else the value it was read as (``"yes"``
    for ``"Yes, it is."``, ``165`` for ``"165 cm"``, ``1906`` for ``"1906."``). Dates stay as written."""
    wanted = _COLUMN_KIND.get(kind)
    if wanted is None or parsed.missing or classify(raw)[0] == wanted:
        return raw
    if kind is AnswerKind.YES_NO:
        return "yes" if parsed.value else "no"
    return parsed.value


def read_value(raw: Any, answer_type: AnswerType | None) -> Any:
    """An ``f_val`` answer as the program gets it: as :func:`_handed_over` says when it reads as the
    call's yes/no or number type ("2 teams" for "how many …?" used in arithmetic was text, and
    ``+ 1`` a TypeError), else as written (an ``f_val`` answer is not refused; a list is kept)."""
    if answer_type is not None and answer_type.kind is AnswerKind.CHOICE:
        return as_choice(raw, answer_type.choices)
    if answer_type is None or answer_type.kind not in _COLUMN_KIND or isinstance(raw, (list, tuple)) \
            or (isinstance(raw, str) and "|" in raw):
        return raw
    refused, value = _read(raw, answer_type)
    return raw if refused else value


def as_choice(raw: Any, choices: Sequence[str]) -> Any:
    """An answer that reads as exactly one of ``choices`` ("Drama.", "a drama" for drama or comedy) as
    that choice, spelled as the question offers it (so ``== "drama"`` selects it); any other as written
    (a choice question may be answered otherwise, and "unknown" stays missing)."""
    if not isinstance(raw, str):
        return raw
    parsed = _read_choice(raw, choices)
    return raw if parsed.error is not None else parsed.value


def _read(raw: Any, answer_type: AnswerType) -> tuple[bool, Any]:
    """(whether ``raw`` is refused as ``answer_type``, what the program gets for it: :func:`_handed_over`)."""
    parsed = parse_typed_answer(raw, answer_type)
    return parsed.error is not None, _handed_over(raw, parsed, answer_type.kind)


def enforce(answers: dict[str, Any], answer_type: AnswerType | None) -> tuple[dict[str, Any], list[str]]:
    """``answers`` (row key → raw answer) read as ``answer_type``: an answer of the wrong kind is
    left out (the row is NA: never selected by a mask), with one warning naming the rows; an
    accepted one is kept as :func:`_handed_over` says. A choice question's answers are read as its
    choices (:func:`as_choice`), none refused."""
    if answer_type is not None and answer_type.kind is AnswerKind.CHOICE:  # read as the choices, never refused
        read_as: dict[str, Any] = {}  # one reading per distinct text
        return {key: (read_as[raw] if raw in read_as else read_as.setdefault(raw, as_choice(raw, answer_type.choices)))
                if isinstance(raw, str) else raw for key, raw in answers.items()}, []
    if answer_type is None or answer_type.kind not in HINTS:
        return answers, []
    # one parse per distinct answer (told apart by type too: 1 and True differ)
    read: dict[tuple[type, Any], tuple[bool, Any]] = {}
    try:
        distinct = set(zip(map(type, answers.values()), answers.values()))
    except TypeError:  # an unhashable answer (a list): read row by row below
        distinct = set()
    for kind_of, raw in distinct:
        read[kind_of, raw] = _read(raw, answer_type)
    if distinct and all(not bad and value is raw for (_t, raw), (bad, value) in read.items()):
        return dict(answers), []  # every answer is of the type as written (100,000 rows: no pass per row)
    kept: dict[str, Any] = {}
    refused: list[str] = []
    for key, raw in answers.items():
        try:
            bad, value = read[type(raw), raw]
        except KeyError:  # (the distinct answers could not be found: one of them is unhashable)
            bad, value = read[type(raw), raw] = _read(raw, answer_type)
        except TypeError:  # an unhashable answer (a list)
            bad, value = _read(raw, answer_type)
        if bad:
            refused.append(f"{shown_key(key)}: {str(raw)[:40]!r}")
            continue
        kept[key] = value
    why = f" ({answer_type.reason})" if answer_type.reason else ""  # the program's use, or the question's wording
    warnings = [f"{len(refused)} answer(s) are not {HINTS[answer_type.kind]}{why}; those "
                f"rows are NA: " + "; ".join(refused[:5])] if refused else []
    return kept, warnings


#: a date a column read through ``.dt`` takes names its year (not "5 May", "1/2", "today")
_YEAR = re.compile(r"\d{4}")


def date_column_texts(answers: Mapping[str, Any]) -> tuple[dict[str, str], list[str]]:
    """Accepted answers of a column the program reads as dates (:func:`date_column_sites`; :func:`enforce`'s,
    by row key) as ISO 8601 texts of naive timestamps, for the bridge to make a ``datetime64`` column of;
    an answer that names no year (``"5 May"``, ``"today"``: pandas would invent one) is left out, with one
    warning."""
    read: dict[tuple[type, Any], str | None] = {}
    texts: dict[str, str] = {}
    refused: list[str] = []
    for key, raw in answers.items():
        try:
            text = read[type(raw), raw]
        except KeyError:
            text = read[type(raw), raw] = _iso_date(raw)
        except TypeError:  # unhashable
            text = _iso_date(raw)
        if text is None:
            refused.append(f"{shown_key(key)}: {str(raw)[:40]!r}")
        else:
            texts[key] = text
    warnings = [f"{len(refused)} answer(s) are not a date with its year (read as dates: .dt or pd.to_datetime); "
                "those rows are NA: " + "; ".join(refused[:5])] if refused else []
    return texts, warnings


def _iso_date(raw: Any) -> str | None:
    if isinstance(raw, str) and not _YEAR.search(raw):
        return None
    parsed = parse_typed_answer(raw, DATE)
    if parsed.error is not None or parsed.missing or not isinstance(parsed.value, pd.Timestamp):
        return None
    value = parsed.value.tz_localize(None) if parsed.value.tzinfo is not None else parsed.value
    return value.isoformat()


YES_NO = AnswerType(AnswerKind.YES_NO)
NUMBER = AnswerType(AnswerKind.NUMBER)
DATE = AnswerType(AnswerKind.DATE)
TEXT = AnswerType(AnswerKind.TEXT)


def rows_json_schema(answer_type: AnswerType, row_ids: Sequence[str | int]) -> dict[str, Any]:
    """JSON schema of an ``f_col`` batch answer: an object with one typed answer per row id."""
    ids = [str(i) for i in row_ids]
    return {"type": "object", "properties": {i: answer_type.json_schema() for i in ids}, "required": ids,
            "additionalProperties": False}


# --------------------------------------------------------------------------- the question

_YES_NO_START = re.compile(r"^(is|are|was|were|does|do|did|has|have|had|can|could|will|would|should|shall|"
                           r"may|might|must|am)\b", re.I)
#: "how many", "how long", ...: a quantity, in every rule below
_HOW_QUANTITY = r"how (many|much|long|old|far|tall|high|big|large|heavy|wide|deep)"
#: "in dollars", "in km": a quantity asked in a unit (only units: "in french", "in 1990" ask no number)
_IN_UNIT = (r"in (dollars|euros|pounds|yen|usd|eur|gbp|cents|percent|km|kilomet(er|re)s|miles|met(er|re)s|feet|"
            r"inches|cm|mm|kg|kilograms|grams|tons|tonnes|lbs|hours|minutes|seconds|days|weeks|months|years|mph|"
            r"km/h|km2|sq km|square (kilomet(er|re)s|miles|met(er|re)s|feet)|acres|hectares|degrees|points|goals|votes)")
_NUMBER_CUE = re.compile(rf"\b({_HOW_QUANTITY}|number of|count of|total|sum of|average|percentage|percent|"
                         r"what (year|age|rank|number|score)|in what year|which year|population|amount)\b", re.I)
#: a unit asks for a number, except in a question that names a thing ("what city has the smallest area in
#: km2?", "what is the name of ...": the unit is the compared quantity's, the answer a name)
_UNIT_ASKED = re.compile(rf"^(?!what\s+(?!(?:is|was|are|were)\b)\w)(?!.*\bname of\b).*\b{_IN_UNIT}\b", re.I)
# "which day of the week" (Monday) and "which month" (March) name no date: read as dates, right answers were NA
_DATE_ASKED = re.compile(r"^(when)\b|\b(what|which) (date|day)\b(?! of the (week|month))", re.I)
_DATE_CUE = re.compile(r"\bdate of\b|\bborn on\b", re.I)
# a question that asks who or which thing (or where) wants a name, whatever quantity or date it mentions
# ("which country has the largest population?", "who was born on 1 May?"), unless it asks for one
# ("which year", "how many", "which percentage", "which date")
_ENTITY_START = re.compile(r"^(which|who|whom|whose|where)\b", re.I)
_QUANTITY_ASKED = re.compile(rf"\b({_HOW_QUANTITY}|number of|count of|in what year|which year|"
                             r"(what|which) (percentage|percent|share|proportion|number|amount))\b", re.I)
_STRONG_CHOICE_LEAD = re.compile(r"(?::|\bbetween\b|\bof\b|\b(?:is|was|are|were) (?:it|they|this|that)\b)\s*", re.I)
_WEAK_CHOICE_LEAD = re.compile(r"(?:\bwhich\b|\bwho\b|\bis\b|\bwas\b|\bare\b|\bwere\b)\s+", re.I)


#: what separates a question's choices: a comma (and "or"), or "or" between spaces; a run of spaces is tried
#: from its start only (``(?<!\s)``): tried from each of its spaces, as ``\s+or\s+`` alone was, a question
#: literal of a program with 20,000 spaces before "or" cost the parent 1.8 s, with 200,000 three minutes,
#: before the program ran (red team 13)
_CHOICE_SEPARATOR = re.compile(r",\s*(?:or\s+)?|(?<!\s)\s+or\s+", re.I)


def _choices(question: str) -> tuple[str, ...]:
    """The choices a question offers ("…, A or B?", "is it A, B or C?", "which is it: A or B?")."""
    text = question.strip().rstrip("?.! ").strip()
    last_or = [m.start() for m in re.finditer(r"\bor\b", text, re.I)]
    if not last_or:
        return ()
    before = text[:last_or[-1]]
    strong = [m for m in _STRONG_CHOICE_LEAD.finditer(before)]
    if strong:
        tail = text[strong[-1].end():]
    elif "," in before:
        tail = text[before.rfind(",") + 1:]
    else:
        weak = list(_WEAK_CHOICE_LEAD.finditer(before))
        tail = text[weak[-1].end():] if weak else text
    parts = [p.strip(" '\"") for p in _CHOICE_SEPARATOR.split(tail)]
    parts = [p for p in parts if p]
    if not 2 <= len(parts) <= 6 or any(len(p.split()) > 6 for p in parts) or len(set(parts)) < len(parts):
        return ()
    return tuple(parts)


def question_answer_type(question: str) -> AnswerType:
    """The answer type the question's wording asks for (no program context)."""
    choices = _choices(question)
    if choices:
        return AnswerType(AnswerKind.CHOICE, choices, reason="the question offers choices")
    # "Is the population over 1 million?" asks yes or no, whatever quantity it names
    if _YES_NO_START.search(question.strip()):
        return AnswerType(AnswerKind.YES_NO, reason="a yes/no question")
    if _DATE_ASKED.search(question.strip()):
        return AnswerType(AnswerKind.DATE, reason="the question asks when")
    if _ENTITY_START.search(question.strip()) and not _QUANTITY_ASKED.search(question):
        return AnswerType(AnswerKind.TEXT, reason="the question asks which or who")
    if _DATE_CUE.search(question):
        return AnswerType(AnswerKind.DATE, reason="the question asks when")
    if _NUMBER_CUE.search(question) or _UNIT_ASKED.search(question.strip()):
        return AnswerType(AnswerKind.NUMBER, reason="the question asks for a quantity")
    return AnswerType(AnswerKind.TEXT, reason="no cue: free text")


def restated_column(request: NeuralRequest, answer_type: AnswerType | None) -> str | None:
    """For a yes/no call (a row filter), the context column its question only names
    (``f_col("Made in", ["made in"])``: case, spaces, underscores and a trailing ``?`` set aside),
    else None. Such a "question" asks nothing: the embedded model answered yes for every row, so
    the call is a program error (:mod:`binder_py.language.execute`) and is not planned.

    Not when the name already asks something (a column named "Is it open?"), nor when the column
    holds two values or fewer (``f_col("vegetarian?", ["vegetarian"])`` over yes/no or Y/N cells:
    the model reads a flag). Another kind of call may name its column (``f_col("amount",
    ["amount"])`` read as numbers)."""
    if answer_type is None or answer_type.kind is not AnswerKind.YES_NO or _YES_NO_START.search(request.question.strip()):
        return None

    asked = column_key(request.question).rstrip("?:. ")
    for position, column in enumerate(request.columns):
        if asked and column_key(str(column)).rstrip("?:. ") == asked:
            cells = (row[position] for row in request.rows if position < len(row))
            values = {str(cell) for cell in cells if classify(cell)[0] != "na"}
            return column if len(values) > 2 else None
    return None


# --------------------------------------------------------------------------- the program

_NUMERIC_METHODS = frozenset({"mean", "median", "std", "var", "round", "abs", "cumsum", "diff", "pct_change",
                              "astype_int"})
_ORDER_METHODS = frozenset({"max", "min", "idxmax", "idxmin", "sort_values", "nlargest", "nsmallest", "rank"})
_BOOL_WORDS = TRUE_ANSWERS | FALSE_ANSWERS


@dataclass(frozen=True)
class Usage:
    """What the program does with a call's result: ``kind`` a usage kind, ``detail`` what showed it."""

    kind: str  # "mask" | "number" | "date" | "text" | "count" | "order" | "none"
    detail: str


#: the uses that make a date column a ``datetime64`` one (:func:`date_column_sites`): ``.dt``, and
#: ``pd.to_datetime``, which failed on answers written in several formats ("March 3, 2001" beside
#: "1999-07-14": pandas reads every answer by the first one's format) or, with ``errors="coerce"``,
#: made them NaT without a word
THROUGH_DT = Usage("date", "used through .dt")
TO_DATETIME = Usage("date", "passed to to_datetime()")


def _constant_usage(value: Any, op: ast.cmpop) -> Usage | None:
    if isinstance(value, bool):
        return Usage("mask", f"compared with {value}")
    if isinstance(value, (int, float)):
        return Usage("number", f"compared with the number {value!r}")
    if isinstance(value, str):
        if value.strip().lower().rstrip(".") in _BOOL_WORDS:
            return Usage("mask", f"compared with {value!r}")
        if isinstance(op, (ast.Lt, ast.LtE, ast.Gt, ast.GtE)):
            return Usage("order", f"ordered against {value!r}")
        return Usage("text", f"compared with the text {value!r}")
    return None


def _usage_at(node: ast.AST, parents: Mapping[int, ast.AST]) -> Usage:
    """How the value of ``node`` is used, climbing through parentheses-like wrappers."""
    parent = parents.get(id(node))
    if parent is None:
        return Usage("none", "the program's answer")
    if isinstance(parent, ast.Subscript) and parent.slice is node:
        return Usage("mask", "used as a row filter")
    if isinstance(parent, ast.Tuple) and parent.elts and parent.elts[0] is node:  # df.loc[mask, "c"]
        outer = parents.get(id(parent))
        if (isinstance(outer, ast.Subscript) and outer.slice is parent and isinstance(outer.value, ast.Attribute)
                and outer.value.attr == "loc"):
            return Usage("mask", "used as a row filter")
    if isinstance(parent, ast.UnaryOp):
        if isinstance(parent.op, (ast.Invert, ast.Not)):
            return Usage("mask", "negated with ~/not")
        return Usage("number", "signed with -/+")
    if isinstance(parent, ast.BinOp):
        if isinstance(parent.op, (ast.BitAnd, ast.BitOr, ast.BitXor)):
            return Usage("mask", "combined with &/|/^")
        return Usage("number", "used in arithmetic")
    if isinstance(parent, ast.BoolOp) or (isinstance(parent, (ast.If, ast.IfExp, ast.While)) and parent.test is node):
        return Usage("mask", "used as a condition")
    if isinstance(parent, ast.Compare):
        others = [parent.left, *parent.comparators]
        position = next(i for i, o in enumerate(others) if o is node)
        op = parent.ops[max(position - 1, 0)] if position else parent.ops[0]
        for other in others:
            if other is not node and isinstance(other, ast.Constant):
                found = _constant_usage(other.value, op)
                if found:
                    return found
        if isinstance(op, (ast.Lt, ast.LtE, ast.Gt, ast.GtE)):
            return Usage("order", "ordered against another value")
        return Usage("none", "compared with an expression")
    if isinstance(parent, ast.Attribute) and parent.value is node:
        if parent.attr == "dt":
            return THROUGH_DT
        if parent.attr == "str":
            return Usage("text", "used through .str")
        if parent.attr in ("sum", "any", "all"):
            return Usage("count", f".{parent.attr}()")
        if parent.attr in _NUMERIC_METHODS:
            return Usage("number", f".{parent.attr}()")
        if parent.attr in _ORDER_METHODS:
            return Usage("order", f".{parent.attr}()")
        return Usage("none", f".{parent.attr}")
    if isinstance(parent, ast.Call) and node in parent.args:
        name = parent.func.attr if isinstance(parent.func, ast.Attribute) else getattr(parent.func, "id", "")
        if name in ("to_numeric", "int", "float", "sum", "abs", "round"):
            return Usage("number", f"passed to {name}()")
        if name == "to_datetime":
            return TO_DATETIME
        if name in ("bool",):
            return Usage("mask", "passed to bool()")
        if name in ("max", "min", "sorted"):
            return Usage("order", f"passed to {name}()")
        return Usage("none", f"passed to {name or 'a call'}()")
    return Usage("none", "no telling use")


class _Uses:
    """Where a program reads names and columns, found in one walk of its tree: :func:`_followed_uses` walked
    the whole tree again for every call assigned to a name or a column, so a program of many such calls cost
    the parent (before the program ran, outside its limits) a time growing with their square (red team 13:
    2,000 lines ``aN = f_col('qN', 'c')``, a 54 kB program, took 46 s). The uses found for a name or a column
    are kept once each, the first use of each kind only (all :func:`infer_answer_type` reads) and every
    date use (:func:`date_column_sites` looks for ``.dt``), so many calls assigned to one name, read in many
    places, do not make the same long list for every call either."""

    def __init__(self, tree: ast.AST, parents: Mapping[int, ast.AST]):
        self.parents = parents
        self._names: dict[str, list[ast.AST]] = {}
        self._columns: dict[Any, list[ast.AST | str]] = {}  # a column's reads, or the text of a sort by it
        for n in ast.walk(tree):
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load):
                self._names.setdefault(n.id, []).append(n)
            elif isinstance(n, ast.Subscript) and isinstance(n.ctx, ast.Load) and isinstance(n.slice, ast.Constant) \
                    and _hashable(n.slice.value):
                self._columns.setdefault(n.slice.value, []).append(n)
            elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) \
                    and n.func.attr in ("sort_values", "nlargest", "nsmallest"):
                for a in [*n.args, *(k.value for k in n.keywords)]:
                    if isinstance(a, ast.Constant) and _hashable(a.value):
                        self._columns.setdefault(a.value, []).append("sort")
        self._of_name: dict[str, list[Usage]] = {}
        self._of_column: dict[str, list[Usage]] = {}

    def of_name(self, name: str) -> list[Usage]:
        found = self._of_name.get(name)
        if found is None:
            found = self._of_name[name] = _telling([_usage_at(n, self.parents) for n in self._names.get(name, ())])
        return found

    def of_column(self, column: str) -> list[Usage]:
        found = self._of_column.get(column)
        if found is None:
            found = self._of_column[column] = _telling([
                Usage("order", f"sorted by {column!r}") if isinstance(n, str) else _usage_at(n, self.parents)
                for n in self._columns.get(column, ())])
        return found


def _hashable(value: Any) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True


def _telling(uses: list[Usage]) -> list[Usage]:
    """``uses`` in order, the first of each kind and every date use kept (what :func:`infer_answer_type`
    and :func:`date_column_sites` read: the first use of a kind decides, and ``.dt`` is looked for)."""
    seen: set[Any] = set()
    kept = []
    for use in uses:
        mark = use if use.kind == "date" else use.kind
        if mark not in seen:
            seen.add(mark)
            kept.append(use)
    return kept


def _followed_uses(call: ast.Call, uses_of: _Uses) -> list[Usage]:
    """Uses of the call's result itself and, when it is assigned to a name or a table column, of that."""
    parents = uses_of.parents
    uses = [_usage_at(call, parents)]
    parent = parents.get(id(call))
    if not isinstance(parent, ast.Assign) or parent.value is not call:
        return uses
    uses.pop()
    for target in parent.targets:
        if isinstance(target, ast.Name):
            uses += uses_of.of_name(target.id)
        elif isinstance(target, ast.Subscript) and isinstance(target.slice, ast.Constant) \
                and isinstance(target.slice.value, str):
            uses += uses_of.of_column(target.slice.value)
    return uses or [Usage("none", "assigned, never read")]


def usage_of_call(call: ast.Call, tree: ast.AST) -> list[Usage]:
    """How the program uses the result of ``call`` (an ``ast.Call`` inside ``tree``)."""
    return _followed_uses(call, _Uses(tree, parent_map(tree)))


def infer_answer_type(question: str, usages: Iterable[Usage] = ()) -> AnswerType:
    """The answer type from the question and the program's uses of the answer.

    A use that fixes the type (a mask, a number, a date, text) wins over the wording; a
    use that only needs an order or a count picks among the types the wording allows;
    choices offered by the question are kept when the use is text or none.
    """
    by_question = question_answer_type(question)
    usages = list(usages)
    strong = {"mask": YES_NO, "number": NUMBER, "date": DATE}
    for usage in usages:
        if usage.kind == "number" and by_question.kind is AnswerKind.YES_NO:
            # yes/no answers count as 1/0 in arithmetic (`f_col("is it …?").mean()`, `* df.goals`):
            # read as numbers, every "yes" would be a missing value
            return AnswerType(AnswerKind.YES_NO, reason=f"{usage.detail} (yes/no counts as 1/0); {by_question.reason}")
        if usage.kind in strong:
            return AnswerType(strong[usage.kind].kind, reason=usage.detail)
    for usage in usages:
        if usage.kind == "text":
            if by_question.kind in (AnswerKind.CHOICE, AnswerKind.TEXT):
                return by_question
            return AnswerType(AnswerKind.TEXT, reason=usage.detail)
        # a sum or a sort does not say which kind by itself (yes/no and numbers both sum; text sorts):
        # the wording decides, and answers are only enforced on such evidence
        if usage.kind == "count":
            if by_question.kind in (AnswerKind.YES_NO, AnswerKind.NUMBER):
                return AnswerType(by_question.kind, reason=f"{usage.detail}; {by_question.reason}")
            return by_question
        if usage.kind == "order":
            if by_question.kind in (AnswerKind.DATE, AnswerKind.NUMBER):
                return AnswerType(by_question.kind, reason=f"{usage.detail}; {by_question.reason}")
            return by_question
    return by_question


def site_answer_types(parsed: Any) -> dict[int, AnswerType]:
    """The answer type of every neural call site of a parsed program
    (:func:`binder_py.language.program.parse_program`), by site id. A question that is not
    a string literal is typed by its use alone."""
    uses_of = _Uses(parsed.tree, parent_map(parsed.tree))
    return {site_id: infer_answer_type(call_question(node), _followed_uses(node, uses_of))
            for site_id, node in _site_calls(parsed)}


def date_column_sites(parsed: Any, answer_types: Mapping[int, AnswerType]) -> frozenset[int]:
    """The sites of ``answer_types`` (:func:`site_answer_types`) typed as dates whose column the program
    reads through ``.dt`` (also through a name or a table column it is assigned to), or that it passes
    straight to ``pd.to_datetime`` (``pd.to_datetime(f_col(...))``: pandas read every answer by the first
    one's format): their answers are handed over as a ``datetime64`` column. Other date answers are kept as
    written, so that a year stays a year, and a column the program converts a copy of stays text."""
    wanted = {site for site, answer_type in answer_types.items() if answer_type.kind is AnswerKind.DATE}
    if not wanted:
        return frozenset()
    uses_of = _Uses(parsed.tree, parent_map(parsed.tree))
    return frozenset(site_id for site_id, node in _site_calls(parsed)
                     if site_id in wanted and (_usage_at(node, uses_of.parents) == TO_DATETIME
                                               or THROUGH_DT in _followed_uses(node, uses_of)))


def _site_calls(parsed: Any) -> list[tuple[int, ast.Call]]:
    """``(site id, call node)`` of every neural call of a parsed program."""
    return [(parsed.node_sites[id(node)], node) for node in ast.walk(parsed.tree)
            if isinstance(node, ast.Call) and id(node) in parsed.node_sites]




# --------------------------------------------------------------------------- parsing answers

@dataclass(frozen=True)
class ParsedAnswer:
    """One answer read as its type: ``value`` (``None`` when ``missing``), or an ``error``."""

    value: Any = None
    missing: bool = False
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


_NUMBER_WORDS = {w: i for i, w in enumerate("zero one two three four five six seven eight nine ten eleven twelve "
                                            "thirteen fourteen fifteen sixteen seventeen eighteen nineteen "
                                            "twenty".split())}
_NUMBER_TOKEN = re.compile(r"[-+]?[$€£¥]?\d[\d,]*(?:\.\d+)?%?")
#: a scale word right after the one number of an answer ("$25 million"): read as 25, a column of
#: amounts mixed "$11,000,000" with 25 once typed answers reached the program as numbers
_SCALED = re.compile(r"([-+]?[$€£¥]?\d[\d,]*(?:\.\d+)?)\s*(thousand|million|billion|trillion)\b"
                     # an abbreviated scale only after an amount of money ("$465M", "€3.5k", "£1.2bn"): "220m" may be metres
                     r"|([-+]?[$€£¥]\d[\d,]*(?:\.\d+)?)\s?(k|m|mn|mm|b|bn|tn)(?![\w-])", re.I)
_SCALES = {"thousand": 10**3, "million": 10**6, "billion": 10**9, "trillion": 10**12,
           "k": 10**3, "m": 10**6, "mn": 10**6, "mm": 10**6, "b": 10**9, "bn": 10**9, "tn": 10**12}


def _normalised(text: str) -> str:
    word = text.strip().strip("'\"`*").strip()
    lowered = word.lower()
    return lowered[:-1].rstrip() if lowered.endswith(".") else lowered


def _read_number(text: str) -> ParsedAnswer:
    value = parse_number(text.strip())
    if value is None:
        low = _normalised(text)
        if low in _NUMBER_WORDS:
            return ParsedAnswer(_NUMBER_WORDS[low])
        tokens = _NUMBER_TOKEN.findall(text)
        if len(tokens) == 1:
            value = parse_number(tokens[0])
            scaled = _SCALED.search(text)
            if value is not None and scaled is not None:
                scale = (scaled.group(2) or scaled.group(4)).lower()
                value = round(value * _SCALES[scale], 6)  # 1.1 million: 1100000, not ...0002
                value = int(value) if float(value).is_integer() else value
    if value is None:
        return ParsedAnswer(error=f"expected a number, got {text.strip()[:80]!r}")
    return ParsedAnswer(value)


def _read_date(text: str) -> ParsedAnswer:
    stripped = text.strip()
    try:
        if _YEAR.fullmatch(stripped):  # ("0000" is out of range: one such answer failed the whole call)
            return ParsedAnswer(pd.Timestamp(year=int(stripped), month=1, day=1))
        value = pd.to_datetime(stripped, errors="raise")
    except (ValueError, TypeError, OverflowError):
        return ParsedAnswer(error=f"expected a date (YYYY-MM-DD), got {stripped[:80]!r}")
    if pd.isna(value):
        return ParsedAnswer(error=f"expected a date (YYYY-MM-DD), got {stripped[:80]!r}")
    return ParsedAnswer(pd.Timestamp(value))


def _read_choice(text: str, choices: Sequence[str]) -> ParsedAnswer:
    def key(s: str) -> str:
        return re.sub(r"^the\s+", "", _normalised(s))

    wanted = key(text)
    exact = [c for c in choices if key(c) == wanted]
    if len(exact) == 1:
        return ParsedAnswer(exact[0])
    inside = [c for c in choices if re.search(r"\b" + re.escape(key(c)) + r"\b", wanted)]
    if len(inside) == 1:
        return ParsedAnswer(inside[0])
    return ParsedAnswer(error=f"expected one of {', '.join(map(repr, choices))}, got {text.strip()[:80]!r}")


def parse_typed_answer(text: Any, answer_type: AnswerType) -> ParsedAnswer:
    """Read one answer (model text, or a value a callable backend returned) as ``answer_type``."""
    if text is None or text is pd.NA or (isinstance(text, float) and text != text):
        return ParsedAnswer(missing=True)
    kind = answer_type.kind
    if isinstance(text, bool):
        if kind is AnswerKind.YES_NO:
            return ParsedAnswer(text)
        text = "yes" if text else "no"
    elif isinstance(text, (int, float)) and kind is AnswerKind.NUMBER:
        return ParsedAnswer(text)
    elif isinstance(text, pd.Timestamp) and kind is AnswerKind.DATE:
        return ParsedAnswer(text)
    text = str(text)
    if "\n" in text.strip():
        text = text.strip().split("\n", 1)[0]
    low = _normalised(text)
    if low in MISSING_ANSWERS or low in ("i don't know", "not known", "unclear"):
        return ParsedAnswer(missing=True)
    if kind is AnswerKind.YES_NO:
        first = re.split(r"[^a-z]+", low, maxsplit=1)[0]
        if low in TRUE_ANSWERS or first in ("yes", "y"):
            return ParsedAnswer(True)
        if low in FALSE_ANSWERS or first in ("no", "n"):
            return ParsedAnswer(False)
        return ParsedAnswer(error=f"expected yes or no, got {text.strip()[:80]!r}")
    if kind is AnswerKind.NUMBER:
        return _read_number(text)
    if kind is AnswerKind.DATE:
        return _read_date(text)
    if kind is AnswerKind.CHOICE:
        return _read_choice(text, answer_type.choices)
    return ParsedAnswer(text.strip())


@dataclass(frozen=True)
class TypedColumn:
    """An ``f_col`` answer column and the rows (positions) whose answer could not be read, with why."""

    series: pd.Series
    failures: dict[int, str]

    def failure_message(self, limit: int = 3) -> str | None:
        """One line for a trace or warning, or None when every row was read."""
        if not self.failures:
            return None
        shown = "; ".join(f"row {i}: {why}" for i, why in list(self.failures.items())[:limit])
        more = f" (and {len(self.failures) - limit} more)" if len(self.failures) > limit else ""
        return f"{len(self.failures)} of {len(self.series)} answers could not be read: {shown}{more}"


def typed_column(answers: Sequence[Any], answer_type: AnswerType, *, index: pd.Index | None = None,
                 name: Any = None) -> TypedColumn:
    """Per-row answers as a Series of the type: yes/no → ``yesno``, number → ``Int64``/``Float64``,
    date → ``datetime64``, text/choice → ``string``. A row that failed is ``<NA>`` AND listed in
    ``failures``; a missing answer is ``<NA>`` only."""
    parsed = [parse_typed_answer(a, answer_type) for a in answers]
    failures = {i: p.error for i, p in enumerate(parsed) if p.error is not None}
    values = [p.value if p.ok and not p.missing else None for p in parsed]
    kind = answer_type.kind
    if kind is AnswerKind.YES_NO:
        series = yes_no_series(values, index=index, name=name)
    elif kind is AnswerKind.NUMBER:
        present = [v for v in values if v is not None]
        integral = all(float(v).is_integer() and abs(v) < 2**63 for v in present)
        dtype = "Int64" if integral else "Float64"
        series = pd.Series([None if v is None else (int(v) if integral else float(v)) for v in values],
                           index=index, name=name, dtype=dtype)
    elif kind is AnswerKind.DATE:
        series = pd.Series(pd.to_datetime(pd.Series(values, dtype=object)).array, index=index, name=name)
    else:
        series = pd.Series(values, index=index, name=name, dtype="string")
    return TypedColumn(series, failures)


def schema_text(answer_type: AnswerType) -> str:
    """The JSON schema as compact text (what an API request carries)."""
    return json.dumps(answer_type.json_schema(), separators=(",", ":"))
