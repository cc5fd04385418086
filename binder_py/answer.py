"""What a question gets back: the voted answer, every candidate program with its run, usage, timings."""

from __future__ import annotations

import html
import warnings as _warnings
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

import pandas as pd

from binder_py.jsonable import cut_note, has_labels, index_labels, to_jsonable
from binder_py.lm.types import Usage
from binder_py.made_columns import lm_made_columns, place_calls
from binder_py.vote import top_tie, vote_closeness

if TYPE_CHECKING:
    from binder_py.language.execute import ProgramRun
    from binder_py.neural.plan import NeuralPlan
    from binder_py.vote import VoteShare

#: how the vote stage starts the warning of an answer withheld by ``abstain_below``
ABSTAINED = "abstained: "


#: origins of programs derived from another candidate (``repaired_from``), not sampled: ``repair``
#: (the model rewrote a failing program), ``rescope`` (an f_col answer asked once, as f_val), ``link``
#: (a compared value no cell holds replaced by the cell it means; binder_py/pipeline/link.py)
DERIVED_ORIGINS = ("repair", "rescope", "link")
#: origins of programs the pipeline writes from no program of its own (the choose stage): not samples either
ADDED_ORIGINS = ("choose",)


#: how a linked version that orders a column by value says so in its ``links``
#: (:func:`binder_py.pipeline.text_order.order_by_value`)
REORDER_NOTE = "ordered by the values its cells write"
#: how a linked version that reads a column of amounts held as text as numbers says so
#: (:func:`binder_py.pipeline.text_numbers.read_as_numbers`)
VALUE_NOTE = "read as the numbers its cells write"

LinkEntry = tuple[str, bool, int | None, bool, bool]


def link_entry(origin: str, ok: bool, value: Any, repaired_from: int | None,
               links: Sequence[str] = ()) -> LinkEntry:
    """One candidate's entry for :func:`superseded_by_links`: ``(origin, answered, repaired_from,
    gives_way, reorders)``, ``answered`` meaning it ran and gave a non-empty answer, ``gives_way`` that
    it answered nothing, the number 0 or anything but a bare yes/no (a verdict), ``reorders`` that it is
    a linked version that orders a column of numbers or dates held as text by value, or reads a column
    of amounts held as text as numbers."""
    from binder_py.normalize import is_yes_no_key, key_text, normalize_answer

    normalized = normalize_answer(value).key if ok else None
    key = key_text(normalized) if ok else None
    reorders = origin == "link" and any(REORDER_NOTE in str(note) or VALUE_NOTE in str(note) for note in links)
    gives_way = key in (None, "", "0") or not is_yes_no_key(normalized)
    return origin, key not in (None, ""), repaired_from, gives_way, reorders


def link_entries(candidates: Sequence[Candidate]) -> list[LinkEntry]:
    """:func:`superseded_by_links`' entries for candidates."""
    return [link_entry(c.origin, c.ok, c.value, c.repaired_from, c.links) for c in candidates]


def superseded_by_links(candidates: Sequence[LinkEntry]) -> set[int]:
    """The positions of the candidates that do not vote because of a linked version (origin ``link``),
    given each candidate's :func:`link_entry`. A source whose linked version answered gives way (the
    linked version votes in its place, with its count) unless the source answered a bare yes/no: what a
    filter on a value no row holds gives — a failure, no answer, the number 0 (a count or a sum over no
    rows), or an answer computed from no rows (``12 - 0`` for "how many more medals must qatar win to
    reach 12?" when ``"Qatar"`` is ``qatar (qat)`` in the table) — is not the answer the program meant.
    A source's ``False`` for "is X in the table?" may be right as written, and keeps its vote, unless its
    linked version ``reorders`` (text order is no order of the values the cells write: ``$14.90`` before
    ``$8.00``; text adds no numbers). Every linked version that does not replace its source is left out.
    So one sampled program never votes twice. The live vote, repair, rescope, the counts and
    ``binder-py report``'s re-vote all ask this."""
    out: set[int] = set()
    for position, (origin, answered, source, _, reorders) in enumerate(candidates):
        if origin != "link":
            continue
        if (answered and source is not None and 0 <= source < len(candidates)
                and (candidates[source][3] or reorders)):
            out.add(source)
        else:
            out.add(position)
    return out


