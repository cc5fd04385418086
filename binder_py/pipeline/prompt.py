"""Stage 1, prompt: the parse prompt (program modes) or the end-to-end prompt, fitted to the model's context."""

from __future__ import annotations

from typing import Any

from binder_py.errors import BinderError
from binder_py.lm.types import LMContextTooLong
from binder_py.pipeline.state import QuestionState
from binder_py.prompting import BuiltPrompt, build_e2e_prompt, build_parse_prompt

#: the context window a prompt is fitted to when the model's is not known (a server named without ?ctx=)
ASSUMED_CONTEXT_WINDOW = 4096


def _common(state: QuestionState) -> dict[str, Any]:
    lm, settings = state.lm, state.settings
    return dict(table_style=settings.table_style, selection=settings.selection, num_shots=state.shots,
                core=state.profile.effective_core(lm, settings.core_shots, mode=settings.mode),
                max_table_rows=state.profile.effective_table_rows(lm, settings.table_rows),
                count_tokens=lm.count_tokens, context_window=lm.context_window or ASSUMED_CONTEXT_WINDOW,
                lowercase=state.lowercased, tables=state.tables or None)


def parse_prompt(state: QuestionState, max_output_tokens: int) -> BuiltPrompt:
    """The question's program-writing prompt, fitted to the context with ``max_output_tokens`` left
    for what follows it (the repair stage asks for more: the failed program and its error)."""
    return build_parse_prompt(state.profile.name, state.table, state.question, title=state.title,
                              mode=state.settings.mode, max_output_tokens=max_output_tokens, **_common(state))


def build_prompt(state: QuestionState) -> QuestionState:
    lm, settings = state.lm, state.settings
    if settings.mode == "discriminate":
        return state  # the proposer writes its own prompts
    common = _common(state)
    try:
        if settings.mode == "e2e":
            prompt = build_e2e_prompt(state.profile.name, state.table, state.question, state.title, **common)
        else:
            prompt = parse_prompt(state, state.max_tokens)
    except LMContextTooLong as error:  # pragma: no cover - the builders count first
        raise BinderError(str(error)) from error
    except BinderError as error:
        if lm.context_window or "context" not in str(error):
            raise
        raise BinderError(f"{error}{_assumed_window(lm.name)}") from error
    warnings = state.warnings
    rows = (f"showed {prompt.table_rows_shown} of {prompt.table_rows_total} rows"
            + (f" of its {len(state.tables)} tables" if len(state.tables) > 1 else ""))
    if prompt.dropped_exemplars or prompt.rows_cut_to_fit:
        warnings += (f"the prompt was fitted to {lm.name}'s context: dropped {len(prompt.dropped_exemplars)} "
                     f"exemplar(s), {rows}" + ("" if lm.context_window else _assumed_window(lm.name)),)
    elif prompt.rows_truncated:  # the row cap alone: the context had room
        runs = ("the model answered from the rows shown (table_rows=0, --table-rows 0: as many as fit)"
                if settings.mode == "e2e" else "programs run on every row")  # e2e has no program
        warnings += (f"the prompt {rows}: at most {common['max_table_rows']} of a table (table_rows, --table-rows); "
                     f"{runs}",)
    return state.evolve(prompt=prompt, warnings=warnings)


def _assumed_window(name: str) -> str:
    """Said when a prompt was cut or refused for a window that was assumed, not known: the server's
    real window may be much larger, and only the user can say so."""
    return (f" ({name}'s context window is not known, so {ASSUMED_CONTEXT_WINDOW:,} tokens were assumed; give "
            "the real one with ?ctx=N in the --lm spec, e.g. --lm 'openai:MODEL@URL?ctx=32768', docs/LM.md)")
