"""The HTML view of an :class:`~binder_py.answer.Answer` (what Jupyter shows; ``df.binder.ask`` is
:mod:`binder_py.accessor`).

It shows what happened whatever the outcome:

* **an answer**: the value, the confidence and what it means, one vote bar (a segment per
  distinct answer), the counts, the winning program with its neural calls highlighted, each
  call's answers and provenance, and each table (by name, when there are several) with the
  LM-made columns of the calls on it beside it, every LM-made cell opening (``<details>``) onto
  its question, model, prompt and cache status;
* **a tie or a near tie** (:func:`binder_py.vote.vote_closeness`): a banner saying so, above
  the answer;
* **no answer**: the most sampled programs, each with its error (the failing line marked),
  and what to try next.

Plain HTML and CSS, no JavaScript; everything from the model or the table is escaped
(model output is untrusted).
"""

from __future__ import annotations

from binder_py.made_columns import lm_made_columns, place_calls

import html
from typing import TYPE_CHECKING, Any

import pandas as pd


if TYPE_CHECKING:
    from binder_py.answer import Answer, Candidate
    from binder_py.language.execute import ProgramRun
    from binder_py.language.trace import NeuralCallTrace

_STYLE = """<style>
.binder-answer{font-family:system-ui,sans-serif;font-size:13px;max-width:64em;color:#1f2328}
.binder-answer h4{margin:10px 0 4px;font-size:13px}
.binder-answer .value{font-size:18px;font-weight:600}
.binder-answer .none{color:#b42318}
.binder-answer .muted{color:#57606a}
.binder-answer .banner{border-left:4px solid #d4a72c;background:#fff8c5;padding:4px 8px;margin:6px 0}
.binder-answer .banner.fail{border-color:#cf222e;background:#ffebe9}
.binder-answer .votebar{display:flex;height:16px;border:1px solid #d0d7de;margin:4px 0;max-width:40em}
.binder-answer .votebar span{display:block;height:16px;border-right:1px solid #fff}
.binder-answer .votes td{border:none;padding:1px 6px}
.binder-answer .swatch{display:inline-block;width:10px;height:10px;margin-right:4px}
.binder-answer pre{background:#f6f8fa;padding:6px;white-space:pre-wrap;margin:4px 0}
.binder-answer mark{background:#ffe58a;border-radius:3px}
.binder-answer .errline{background:#ffd7d5;display:inline-block;width:100%}
.binder-answer .error{color:#b42318}
.binder-answer table.data{border-collapse:collapse}
.binder-answer table.data td,.binder-answer table.data th{border:1px solid #d0d7de;padding:2px 6px;vertical-align:top}
.binder-answer th.lm,.binder-answer td.lm{background:#fff7d6}
.binder-answer td.lm details{display:inline}
.binder-answer h4 code.name{background:#eaeef2;padding:0 4px;border-radius:3px}
.binder-answer td.lm summary{cursor:pointer}
.binder-answer details.prov{font-size:12px}
.binder-answer details.prov pre{max-height:18em;overflow:auto}
</style>"""

#: rows of the table shown in the notebook view
MAX_TABLE_ROWS = 30
#: the LM-made columns the table view shows at most (the first calls'): a program's loop of 14,000 cached
#: f_col calls made as many columns of cells that each carry their provenance (red team 14)
MAX_MADE_COLUMNS = 40
#: failing programs shown when there is no answer
MAX_FAILED_PROGRAMS = 3
#: distinct answers drawn in the vote bar (the rest are one grey "other" segment)
MAX_VOTE_SEGMENTS = 8
_COLOURS = ("#2f6fdb", "#e8912d", "#2da44e", "#a371f7", "#cf222e", "#1b7c83", "#bf8700", "#8c959f")

_esc = html.escape