@dataclass(frozen=True)
class Candidate:
    """One distinct candidate program (or, in ``e2e`` mode, one distinct direct answer).

    ``count`` is how many sampled completions produced this same program: it ran once and
    votes with that weight. ``sample_orders`` are the positions of those samples.
    """

    program: str
    count: int
    origin: str  # "sample" | "repair" | "rescope" | "link" | "choose" | "propose" | "e2e" (see DERIVED_ORIGINS)
    sample_orders: tuple[int, ...]
    mean_logprob: float | None = None
    run: ProgramRun | None = None  # None in e2e mode, and before the run stage
    direct_value: Any = None  # e2e mode: the parsed answer
    answer_key: str | None = None  # the normalised answer the candidate voted for ("" when empty)
    votes: float = 0.0  # the weight it gave its answer (0 when it did not vote)
    voted: bool = False
    repaired_from: int | None = None  # index of the candidate a repair, rescope or link came from
    links: tuple[str, ...] = ()  # link: each compared value replaced, "'column': 'written' → 'linked' (rule)",
    # and each comparison regrouped, "`a == 'x' & b == 'y'` regrouped as `(a == 'x') & (b == 'y')` (…)"

    @property
    def ok(self) -> bool:
        return self.run.ok if self.run is not None else True

    @property
    def answered(self) -> bool:
        """It ran and its answer, as voted, is not empty (after the vote stage: ``answer_key`` is "" for an
        empty answer and None before the vote)."""
        return self.ok and bool(self.answer_key)

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
            "ok": self.ok, "value": to_jsonable(self.value, infinity_as_text=True), "answer_key": self.answer_key,
            "voted": self.voted, "votes": self.votes, "has_neural_calls": self.has_neural_calls,
            "repaired_from": self.repaired_from,
        }
        if self.links:
            data["links"] = list(self.links)
        if self.run is not None:
            run = self.run.to_json()
            data["error"] = run["error"]
            data["run"] = run
        return data


