"""The HTML view of an :class:`~binder_py.answer.Answer` (what Jupyter shows; ``df.binder.ask`` is
:mod:`binder_py.accessor`).

The view shows the answer and its confidence, a vote bar per distinct answer, the winning
program with its neural calls highlighted (from their source spans), each call's answers,
and the table with the LM-made columns beside it.
"""

from __future__ import annotations

import html
from typing import TYPE_CHECKING, Any

import pandas as pd

if TYPE_CHECKING:
    from binder_py.answer import Answer
    from binder_py.language.execute import ProgramRun

_STYLE = """<style>
.binder-answer{font-family:system-ui,sans-serif;font-size:13px;max-width:60em}
.binder-answer .value{font-size:18px;font-weight:600}
.binder-answer .bar{background:#e8eef7;height:14px;position:relative;margin:2px 0}
.binder-answer .bar span{background:#4a7fd0;display:block;height:14px}
.binder-answer pre{background:#f6f8fa;padding:6px;white-space:pre-wrap}
.binder-answer mark{background:#ffe58a;border-radius:3px}
.binder-answer table{border-collapse:collapse}
.binder-answer td,.binder-answer th{border:1px solid #ddd;padding:2px 6px}
.binder-answer th.lm,.binder-answer td.lm{background:#fff7d6}
</style>"""

#: rows of the table shown in the notebook view
MAX_TABLE_ROWS = 30


def answer_html(answer: Answer) -> str:
    esc = html.escape
    parts = [_STYLE, '<div class="binder-answer">',
             f"<div>Q: {esc(answer.question)}</div>",
             f'<div class="value">{esc(_text(answer.value))}</div>',
             f"<div>confidence {answer.confidence:.0%} · mode {esc(answer.mode)} · model {esc(str(answer.lm))}"
             f" · {answer.usage.requests} request(s), {answer.usage.total_tokens} tokens</div>"]
    if answer.distribution:
        parts.append("<div><b>Votes</b></div>")
        for share in answer.distribution[:8]:
            parts.append(f'<div>{esc(_text(share.display))} — {share.share:.0%} ({share.count} program(s))'
                         f'<div class="bar"><span style="width:{100 * share.share:.1f}%"></span></div></div>')
    winner = answer.winner
    if winner is not None:
        parts.append("<div><b>Winning program</b></div>")
        parts.append(f"<pre>{highlight_program(winner.program, winner.run)}</pre>")
        for call in winner.neural_calls:
            answers = call.answers if call.kind == "col" else call.value
            parts.append(f"<div><mark>{esc(call.name)}</mark> {esc(call.question)!s} on "
                         f"{esc(', '.join(call.columns))}: {esc(_text(answers, 300))}"
                         f"{' (cache)' if call.from_cache else ''}</div>")
    table = answer.lm_columns()
    shown = table if table is not None else answer.table
    if shown is not None:
        lm_cols = set(shown.columns) - set(answer.table.columns) if answer.table is not None else set()
        parts.append("<div><b>Table</b>" + (" with the LM-made columns" if lm_cols else "") + "</div>")
        parts.append(_table_html(shown, lm_cols))
    for warning in answer.warnings:
        parts.append(f"<div>⚠ {esc(warning)}</div>")
    parts.append("</div>")
    return "".join(parts)


def highlight_program(program: str, run: ProgramRun | None) -> str:
    """The program as HTML with each outermost neural call wrapped in ``<mark>``."""
    sites = sorted(run.sites if run is not None else [], key=lambda s: s.span[0])
    out, cursor = [], 0
    for site in sites:
        start, end = site.span
        if start < cursor:  # nested inside a call already marked
            continue
        out.append(html.escape(program[cursor:start]))
        out.append(f"<mark title=\"neural call {site.id}\">{html.escape(program[start:end])}</mark>")
        cursor = end
    out.append(html.escape(program[cursor:]))
    return "".join(out)


def _table_html(df: pd.DataFrame, lm_columns: set[str]) -> str:
    esc = html.escape
    head = "".join(f'<th class="{"lm" if c in lm_columns else ""}">{esc(str(c))}</th>' for c in df.columns)
    rows = []
    for _, row in df.head(MAX_TABLE_ROWS).iterrows():
        cells = "".join(f'<td class="{"lm" if c in lm_columns else ""}">{esc(_text(row[c]))}</td>'
                        for c in df.columns)
        rows.append(f"<tr>{cells}</tr>")
    more = f"<div>… {len(df) - MAX_TABLE_ROWS} more rows</div>" if len(df) > MAX_TABLE_ROWS else ""
    return f"<table><tr>{head}</tr>{''.join(rows)}</table>{more}"


def _text(value: Any, limit: int = 120) -> str:
    if value is None:
        return "—"
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"