def answer_html(answer: Answer) -> str:
    """The whole view of one answer, as one HTML fragment (a ``<style>`` and a ``<div>``)."""
    parts = [_STYLE, '<div class="binder-answer">', _header_html(answer)]
    parts.append(_outcome_html(answer))
    if answer.distribution:
        parts.append(vote_bar_html(answer))
    parts.append(f'<div class="counts muted">{_esc(answer.counts.sentence(answer.mode))}</div>')
    winner = answer.winner
    if winner is not None:
        parts.append(_winner_html(answer, winner))
    else:
        parts.append(failures_html(answer))
    parts.append(_table_section_html(answer))
    parts.append(_candidates_html(answer))
    for warning in answer.warnings:
        parts.append(f'<div class="warning">⚠ {_esc(warning)}</div>')
    parts.append(f'<div class="muted">model {_esc(str(answer.lm))}'
                 + (f" · neural calls {_esc(str(answer.neural))}" if answer.neural else "")
                 + f" · {_esc(answer.usage_sentence(answer.usage))}"
                 + f" · {answer.timings.get('total', 0.0):.1f} s</div>")
    parts.append("</div>")
    return "".join(parts)


# --- the outcome ---------------------------------------------------------------------------
def _header_html(answer: Answer) -> str:
    about = f"tables: {', '.join(answer.tables)}" if answer.tables else answer.title
    title = f' <span class="muted">({_esc(about)})</span>' if about else ""
    return f'<div class="question">Q: {_esc(answer.question)}{title}</div>'


def _outcome_html(answer: Answer) -> str:
    if answer.winner is None:
        return ('<div class="value none">no answer</div>'
                '<div class="banner fail">No program gave an answer: every one failed or returned nothing. '
                "The most sampled programs and their errors are below.</div>")
    if answer.abstention is not None:
        return ('<div class="value none">no answer</div>'
                f'<div class="banner near-tie">Abstained: {_esc(answer.abstention)}. The vote follows.</div>')
    meaning = ("the chance this answer is right, from a calibrator fitted on dev runs (the vote's share, "
               "margin and the agreement of distinct programs)" if answer.calibrated else
               f"the share of the vote weight that went to this answer: how much the "
               f"{'proposed' if answer.mode == 'discriminate' else 'sampled'} {answer.unit[:-3]}s agree, not a "
               "calibrated probability of being right")
    parts = [f'<div class="value">{_esc(_text(answer.value))}</div>',
             f'<div class="confidence">confidence {answer.confidence:.0%} <span class="muted">— {meaning}'
             "</span></div>"]
    closeness = answer.closeness_sentence()
    if closeness:
        kind = "tie" if answer.tie else "near-tie"
        parts.append(f'<div class="banner {kind}">{_esc(closeness)}</div>')
    return "".join(parts)


def vote_bar_html(answer: Answer) -> str:
    """One bar, a segment per distinct answer (width = its share), and a legend under it."""
    shares = answer.distribution
    cut = MAX_VOTE_SEGMENTS - 1 if len(shares) > MAX_VOTE_SEGMENTS else len(shares)
    shown, rest = shares[:cut], shares[cut:]
    segments, legend = [], []
    for i, share in enumerate(shown):
        colour = _COLOURS[i % len(_COLOURS)]
        label = f"{_text(share.display, 60)}: {share.share:.0%}"
        segments.append(f'<span style="width:{100 * share.share:.2f}%;background:{colour}" '
                        f'title="{_esc(label)}"></span>')
        legend.append(f'<tr><td><span class="swatch" style="background:{colour}"></span>'
                      f"{_esc(_text(share.display, 80))}</td><td>{share.share:.0%}</td>"
                      f"<td class=\"muted\">{share.count} {answer.unit}, weight {share.weight:g}</td></tr>")
    if rest:
        other = sum(s.share for s in rest)
        segments.append(f'<span style="width:{100 * other:.2f}%;background:#d0d7de" '
                        f'title="{len(rest)} other answers: {other:.0%}"></span>')
        legend.append(f'<tr><td><span class="swatch" style="background:#d0d7de"></span>{len(rest)} other '
                      f"answers</td><td>{other:.0%}</td><td></td></tr>")
    return (f'<h4>Votes</h4><div class="votebar" role="img" aria-label="vote shares">{"".join(segments)}</div>'
            f'<table class="votes">{"".join(legend)}</table>')