#: the runner-up is at most this far behind the winner (in share of the vote): a near tie
@dataclass(frozen=True)
class ProgramCounts:
    """The counts every view of an answer prints (explain, the notebook view, the CLI).

    ``sampled`` are the completions of the sampling request (``distinct`` of them after
    merging identical programs); ``repairs`` the programs a repair round wrote (each distinct
    and new by construction); ``rescopes`` the programs whose f_col answer was asked once
    instead (the rescope stage); ``links`` the programs run again with a compared value linked to the
    cell it means, or comparisons joined by ``&``/``|`` regrouped (the link stage; each stands for its
    sampled program, with its count); ``choices`` the programs that ask the model to choose among the
    question's options, which no program named (the choose stage); ``failed`` and ``voted`` count
    programs with their multiplicity, out of ``sampled + repairs + rescopes + links + choices``; ``empty`` the programs that ran and answered nothing (None, an empty list or table),
    ``set_aside`` those that ran, answered, and did not vote (an answer of the wrong shape,
    docs/LANGUAGE.md), and ``replaced`` the sampled programs whose linked version voted in their
    place, so that the counts add up: every program is in one of failed, empty, set aside, replaced
    and voted.
    """

    sampled: int
    distinct: int
    repairs: int
    failed: int
    voted: int
    rescopes: int = 0
    links: int = 0
    choices: int = 0
    empty: int = 0
    set_aside: int = 0
    replaced: int = 0

    @classmethod
    def of(cls, candidates: list[Candidate]) -> ProgramCounts:
        samples = [c for c in candidates if c.origin not in DERIVED_ORIGINS + ADDED_ORIGINS]
        # sampled programs whose linked version voted in their place
        replaced = {i for i in superseded_by_links(link_entries(candidates)) if candidates[i].origin != "link"}
        # e2e answers, and programs run one by one (group_identical=False), are not merged: count texts

        def programs(keep: Callable[[int, Candidate], bool]) -> int:
            return sum(c.count for i, c in enumerate(candidates) if keep(i, c))

        unvoted = [c.ok and not c.voted and i not in replaced for i, c in enumerate(candidates)]
        return cls(sampled=sum(c.count for c in samples), distinct=len({c.program for c in samples}),
                   repairs=programs(lambda i, c: c.origin == "repair"), voted=programs(lambda i, c: c.voted),
                   rescopes=programs(lambda i, c: c.origin == "rescope"),
                   links=programs(lambda i, c: c.origin == "link"),
                   choices=programs(lambda i, c: c.origin == "choose"),
                   failed=programs(lambda i, c: not c.ok and i not in replaced),
                   empty=programs(lambda i, c: unvoted[i] and c.answer_key == ""),
                   set_aside=programs(lambda i, c: unvoted[i] and bool(c.answer_key)),
                   replaced=programs(lambda i, c: i in replaced))

    def sentence(self, mode: str = "binder") -> str:
        unit = "answer(s)" if mode == "e2e" else "program(s)"
        # discriminate: the symbolic proposer builds the programs (distinct by construction); none is sampled
        made = "proposed" if mode == "discriminate" else "sampled"
        text = f"{self.sampled} {unit} {made} ({self.distinct} distinct)"
        for count, words in ((self.repairs, " + {} written by repair"),
                             (self.rescopes, " + {} asking an f_col question once"),
                             (self.links, " + {} with a compared value linked to a cell, comparisons regrouped, "
                                          "a column ordered or read by value, a row filter asked of every row, "
                                          "or a dropped negation restored"),
                             (self.choices, " + {} asking the model to choose among the question's options"),
                             (self.failed, "; {} failed"), (self.replaced, "; {} replaced by their linked version"),
                             (self.empty, "; {} answered nothing"), (self.set_aside, "; {} set aside")):
            if count:
                text += words.format(count)
        return text + f"; {self.voted} voted"


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
    #: ``confidence`` is P(right) from a calibrator fitted on dev runs (True), or the raw vote share
    calibrated: bool = False

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

    def superseded(self) -> set[int]:
        """Positions of the candidates that did not vote because of a linked version
        (:func:`superseded_by_links`): sources replaced by it, linked versions whose source stands."""
        return superseded_by_links(link_entries(self.candidates))

    @property
    def tie(self) -> bool:
        """The top two answers got the same vote weight: the value shown was picked by the
        vote's tie-break (the model's score of each tied answer where it gave one, else the higher
        program log-probability, else the earliest sample), not by the vote."""
        return vote_closeness(self.distribution) == "tie"

    @property
    def near_tie(self) -> bool:
        """Not a tie, but the runner-up's share is within :data:`NEAR_TIE_MARGIN` of the winner's."""
        return vote_closeness(self.distribution) == "near_tie"

    @property
    def tied(self) -> list[VoteShare]:
        """The answers sharing the top weight (one entry when there is no tie)."""
        return top_tie(self.distribution)

    @property
    def counts(self) -> ProgramCounts:
        return ProgramCounts.of(self.candidates)

    @property
    def abstention(self) -> str | None:
        """Why there is no answer although programs voted (``abstain_below``: "the answer 17 has
        confidence 49%, below 90% ..."), or None when the answer was not withheld."""
        if self.value is not None:
            return None
        return next((w[len(ABSTAINED):] for w in self.warnings if w.startswith(ABSTAINED)), None)

    def lm_columns(self) -> pd.DataFrame | None:
        """The table with one column per ``f_col`` call of the winning program, beside the table's
        own columns (rows matched by their cells, see :func:`lm_made_columns`). With several tables,
        the calls made on the first table (``answer.table``), placed as the notebook view places them
        (:func:`~binder_py.made_columns.place_calls`): a call on ``products["product"]`` is not
        shown beside ``sales`` even though ``sales`` has a ``product`` column too.

        Returns ``None`` when there is nothing to show: when the winning program made no
        ``f_col`` call over the table's columns, and when there is **no winner** (no program
        gave an answer, ``answer.ok`` is false). In the second case it also warns
        (``UserWarning``), since the columns the failed programs asked for are in
        ``answer.candidates[i].neural_calls`` and ``answer.explain()`` shows why they failed.
        """
        if self.winner is None:
            _warnings.warn("answer.lm_columns(): no program gave an answer, so there is no winning program and "
                           "no LM-made columns (None); see answer.explain() for the programs' errors",
                           UserWarning, stacklevel=2)
            return None
        return self.winner_columns()

    def _labelled_winner_value(self) -> Any:
        """The winning program's own Series or table when its row labels say something (a grouped sum's
        keys), which the vote's value, its values only, left out; else None."""
        winner = self.winner
        return winner.value if winner is not None and self.value is not None and has_labels(winner.value) else None

    def _value_index(self) -> list[Any] | None:
        """The row labels of the answer (:func:`binder_py.jsonable.index_labels`), or None."""
        labelled = self._labelled_winner_value()
        return index_labels(labelled) if labelled is not None else None

    @property
    def labelled_value(self) -> Any:
        """The answer with its row labels where they say something: the winning program's own Series or
        table for a grouped answer (``df.groupby("city")["amount"].sum()``, whose ``value`` is the
        sums alone), else :attr:`value`. What ``binder-py ask`` prints."""
        labelled = self._labelled_winner_value()
        return labelled if labelled is not None else self.value

    def winner_columns(self) -> pd.DataFrame | None:
        """:meth:`lm_columns` without the warning (for views that show the no-answer case themselves)."""
        winner = self.winner
        if winner is None or self.table is None:
            return None
        calls = winner.neural_calls
        if self.tables:  # several tables: only the calls made on the first (as the notebook view places them)
            first = next(iter(self.tables))
            placed = place_calls(self.tables, calls)
            calls = [c for c in calls if placed.get(id(c)) == first]
        return lm_made_columns(self.table, calls)

    def closeness_sentence(self) -> str | None:
        """One sentence for a tie or a near tie (``None`` when the vote was clear)."""
        closeness = vote_closeness(self.distribution)
        if closeness == "tie":
            tied = self.tied
            names = ", ".join(_show(s.display, 60) for s in tied)
            picked = self.value if self.abstention is None else tied[0].display  # abstained: value is None
            if all(s.score is not None for s in tied):
                scored = ", ".join(f"{_show(s.display, 30)} {s.score:.2f}" for s in tied)
                how = (f"by the model's log-probability of each tied answer given the table and question "
                       f"({scored})")
            else:
                how = "by the tie-break (higher log-probability, else the earliest sample)"
            return (f"Tie: {len(tied)} answers got the same vote weight ({tied[0].share:.0%} each: {names}). "
                    f"{_show(picked, 60)} was picked {how}, not by the vote: treat the question as undecided.")
        if closeness == "near_tie":
            first, second = self.distribution[0], self.distribution[1]
            # shares that round to the same whole percent ("20% against 20%") would read as a tie
            fmt = ".0%" if f"{first.share:.0%}" != f"{second.share:.0%}" else ".1%"
            advice = ("the proposer's programs do not separate them: treat the question as undecided, or ask it "
                      "in binder or python mode" if self.mode == "discriminate"
                      else "sample more programs (a larger n) to separate them")
            return (f"Near tie: the runner-up {_show(second.display, 60)} got {second.share:{fmt}} of the vote "
                    f"against {first.share:{fmt}}; {advice}.")
        return None

    @property
    def unit(self) -> str:
        """What the candidates are: "answer(s)" in e2e mode (the model answers directly), else "program(s)"."""
        return "answer(s)" if self.mode == "e2e" else "program(s)"

    def confidence_label(self) -> str:
        """``confidence 80% (calibrated)`` or ``confidence 80% (vote share)``: says which it is."""
        return f"confidence {self.confidence:.0%} ({'calibrated' if self.calibrated else 'vote share'})"

    def explain(self) -> str:
        """A plain-text account: the answer, the vote, the winning program and its neural calls."""
        shown = _show(self.value) if self.winner is not None else "no answer"
        if self.abstention is not None:
            shown = "no answer (abstained: the confidence is below abstain_below; the vote follows)"
        lines = [f"Question: {self.question}", f"Answer: {shown}  "
                 f"({self.confidence_label()}, mode {self.mode}, task {self.task})"]
        closeness = self.closeness_sentence()
        if closeness:
            lines.append(closeness)
        if self.distribution:
            lines.append("Votes:")
            for share in self.distribution[:8]:
                lines.append(f"  {share.share:6.1%}  {_show(share.display)}  "
                             f"({share.count} {self.unit}, weight {share.weight:g})")
        lines.append(f"Candidates: {self.counts.sentence(self.mode)}.")
        failures: dict[str, int] = {}
        replaced = self.superseded()  # as the counts: not failures
        for position, c in enumerate(self.candidates):
            if not c.ok and c.error is not None and (position not in replaced or c.origin == "link"):
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
                             f"{_show(error.message, 200)}" if error is not None else
                             f"  -> answered {_show(c.value, 100)}, which did not vote (the warnings say why)"
                             if c.answered else "  -> an empty result")
        if winner is not None and winner.run is not None:
            lines.append("Winning program:" if winner.origin != "link" else
                         f"Winning program (candidate {winner.repaired_from}'s, run again as the link stage "
                         f"rewrote it: {'; '.join(winner.links)}):")
            lines.extend("    " + line for line in winner.program.splitlines())
            for call in winner.neural_calls:
                if call.order < 0:  # usage only: prefetched for a call the program never reached
                    continue
                answers = call.answers if call.kind == "col" else call.value
                lines.append(f"  neural call {call.name} (line {call.line}) {call.question!r} on "
                             f"{call.columns}: {self.call_source(call)}: {_show(answers, 200)}")
                if call.threshold:
                    lines.append(f"    {call.threshold}")
        if self.plan is not None and self.plan.steps:
            pu = self.plan.usage
            asked = sum(sum(step.asked.values()) for step in self.plan.steps)
            answered = sum(sum(step.answered.values()) for step in self.plan.steps)
            read = ("the programs' calls read them from the cache" if answered >= asked else
                    f"{answered} of {asked} answer(s) came back: the programs' calls read those from the cache "
                    "and asked for the rest themselves")
            lines.append(f"Planned neural calls: {len(self.plan.steps)} step(s) answered before the programs ran "
                         f"({pu.requests} model request(s), {pu.prompt_tokens + pu.completion_tokens} tokens; "
                         f"{read})")
        u = self.usage
        lines.append(f"Usage: {self.usage_sentence(u)}; {self.timings.get('total', 0.0):.1f} s")
        for warning in self.warnings:
            lines.append(f"Warning: {warning}")
        return "\n".join(lines)

    @staticmethod
    def call_source(call: Any) -> str:
        """Where a neural call's answers came from, counted in rows for ``f_col`` (one wording for every view)."""
        if call.kind != "col":
            return f"1 answer from {'the neural-call cache' if call.from_cache else call.backend}"
        from binder_py.neural.requests import classify

        rows, cached = len(call.keys), len(set(call.cached_keys) & set(call.keys))
        # an answer that reads as missing ("unknown", "n/a", as the model's unknown rows are written) is NA too
        answered = sum(classify(call.answers.get(key))[0] != "na" for key in set(call.keys))
        unknown = f" ({rows - answered} unknown)" if answered < rows else ""
        if rows and cached >= rows:
            return (f"{rows} row answer(s), all from the neural-call cache" if not unknown else
                    f"{answered} of {rows} row(s) answered, all from the neural-call cache{unknown}")
        text = (f"{rows} row answer(s) from {call.backend}" if not unknown else
                f"{answered} of {rows} row(s) answered by {call.backend}{unknown}")
        return text + (f" ({cached} of them from the neural-call cache)" if cached else "")

    @staticmethod
    def usage_sentence(usage: Usage) -> str:
        """Model requests and tokens: ``requests`` were sent to a model, ``cached_requests`` were read
        from the LM cache instead (neural-call answers reused inside a question are counted per call)."""
        if not usage.requests and usage.cached_requests:  # "0 model request(s) sent (0 prompt + 0 ...), 1 more ..."
            return (f"no model request sent: {usage.cached_requests} read from the LM cache "
                    f"({usage.cached_prompt_tokens} prompt + {usage.cached_completion_tokens} completion tokens)")
        text = (f"{usage.requests} model request(s) sent ({usage.prompt_tokens} prompt + {usage.completion_tokens} "
                f"completion tokens, ~${usage.cost_usd:.4f})")
        if usage.cached_requests:
            text += f", {usage.cached_requests} more read from the LM cache"
        return text

    def __str__(self) -> str:
        if self.abstention is not None:
            return "no answer (abstained)"
        return _show(self.value) if self.winner is not None else "no answer"

    def _named_tables(self) -> dict[str, pd.DataFrame]:
        """Every table by the name programs see it under (one unnamed table is ``df``)."""
        if self.tables:
            return self.tables
        return {"df": self.table} if self.table is not None else {}

    def to_json(self) -> dict[str, Any]:
        return {
            "question": self.question, "title": self.title,
            # every table the question was asked of, by the name programs see it under, with its shape
            "tables": {name: {"rows": int(frame.shape[0]), "columns": [str(c) for c in frame.columns]}
                       for name, frame in self._named_tables().items()},
            "value": to_jsonable(self.value, infinity_as_text=True), "value_index": self._value_index(),
            "confidence": self.confidence, "calibrated": self.calibrated, "mode": self.mode, "task": self.task, "lm": self.lm,
            "neural": self.neural,
            # (a share's display is an answer: ±inf as text, as "value"; its scores keep None)
            "distribution": [{**to_jsonable(s.to_dict() if hasattr(s, "to_dict") else vars(s)),
                              "display": to_jsonable(s.display, infinity_as_text=True)} for s in self.distribution],
            "candidates": [c.to_json() for c in self.candidates],
            "usage": self.usage.as_dict(), "prompt": to_jsonable(self.prompt),
            "timings": self.timings, "warnings": list(self.warnings) + _cut(self.value),
            "plan": self.plan.to_json() if self.plan is not None else None,
            "closeness": vote_closeness(self.distribution), "counts": asdict(self.counts),
        }

    def _repr_html_(self) -> str:
        from binder_py.notebook import answer_html

        return answer_html(self)


def _cut(value: Any) -> list[str]:
    note = cut_note(value)
    return [note] if note else []


def _key_text(key: Any) -> str:
    from binder_py.normalize import key_text

    return key_text(key) if key is not None else ""


def _show(value: Any, limit: int = 120) -> str:
    text = html.unescape(repr(value) if not isinstance(value, str) else value)
    return text if len(text) <= limit else text[: limit - 1] + "…"
