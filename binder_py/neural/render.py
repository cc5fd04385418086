"""Neural-call prompts: the templates (``prompts/neural/``), tables with row ids, the
demonstration pool and its retrieval, and chat turns for chat models.

Templates are filled in one pass (:func:`binder_py.prompting.templates.fill`) and split at
``{output}`` before filling, so nothing in a cell, a question or a title is ever read as a
placeholder.
"""

from __future__ import annotations

import re

from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Any

from binder_py.errors import BinderError
from binder_py.prompting.retrieval import bm25_scores
from binder_py.jsonfile import iter_json_lines
from binder_py.prompting.templates import fill, template_text
from binder_py.prompting.table_format import unfenced

TEMPLATE_NAMES = ("col_instruction", "col_item", "val_instruction", "val_item", "multi_instruction", "multi_item",
                  "multi_table_instruction", "multi_table_item", "multi_table_section",
                  "multi_table_value_instruction", "multi_table_value_section")


def load_templates() -> dict[str, str]:
    """The neural-call templates, by name."""
    return {name: template_text(resources.files("prompts").joinpath("neural", f"{name}.txt")
                                .read_text(encoding="utf-8")) for name in TEMPLATE_NAMES}


#: what ends a line for str.splitlines() and for a reader of the prompt
_LINE_BREAKS = re.compile("[\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]+")


def one_line(text: str) -> str:
    """``text`` with every line break (as str.splitlines() sees them) replaced by a space."""
    return _LINE_BREAKS.sub(" ", text)


def _on_one_line(values: dict[str, str]) -> dict[str, str]:
    """A table's title comes from a file (a page title, the name of the file asked about), and a
    call's question from a program (``f_col("Is it\nin Europe?", ...)``): like a cell, each is shown
    on one line, so it cannot add lines, rows or chat turns to a prompt (the parse prompt does the
    same, ``table_format._one_line``; the row-by-row prompt too). Other spaces are kept as they are."""
    for name in ("title", "question"):
        if name in values:
            values[name] = one_line(str(values[name]))
    return values


def fill_template(template: str, **values: str) -> str:
    """``template`` with its placeholders filled (one pass; an ``{output}`` placeholder is filled
    like the others; the title on one line)."""
    return fill(template, _on_one_line(values))


def fill_until_output(template: str, **values: str) -> str:
    """The part of ``template`` before its ``{output}`` placeholder, filled: the target of a prompt,
    which the model completes."""
    head, _, _ = template.partition("{output}")
    return fill(head, _on_one_line(values))


def load_pool(path: str | Path | None = None) -> list[dict[str, Any]]:
    """The demonstration pool (``prompts/neural/pool.jsonl`` by default); ``[]`` when absent."""
    source = resources.files("prompts").joinpath("neural", "pool.jsonl") if path is None else Path(path)
    try:
        lines = list(iter_json_lines(str(source), dict, follow_symlinks=True))
    except FileNotFoundError:
        return []
    bad = next((line for line in lines if line.error), None)
    if bad is not None:
        raise BinderError(f"neural pool: {bad.error}")
    return [line.value for line in lines]


def rank_demonstrations(pool: Sequence[dict[str, Any]], kind: str, query: str, k: int) -> list[dict[str, Any]]:
    """Up to ``k`` pool items of ``kind``, most similar to ``query`` (BM25 over question, columns
    and title) LAST."""
    items = [p for p in pool if p.get("kind") == kind]
    if not items or k <= 0:
        return []
    docs = [" ".join([p.get("question", ""), " ".join(p.get("columns", [])), p.get("title", "")]) for p in items]
    scores = bm25_scores(docs, query)
    ranked = sorted(range(len(items)), key=lambda i: (-scores[i], i))[:k]
    return [items[i] for i in reversed(ranked)]


def cell_text(text: Any) -> str:
    """A cell on one line (runs of whitespace, newlines included, become one space), without the
    comment fences its table is written between (``table_format.unfenced``)."""
    return unfenced(" ".join(str(text).split()))


def render_table(columns: Sequence[str], rows: Sequence[Sequence[str]], ids: Sequence[int] | None = None,
                 extra: Sequence[str] | None = None, extra_header: str | None = None) -> str:
    header = (["row_id"] if ids is not None else []) + [cell_text(c) for c in columns]
    if extra_header is not None:
        header.append(cell_text(extra_header))
    lines = ["\t".join(header)]
    for i, row in enumerate(rows):
        cells = ([str(ids[i])] if ids is not None else []) + [cell_text(c) for c in row]
        if extra is not None:
            cells.append(cell_text(extra[i]))
        lines.append("\t".join(cells))
    return "\n".join(lines)


#: where a demonstration's answer starts (the end of the "QA map@"/"QA ans@" line)
_OUTPUT_MARKERS = ("QA map@ output:", "QA ans@ output:")


def chat_turns(prompt: str) -> tuple[tuple[str, str], ...]:
    """A neural-call prompt as chat turns: the instruction as the system message, each
    demonstration as a user turn (table and question) answered by an assistant turn (its
    output), and the target as the last user turn. Chat models answer one long user message
    with prose; as turns they continue the pattern (see docs/LANGUAGE.md)."""
    parts = [p for p in prompt.split("\n\n\n") if p.strip()]
    if len(parts) < 2:
        return (("user", prompt.strip()),)
    turns: list[tuple[str, str]] = [("system", parts[0].strip())]
    for part in parts[1:]:
        cut = max(part.rfind(m) + len(m) if m in part else -1 for m in _OUTPUT_MARKERS)
        if cut < 0:
            turns.append(("user", part.strip()))
            continue
        question, answer = part[:cut].strip(), part[cut:].strip()
        turns.append(("user", question))
        if answer.endswith("*/") or (answer and not answer.startswith("/*")):
            turns.append(("assistant", answer))  # a demonstration; the target's answer is left to the model
    return tuple(turns)