# --- the winning program -------------------------------------------------------------------
def _winner_html(answer: Answer, winner: Candidate) -> str:
    if winner.run is None:  # e2e: a direct answer
        return f'<h4>Winning answer (end to end)</h4><pre class="program">{_esc(winner.program)}</pre>'
    parts = [f'<h4>Winning program <span class="muted">({_esc(_candidate_label(winner))})</span></h4>',
             f'<pre class="program">{highlight_program(winner.program, winner.run)}</pre>']
    placed = place_calls(shown_tables(answer), winner.neural_calls) if answer.tables else {}
    for call in winner.neural_calls:
        if call.order >= 0:  # -1: prefetched for a call the program never reached
            parts.append(_call_html(answer, call, placed.get(id(call))))
    return "".join(parts)


def _call_html(answer: Answer, call: NeuralCallTrace, table: str | None = None) -> str:
    answers = call.answers if call.kind == "col" else call.value
    columns = ", ".join(f"{table}.{c}" if table else c for c in call.columns)
    head = (f'<div class="call" id="binder-call-{_call_number(call)}"><mark>{_esc(call.name)}</mark> '
            f"#{_call_number(call)} (line {call.line}) {_esc(call.question)} on {_esc(columns)}: "
            f"{_esc(answer.call_source(call))}</div>")
    return head + provenance_html(call, f"{_esc(_text(answers, 300))}")


def provenance_html(call: NeuralCallTrace, summary: str) -> str:
    """A ``<details>`` with everything about one neural call: model, cache, prompts, raw outputs."""
    facts = [f"answered by: {_esc(call.backend)}",
             f"rows in the context: {call.n_rows}, distinct rows sent: {len(call.rows)}" if call.kind == "col"
             else f"rows in the context: {call.n_rows}",
             "cached: " + ("all from the neural-call cache" if call.from_cache else
                           f"{len(call.cached_keys)} row(s) from the neural-call cache" if call.cached_keys else "no"),
             "prefetched before the program reached it" if call.prefetched else "asked when the program reached it",
             f"{call.usage.requests} model request(s), {call.usage.total_tokens} tokens, {call.seconds:.2f} s"]
    if call.threshold:
        facts.append(_esc(call.threshold))
    if call.error:
        facts.append(f'<span class="error">error: {_esc(call.error)}</span>')
    body = "".join(f"<div>{fact}</div>" for fact in facts)
    for i, prompt in enumerate(call.prompts, start=1):
        body += f"<div>prompt {i} of {len(call.prompts)}:</div><pre>{_esc(prompt)}</pre>"
        if i <= len(call.raw_outputs):
            body += f"<div>output {i}:</div><pre>{_esc(call.raw_outputs[i - 1])}</pre>"
    if call.prompts and len(call.raw_outputs) > len(call.prompts):  # one prompt shown for many rows (row by row)
        rest = "\n".join(call.raw_outputs[len(call.prompts):])
        body += f"<div>the other {len(call.raw_outputs) - len(call.prompts)} output(s):</div><pre>{_esc(rest)}</pre>"
    if not call.prompts:
        body += ("<div>no prompt: " + ("the answers were read from the cache or the question's plan"
                                        if call.from_cache or call.prefetched
                                        else f"{_esc(call.backend)} answers without a prompt") + "</div>")
    return f'<details class="prov"><summary>{summary}</summary>{body}</details>'


