"""What a question gets back: the voted answer, every candidate program with its run, usage, timings."""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pandas as pd

from binder_py.jsonable import to_jsonable
from binder_py.lm.types import Usage

if TYPE_CHECKING:
    from binder_py.language.execute import ProgramRun
    from binder_py.neural.plan import NeuralPlan
    from binder_py.vote import VoteShare


@dataclass(frozen=True)
class Candidate:
    """One distinct candidate program (or, in ``e2e`` mode, one distinct direct answer).

    ``count`` is how many sampled completions produced this same program: it ran once and
    votes with that weight. ``sample_orders`` are the positions of those samples.
    """

    program: str
    count: int
    origin: str  # "sample" | "repair" | "e2e"
    sample_orders: tuple[int, ...]
    mean_logprob: float | None = None
    run: ProgramRun | None = None  # None in e2e mode, and before the run stage
    direct_value: Any = None  # e2e mode: the parsed answer
    answer_key: str | None = None  # the normalised answer the candidate voted for ("" when empty)
    votes: float = 0.0  # the weight it gave its answer (0 when it did not vote)
    voted: bool = False
    repaired_from: int | None = None  # index of the failing candidate a repair came from

    @property
    def ok(self) -> bool:
        return self.run.ok if self.run is not None else True

    @property
    def value(self) -> Any:
        return self.run.value if self.run is not None else self.direct_value

    @property
    def error(self) -> Any:
        return self.run.error if self.run is not None else None

    @property
    def has_neural_calls(self) -> bool:
        return bool(self.run is not None and self.run.sites)

    @property
    def neural_calls(self) -> list[Any]:
        return list(self.run.calls) if self.run is not None else []

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "program": self.program, "count": self.count, "origin": self.origin,
            "sample_orders": list(self.sample_orders), "mean_logprob": self.mean_logprob,
            "ok": self.ok, "value": to_jsonable(self.value), "answer_key": self.answer_key,
            "voted": self.voted, "votes": self.votes, "has_neural_calls": self.has_neural_calls,
            "repaired_from": self.repaired_from,
        }
        if self.run is not None:
            run = self.run.to_json()
            data["error"] = run["error"]
            data["run"] = run
        return data


