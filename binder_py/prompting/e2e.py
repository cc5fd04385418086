"""End-to-end answering (mode ``e2e``): the model reads the serialised table and answers directly.

Layout: ``prompts/templates/e2e_instruction.txt``, then exemplars with their
**full** tables and ``A: <answer>`` (``e2e_exemplar.txt``), then the target
table (as many rows as fit), the question and ``A:`` (``e2e_target.txt``).
Several answer values are separated by ``|``. Fitting is the same as for
program prompts (:func:`binder_py.prompting.builder.fit_prompt`). Several tables
(``tables=``) are shown by name with rows cut fairly, after the instruction's note
``prompts/templates/several_tables_e2e.txt``, as in program prompts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd

from binder_py.errors import BinderError
from binder_py.prompting.builder import (BuiltPrompt, TokenCounter, _one_line, _with_note, choose_exemplars,
                                         exemplar_table_text, fit_prompt, join_prompt, several_tables_note,
                                         target_table_text)
from binder_py.prompting.defaults import E2E_DEFAULTS
from binder_py.tasks import task_profile
from binder_py.prompting.exemplars import Exemplar, load_exemplars
from binder_py.prompting.retrieval import Strategy
from binder_py.prompting.table_format import DEFAULT_MAX_CELL_CHARS, TableStyle
from binder_py.prompting.templates import fill, load_template

__all__ = ["build_e2e_prompt", "format_answer", "parse_e2e_answer"]


def format_answer(answer: object) -> str:
    """An exemplar answer as written after ``A:`` (lists joined by ``" | "``, booleans ``true``/``false``)."""
    if isinstance(answer, (list, tuple)):
        return " | ".join(format_answer(a) for a in answer)
    if isinstance(answer, bool):
        return "true" if answer else "false"
    if isinstance(answer, float) and answer.is_integer():
        return str(int(answer))
    if answer is None:
        return "none"
    return " ".join(str(answer).split())


def build_e2e_prompt(task: str, table: pd.DataFrame, question: str, title: str | None = None, *,
                     table_style: TableStyle = "binder", selection: Strategy = "bm25",
                     num_shots: int | None = None, count_tokens: TokenCounter, context_window: int,
                     max_output_tokens: int | None = None, lowercase: bool | None = None,
                     max_cell_chars: int | None = DEFAULT_MAX_CELL_CHARS, max_table_rows: int | None = None,
                     min_shots: int = 1, exemplar_rows: int | None = None,
                     exemplars: Sequence[Exemplar] | None = None,
                     tables: Mapping[str, pd.DataFrame] | None = None, core: Sequence[str] = ()) -> BuiltPrompt:
    """The end-to-end prompt; ``BuiltPrompt.marker`` is ``"A:"`` and the text ends with it.

    ``exemplar_rows=None`` shows exemplar tables in full (paper). Exemplars
    without an ``answer`` are skipped. ``core`` exemplars come first whatever the question.
    """
    defaults = task_profile(task)
    if not isinstance(question, str) or not question.strip():
        raise BinderError("the question is empty; ask a question about the table")
    if max_output_tokens is None:
        max_output_tokens = int(E2E_DEFAULTS["max_tokens"])
    pool = [e for e in (load_exemplars(task) if exemplars is None else exemplars) if e.answer is not None]
    k = defaults.num_shots if num_shots is None else num_shots
    chosen = choose_exemplars(pool, question, table, tables, k=k, strategy=selection, mode="e2e", core=core)
    label = defaults.question_label
    if lowercase is None:
        lowercase = defaults.lowercase_cells
    instruction = fill(load_template("e2e_instruction"), {
        "task": defaults.e2e_task,
        "answer_format": defaults.e2e_answer_format})
    instruction = _with_note(instruction, several_tables_note(tables, "several_tables_e2e"))
    exemplar_template, target_template = load_template("e2e_exemplar"), load_template("e2e_target")
    blocks = {
        e.id: fill(exemplar_template, {
            "table": exemplar_table_text(e, style=table_style, lowercase=lowercase,
                                         max_cell_chars=max_cell_chars).render(exemplar_rows),
            "question_label": label, "question": _one_line(e.question), "answer": format_answer(e.answer)})
        for e in chosen
    }
    target = target_table_text(table, tables, title, style=table_style, lowercase=lowercase,
                               max_cell_chars=max_cell_chars)

    def render(kept: Sequence[Exemplar], rows: int) -> str:
        body = fill(target_template, {"table": target.render(rows), "question_label": label,
                                      "question": _one_line(question)})
        return join_prompt(instruction, [blocks[e.id] for e in kept], body, end="")

    fit = fit_prompt(render, chosen, total_rows=target.total_rows, max_rows=max_table_rows,
                     count_tokens=count_tokens, context_window=context_window,
                     max_output_tokens=max_output_tokens, min_shots=min_shots)
    return BuiltPrompt(text=fit.text, exemplar_ids=[e.id for e in fit.kept], dropped_exemplars=fit.dropped,
                       table_rows_shown=target.rows_shown(fit.rows), table_rows_total=target.rows_in_all,
                       rows_cut_to_fit=fit.rows_cut_to_fit, prompt_tokens=fit.tokens, task=task, mode="e2e", marker="A:", question_label=label,
                       max_output_tokens=max_output_tokens, stop=tuple(E2E_DEFAULTS["stop"]))


def parse_e2e_answer(text: str) -> str | list[str]:
    """The answer in a model's end-to-end reply.

    Takes the first line starting with ``A:`` (else the first non-empty line,
    as a completion continues the prompt's ``A:`` line), drops the ``A:``,
    strips spaces, a final sentence period (not one of an abbreviation like
    ``U.S.``) and surrounding quotes or backticks, and
    splits on ``|``: one value gives a string, several give a list of strings.
    An empty reply gives ``""``.
    """
    lines = [line.strip() for line in text.replace("\r", "").split("\n")]
    lines = [line for line in lines if line and not line.startswith("```")]
    if not lines:
        return ""
    line = next((l for l in lines if l.upper().startswith("A:")), lines[0])
    if line.upper().startswith("A:"):
        line = line[2:]
    values = [_clean(v) for v in line.split("|")]
    values = [v for v in values if v]
    if not values:
        return ""
    return values[0] if len(values) == 1 else values


def _clean(value: str) -> str:
    value = value.strip()
    if value.endswith(".") and "." not in value[:-1]:  # "Paris." -> "Paris"; "U.S." stays
        value = value[:-1].rstrip()
    for q in ('"', "'", "`"):
        if len(value) >= 2 and value[0] == q and value[-1] == q:
            value = value[1:-1].strip()
    return value