def highlight_program(program: str, run: ProgramRun | None, error_line: int | None = None) -> str:
    """The program as HTML with each outermost neural call wrapped in ``<mark>`` and, when
    ``error_line`` is given, that line wrapped in ``<span class="errline">``."""
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
    marked = "".join(out)
    if error_line is None:
        return marked
    lines = marked.split("\n")
    if 1 <= error_line <= len(lines):
        lines[error_line - 1] = f'<span class="errline">{lines[error_line - 1]}</span>'
    return "\n".join(lines)


# --- no answer -----------------------------------------------------------------------------
def failures_html(answer: Answer) -> str:
    """The most sampled programs, each with its error, and what to try next."""
    ran = sorted((c for c in answer.candidates if c.run is not None or c.origin == "e2e"),
                 key=lambda c: (-c.count, min(c.sample_orders or (0,))))
    parts = []
    if ran:
        parts.append(f"<h4>The {min(len(ran), MAX_FAILED_PROGRAMS)} most sampled program(s) and why they gave "
                     "no answer</h4>")
    for candidate in ran[:MAX_FAILED_PROGRAMS]:
        error = candidate.error
        line = error.line if error is not None else None
        parts.append(f'<div class="failed"><div class="muted">{_esc(_candidate_label(candidate))}</div>'
                     f'<pre class="program">{highlight_program(candidate.program, candidate.run, line)}</pre>'
                     f'<div class="error">{_esc(_failure_text(candidate))}</div></div>')
    parts.append("<h4>What to try next</h4><ul class=\"next\">"
                 + "".join(f"<li>{_esc(tip)}</li>" for tip in next_steps(answer)) + "</ul>")
    return "".join(parts)


def next_steps(answer: Answer) -> list[str]:
    """Suggestions that follow from how the programs failed (most specific first)."""
    kinds = {c.error.kind for c in answer.candidates if c.error is not None}
    messages = " ".join(c.error.message for c in answer.candidates if c.error is not None)
    tips = []
    if "KeyError" in messages or "no column" in messages.lower() or "has no attribute" in messages:
        columns = ("; ".join(f"{name}: {', '.join(map(str, t.columns))}" for name, t in answer.tables.items())
                   if answer.tables else ", ".join(map(str, answer.table.columns)) if answer.table is not None
                   else "?")
        tips.append(f"Name the columns as the table does ({columns}): the programs used a column that is not there.")
    if kinds & {"timeout", "memory", "killed"}:
        tips.append("A program ran out of time or memory: ask about fewer rows, or give the binder a sandbox with "
                    "higher limits: from sandbox import Sandbox, Limits; Binder(..., sandbox=Sandbox(Limits("
                    "wall_seconds=60, memory_bytes=4 * 1024**3))) (binder-py exec --timeout SECONDS for one program).")
    if kinds & {"syntax", "policy"}:
        tips.append("Programs did not parse or used something the sandbox forbids: a stronger model writes "
                    "valid programs more often (lm=...).")
    if not kinds and not any(c.answered for c in answer.candidates):
        compared = ("text cells are compared lower-cased" if answer.prompt.get("lowercased_table")
                    else "text is compared as written, in the same case")
        tips.append("Every program returned an empty result: check that the question's values are spelt as in "
                    f"the table ({compared}).")
    tips.append("Sample more programs (n=... ; the CLI's --n) or use a stronger model (lm=... ; --lm).")
    tips.append("Rephrase the question with the table's own words, or ask a simpler part of it first.")
    tips.append("answer.explain() prints the same account as text; answer.candidates holds every program, "
                "its run and its error.")
    return tips


def _failure_text(candidate: Candidate) -> str:
    error = candidate.error
    if error is not None:
        where = f" (line {error.line})" if error.line else ""
        return f"{error.kind} error{where}: {_text(error.message, 400)}"
    if candidate.answered:  # it answered, and its answer was set aside (the warnings say why)
        return f"answered {_text(candidate.value, 200)}, which did not vote (the warnings say why)"
    return "returned an empty result (None, NaN, an empty table or an empty list)"