@dataclass
class Answer:
    """The answer to one question, with everything needed to check it."""

    question: str
    value: Any
    confidence: float
    candidates: list[Candidate]
    distribution: list[VoteShare]  # best first
    usage: Usage
    mode: str
    task: str
    title: str | None = None
    table: pd.DataFrame | None = field(default=None, repr=False)  # the (first) table, as the user gave it
    #: every table by name, as the user gave them (the first is ``table``); empty for one unnamed table
    tables: dict[str, pd.DataFrame] = field(default_factory=dict, repr=False)
    prompt: dict[str, Any] = field(default_factory=dict)  # exemplar ids, what was dropped, tokens
    timings: dict[str, float] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    lm: str | None = None
    neural: str | None = None
    #: the neural requests asked for all candidates before they ran (several questions per
    #: prompt); its usage is included in ``usage``
    plan: NeuralPlan | None = None

    # --- views -----------------------------------------------------------------------
    @property
    def winner(self) -> Candidate | None:
        """The candidate that best represents the answer: the heaviest voter for the winning key."""
        if not self.distribution:
            return None
        key = self.distribution[0].key
        voters = [c for c in self.candidates if c.voted and c.answer_key == _key_text(key)]
        return max(voters, key=lambda c: (c.votes, -min(c.sample_orders or (0,))), default=None)

    @property
    def ok(self) -> bool:
        return self.value is not None

    def lm_columns(self) -> pd.DataFrame | None:
        """The (first) table with the columns the winning program's ``f_col`` calls made on it (one per call)."""
        winner = self.winner
        if winner is None or self.table is None:
            return None
        return lm_made_columns(self.table, winner.neural_calls)

    def explain(self) -> str:
        """A plain-text account: the answer, the vote, the winning program and its neural calls."""
        lines = [f"Question: {self.question}", f"Answer: {_show(self.value)}  "
                 f"(confidence {self.confidence:.0%}, mode {self.mode}, task {self.task})"]
        if self.distribution:
            lines.append("Votes:")
            for share in self.distribution[:8]:
                lines.append(f"  {share.share:6.1%}  {_show(share.display)}  "
                             f"({share.count} program(s), weight {share.weight:g})")
        voted = sum(c.count for c in self.candidates if c.voted)
        total = sum(c.count for c in self.candidates)
        lines.append(f"Candidates: {len(self.candidates)} distinct of {total} sampled; {voted} voted.")
        failures: dict[str, int] = {}
        for c in self.candidates:
            if not c.ok and c.error is not None:
                failures[c.error.kind] = failures.get(c.error.kind, 0) + c.count
        if failures:
            lines.append("Failed: " + ", ".join(f"{n} {kind}" for kind, n in sorted(failures.items())))
        winner = self.winner
        if winner is None:
            failing = sorted((c for c in self.candidates if c.run is not None), key=lambda c: -c.count)[:3]
            if failing:
                lines.append("No answer. The most sampled programs and why they gave none:")
            for c in failing:
                lines.extend("    " + line for line in c.program.splitlines())
                error = c.error
                lines.append(f"  -> {error.kind} error{f' (line {error.line})' if error.line else ''}: "
                             f"{_show(error.message, 200)}" if error is not None else "  -> an empty result")
        if winner is not None and winner.run is not None:
            lines.append("Winning program:")
            lines.extend("    " + line for line in winner.program.splitlines())
            for call in winner.neural_calls:
                answers = call.answers if call.kind == "col" else call.value
                source = "cache" if call.from_cache else call.backend
                lines.append(f"  neural call {call.name} (line {call.line}) {call.question!r} on "
                             f"{call.columns}: {len(call.keys) if call.kind == 'col' else 1} answer(s) "
                             f"from {source}: {_show(answers, 200)}")
        if self.plan is not None and self.plan.steps:
            pu = self.plan.usage
            lines.append(f"Planned neural calls: {len(self.plan.steps)} step(s) answered before the programs ran "
                         f"({pu.requests} model request(s), {pu.prompt_tokens + pu.completion_tokens} tokens; "
                         "the programs' calls read them from the cache)")
        u = self.usage
        lines.append(f"Usage: {u.requests} model request(s), {u.prompt_tokens} prompt + "
                     f"{u.completion_tokens} completion tokens, {u.cached_requests} answered from cache, "
                     f"~${u.cost_usd:.4f}; {self.timings.get('total', 0.0):.1f} s")
        for warning in self.warnings:
            lines.append(f"Warning: {warning}")
        return "\n".join(lines)

    def __str__(self) -> str:
        return _show(self.value)

    def to_json(self) -> dict[str, Any]:
        return {
            "question": self.question, "title": self.title, "value": to_jsonable(self.value),
            "confidence": self.confidence, "mode": self.mode, "task": self.task, "lm": self.lm,
            "neural": self.neural,
            "distribution": [to_jsonable(s.to_dict() if hasattr(s, "to_dict") else vars(s))
                             for s in self.distribution],
            "candidates": [c.to_json() for c in self.candidates],
            "usage": self.usage.as_dict(), "prompt": to_jsonable(self.prompt),
            "timings": self.timings, "warnings": list(self.warnings),
            "plan": self.plan.to_json() if self.plan is not None else None,
        }

    def _repr_html_(self) -> str:
        from binder_py.notebook import answer_html

        return answer_html(self)


def lm_made_columns(table: pd.DataFrame, calls: list[Any]) -> pd.DataFrame | None:
    """``table`` plus one column per ``f_col`` call whose context columns are columns of ``table``.

    Rows are matched by their key (the context cells), never by position; rows the call did
    not see stay empty.
    """
    from binder_py.neural.requests import cell_text, row_key

    out = table.copy()
    added = False
    for call in calls:
        if call.kind != "col" or not call.columns or not all(c in table.columns for c in call.columns):
            continue
        keys = [row_key([cell_text(v) for v in row]) for row in table[call.columns].itertuples(index=False, name=None)]
        name = call.question
        while name in out.columns:
            name += "'"
        out[name] = [call.answers.get(k) for k in keys]
        added = True
    return out if added else None


def _key_text(key: Any) -> str:
    from binder_py.normalize import key_text

    return key_text(key) if key is not None else ""


def _show(value: Any, limit: int = 120) -> str:
    text = html.unescape(repr(value) if not isinstance(value, str) else value)
    return text if len(text) <= limit else text[: limit - 1] + "…"
