"""Assembling the program-writing (parsing) prompt and fitting it to the model's context.

Layout (templates ``prompts/templates/parse_exemplar.txt`` and ``parse_target.txt``)::

    <instruction>
    <blank line>
    <exemplar 1: table with 3 rows, "Q: ...", "NeuralPandas:", program lines>
    <blank line>
    ...                                   (least similar exemplar first, most similar last;
                                           ``core`` exemplars, the same for every question, before them)
    <blank line>
    <target: table with as many rows as fit, "Q: ...", "NeuralPandas:">
                                          (the prompt ends with the marker line and "\\n")

Fitting (while prompt tokens + ``max_output_tokens`` > ``context_window``):

1. drop exemplars, least similar (first) first, down to ``min_shots`` (default 1);
2. cut the target table to the largest number of its first rows that fits (at least 1);
3. if even one row does not fit, drop the remaining exemplars too (re-growing the rows);
4. if one row and no exemplar still do not fit: :class:`BinderError` (use a model
   with a longer context, a shorter question, or fewer columns).

``BuiltPrompt`` records which exemplars were dropped and how many rows are shown.

Several tables (``tables={"orders": df1, "customers": df2}``): the target shows every table
under its name (:class:`~binder_py.prompting.table_format.TablesText`) and step 2 cuts rows
fairly: the same number of first rows of every table (a smaller table is shown whole). The
instruction gets ``prompts/templates/several_tables.txt``, and the exemplars include the
several-table ones (``"tables"`` in ``exemplars.jsonl``), shown last (most similar). A
one-table prompt never shows several-table exemplars, so it is exactly as before.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import pandas as pd

from binder_py.errors import BinderError
from binder_py.prompting.defaults import marker_for
from binder_py.tasks import task_profile
from binder_py.prompting.exemplars import Exemplar, load_exemplars, load_instruction
from binder_py.prompting.retrieval import Strategy, select_exemplars
from binder_py.prompting.table_format import DEFAULT_MAX_CELL_CHARS, TableStyle, TablesText, TableText
from binder_py.prompting.templates import fill, load_template

__all__ = ["BuiltPrompt", "build_parse_prompt", "choose_exemplars", "exemplar_table_text", "fit_prompt",
           "join_prompt", "several_tables_note", "target_table_text"]

TokenCounter = Callable[[str], int]


@dataclass(frozen=True)
class BuiltPrompt:
    text: str
    exemplar_ids: list[str]  # in prompt order (least similar first)
    dropped_exemplars: list[str]  # dropped to fit the context, in the order they were dropped
    table_rows_shown: int  # fewer than the total: cut to the row cap (max_table_rows) or to fit the context
    table_rows_total: int
    prompt_tokens: int
    task: str = ""
    mode: str = "binder"
    marker: str = "NeuralPandas:"  # the line the program follows ("A:" for e2e prompts)
    question_label: str = "Q:"
    max_output_tokens: int = 512
    stop: tuple[str, ...] = field(default=("\n\n",))
    #: the same prompt as chat turns, for chat models: the instruction as the system message,
    #: each exemplar as a user turn (table, question, marker) answered by an assistant turn (its
    #: program), and the target as the last user turn. Small instruct models follow this far
    #: better than one long user message.
    messages: tuple[tuple[str, str], ...] | None = None
    #: the context, not only the row cap, cut the table's rows
    rows_cut_to_fit: bool = False

    @property
    def rows_truncated(self) -> bool:
        return self.table_rows_shown < self.table_rows_total


def several(tables: Mapping[str, pd.DataFrame] | None) -> bool:
    return tables is not None and len(tables) > 1


def target_table_text(table: pd.DataFrame, tables: Mapping[str, pd.DataFrame] | None, title: str | None, *,
                      style: TableStyle, lowercase: bool, max_cell_chars: int | None) -> TableText | TablesText:
    """The target's table text: one table under its title, or several tables under their names."""
    if several(tables):
        assert tables is not None
        return TablesText(tables, style=style, lowercase=lowercase, max_cell_chars=max_cell_chars)
    return TableText(table, title, style=style, lowercase=lowercase, max_cell_chars=max_cell_chars)


def exemplar_table_text(exemplar: Exemplar, *, style: TableStyle, lowercase: bool,
                        max_cell_chars: int | None) -> TableText | TablesText:
    if exemplar.several_tables:
        return TablesText(exemplar.tables, style=style, lowercase=lowercase, max_cell_chars=max_cell_chars)
    return TableText(exemplar.table, exemplar.title, style=style, lowercase=lowercase, max_cell_chars=max_cell_chars)


