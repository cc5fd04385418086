"""The prompted-LM neural backend: the paper's "QA map" (f_col) and "QA ans" (f_val).

Prompts show the (sub-)table with a ``row_id`` column, the question, and
demonstrations retrieved by BM25 from ``prompts/neural/pool.jsonl`` (most similar
LAST). For ``f_col`` the model copies the table with one more column; every output
line is matched to a row BY ITS row_id, never by position. Rows are sent in batches
that fit the model's context; rows that come back missing are asked again once, then
left NA with a warning.

:meth:`LMNeuralBackend.answer_many` asks SEVERAL ``f_col`` questions about the same
context columns in one prompt (one answer column per question); the question-level
planner (:mod:`binder_py.neural.plan`) uses it to answer the predictable calls of all
candidate programs of a question before they run. :meth:`LMNeuralBackend.answer_tables`
goes one step further: several column sets in ONE prompt, each a labelled sub-table
(Table A, B, ...) with its own rows and questions, read back section by section by label
and row_id (``combine_tables``; :meth:`LMNeuralBackend.plan_tables` says what fits).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from binder_py.errors import BinderError
from binder_py.lm.types import LanguageModel, LMContextTooLong, LMRequest, Usage
from binder_py.neural.answer_types import META_KEY, AnswerKind, AnswerType, question_answer_type, shown_question
from binder_py.neural.backends import NeuralAnswer
from binder_py.neural.parse import _Parsed, parse_map_output, parse_multi_output, parse_tables_output
from binder_py.neural.render import (cell_text, chat_turns, fill_template, fill_until_output, load_pool,
                                     load_templates, rank_demonstrations, render_table)
from binder_py.neural.requests import NeuralRequest, row_key, shown_key


@dataclass
class TablesAnswer:
    """What :meth:`LMNeuralBackend.answer_tables` returns: per group (in the order given), per
    question, row key → raw answer (rows the model did not answer are absent), and the
    provenance of the ONE prompt that asked them all."""

    sections: list[dict[str, dict[str, Any]]] = field(default_factory=list)
    #: per value request (``vals`` of answer_tables, in order): the raw answer, None when missing
    values: list[Any] = field(default_factory=list)
    prompts: list[str] = field(default_factory=list)
    raw_outputs: list[str] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    warnings: list[str] = field(default_factory=list)


#: expected output tokens of one answer (its tab included) whose kind is not below
ANSWER_TOKENS = 6
#: ... and of a yes/no or numeric answer: what packs multi-table prompts (the model may still
#: write up to :data:`ANSWER_TOKENS` per answer: ``max_tokens`` keeps that margin, within the budget)
TYPED_ANSWER_TOKENS = {AnswerKind.YES_NO: 2, AnswerKind.NUMBER: 4}


@dataclass
class _Section:
    """One sub-table of a multi-table prompt: its columns, questions and distinct rows, shown
    with row_ids ``first_id .. first_id + len(rows) - 1`` (unique across the prompt)."""

    label: str
    title: str
    columns: list[str]
    questions: list[str]
    keys: list[str]
    rows: list[list[str]]
    wanted: dict[str, set[str]]
    first_id: int = 0
    shown: dict[str, str] = field(default_factory=dict)  # question -> as the prompt shows it (typed)
    kinds: dict[str, AnswerKind] = field(default_factory=dict)  # question -> the kind of answer it wants

    @property
    def ids(self) -> list[int]:
        return list(range(self.first_id, self.first_id + len(self.rows)))

    def answer_tokens(self) -> int:
        """Expected output tokens of one row's answers (a tab and the answer, per question): 2 for
        yes/no, 4 for a number, :data:`ANSWER_TOKENS` otherwise."""
        return sum(TYPED_ANSWER_TOKENS.get(self.kinds.get(q, AnswerKind.TEXT), ANSWER_TOKENS) for q in self.questions)


@dataclass
class _ValueSection:
    """One ``f_val`` request in a multi-table prompt: its (sub-)table, shown without row_ids, and
    its one question about the whole table, answered on a line ``Table <label> answer: ...``."""

    label: str
    title: str
    request: NeuralRequest


_VALUE_LINE = re.compile(r"^[#*\s]*table\s+([A-Za-z]{1,2})\s+answer\s*:\s*(.*?)\s*$", re.IGNORECASE)


def split_value_lines(text: str) -> tuple[dict[str, str], str]:
    """The ``Table X answer: ...`` lines of a multi-table output (label → first answer given) and
    the rest of the output (the QA-map tables)."""
    values: dict[str, str] = {}
    rest: list[str] = []
    for line in text.splitlines():
        m = _VALUE_LINE.match(line)
        if m:
            values.setdefault(m.group(1).upper(), m.group(2))
        else:
            rest.append(line)
    return values, "\n".join(rest)


@dataclass
class ManyAnswer:
    """What :meth:`LMNeuralBackend.answer_many` returns: per question, row key → raw answer
    (a row the model did not answer is absent), and the provenance of the prompts that
    answered them all (each prompt is counted once, not once per question)."""

    answers: dict[str, dict[str, Any]] = field(default_factory=dict)
    prompts: list[str] = field(default_factory=list)
    raw_outputs: list[str] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    warnings: list[str] = field(default_factory=list)


def first_columns(request: NeuralRequest, count: int) -> NeuralRequest:
    """``request`` over its first ``count`` context columns (every row kept, keys recomputed)."""
    rows = [list(r[:count]) for r in request.rows]
    return NeuralRequest(request.kind, request.question, list(request.columns[:count]), rows,
                         [row_key(r) for r in rows], request.site, request.title, dict(request.meta))


def default_max_output_tokens(lm: LanguageModel) -> int:
    """The output budget of one neural request: 1,024 tokens for the embedded local model and
    models with a context of 8k tokens or less, 4,096 for larger (remote) models."""
    window = lm.context_window
    if lm.capabilities.embedded or (0 < window <= 8192):
        return 1024
    return 4096


class LMNeuralBackend:
    """Answer neural requests with a language model (temperature 0, like the paper)."""

    def __init__(self, lm: LanguageModel, *, pool: list[dict[str, Any]] | str | Path | None = None,
                 shots: int = 8, demo_rows: int = 8, max_output_tokens: int | None = None,
                 max_batch_rows: int = 200, max_workers: int = 4, title: str | None = None,
                 chunk_rows: int | None = None, dedup: bool = True, prefetch: bool = True,
                 max_questions: int = 6, combine_tables: bool = True, max_tables: int = 8,
                 per_column: bool = False, max_table_rows: int = 600, fixed_demos: bool = False,
                 pack_by_answer_kind: bool = True, table_shots: int = 6):
        self.lm = lm
        # multi-table prompts are packed by each answer's expected length (yes/no 2 tokens, ...);
        # False: 6 tokens an answer, as runs recorded before that were packed (their replays)
        self.pack_by_answer_kind = pack_by_answer_kind
        # the pool's first ``shots`` items of a kind, in file order, instead of the BM25-retrieved ones:
        # every prompt of a kind then starts with the same text, which the embedded runtime keeps
        # evaluated in a slot across calls and questions (the row-by-row backend's f_val)
        self.fixed_demos = fixed_demos
        self.name = f"lm:{lm.name}"
        self.cache_id = self.name
        self.prefetch = prefetch  # execute() asks predictable requests of a program concurrently
        # the original Binder's knobs (binder-py bench): fixed chunks of ``chunk_rows`` rows
        # whatever their tokens, and (read by execute) every row sent, repeated values included
        self.chunk_rows = chunk_rows
        self.dedup = dedup
        # the original's qa_map/qa_ans: one call per context column, each over the columns so far
        self.per_column = per_column
        self.pool = pool if isinstance(pool, list) else load_pool(pool)
        self.shots = shots
        # pool items in a multi-table prompt's demonstrations (two sub-tables per demonstration):
        # fewer than ``shots``, since the packed prompt's own tables are long (the three most similar
        # pairs; a fourth cost about 250 tokens a prompt in the eval bench, docs/BENCHMARKS.md)
        self.table_shots = table_shots
        self.demo_rows = demo_rows
        # None: from the model (default_max_output_tokens); the context window caps it too
        self.max_output_tokens = default_max_output_tokens(lm) if max_output_tokens is None else max_output_tokens
        self.max_questions = max(1, max_questions)  # questions asked together by answer_many
        # the plan asks about several column sets (sub-tables) in one prompt (answer_tables);
        # off: one prompt per column set, as answer_many does (for models that mix tables up)
        self.combine_tables = combine_tables
        self.max_tables = max(1, min(26, max_tables))  # sub-tables per prompt (labels A..Z)
        # rows per multi-table prompt: its output is row_ids and answers only (a few tokens a row),
        # so more rows fit than in a QA-map batch, which copies every row
        self.max_table_rows = max_table_rows
        self.max_batch_rows = max_batch_rows
        self.max_workers = max_workers
        self.default_title = title
        self.templates = load_templates()

    # ------------------------------------------------------------ prompt parts
    def demonstrations(self, request: NeuralRequest) -> list[dict[str, Any]]:
        """Up to ``shots`` pool items of the request's kind, most similar LAST (``fixed_demos``: the
        first ``shots`` in the pool's order, the same for every request)."""
        if self.fixed_demos:
            return [item for item in self.pool if item.get("kind") == request.kind][: max(0, self.shots)]
        return rank_demonstrations(self.pool, request.kind, request.question + " " + " ".join(request.columns),
                                   self.shots)

    def render_demo(self, item: dict[str, Any]) -> str:
        columns = item.get("columns", [])
        rows = item.get("rows", [])[: self.demo_rows]
        title = item.get("title") or "table"
        if item.get("kind") == "col":
            answers = item.get("answers", [])[: len(rows)]
            ids = list(range(len(rows)))
            return fill_template(self.templates["col_item"], title=title, question=item["question"],
                              table=render_table(columns, rows, ids),
                              output=render_table(columns, rows, ids, answers, item["question"]))
        answer = item.get("answer")
        if isinstance(answer, list):
            answer = " | ".join(str(a) for a in answer)
        return fill_template(self.templates["val_item"], title=title, question=item["question"],
                          table=render_table(columns, rows), output=str(answer))

    def _target_col(self, request: NeuralRequest, ids: list[int], rows: list[list[str]]) -> str:
        head = fill_until_output(self.templates["col_item"], title=request.title or self.default_title or "table",
                          question=_shown(request), table=render_table(request.columns, rows, ids))
        return head + render_table(request.columns, [], [], [], request.question) + "\n"

    def _target_val(self, request: NeuralRequest, rows: list[list[str]]) -> str:
        head = fill_until_output(self.templates["val_item"], title=request.title or self.default_title or "table",
                          question=_shown(request), table=render_table(request.columns, rows))
        return head.rstrip(" ") + " "

    def _count(self, text: str) -> int:
        return int(self.lm.count_tokens(text))

    def _budget(self) -> tuple[int, int]:
        window = self.lm.context_window or 4096
        max_out = max(64, min(self.max_output_tokens, window // 2))
        return window, max_out

    def _fit_demos(self, request: NeuralRequest, reserve: int, instruction: str,
                   blocks: Callable[[list[dict[str, Any]]], list[str]], shots: int | None = None
                   ) -> tuple[str, list[dict[str, Any]]]:
        """``instruction`` and the demonstrations rendered by ``blocks`` (the ``shots`` most similar,
        when given), dropping the least similar until the prefix leaves ``reserve`` tokens of the
        context free."""
        window, _ = self._budget()
        demos = self.demonstrations(request)
        if shots is not None:
            demos = demos[len(demos) - min(len(demos), max(0, shots)):]
        while True:
            prefix = "\n\n\n".join([instruction] + blocks(demos)) + "\n\n\n"
            if not demos or self._count(prefix) + reserve <= window:
                return prefix, demos
            demos = demos[1:]

    def _fit_prefix(self, request: NeuralRequest, reserve: int) -> tuple[str, list[dict[str, Any]]]:
        """The single-question instruction and demonstrations."""
        return self._fit_demos(request, reserve, self.templates[f"{request.kind}_instruction"],
                               lambda demos: [self.render_demo(d) for d in demos])

    # ------------------------------------------------------------ answering
    def answer(self, request: NeuralRequest) -> NeuralAnswer:
        if self.per_column and len(request.columns) > 1:
            return self._answer_per_column(request)
        return self._answer_one(request)

    def _answer_one(self, request: NeuralRequest) -> NeuralAnswer:
        if request.kind == "col":
            return self._answer_col(request)
        return self._answer_val(request)

    def _answer_per_column(self, request: NeuralRequest) -> NeuralAnswer:
        """The original Binder's ``qa_map``/``qa_ans`` (xlang-ai/Binder, nsql/nsql_exec_python.py):
        a loop over the context columns that asks the model once per column, each time about the
        columns so far; the last call (all columns) gives the answer, the earlier ones are spent."""
        spent = NeuralAnswer()
        for count in range(1, len(request.columns)):
            part = self._answer_one(first_columns(request, count))
            spent.prompts += part.prompts
            spent.raw_outputs += part.raw_outputs
            spent.usage += part.usage
        final = self._answer_one(request)
        final.prompts = spent.prompts + final.prompts
        final.raw_outputs = spent.raw_outputs + final.raw_outputs
        final.usage = spent.usage + final.usage
        return final

    def _complete(self, prompt: str, max_tokens: int, stop: tuple[str, ...], request: NeuralRequest,
                  result: Any, usage_lock: Any = None, extra_tags: dict[str, str] | None = None) -> str:
        if self.lm.capabilities.chat:
            lm_request = LMRequest(messages=chat_turns(prompt), temperature=0.0, top_p=1.0, max_tokens=max_tokens,
                                   stop=stop)
        else:
            lm_request = LMRequest(prompt=prompt, temperature=0.0, top_p=1.0, max_tokens=max_tokens, stop=stop)
        tags = {"kind": request.kind, "question": request.question[:200]}
        if request.site is not None:
            tags["site"] = str(request.site)
        tags.update(extra_tags or {})
        start = time.perf_counter()
        completion = self.lm.complete(lm_request, purpose="neural", tags=tags)
        elapsed = time.perf_counter() - start
        text = completion.text
        result.prompts.append(prompt)
        result.raw_outputs.append(text)
        usage = completion.usage if isinstance(completion.usage, Usage) else Usage()
        result.usage += usage
        if not usage.wall_seconds:
            result.usage.wall_seconds += elapsed
        return text

    def _batches(self, request: NeuralRequest, ids: list[int], header_tokens: int,
                 n_answers: int = 1) -> list[list[int]]:
        if self.chunk_rows:
            return [ids[i:i + self.chunk_rows] for i in range(0, len(ids), self.chunk_rows)]
        window, max_out = self._budget()
        batches: list[list[int]] = []
        current: list[int] = []
        used_in = used_out = 0
        for rid in ids:
            line = render_table(request.columns, [request.rows[rid]], [rid]).split("\n", 1)[1]
            tin = self._count(line) + 1
            tout = tin + 6 * n_answers
            fits = (header_tokens + used_in + tin + max_out <= window and used_out + tout <= max_out
                    and len(current) < self.max_batch_rows)
            if current and not fits:
                batches.append(current)
                current, used_in, used_out = [], 0, 0
            current.append(rid)
            used_in += tin
            used_out += tout
        if current:
            batches.append(current)
        return batches

    def _answer_col(self, request: NeuralRequest) -> NeuralAnswer:
        result = NeuralAnswer()
        if not request.rows:
            return result
        window, max_out = self._budget()
        prefix, _ = self._fit_prefix(request, reserve=max_out + 256)
        header_tokens = self._count(prefix + self._target_col(request, [], []))
        answers: dict[int, str] = {}
        pending = list(range(len(request.rows)))
        for attempt in range(2):
            batches = self._batches(request, pending, header_tokens)
            outputs = self._run_batches(request, prefix, batches, result)
            for batch, parsed in zip(batches, outputs):
                for rid, ans in parsed.answers.items():
                    answers.setdefault(rid, ans)
                if parsed.extra:
                    result.warnings.append(f"ignored {len(parsed.extra)} output line(s) with row ids not asked for")
                if parsed.duplicate:
                    result.warnings.append(f"row ids answered twice (first answer kept): {sorted(set(parsed.duplicate))}")
            pending = [rid for rid in pending if rid not in answers]
            if not pending:
                break
            if attempt == 0:
                result.warnings.append(f"{len(pending)} row(s) missing from the model's output; asking again")
        if pending:
            result.warnings.append(f"{len(pending)} row(s) still missing after asking again; left NA: "
                                   + "; ".join(shown_key(request.keys[r]) for r in pending[:5]))
        result.answers = {request.keys[rid]: ans for rid, ans in answers.items()}
        return result

    def _run_batches(self, request: NeuralRequest, prefix: str, batches: list[list[int]],
                     result: NeuralAnswer) -> list[_Parsed]:
        def run(batch: list[int]) -> tuple[list[_Parsed], NeuralAnswer]:
            part = NeuralAnswer()
            return self._ask_batch(request, prefix, batch, part), part

        if len(batches) > 1 and self.max_workers > 1:
            with ThreadPoolExecutor(max_workers=min(self.max_workers, len(batches))) as pool:
                done = list(pool.map(run, batches))
        else:
            done = [run(b) for b in batches]
        outputs: list[_Parsed] = []
        for parsed_list, part in done:  # merged in batch order: provenance is deterministic
            result.prompts.extend(part.prompts)
            result.raw_outputs.extend(part.raw_outputs)
            result.usage += part.usage
            result.warnings.extend(part.warnings)
            merged = _Parsed()
            for p in parsed_list:
                merged.answers.update(p.answers)
                merged.extra += p.extra
                merged.duplicate += p.duplicate
                merged.unparsed += p.unparsed
            outputs.append(merged)
        return outputs

    def _ask_batch(self, request: NeuralRequest, prefix: str, batch: list[int], part: NeuralAnswer) -> list[_Parsed]:
        rows = [request.rows[r] for r in batch]
        prompt = prefix + self._target_col(request, batch, rows)
        window, max_out = self._budget()
        out_estimate = sum(self._count("\t".join(r)) + 8 for r in rows) + 16
        max_tokens = max(32, min(max_out, int(out_estimate * 1.5)))
        try:
            text = self._complete(prompt, max_tokens, ("*/", "\n\n"), request, part)
        except LMContextTooLong:
            if len(batch) == 1:
                part.warnings.append(f"row {shown_key(request.keys[batch[0]])} does not fit the model's context")
                return []
            half = len(batch) // 2
            return (self._ask_batch(request, prefix, batch[:half], part)
                    + self._ask_batch(request, prefix, batch[half:], part))
        return [parse_map_output(text, {r: request.rows[r] for r in batch})]

    # ------------------------------------------------------------ several questions, one prompt
    @staticmethod
    def _question_list(questions: Sequence[str]) -> str:
        return "\n".join(f"{i}. {cell_text(q)}" for i, q in enumerate(questions, 1))

    def render_multi_demo(self, item: dict[str, Any]) -> str:
        """A ``col`` pool item in the multi-question layout (its one question as the list)."""
        columns = item.get("columns", [])
        rows = item.get("rows", [])[: self.demo_rows]
        answers = item.get("answers", [])[: len(rows)]
        ids = list(range(len(rows)))
        output = render_table(list(columns) + [item["question"]],
                              [list(r) + [a] for r, a in zip(rows, answers)], ids)
        return fill_template(self.templates["multi_item"], title=item.get("title") or "table",
                          questions=self._question_list([item["question"]]),
                          table=render_table(columns, rows, ids), output=output)

    def _target_multi(self, title: str, columns: list[str], questions: list[str], ids: list[int],
                      rows: list[list[str]], listed: Sequence[str] | None = None) -> str:
        """``listed``: the questions as the numbered list shows them (typed), default ``questions``."""
        head = fill_until_output(self.templates["multi_item"], title=title,
                                 questions=self._question_list(listed or questions),
                          table=render_table(columns, rows, ids))
        return head + render_table(list(columns) + list(questions), [], []) + "\n"

    def _fit_multi_prefix(self, probe: NeuralRequest, reserve: int) -> str:
        return self._fit_demos(probe, reserve, self.templates["multi_instruction"],
                               lambda demos: [self.render_multi_demo(d) for d in demos])[0]

    def answer_many(self, requests: Sequence[NeuralRequest]) -> ManyAnswer:
        """Answer several ``f_col`` requests over the SAME context columns with prompts that
        ask up to ``max_questions`` questions about each row at once: the output table gets
        one column per question, rows are matched by row_id. A row the model did not answer
        (missing, ambiguous line) is left out of that question's answers, and is not asked
        again here: the caller's normal path asks for it. Returns per question, row key →
        raw answer, with every prompt, output and token counted once."""
        result = ManyAnswer()
        requests = [r for r in requests if r.keys]
        if not requests:
            return result
        columns, wanted, row_of, shown, title = self._gather(
            requests, "answer_many needs f_col requests over the same context columns")
        questions = list(wanted)
        for start in range(0, len(questions), self.max_questions):
            chunk = questions[start:start + self.max_questions]
            keys = [k for k in row_of if any(k in wanted[q] for q in chunk)]
            union = NeuralRequest("col", " | ".join(chunk), columns, [row_of[k] for k in keys], keys, title=title)
            union.meta["listed"] = [shown[q] for q in chunk]
            got = self._ask_many(union, chunk, result)
            for q_index, question in enumerate(chunk):
                answers = result.answers.setdefault(question, {})
                for rid, values in got.items():
                    if keys[rid] in wanted[question]:
                        answers.setdefault(keys[rid], values[q_index])
            missing = sum(1 for q in chunk for k in wanted[q] if k not in result.answers[q])
            if missing:
                result.warnings.append(f"{missing} (question, row) answer(s) missing from the multi-question "
                                       "output; not cached, the program's call asks again")
        return result

    def _ask_many(self, union: NeuralRequest, questions: list[str], result: ManyAnswer) -> dict[int, list[str]]:
        window, max_out = self._budget()
        probe = NeuralRequest("col", " ".join(questions), union.columns, [], [])
        prefix = self._fit_multi_prefix(probe, reserve=max_out + 256)
        header = self._count(prefix + self._target_multi(union.title or "table", union.columns, questions, [], [],
                                                         union.meta.get("listed")))
        batches = self._batches(union, list(range(len(union.rows))), header, n_answers=len(questions))

        def run(batch: list[int]) -> tuple[dict[int, list[str]], ManyAnswer]:
            part = ManyAnswer()
            return self._ask_many_batch(union, questions, prefix, batch, part), part

        if len(batches) > 1 and self.max_workers > 1:
            with ThreadPoolExecutor(max_workers=min(self.max_workers, len(batches))) as pool:
                done = list(pool.map(run, batches))
        else:
            done = [run(b) for b in batches]
        out: dict[int, list[str]] = {}
        for answers, part in done:  # merged in batch order: provenance is deterministic
            result.prompts.extend(part.prompts)
            result.raw_outputs.extend(part.raw_outputs)
            result.usage += part.usage
            result.warnings.extend(part.warnings)
            out.update(answers)
        return out

    def _ask_many_batch(self, union: NeuralRequest, questions: list[str], prefix: str, batch: list[int],
                        part: ManyAnswer) -> dict[int, list[str]]:
        rows = [union.rows[r] for r in batch]
        prompt = prefix + self._target_multi(union.title or "table", union.columns, questions, batch, rows,
                                             union.meta.get("listed"))
        _, max_out = self._budget()
        out_estimate = sum(self._count("\t".join(r)) + 2 + 6 * len(questions) for r in rows) + 16
        max_tokens = max(32, min(max_out, int(out_estimate * 1.5)))
        try:
            text = self._complete(prompt, max_tokens, ("*/", "\n\n"), union, part,
                                  extra_tags={"questions": str(len(questions)), "plan": "multi"})
        except LMContextTooLong:
            if len(batch) == 1:
                part.warnings.append(f"row {shown_key(union.keys[batch[0]])} does not fit the model's context")
                return {}
            half = len(batch) // 2
            first = self._ask_many_batch(union, questions, prefix, batch[:half], part)
            first.update(self._ask_many_batch(union, questions, prefix, batch[half:], part))
            return first
        parsed = parse_multi_output(text, {r: union.rows[r] for r in batch}, len(questions))
        if parsed.extra:
            part.warnings.append(f"ignored {len(parsed.extra)} output line(s) with row ids not asked for")
        if parsed.duplicate:
            part.warnings.append(f"row ids answered twice (first answer kept): {sorted(set(parsed.duplicate))}")
        return parsed.answers

    # ------------------------------------------------------------ several tables, one prompt
    @staticmethod
    def _label(index: int) -> str:
        return chr(ord("A") + index)

    def _sections(self, groups: Sequence[Sequence[NeuralRequest]]) -> list[_Section]:
        sections: list[_Section] = []
        next_id = 0
        for index, group in enumerate(groups):
            group = [r for r in group if r.keys]
            if not group:
                raise BinderError("answer_tables needs at least one row per group")
            columns, wanted, row_of, shown, title = self._gather(
                group, "answer_tables needs f_col requests over the same context columns per group")
            keys = list(row_of)
            sections.append(_Section(self._label(index), title, columns, list(wanted), keys,
                                     [row_of[k] for k in keys], wanted, next_id, shown, _answer_kinds(group)))
            next_id += len(keys)
        return sections

    def _gather(self, requests: Sequence[NeuralRequest], mismatch: str
                ) -> tuple[list[str], dict[str, set[str]], dict[str, list[str]], dict[str, str], str]:
        """Several ``f_col`` requests over one set of context columns, merged: the columns, the row
        keys wanted per question, each key's cells, each question as the prompt shows it, and the
        title. ``mismatch`` is the error when they are not all ``f_col`` over the same columns."""
        columns = list(requests[0].columns)
        if any(r.kind != "col" or list(r.columns) != columns for r in requests):
            raise BinderError(mismatch)
        wanted: dict[str, set[str]] = {}
        row_of: dict[str, list[str]] = {}
        shown: dict[str, str] = {}
        for r in requests:
            wanted.setdefault(r.question, set()).update(r.keys)
            shown.setdefault(r.question, _shown(r))
            for row, key in zip(r.rows, r.keys):
                row_of.setdefault(key, list(row))
        title = next((r.title for r in requests if r.title), None) or self.default_title or "table"
        return columns, wanted, row_of, shown, title

    def _render_section(self, section: _Section) -> str:
        return fill_template(self.templates["multi_table_section"], label=section.label, title=section.title,
                          questions=self._question_list([section.shown.get(q, q) for q in section.questions]),
                          table=render_table(section.columns, section.rows, section.ids))

    @staticmethod
    def _section_output(section: _Section, answers: Sequence[Sequence[str]] | None = None) -> str:
        """A sub-table's output as the multi-table prompt asks for it: its label, then row_ids and
        answers only (the rows' cells are not copied)."""
        rows = [list(a) for a in answers] if answers is not None else []
        ids = section.ids[: len(rows)]
        numbers = [str(i + 1) for i in range(len(section.questions))]  # the header names the questions by number
        return f"Table {section.label}\n" + render_table(numbers, rows, ids)

    def render_tables_demo(self, items: Sequence[dict[str, Any]]) -> str:
        """``col`` pool items shown as ONE multi-table demonstration (one sub-table each, its
        one question as the list, row_ids continuing from table to table)."""
        sections, outputs, next_id = [], [], 0
        for index, item in enumerate(items):
            rows = [list(r) for r in item.get("rows", [])[: self.demo_rows]]
            answers = [[a] for a in item.get("answers", [])[: len(rows)]]
            rows = rows[: len(answers)]
            section = _Section(self._label(index), item.get("title") or "table", list(item.get("columns", [])),
                               [item["question"]], [], rows, {}, next_id)
            next_id += len(rows)
            sections.append(self._render_section(section))
            outputs.append(self._section_output(section, answers))
        return fill_template(self.templates["multi_table_item"], tables="\n".join(sections), output="\n".join(outputs))

    def _tables_prefix(self, probe: NeuralRequest, reserve: int, values: bool = False) -> str:
        """The multi-table instruction (with the value-question paragraph when ``values``) and
        demonstrations (the BM25-retrieved ``col`` items, two sub-tables per demonstration, most
        similar last), dropping the least similar until ``reserve`` tokens of the context are free."""
        def blocks(demos: list[dict[str, Any]]) -> list[str]:
            pairs = [demos[max(0, i - 2):i] for i in range(len(demos), 0, -2)][::-1]
            return [self.render_tables_demo(p) for p in pairs]

        instruction = self.templates["multi_table_instruction"]
        if values:
            instruction += " " + self.templates["multi_table_value_instruction"]
        return self._fit_demos(probe, reserve, instruction, blocks, shots=self.table_shots)[0]

    def _render_value_section(self, section: _ValueSection) -> str:
        request = section.request
        return fill_template(self.templates["multi_table_value_section"], label=section.label, title=section.title,
                             table=render_table(request.columns, request.rows), question=_shown(request))

    def _value_sections(self, vals: Sequence[NeuralRequest], first: int) -> list[_ValueSection]:
        title = self.default_title or "table"
        return [_ValueSection(self._label(first + i), r.title or title, r) for i, r in enumerate(vals)]

    def _value_costs(self, request: NeuralRequest) -> tuple[int, int]:
        """(prompt tokens, reserved output tokens) of one value question in a multi-table prompt."""
        section = _ValueSection("ZZ", request.title or self.default_title or "table", request)
        return self._count(self._render_value_section(section)) + 1, 64

    def _target_tables(self, sections: Sequence[_Section], values: Sequence[_ValueSection] = ()) -> str:
        head = fill_until_output(self.templates["multi_table_item"],
                          tables="\n".join([self._render_section(s) for s in sections]
                                           + [self._render_value_section(v) for v in values]))
        return head

    def pack_values(self, groups: Sequence[Sequence[NeuralRequest]], vals: Sequence[NeuralRequest]) -> list[int]:
        """Which of ``vals`` (``f_val`` requests) to ask in the same multi-table prompt as ``groups``
        (a pack of :meth:`plan_tables`, one group, or none): indices, in order, while the prompt
        and its output fit the context and ``max_output_tokens``, and labels remain (26 in all).
        ``[]`` when ``combine_tables`` is off or with the original's fixed chunks."""
        if not self.combine_tables or self.chunk_rows or not vals:
            return []
        window, max_out = self._budget()
        try:
            sections = self._sections(groups) if groups else []
        except BinderError:
            return []
        probe = self._tables_probe(sections) if sections else NeuralRequest("val", vals[0].question, [], [], [])
        prefix = self._tables_prefix(probe, reserve=max_out + 256, values=True)
        used_in = self._count(prefix + self._target_tables(sections)) + 8
        used_out = sum(self._section_costs(s)[1] for s in sections) + 16
        if used_in + max_out > window or used_out > max_out:
            return []
        chosen: list[int] = []
        for index, request in enumerate(vals):
            if len(sections) + len(chosen) >= 26 or not request.rows:
                break
            tin, tout = self._value_costs(request)
            if used_in + tin + max_out > window or used_out + tout > max_out:
                continue
            chosen.append(index)
            used_in, used_out = used_in + tin, used_out + tout
        return chosen

    @staticmethod
    def _tables_probe(sections: Sequence[_Section]) -> NeuralRequest:
        questions = [q for s in sections for q in s.questions]
        columns = list(dict.fromkeys(c for s in sections for c in s.columns))
        return NeuralRequest("col", " | ".join(questions), columns, [], [])

    def _section_costs(self, section: _Section, *, typed: bool | None = None) -> tuple[int, int]:
        """(prompt tokens, expected output tokens) of one sub-table: row_ids and answers, each
        answer as long as its kind's :data:`TYPED_ANSWER_TOKENS` (``typed=False``, or
        ``pack_by_answer_kind`` off: every answer :data:`ANSWER_TOKENS`, the margin ``max_tokens``
        allows)."""
        tin = self._count(self._render_section(section)) + 1
        tout = self._count(self._section_output(section)) + 2
        typed = self.pack_by_answer_kind if typed is None else typed
        per_row = section.answer_tokens() if typed else ANSWER_TOKENS * len(section.questions)
        for rid in section.ids:
            tout += self._count(f"{rid}\t") + 1 + per_row  # row_id and answers only
        return tin, tout

    def plan_tables(self, groups: Sequence[Sequence[NeuralRequest]]) -> list[list[int]]:
        """Which groups (``f_col`` requests over the same context columns, as for
        :meth:`answer_many`) to ask together with :meth:`answer_tables`: packs of group
        indices, each of two or more groups that fit ONE prompt (prompt + reserved output
        within the context window, expected output within ``max_output_tokens``, at most
        ``max_table_rows`` rows, ``max_tables`` sub-tables and ``max_questions`` questions
        per sub-table), filled in order. Groups in no pack are left to the caller (asked
        per column set, batched). ``[]`` when ``combine_tables`` is off."""
        if not self.combine_tables or self.chunk_rows or len(groups) < 2:
            return []
        window, max_out = self._budget()
        candidates: list[tuple[int, int, int, int]] = []  # group index, rows, tokens in, tokens out
        sections: list[_Section] = []
        for index, group in enumerate(groups):
            try:
                section = self._sections([group])[0]
            except BinderError:
                continue
            if len(section.questions) > self.max_questions:
                continue
            sections.append(section)
            candidates.append((index, len(section.rows), *self._section_costs(section)))
        if len(candidates) < 2:
            return []
        prefix = self._tables_prefix(self._tables_probe(sections), reserve=max_out + 256)
        fixed = self._count(prefix + self._target_tables([])) + 8
        packs: list[list[int]] = []
        current: list[int] = []
        rows = tin = tout = 0
        for index, n_rows, s_in, s_out in candidates:
            fits = (len(current) < self.max_tables and rows + n_rows <= self.max_table_rows
                    and fixed + tin + s_in + max_out <= window and tout + s_out <= max_out)
            if current and not fits:
                packs.append(current)
                current, rows, tin, tout = [], 0, 0, 0
                fits = (n_rows <= self.max_table_rows and fixed + s_in + max_out <= window and s_out <= max_out)
            if fits:
                current.append(index)
                rows, tin, tout = rows + n_rows, tin + s_in, tout + s_out
        if current:
            packs.append(current)
        return [p for p in packs if len(p) > 1]

    def fits_one_prompt(self, groups: Sequence[Sequence[NeuralRequest]], vals: Sequence[NeuralRequest] = ()) -> bool:
        """``groups`` and ``vals`` fit ONE multi-table prompt: at most 26 labels, ``max_questions``
        per sub-table, ``max_table_rows`` rows, prompt + reserved output within the context and
        the expected output within ``max_output_tokens``."""
        if self.chunk_rows or not (groups or vals) or len(groups) + len(vals) > 26:
            return False
        try:
            sections = self._sections(groups) if groups else []
        except BinderError:
            return False
        if any(len(s.questions) > self.max_questions for s in sections):
            return False
        if sum(len(s.rows) for s in sections) > self.max_table_rows:
            return False
        window, max_out = self._budget()
        probe = self._tables_probe(sections) if sections else NeuralRequest("val", vals[0].question, [], [], [])
        prefix = self._tables_prefix(probe, reserve=max_out + 256, values=bool(vals))
        values = self._value_sections(vals, len(sections))
        prompt_in = self._count(prefix + self._target_tables(sections, values)) + 8
        out = sum(self._section_costs(s)[1] for s in sections) + 64 * len(vals) + 16
        return prompt_in + max_out <= window and out <= max_out

    def answer_tables(self, groups: Sequence[Sequence[NeuralRequest]],
                      vals: Sequence[NeuralRequest] = ()) -> TablesAnswer:
        """Answer the ``f_col`` requests of several groups (each over ONE set of context
        columns, up to ``max_questions`` questions) with ONE prompt: every group is a labelled
        sub-table (Table A, B, ...) with its own columns, rows (row_ids unique across the
        prompt) and numbered questions, and the model writes one labelled output table per
        sub-table. Each section is read by its label and row_ids (never by position), as
        strictly as :func:`parse_multi_output`; a (question, row) the model did not answer is
        left out, not asked again here (the caller's normal path asks for it). ``vals`` are
        ``f_val`` requests asked in the same prompt, each a labelled table with one question
        about the whole table, answered on a line ``Table <label> answer: ...`` before the
        output tables (``TablesAnswer.values``, None when the line is missing). Use
        :meth:`plan_tables` and :meth:`pack_values` to know what fits; raises
        ``LMContextTooLong`` when the model says the prompt is too long."""
        result = TablesAnswer()
        sections = self._sections(groups) if groups else []
        values = self._value_sections(vals, len(sections))
        if any(len(s.questions) > self.max_questions for s in sections) or len(sections) + len(values) > 26:
            raise BinderError("answer_tables: too many questions or sub-tables for one prompt")
        if not sections and not values:
            raise BinderError("answer_tables needs at least one group or value request")
        _, max_out = self._budget()
        probe = self._tables_probe(sections) if sections else NeuralRequest("val", vals[0].question, [], [], [])
        target = self._target_tables(sections, values)
        prefix = self._tables_prefix(probe, reserve=max_out + self._count(target) + 16, values=bool(values))
        out_estimate = sum(self._section_costs(s, typed=False)[1] for s in sections) + 64 * len(values) + 16
        max_tokens = max(64, min(max_out, int(out_estimate * 1.5)))
        probe.title = sections[0].title if sections else values[0].title
        text = self._complete(prefix + target, max_tokens, ("*/",), probe, result,
                              extra_tags={"plan": "tables", "tables": str(len(sections) + len(values)),
                                          "questions": str(sum(len(s.questions) for s in sections) + len(values))})
        answered, text = split_value_lines(text)
        result.values = [answered.get(v.label) or None for v in values]
        if any(v is None for v in result.values):
            result.warnings.append(f"{sum(v is None for v in result.values)} value answer(s) missing from the "
                                   "multi-table output; not cached, the program's call asks again")
        parsed = parse_tables_output(text, {s.label: ({i: r for i, r in zip(s.ids, s.rows)}, len(s.questions))
                                            for s in sections}, answers_only=True)
        if parsed.unlabelled:
            result.warnings.append(f"ignored {len(parsed.unlabelled)} output line(s) before any table label")
        if parsed.unknown_labels:
            result.warnings.append(f"ignored output under table label(s) not asked for: "
                                   f"{sorted(set(parsed.unknown_labels))}")
        missing = 0
        for section in sections:
            got = parsed.sections[section.label]
            if got.extra:
                result.warnings.append(f"table {section.label}: ignored {len(got.extra)} output line(s) with "
                                       "row ids not of this table")
            if got.duplicate:
                result.warnings.append(f"table {section.label}: row ids answered twice (first answer kept): "
                                       f"{sorted(set(got.duplicate))}")
            answers: dict[str, dict[str, Any]] = {}
            for q_index, question in enumerate(section.questions):
                mine = answers.setdefault(question, {})
                for rid, values in got.answers.items():
                    key = section.keys[rid - section.first_id]
                    if key in section.wanted[question]:
                        mine[key] = values[q_index]
                missing += len(section.wanted[question]) - len(mine)
            result.sections.append(answers)
        if missing:
            result.warnings.append(f"{missing} (question, row) answer(s) missing from the multi-table output; "
                                   "not cached, the program's call asks again")
        return result

    def _answer_val(self, request: NeuralRequest) -> NeuralAnswer:
        result = NeuralAnswer()
        window, max_out = self._budget()
        val_out = min(max_out, 256)
        prefix, _ = self._fit_prefix(request, reserve=val_out + 256)
        rows = list(request.rows)
        base = self._count(prefix + self._target_val(request, []))
        used = base
        kept: list[list[str]] = []
        for row in rows:
            cost = self._count("\t".join(row)) + 1
            if used + cost + val_out > window:
                break
            kept.append(row)
            used += cost
        if rows and not kept:  # asked about no rows, a model answers anyway, from nothing
            result.warnings.append(f"not one of the context's {len(rows)} row(s) fits the model's context, so "
                                   "it was not asked: the answer is missing")
            return result
        if len(kept) < len(rows):
            result.warnings.append(f"the context has {len(rows)} rows; only the first {len(kept)} fit the "
                                   f"model's context")
        prompt = prefix + self._target_val(request, kept)
        text = self._complete(prompt, val_out, ("\n",), request, result)
        result.value = text.strip().splitlines()[0].strip() if text.strip() else None
        return result


def _answer_kinds(requests: Sequence[NeuralRequest]) -> dict[str, AnswerKind]:
    """Each request's question → the kind of answer it wants: the call site's type when the
    program gave one, else what the question's wording asks for."""
    kinds: dict[str, AnswerKind] = {}
    for request in requests:
        typed = request.meta.get(META_KEY)
        kinds.setdefault(request.question,
                         typed.kind if isinstance(typed, AnswerType) else question_answer_type(request.question).kind)
    return kinds


def _shown(request: NeuralRequest) -> str:
    """The request's question as the prompt shows it: with the kind of answer the program needs
    (``Is it in North America? (yes/no)``), when the call site is typed."""
    return shown_question(request.question, request.meta.get(META_KEY))