# --- the table and the candidates ----------------------------------------------------------
def shown_tables(answer: Answer) -> dict[str | None, pd.DataFrame]:
    """The answer's tables by name (one unnamed table: the key ``None``)."""
    if answer.tables:
        return dict(answer.tables)
    return {} if answer.table is None else {None: answer.table}


def _table_section_html(answer: Answer) -> str:
    tables = shown_tables(answer)
    winner = answer.winner
    calls = [c for c in winner.neural_calls if c.kind == "col" and c.columns] if winner is not None else []
    placed = place_calls(tables, calls)
    parts = []
    for name, table in tables.items():
        own = [c for c in calls if id(c) in placed and placed[id(c)] == name]
        shown = own[:MAX_MADE_COLUMNS]  # (each cell carries its provenance: thousands of calls made the view huge)
        made = lm_made_columns(table, shown) if shown else None
        label = "Table" if name is None else f'Table <code class="name">{_esc(name)}</code>'
        heading = f"{label} with the LM-made columns (click a cell for where it came from)" if made is not None \
            else label
        attribute = "" if name is None else f' data-table="{_esc(name)}"'
        more = (f'<div class="muted">… {len(own) - len(shown)} more LM-made columns, not shown '
                "(answer.lm_columns() has them all)</div>") if len(own) > len(shown) else ""
        parts.append(f'<div class="table"{attribute}><h4>{heading}</h4>'
                     f"{table_html(made if made is not None else table, list(table.columns), shown)}{more}</div>")
    elsewhere = [c for c in calls if id(c) not in placed and c.order >= 0]
    if elsewhere:
        names = ", ".join(f"{c.name} #{_call_number(c)}" for c in elsewhere)
        parts.append(f'<div class="muted">{_esc(names)} ran on a table the program built from several tables\' '
                     "columns: its answers are under the winning program above.</div>")
    return "".join(parts)


def table_html(df: pd.DataFrame, own_columns: list[Any], calls: list[NeuralCallTrace]) -> str:
    """``df`` as an HTML table; the columns after ``own_columns`` are LM-made, one per call in
    ``calls`` (in order), and each of their cells carries its provenance in a ``<details>``."""
    from binder_py.neural.requests import cell_text, row_key

    made = [c for c in df.columns if c not in set(own_columns)]
    call_of = dict(zip(made, calls))
    head = "".join(f'<th class="{"lm" if c in call_of else ""}">{_esc(str(c))}</th>' for c in df.columns)
    shown = df.head(MAX_TABLE_ROWS)
    # column by column: a row read across columns (iterrows) turns ints into floats beside a float
    # column, and its numpy scalars show as np.float64(1.5)
    values = {column: shown[column].tolist() for column in shown.columns}
    rows = []
    for i in range(len(shown)):
        cells = []
        for column in df.columns:
            call = call_of.get(column)
            if call is None:
                cells.append(f"<td>{_esc(_text(_cell_display(values[column][i])))}</td>")
                continue
            key = row_key([cell_text(values[c][i]) for c in call.columns])
            cells.append(f'<td class="lm">{_cell_provenance_html(call, key, values[column][i])}</td>')
        rows.append(f"<tr>{''.join(cells)}</tr>")
    more = f'<div class="muted">… {len(df) - MAX_TABLE_ROWS} more rows</div>' if len(df) > MAX_TABLE_ROWS else ""
    return f'<table class="data"><tr>{head}</tr>{"".join(rows)}</table>{more}'


def _cell_display(value: Any) -> str:
    """A table cell as the view shows it: text as it is, numbers, dates and missing cells as the
    model is shown them (``12`` for ``12.0``, nothing for NaN)."""
    from binder_py.neural.requests import cell_text

    return value if isinstance(value, str) else str(value) if isinstance(value, bool) else cell_text(value)