def choose_exemplars(pool: Sequence[Exemplar], question: str, table: pd.DataFrame,
                     tables: Mapping[str, pd.DataFrame] | None, *, k: int, strategy: Strategy,
                     mode: str, core: Sequence[str] = ()) -> list[Exemplar]:
    """``k`` exemplars, least similar first. One table: one-table exemplars only (as ever).
    Several tables: the most similar several-table exemplars (up to ``k``) last, after the most
    similar one-table exemplars filling the rest.

    ``core`` (exemplar ids): these come first, in this order, whatever the question (those the
    mode may show and the pool holds, at most ``k``), and the rest are retrieved from the others.
    A prompt that starts with the same exemplars for every question shares its prefix with the
    previous question's, which a model server keeps evaluated (the embedded model)."""
    if core:
        by_id = {e.id: e for e in pool}
        allowed = {e.id for e in select_exemplars(pool, question, None, k=len(pool), strategy="fixed", mode=mode)}
        fixed = [by_id[i] for i in dict.fromkeys(core) if i in by_id and i in allowed][:max(0, k)]
        rest = [e for e in pool if e.id not in {f.id for f in fixed}]
        return fixed + choose_exemplars(rest, question, table, tables, k=k - len(fixed), strategy=strategy, mode=mode)
    singles = [e for e in pool if not e.several_tables]
    if not several(tables):
        return select_exemplars(singles, question, table, k=k, strategy=strategy, mode=mode)
    multi = select_exemplars([e for e in pool if e.several_tables], question, table, k=k, strategy=strategy,
                             mode=mode)
    return select_exemplars(singles, question, table, k=k - len(multi), strategy=strategy, mode=mode) + multi


def several_tables_note(tables: Mapping[str, pd.DataFrame] | None, template: str = "several_tables") -> str:
    """The instruction's note on several tables ("" for one table)."""
    if not several(tables):
        return ""
    assert tables is not None
    names = list(tables)
    second = tables[names[1]]
    text_columns = [c for c in second.columns if not pd.api.types.is_numeric_dtype(second[c].dtype)]
    example = f"{names[1]}[{json.dumps(str((text_columns or list(second.columns))[0]), ensure_ascii=False)}]"
    return fill(load_template(template), {"names": ", ".join(names), "first": names[0], "example": example}).strip()


def _with_note(instruction: str, note: str) -> str:
    return f"{instruction.rstrip()}\n{note}" if note and instruction.strip() else (note or instruction)


def join_prompt(instruction: str, blocks: Sequence[str], target: str, *, end: str = "\n") -> str:
    """Instruction, exemplar blocks and target separated by blank lines; ``end`` appended."""
    parts = [p for p in (instruction.strip(),) if p] + list(blocks) + [target]
    return "\n\n".join(parts) + end


@dataclass
class _Fit:
    text: str
    tokens: int
    kept: list[Exemplar]
    dropped: list[str]
    rows: int
    rows_cut_to_fit: bool = False  # fewer rows than the cap (max_rows) allowed, to fit the context


def fit_prompt(render: Callable[[Sequence[Exemplar], int], str], exemplars: Sequence[Exemplar], *,
               total_rows: int, max_rows: int | None, count_tokens: TokenCounter, context_window: int,
               max_output_tokens: int, min_shots: int = 1, what: str = "the question and its table") -> _Fit:
    """Fit ``render(exemplars, rows)`` into the context (see the module docstring for the order)."""
    budget = context_window - max_output_tokens
    if budget <= 0:
        raise BinderError(f"the model's context window ({context_window} tokens) leaves no room for a prompt "
                          f"after reserving {max_output_tokens} tokens for the answer; use a model with a longer "
                          "context window or lower max_output_tokens")
    cap = total_rows if max_rows is None else max(1, min(max_rows, total_rows))
    kept = list(exemplars)
    dropped: list[str] = []

    def measure(rows: int) -> tuple[str, int]:
        text = render(kept, rows)
        return text, count_tokens(text)

    text, tokens = measure(cap)
    if tokens > budget and len(kept) > min_shots:
        # Shortcut for big tables: if the table does not fit even with the fewest exemplars,
        # dropping them one by one cannot help; drop them all at once (same result, fewer counts).
        rest = kept[len(kept) - min_shots:] if min_shots > 0 else []
        head = kept[:len(kept) - len(rest)]
        kept[:] = rest
        text_min, tokens_min = measure(cap)
        if tokens_min > budget:
            dropped.extend(e.id for e in head)
            text, tokens = text_min, tokens_min
        else:
            kept[:] = head + rest
    while tokens > budget and len(kept) > min_shots:
        dropped.append(kept.pop(0).id)
        text, tokens = measure(cap)
    if tokens <= budget:
        return _Fit(text, tokens, kept, dropped, cap)

    def most_rows() -> tuple[int, str, int] | None:
        text1, tokens1 = measure(1)
        if tokens1 > budget:
            return None
        good, good_text, good_tokens = 1, text1, tokens1
        lo, hi = 2, cap - 1  # cap itself is known not to fit
        while lo <= hi:
            mid = (lo + hi) // 2
            t, n = measure(mid)
            if n <= budget:
                good, good_text, good_tokens, lo = mid, t, n, mid + 1
            else:
                hi = mid - 1
        return good, good_text, good_tokens

    found = most_rows() if cap > 1 else None
    while found is None and kept:
        dropped.append(kept.pop(0).id)
        text, tokens = measure(cap)
        if tokens <= budget:
            return _Fit(text, tokens, kept, dropped, cap)
        found = most_rows() if cap > 1 else None
    if found is None:
        _, needed = measure(1)
        raise BinderError(
            f"{what} are too long for the model's context: with no exemplars and only 1 table row the prompt "
            f"needs {needed} tokens plus {max_output_tokens} for the answer, but the context window is "
            f"{context_window} tokens; use a model with a longer context window, a shorter question, "
            "or a table with fewer or shorter columns")
    rows, text, tokens = found
    return _Fit(text, tokens, kept, dropped, rows, rows_cut_to_fit=True)


