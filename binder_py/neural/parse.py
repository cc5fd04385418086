"""Reading a neural-call output back: every output line is matched to a row BY ITS row_id (and,
for several tables in one prompt, by its section label), never by position.

* :func:`parse_map_output` — one question (the paper's "QA map"): ``row_id<TAB>cells...<TAB>answer``;
* :func:`parse_multi_output` — several questions: the row's cells plus one answer per question;
* :func:`parse_tables_output` — several labelled sub-tables (``Table A``, ``Table B``, ...).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from binder_py.neural.render import cell_text as _cell


@dataclass
class _Parsed:
    answers: dict[int, str] = field(default_factory=dict)
    extra: list[str] = field(default_factory=list)
    duplicate: list[int] = field(default_factory=list)
    unparsed: list[str] = field(default_factory=list)


@dataclass
class _ParsedMany:
    answers: dict[int, list[str]] = field(default_factory=dict)  # row_id -> one answer per question
    extra: list[str] = field(default_factory=list)
    duplicate: list[int] = field(default_factory=list)
    unparsed: list[str] = field(default_factory=list)


def _split_fields(raw: str) -> list[str]:
    line = raw.strip()
    fields = [f.strip() for f in line.split("\t")]
    if len(fields) == 1:
        fields = [f.strip() for f in re.split(r"\s{2,}", line)]
    return fields


def _multi_line(raw: str, rows_by_id: dict[int, Sequence[str]], n_questions: int,
                answers_only: bool = False) -> tuple[str, int, list[str]]:
    """Read one line of a multi-question output: (status, row_id, answers), status one of
    ``skip`` (blank, comment, header), ``unparsed``, ``extra`` (a row_id not asked for), ``ok``.
    ``answers_only``: the output was asked for as row_ids and answers, so ``n_questions`` fields
    after the row_id are the answers even when they equal the row's cells."""
    line = raw.strip()
    if not line or line.startswith("/*") or line.startswith("*/") or line.startswith("```") \
            or line.lower().startswith("row_id"):
        return "skip", -1, []
    fields = _split_fields(raw)
    m = re.match(r"^(\d+)\.?$", fields[0])
    if not m or len(fields) < 2:
        return "unparsed", -1, []
    rid = int(m.group(1))
    if rid not in rows_by_id:
        return "extra", rid, []
    rest = fields[1:]
    cells = [_cell(c).lower() for c in rows_by_id[rid]]
    if len(rest) == len(cells) + n_questions:
        return "ok", rid, rest[len(cells):]
    if len(rest) == n_questions and (answers_only or [_cell(f).lower() for f in rest[:len(cells)]] != cells):
        return "ok", rid, rest  # the answers alone (a row copied with answers missing is not read)
    return "unparsed", rid, []


def _add_multi_line(parsed: _ParsedMany, raw: str, rows_by_id: dict[int, Sequence[str]], n_questions: int,
                    answers_only: bool = False) -> None:
    status, rid, answers = _multi_line(raw, rows_by_id, n_questions, answers_only)
    if status == "unparsed":
        parsed.unparsed.append(raw.strip())
    elif status == "extra":
        parsed.extra.append(raw.strip())
    elif status == "ok":
        if rid in parsed.answers:
            parsed.duplicate.append(rid)
        else:
            parsed.answers[rid] = answers


def parse_multi_output(text: str, rows_by_id: dict[int, Sequence[str]], n_questions: int) -> _ParsedMany:
    """Parse a multi-question QA-map output: each line ``row_id<TAB>cells...<TAB>answer1...<TAB>answerK``.

    Rows are matched by row_id. A line is read only when it has exactly the row's cells
    plus ``n_questions`` answers, or exactly ``n_questions`` answers after the row_id (the
    cells left out); any other shape is ambiguous (which answer belongs to which question?)
    and the row counts as not answered."""
    parsed = _ParsedMany()
    for raw in text.splitlines():
        _add_multi_line(parsed, raw, rows_by_id, n_questions)
    return parsed


#: a section label line of a multi-table output: ``Table A`` (``Table A:``, ``**Table A**``, ...)
_LABEL = re.compile(r"^[#*\s]*table\s+([A-Za-z]{1,2})\s*(?::[^\t]*)?[*\s]*$", re.IGNORECASE)


@dataclass
class _ParsedTables:
    sections: dict[str, _ParsedMany] = field(default_factory=dict)  # label -> its rows
    unlabelled: list[str] = field(default_factory=list)  # row lines before any label
    unknown_labels: list[str] = field(default_factory=list)  # labels not asked for (their lines ignored)
    repeated_labels: list[str] = field(default_factory=list)


def parse_tables_output(text: str, sections: dict[str, tuple[dict[int, Sequence[str]], int]],
                        answers_only: bool = False) -> _ParsedTables:
    """Parse a multi-table QA-map output: sections introduced by a label line (``Table A``),
    each read like :func:`parse_multi_output` against ITS OWN rows and questions
    (``sections``: label -> (rows by row_id, number of questions)). Lines before any label,
    under a label not asked for, or whose row_id is not one of the current section's rows
    (a row written under the wrong label) are not read; never matched by position. With
    ``answers_only`` (the prompt asked for row_ids and answers) a line of a row_id and exactly
    the section's number of answers is read as its answers (a copied row is read too)."""
    parsed = _ParsedTables(sections={label: _ParsedMany() for label in sections})
    current: str | None = None
    seen: set[str] = set()
    for raw in text.splitlines():
        m = _LABEL.match(raw.strip())
        if m:
            label = m.group(1).upper()
            if label not in sections:
                parsed.unknown_labels.append(label)
                current = ""
            else:
                if label in seen:
                    parsed.repeated_labels.append(label)
                seen.add(label)
                current = label
            continue
        if current is None:
            if _multi_line(raw, {}, 1)[0] != "skip":
                parsed.unlabelled.append(raw.strip())
            continue
        if current == "":
            continue
        rows_by_id, n_questions = sections[current]
        _add_multi_line(parsed.sections[current], raw, rows_by_id, n_questions, answers_only)
    return parsed


def parse_map_output(text: str, rows_by_id: dict[int, Sequence[str]]) -> _Parsed:
    """Parse a QA-map output table: each line ``row_id<TAB>cells...<TAB>answer``, keyed by row_id."""
    parsed = _Parsed()
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("/*") or line.startswith("*/") or line.lower().startswith("row_id"):
            continue
        fields = [f.strip() for f in raw.strip().split("\t")]
        if len(fields) == 1:
            fields = [f.strip() for f in re.split(r"\s{2,}", line)]
        if len(fields) == 1:
            m = re.match(r"^(\d+)\.?\s+(.*)$", line)
            fields = [m.group(1), m.group(2)] if m else fields
        m = re.match(r"^(\d+)\.?$", fields[0])
        if not m or len(fields) < 2:
            parsed.unparsed.append(line)
            continue
        rid = int(m.group(1))
        if rid not in rows_by_id:
            parsed.extra.append(line)
            continue
        cells = [_cell(c) for c in rows_by_id[rid]]
        rest = fields[1:]
        if [_cell(f) for f in rest] == cells and cells:
            parsed.unparsed.append(line)  # the row copied without an answer
            continue
        if rid in parsed.answers:
            parsed.duplicate.append(rid)
            continue
        parsed.answers[rid] = rest[-1]
    return parsed