def _cell_provenance_html(call: NeuralCallTrace, key: str, value: Any) -> str:
    if key not in call.answers:
        return '<span class="muted" title="this row was not sent to the model">·</span>'
    cells = call.rows[call.keys.index(key)] if key in call.keys else []
    cached = key in call.cached_keys or call.from_cache
    prompt, index = _prompt_of(call, cells), _call_number(call)
    facts = [f"{_esc(call.name)} #{index}: {_esc(call.question)}",
             "on " + ", ".join(f"{_esc(c)} = {_esc(_text(v, 60))}" for c, v in zip(call.columns, cells)),
             f"model: {_esc(call.backend)}",
             f"cached: {'yes, from the neural-call cache' if cached else 'no'}",
             f'prompt: <a href="#binder-call-{index}">{_esc(prompt)}</a>']
    return (f'<details><summary>{_esc(_text(value, 60))}</summary>'
            + "".join(f'<div class="muted">{fact}</div>' for fact in facts) + "</details>")


def _prompt_of(call: NeuralCallTrace, cells: list[str]) -> str:
    """Which of the call's prompts carried a row (the first that holds all its cells)."""
    if not call.prompts:
        return "none (read from the cache or the question's plan)" if call.from_cache or call.prefetched \
            else f"none ({call.backend} answers without a prompt)"
    for i, prompt in enumerate(call.prompts, start=1):
        if all(cell in prompt for cell in cells):
            return f"prompt {i} of {len(call.prompts)} of call #{_call_number(call)}"
    return f"one of the {len(call.prompts)} prompt(s) of call #{_call_number(call)}"


def _call_number(call: NeuralCallTrace) -> int:
    """The call's number in the view (its order of arrival, from 1; the anchor ``binder-call-N``)."""
    return call.order + 1


def _candidates_html(answer: Answer) -> str:
    if len(answer.candidates) < 2:
        return ""
    items = []
    left_out = answer.superseded()
    why = {id(c): ("replaced by its linked version" if c.origin != "link" else "its source's answer stands")
           for i, c in enumerate(answer.candidates) if i in left_out}
    for candidate in sorted(answer.candidates, key=lambda c: (-c.count, min(c.sample_orders or (0,)))):
        reason = why.get(id(candidate)) or ("empty" if candidate.answer_key == "" else "set aside")
        outcome = (f"answer {_text(candidate.value, 80)}" if candidate.ok and candidate.voted
                   else _failure_text(candidate) + (f" (did not vote: {why[id(candidate)]})" if id(candidate) in why
                                                    else "") if not candidate.ok else
                   f"answer {_text(candidate.value, 80)} (did not vote: {reason})")
        items.append(f'<div class="muted">{_esc(_candidate_label(candidate))} → {_esc(outcome)}</div>'
                     f"<pre>{_esc(candidate.program)}</pre>")
    distinct = " distinct" if len({c.program for c in answer.candidates}) == len(answer.candidates) else ""
    return (f'<details class="candidates"><summary>All {len(answer.candidates)}{distinct} candidates</summary>'
            + "".join(items) + "</details>")


def _candidate_label(candidate: Candidate) -> str:
    if candidate.origin == "repair":
        return f"written by repair of candidate {candidate.repaired_from}"
    if candidate.origin == "rescope":
        return f"candidate {candidate.repaired_from}'s question asked once (f_val), not row by row"
    if candidate.origin == "link":
        return (f"candidate {candidate.repaired_from} with compared values linked to cells or comparisons "
                f"regrouped: {'; '.join(candidate.links)}")
    if candidate.origin == "choose":
        return "written to ask the model to choose among the question's options, which no program named"
    if candidate.origin == "propose":  # discriminate mode: built by the symbolic proposer, ranked by the model
        return f"proposed, rank {min(candidate.sample_orders or (0,)) + 1}"
    times = f"sampled {candidate.count}×" if candidate.count > 1 else "sampled once"
    return f"{times} (end to end)" if candidate.origin == "e2e" else times


def _text(value: Any, limit: int = 120) -> str:
    if value is None:
        return "—"
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"