def build_parse_prompt(task: str, table: pd.DataFrame, question: str, *, title: str | None = None,
                       mode: str = "binder", table_style: TableStyle = "binder", selection: Strategy = "bm25",
                       num_shots: int | None = None, exemplar_rows: int = 3,
                       count_tokens: TokenCounter, context_window: int, max_output_tokens: int = 512,
                       lowercase: bool | None = None, max_cell_chars: int | None = DEFAULT_MAX_CELL_CHARS,
                       max_table_rows: int | None = None, min_shots: int = 1,
                       exemplars: Sequence[Exemplar] | None = None, instruction: str | None = None,
                       tables: Mapping[str, pd.DataFrame] | None = None, core: Sequence[str] = ()) -> BuiltPrompt:
    """The prompt that asks the model to write a program answering ``question`` about ``table``.

    ``task`` picks the instruction, exemplars and question label; ``exemplars``
    and ``instruction`` override the packaged ones (custom prompts, tests).
    ``num_shots`` defaults to the task's (14). ``max_table_rows`` caps the
    target rows shown even when more would fit. ``lowercase`` lower-cases text
    cells (default: the task's ``lowercase_cells``, True for wikitq/tabfact as
    in the paper). The executed table is not changed by this, so string
    literals the model copies from a lower-cased prompt are lower-case.
    ``tables`` (every table by name, ``table`` first) shows several tables (module docstring);
    ``table_rows_shown``/``table_rows_total`` then count the rows of all tables.
    ``core`` (exemplar ids) are shown first whatever the question (:func:`choose_exemplars`).
    """
    marker = marker_for(mode)
    defaults = task_profile(task)
    if not isinstance(question, str) or not question.strip():
        raise BinderError("the question is empty; ask a question about the table")
    pool = load_exemplars(defaults.prompts) if exemplars is None else list(exemplars)
    instruction_text = load_instruction(defaults.prompts, mode) if instruction is None else instruction
    instruction_text = _with_note(instruction_text, several_tables_note(tables))
    k = defaults.num_shots if num_shots is None else num_shots
    chosen = choose_exemplars(pool, question, table, tables, k=k, strategy=selection, mode=mode, core=core)

    exemplar_template = load_template("parse_exemplar")
    target_template = load_template("parse_target")
    label = defaults.question_label
    if lowercase is None:
        lowercase = defaults.lowercase_cells
    blocks = {
        e.id: fill(exemplar_template, {
            "table": exemplar_table_text(e, style=table_style, lowercase=lowercase,
                                         max_cell_chars=max_cell_chars).render(exemplar_rows),
            "question_label": label, "question": _one_line(e.question), "marker": marker, "program": e.program})
        for e in chosen
    }
    target = target_table_text(table, tables, title, style=table_style, lowercase=lowercase,
                               max_cell_chars=max_cell_chars)

    def render(kept: Sequence[Exemplar], rows: int) -> str:
        body = fill(target_template, {"table": target.render(rows), "question_label": label,
                                      "question": _one_line(question), "marker": marker})
        return join_prompt(instruction_text, [blocks[e.id] for e in kept], body)

    fit = fit_prompt(render, chosen, total_rows=target.total_rows, max_rows=max_table_rows,
                     count_tokens=count_tokens, context_window=context_window,
                     max_output_tokens=max_output_tokens, min_shots=min_shots)
    turns: list[tuple[str, str]] = [("system", instruction_text.strip())] if instruction_text.strip() else []
    for e in fit.kept:
        block = blocks[e.id]
        turns += [("user", block[: len(block) - len(e.program)].rstrip("\n")), ("assistant", e.program)]
    turns.append(("user", fill(target_template, {"table": target.render(fit.rows), "question_label": label,
                                                 "question": _one_line(question), "marker": marker}).rstrip("\n")))
    return BuiltPrompt(text=fit.text, messages=tuple(turns), exemplar_ids=[e.id for e in fit.kept], dropped_exemplars=fit.dropped,
                       table_rows_shown=target.rows_shown(fit.rows), table_rows_total=target.rows_in_all,
                       rows_cut_to_fit=fit.rows_cut_to_fit,
                       prompt_tokens=fit.tokens, task=task, mode=mode, marker=marker, question_label=label,
                       max_output_tokens=max_output_tokens, stop=defaults.stop)


def _one_line(text: str) -> str:
    """Questions are shown on one line (a newline would look like the end of the question)."""
    return " ".join(text.split())
