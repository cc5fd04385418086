"""``binder-py report``: read run directories and compare them (markdown table, PNG plots).

Everything is computed from ``results.jsonl`` alone — no model calls. Accuracy against the
number of voting candidates (the Binder paper's figures 6 and 7) re-votes each question
with only its first ``k`` sampled programs (:func:`binder_py.vote.vote_prefix`, using each
candidate's recorded answer, sample positions and neural-call flag) and scores the result.
Repair candidates (sampled after the first ``n``) are not in these prefixes, so the curve
at ``k = n`` can differ from the run's final accuracy when repairs happened; the plot
marks the final accuracy too.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from binder_py.answer import ADDED_ORIGINS, DERIVED_ORIGINS
from binder_py.tasks import task_profile
from binder_py.errors import BinderError
from binder_py.evaluate.judge import WIKITQ_EVALUATORS
from binder_py.evaluate.written import as_written, recorded_written_numbers
from binder_py.runs.escape import markdown_text
from binder_py.safefiles import output_directory, write_output_text
from binder_py.runs.records import RESULTS_FILE, RUN_FILES, read_config, read_results, run_files
from binder_py.runs.judgements import evaluator_names, record_scores, revive_answer, score_prediction
from binder_py.runs.paired import PairedComparison, compare_runs
from binder_py.vote import AnswerShape, VoteCandidate, sample_prefix


@dataclass
class Run:
    """A run directory as read back: its config and its results lines (last line per id)."""

    name: str
    path: Path
    config: dict[str, Any]
    records: list[dict[str, Any]]
    truncated_bytes: int = 0

    @property
    def task(self) -> str:
        return self.config.get("task") or (self.records[0].get("dataset") if self.records else None) or "wikitq"

    @property
    def mode(self) -> str:
        # a config.json from an older version may lack the mode; every results line records it too
        return str(self.config.get("mode") or (self.records[0].get("mode") if self.records else None) or "?")

    @property
    def label(self) -> str:
        return self.name if self.mode in self.name else f"{self.name} ({self.mode})"


def load_run(directory: str | os.PathLike[str]) -> Run:
    """Read a run directory written by :func:`binder_py.runs.run_eval` (a cut-off last line is ignored)."""
    path = Path(directory).expanduser()
    if path.is_file():  # results.jsonl given for its run, or a log beside the runs (report runs/*)
        raise BinderError(f"{path} is a file, not a run directory; give the directory 'binder-py eval --out DIR' "
                          f"wrote" + (f" ({path.parent})" if path.name in RUN_FILES else ""))
    if not path.is_dir():
        raise BinderError(f"{path}: no such run directory (written by 'binder-py eval --out DIR')")
    config = read_config(path)
    if config is None and not (path / RESULTS_FILE).exists():
        raise BinderError(f"{path} is not a run directory: it has neither config.json nor results.jsonl")
    found = read_results(path / RESULTS_FILE)
    return Run(name=path.name, path=path, config=config or {}, records=found.records,
               truncated_bytes=found.truncated_bytes)


# --- figures -----------------------------------------------------------------------------

@dataclass
class Accuracy:
    """Questions, and correct ones per evaluator (WikiTQ: official, binder, semantic; TabFact: correct)."""

    names: tuple[str, ...]
    total: int = 0
    correct: dict[str, int] = field(default_factory=dict)

    def add(self, judgement: dict[str, bool]) -> None:
        self.total += 1
        for name in self.names:
            self.correct[name] = self.correct.get(name, 0) + bool(judgement[name])

    def accuracy(self, name: str) -> float:
        return self.correct.get(name, 0) / self.total if self.total else 0.0

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"total": self.total}
        for name in self.names:
            out[name] = self.correct.get(name, 0)
            out[f"{name}_accuracy"] = self.accuracy(name)
        return out


def load_runs(directories: Sequence[str | os.PathLike[str]]) -> list[Run]:
    """:func:`load_run` of each directory; one given twice is refused (its questions would count
    twice in a calibration, and a report would show two rows of one name and plot one)."""
    runs = [load_run(d) for d in directories]
    places = [r.path.resolve() for r in runs]
    twice = next((r.path for r, place in zip(runs, places) if places.count(place) > 1), None)
    if twice is not None:
        raise BinderError(f"{twice} is given twice; name each run directory once")
    return runs


def accuracy_by_subset(run: Run, *, keep_split: bool = False) -> dict[str, Accuracy]:
    """``{"all": ..., subset: ...}`` from the recorded judgements. The split's own name is left out (it is
    "all") unless ``keep_split``: beside runs of other splits, its column must not read "no questions"."""
    names = evaluator_names(run.task)
    out: dict[str, Accuracy] = {"all": Accuracy(names)}
    split = None if keep_split else run.config.get("split")
    for record in run.records:
        judgement = record_scores(record, run.task)
        out["all"].add(judgement)
        for subset in record.get("subsets") or []:
            if subset != split:
                out.setdefault(str(subset), Accuracy(names)).add(judgement)
    return out


def vote_candidates(record: dict[str, Any], shape: AnswerShape = AnswerShape()) -> list[Any]:
    """The recorded candidates of a results line as :class:`~binder_py.vote.VoteCandidate` objects, each
    answer as it votes for a question of ``shape`` (:meth:`~binder_py.vote.AnswerShape.read`)."""
    from binder_py.language.negation import negated_terms, negation_polarity
    from binder_py.language.program import answers_per_row
    from binder_py.neural.yes_scores import unsure_of_every_row

    question = str(record.get("question") or "")
    negated = negated_terms(question)
    out = []
    for c in record.get("candidates") or []:
        orders = tuple(int(o) for o in c.get("sample_orders") or ())
        out.append(VoteCandidate(value=shape.read(revive_answer(c.get("value"))), count=int(c.get("count", 1)),
                                 mean_logprob=c.get("mean_logprob"), has_neural_calls=bool(c.get("has_neural_calls")),
                                 order=min(orders) if orders else 0, ok=bool(c.get("ok", True)), sample_orders=orders,
                                 per_row=answers_per_row(str(c.get("program") or "")),
                                 negation=negation_polarity(str(c.get("program") or ""), question, negated),
                                 unsure=any(unsure_of_every_row(p_range) for p_range in _recorded_p_yes_ranges(c))))
    return out


def _recorded_p_yes_ranges(candidate: dict[str, Any]) -> list[tuple[float, float]]:
    """The P(yes) ranges a recorded candidate's neural calls hold (``run.calls[].p_yes_range``; a line written
    before they were recorded holds none). What a line holds is data: anything but two numbers is no range."""
    run = candidate.get("run")
    calls = run.get("calls") if isinstance(run, dict) else None
    ranges = []
    for call in calls if isinstance(calls, list) else ():
        p_range = call.get("p_yes_range") if isinstance(call, dict) else None
        if (isinstance(p_range, list) and len(p_range) == 2
                and all(isinstance(p, (int, float)) and not isinstance(p, bool) for p in p_range)):
            ranges.append((float(p_range[0]), float(p_range[1])))
    return ranges


def record_vote(record: dict[str, Any], k: int, config: dict[str, Any], *, scores: bool = True) -> Any:
    """The vote (:class:`~binder_py.vote.VoteResult`) the run would have held with only its first ``k``
    sampled programs, under the live run's rules (binder_py/pipeline/vote.py); ``scores=False``: with a
    tie at the top broken as without the model's scores of the tied answers."""
    from binder_py.answer import link_entry, superseded_by_links
    from binder_py.pipeline.vote import cast_vote
    from binder_py.runs.records import recorded_vote
    from binder_py.vote import polarity_fit, shape_fit, sure_fit

    profile = task_profile(config.get("task") or record.get("dataset") or "wikitq")
    mode = str(config.get("mode") or record.get("mode") or "binder")  # a config from before it recorded the mode
    strategy = profile.vote_strategy(recorded_vote({**config, "mode": mode}), mode=mode)
    question = record.get("question") or ""
    shape = profile.answer_shape(question)
    every = vote_candidates(record, shape)
    superseded = superseded_by_links([link_entry(str(c.get("origin") or ""), v.ok, v.value,
                                                 c.get("repaired_from") if type(c.get("repaired_from")) is int else None,
                                                 [str(n) for n in c.get("links") or () if isinstance(n, str)])
                                      for c, v in zip(record.get("candidates") or [], every)])
    candidates = record.get("candidates") or []
    voters = polarity_fit(sure_fit(shape_fit([voter for i, v in enumerate(every) if i not in superseded
                                              for voter in _within_prefix(candidates, every, i, k)],
                                             shape)))
    return cast_vote(voters, strategy=strategy, mode=mode, yes_no=profile.is_yes_no(question),
                     answer_weights=profile.vote_weights(strategy, None),
                     neural_weight=profile.neural_weight if config.get("neural_weight") is None
                     else float(config["neural_weight"]), answer_scores=recorded_scores(record) if scores else None)


def recorded_scores(record: dict[str, Any]) -> dict[tuple[str, ...], float]:
    """The model's scores of tied answers the run recorded (its distribution's ``score``, by answer key):
    a re-vote orders a tie among them as the run did (a tie among answers the run did not score, as a
    shorter prefix may make, is broken as without scores)."""
    scores: dict[tuple[str, ...], float] = {}
    for share in record.get("distribution") or []:
        if not isinstance(share, dict):
            continue
        key, score = share.get("key"), share.get("score")
        if isinstance(key, list) and all(type(k) is str for k in key) and type(score) in (int, float):
            scores[tuple(key)] = float(score)
    return scores


def _within_prefix(candidates: list[Any], every: list[VoteCandidate], i: int, k: int) -> list[VoteCandidate]:
    """Candidate ``i`` as it stood with only the first ``k`` sampled programs: a sample or a linked
    version of one cut to its positions below ``k``; a repair or a rescope sibling, or a linked version
    of one (whose own position comes after the ``n`` samples), whole when the sample it comes from is
    among them, else not at all."""
    if str(candidates[i].get("origin")) in ADDED_ORIGINS:  # written because no sample named an option: at every k
        return [every[i]]
    chain = _derivation(candidates, i)
    if chain is not None and any(str(candidates[j].get("origin")) in ("repair", "rescope") for j in chain):
        root = every[chain[-1]]
        return [every[i]] if min(root.sample_orders or (root.order,)) < k else []
    return sample_prefix([every[i]], k)


def _derivation(candidates: list[Any], i: int) -> list[int] | None:
    """Candidate ``i`` and the candidates it was derived from (through repairs, links and rescopes), back
    to the sampled program; None when the record does not say (a record from before ``repaired_from``,
    or a broken chain)."""
    chain = [i]
    while str(candidates[i].get("origin")) in DERIVED_ORIGINS:
        source = candidates[i].get("repaired_from")
        if type(source) is not int or not 0 <= source < len(candidates) or source in chain:
            return None
        chain.append(source)
        i = source
    return chain


def revote(record: dict[str, Any], k: int, config: dict[str, Any], *, scores: bool = True) -> Any:
    """The answer the run would have given with only its first ``k`` sampled programs (``scores=False``:
    and a tie at the top broken as without the model's scores)."""
    return _reported(record, config, record_vote(record, k, config, scores=scores))


def _reported(record: dict[str, Any], config: dict[str, Any], result: Any) -> Any:
    """The answer a vote's ``result`` gives, as the task reports it."""
    from binder_py.normalize import key_text

    profile = task_profile(config.get("task") or record.get("dataset") or "wikitq")
    value = profile.final_value(result.value, key_text(result.key) if result.key is not None else "")
    if profile.numbers_as_written:  # as the run reported it (binder_py/evaluate/written.py)
        value = as_written(value, recorded_written_numbers(record.get("written_numbers")))
    return value


def tie_summary(run: Run) -> dict[str, int] | None:
    """How the run's ties at the top of the vote went (docs/DISCRIMINATE.md, "Scoring tied answers"):
    questions with one, those whose tied answers the model scored, and of those how many are right as
    the run answered and how many would have been with the earliest sample winning (WikiTQ: judged by
    the official evaluator, TabFact: ``correct``); None when no question had a tie."""
    from binder_py.vote import top_tie

    judge = evaluator_names(run.task)[0]
    k = curve_length(run)
    tied = scored = right = right_unscored = 0
    for record in run.records:
        if record.get("error"):
            continue
        result = record_vote(record, k, run.config)
        shares = top_tie(result.distribution)
        if len(shares) < 2:
            continue
        tied += 1
        if all(share.score is not None for share in shares):
            scored += 1
            right += _right(run, record, result, judge)
            right_unscored += _right(run, record, record_vote(record, k, run.config, scores=False), judge)
    if not tied:
        return None
    return {"judged_by": judge, "tied": tied, "scored": scored, "right": right, "right_unscored": right_unscored}


def _right(run: Run, record: dict[str, Any], result: Any, judge: str) -> bool:
    """Whether the answer the vote ``result`` gives to ``record``'s question is right by ``judge``."""
    return score_prediction(run.task, record.get("question") or "", record.get("gold"),
                            _reported(record, run.config, result), record.get("gold_canon"))[judge]


def recorded_sample_positions(run: Run) -> set[int]:
    """The sample positions the recorded (non-repair) candidates of a run hold."""
    return {int(o) for r in run.records for c in r.get("candidates") or []
            if c.get("origin") not in DERIVED_ORIGINS + ADDED_ORIGINS for o in c.get("sample_orders") or ()}


def curve_length(run: Run) -> int:
    """How many points the accuracy-vs-candidates curve has: the run's ``n``, bounded by the last
    recorded sample position (a config's ``n`` is data: it never sizes a loop by itself)."""
    recorded = max(recorded_sample_positions(run), default=0) + 1
    if run.mode == "discriminate":  # n does not apply: the proposer built up to its own limit of programs
        return recorded
    configured = run.config.get("n")
    return min(configured, recorded) if isinstance(configured, int) and configured > 0 else recorded


def accuracy_vs_candidates(run: Run, ks: Sequence[int] | None = None) -> list[tuple[int, Accuracy]]:
    """Accuracy when voting with the first k sampled programs, k = 1..n (from the recorded candidates).

    The vote with the first k programs only changes at a k whose position k - 1 was recorded, so
    the questions are re-voted at those k only; the work is bounded by what the file holds."""
    if ks is None:
        ks = range(1, curve_length(run) + 1)
    positions = recorded_sample_positions(run)
    task = run.task
    names = evaluator_names(task)
    out: list[tuple[int, Accuracy]] = []
    for k in ks:
        if out and k == out[-1][0] + 1 and k - 1 not in positions:
            out.append((k, out[-1][1]))  # nothing new among the first k programs: the same votes
            continue
        acc = Accuracy(names)
        for record in run.records:
            if record.get("error"):
                acc.add(dict.fromkeys(names, False))
                continue
            prediction = revote(record, k, run.config)
            acc.add(score_prediction(task, record.get("question") or "", record.get("gold"), prediction,
                                     record.get("gold_canon")))
        out.append((k, acc))
    return out


def _finite(value: Any) -> float:
    """A recorded number as a float; anything else (text, an integer too large for a float, inf) counts 0."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return 0.0
    try:
        number = float(value)
    except OverflowError:
        return 0.0
    return number if number == number and abs(number) != float("inf") else 0.0


def run_metrics(run: Run, *, keep_split: bool = False) -> dict[str, Any]:
    """Per-run figures: accuracy, errors, mean usage and time per question (``keep_split``: see
    :func:`accuracy_by_subset`)."""
    records = run.records
    q = len(records) or 1
    usage: dict[str, float] = {}
    for record in records:
        for key, value in (record.get("usage") or {}).items():
            usage[key] = usage.get(key, 0.0) + _finite(value)
    seconds = sum(_finite(r.get("seconds")) for r in records)
    by_subset = accuracy_by_subset(run, keep_split=keep_split)
    return {
        "name": run.name, "path": str(run.path), "task": run.task, "split": run.config.get("split"),
        "mode": run.mode, "lm": run.config.get("lm_name") or run.config.get("lm"), "n": run.config.get("n"),
        "questions": len(records), "planned": run.config.get("questions"),
        "errors": sum(1 for r in records if r.get("error")), "truncated_bytes": run.truncated_bytes,
        "accuracy": {name: acc.as_dict() for name, acc in by_subset.items()},
        "requests_per_question": usage.get("requests", 0.0) / q,
        "tokens_per_question": (usage.get("prompt_tokens", 0.0) + usage.get("completion_tokens", 0.0)) / q,
        "prompt_tokens_per_question": usage.get("prompt_tokens", 0.0) / q,
        "completion_tokens_per_question": usage.get("completion_tokens", 0.0) / q,
        "cached_requests_per_question": usage.get("cached_requests", 0.0) / q,
        "cached_tokens_per_question": (usage.get("cached_prompt_tokens", 0.0)
                                       + usage.get("cached_completion_tokens", 0.0)) / q,
        "cost_usd": usage.get("cost_usd", 0.0), "seconds_per_question": seconds / q, "seconds_total": seconds,
        "calibration": calibration(run), "ties": tie_summary(run),
    }


def calibration(run: Run, n_bins: int = 5) -> dict[str, Any] | None:
    """How well the run's confidence predicts a right answer: the expected calibration error and
    the reliability bins, over answered questions (WikiTQ: judged by the ``binder`` evaluator,
    TabFact: ``correct``); None when no question was answered."""
    from binder_py.calibration import expected_calibration_error, reliability_bins

    judge = "binder" if "binder" in evaluator_names(run.task) else "correct"
    pairs = [(_finite(r.get("confidence")), bool(r.get(judge))) for r in run.records
             if not r.get("error") and r.get("prediction") is not None]
    if not pairs:
        return None
    confidences, correct = [c for c, _ in pairs], [y for _, y in pairs]
    return {"judged_by": judge, "answered": len(pairs),
            "ece": expected_calibration_error(confidences, correct, n_bins=n_bins),
            "bins": [vars(b) for b in reliability_bins(confidences, correct, n_bins=n_bins)]}


# --- the report --------------------------------------------------------------------------

@dataclass
class Report:
    runs: list[Run]
    metrics: list[dict[str, Any]]
    markdown: str
    plots: list[Path] = field(default_factory=list)
    curves: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    paired: list[PairedComparison] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {"runs": self.metrics, "accuracy_vs_candidates": self.curves,
                "paired": [c.as_dict() for c in self.paired], "plots": [str(p) for p in self.plots]}


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def _md_row(cells: Sequence[Any]) -> str:
    """One table row; every cell is escaped (recorded values may come from someone else)."""
    return "| " + " | ".join(markdown_text(c) for c in cells) + " |"


def _accuracy_cells(a: dict[str, Any] | None, task: str) -> str:
    """One subset's accuracies: "official / binder / semantic (questions)", TabFact "accuracy (questions)"."""
    if not a or not a["total"]:
        return "–"
    return " / ".join(_pct(a[f"{name}_accuracy"]) for name in evaluator_names(task)) + f" ({a['total']})"


def format_markdown(metrics: Sequence[dict[str, Any]], curves: dict[str, list[dict[str, Any]]] | None = None,
                    paired: Sequence[PairedComparison] = ()) -> str:
    wikitq = WIKITQ_EVALUATORS
    tabfact_too = any(task_profile(m["task"]).evaluator == "label" for m in metrics)
    # a TabFact run's one accuracy goes in the first evaluator's column, which then says so
    judged = [f"{wikitq[0]} (TabFact: accuracy)", *wikitq[1:]] if tabfact_too else list(wikitq)
    lines = ["## Runs", "",
             _md_row(["run", "task / split", "mode", "LM", "n", "questions", "errors", *judged,
                      "requests/q", "tokens/q", "cached req/q", "cached tok/q", "cost (USD)", "s/q"]),
             _md_row(["---"] * 16)]
    for m in metrics:
        acc = m["accuracy"]["all"]
        done = f"{m['questions']}" + (f" of {m['planned']}" if m.get("planned") and m["planned"] != m["questions"]
                                      else "")
        if not acc["total"]:
            accuracies = ["–"] * len(wikitq)
        elif task_profile(m["task"]).evaluator == "label":  # one accuracy, in the first column
            accuracies = [_pct(acc["correct_accuracy"])] + ["–"] * (len(wikitq) - 1)
        else:
            accuracies = [_pct(acc[f"{name}_accuracy"]) for name in wikitq]
        lines.append(_md_row([
            m["name"], f"{m['task']} / {m['split'] or '?'}", m["mode"], m["lm"] or "?",
            "–" if m["mode"] == "discriminate" else "?" if m["n"] is None else m["n"], done, m["errors"],
            *accuracies, f"{m['requests_per_question']:.1f}", f"{m['tokens_per_question']:,.0f}",
            f"{m['cached_requests_per_question']:.1f}", f"{m['cached_tokens_per_question']:,.0f}",
            f"{m['cost_usd']:.4f}", f"{m['seconds_per_question']:.1f}"]))
    cut = [m for m in metrics if m.get("truncated_bytes")]
    if cut:
        lines.append("")
    for m in cut:  # a killed eval, or one still writing: the question runs again when the eval is resumed
        lines.append(f"{m['name']}: the last line of results.jsonl is cut off ({m['truncated_bytes']:,} bytes: the "
                     "eval was killed or is still writing it) and is left out of every figure.")
    subsets = ["all"] + sorted({s for m in metrics for s in m["accuracy"] if s != "all"})
    lines += ["", "## Accuracy by subset", "",
              "Each WikiTQ cell: official / binder / semantic (questions); docs/RESULTS.md describes the three "
              "evaluators. TabFact has one accuracy.", "",
              _md_row(["run", "mode"] + subsets), _md_row(["---"] * (len(subsets) + 2))]
    for m in metrics:
        lines.append(_md_row([m["name"], m["mode"]] + [_accuracy_cells(m["accuracy"].get(s), m["task"])
                                                       for s in subsets]))
    if paired:
        lines += ["", "## Paired comparison (the questions both runs recorded)", "",
                  "Right in both, in one only, in neither; p: McNemar's exact test on the questions only one run "
                  "got right (the chance of a split at least this uneven if neither run were better).", "",
                  _md_row(["first", "second", "judged by", "questions", "both", "first only", "second only",
                           "neither", "accuracy first / second", "p"]), _md_row(["---"] * 10)]
        for c in paired:
            lines.append(_md_row([c.first, c.second, c.judged_by, c.questions, c.both, c.only_first, c.only_second,
                                  c.neither, f"{_pct(c.first_accuracy)} / {_pct(c.second_accuracy)}",
                                  f"{c.p_value:.3g}"]))
    if curves:
        width = max((len(c) for c in curves.values()), default=0)
        if width:
            task_of = {m["name"]: m["task"] for m in metrics}
            lines += ["", "## Accuracy against the number of voting candidates "
                          "(official / binder / semantic; TabFact: accuracy)", "",
                      "Recomputed from the recorded candidates: each question re-voted with its first k sampled "
                      "programs (no model calls).", "",
                      _md_row(["run"] + [f"k={i + 1}" for i in range(width)]), _md_row(["---"] * (width + 1))]
            for name, curve in curves.items():
                names = evaluator_names(task_of.get(name, "wikitq"))
                cells = [" / ".join(_pct(p[f"{e}_accuracy"]) for e in names) for p in curve]
                lines.append(_md_row([name] + cells + ["–"] * (width - len(cells))))
    tied = [m for m in metrics if m.get("ties")]
    if tied:
        lines += ["", "## Ties at the top of the vote", "",
                  "Questions whose top answers got the same vote weight; of those, the ties the model scored "
                  "(each tied answer given the table and question, docs/DISCRIMINATE.md), and how many of these "
                  "are right as answered and would have been with the earliest sample winning.", "",
                  _md_row(["run", "judged by", "ties", "scored by the model", "right, scored",
                           "right, earliest sample"]), _md_row(["---"] * 6)]
        for m in tied:
            t = m["ties"]
            lines.append(_md_row([m["name"], t["judged_by"], t["tied"], t["scored"], t["right"], t["right_unscored"]]))
    calibrated = [m for m in metrics if m.get("calibration")]
    if calibrated:
        lines += ["", "## Confidence against accuracy (answered questions)", "",
                  "Each cell: accuracy / mean confidence (questions) of the answers whose confidence falls in the "
                  "bin; ECE is the expected calibration error (0 is perfect).", ""]
        edges = [(b["lower"], b["upper"]) for b in calibrated[0]["calibration"]["bins"]]
        lines += [_md_row(["run", "judged by", "answered", "ECE"] + [f"{lo:.0%}–{hi:.0%}" for lo, hi in edges]),
                  _md_row(["---"] * (4 + len(edges)))]
        for m in calibrated:
            cal = m["calibration"]
            cells = [f"{_pct(b['accuracy'])} / {_pct(b['mean_confidence'])} ({b['count']})" if b["count"] else "–"
                     for b in cal["bins"]]
            lines.append(_md_row([m["name"], cal["judged_by"], cal["answered"], f"{cal['ece']:.3f}"] + cells))
    return "\n".join(lines) + "\n"


def report(run_dirs: Sequence[str | os.PathLike[str]], *, out: str | os.PathLike[str] | None = None,
           plots_dir: str | os.PathLike[str] | None = None) -> Report:
    """Compare run directories: the markdown (also written to ``out``), and PNG plots into ``plots_dir``."""
    if not run_dirs:
        raise BinderError("give at least one run directory")
    runs = load_runs(run_dirs)
    names = [r.name for r in runs]
    for run in runs:  # two runs with the same folder name get their parent's name too
        if names.count(run.name) > 1:
            run.name = f"{run.path.parent.name}/{run.name}"
    if len({r.name for r in runs}) < len(runs):  # x/a/r1 and y/a/r1: their paths
        for run in runs:
            run.name = str(run.path)
    # runs of several splits: each run's split is a subset column too (a dev run's "unsolvable-squall"
    # column beside an unsolvable-squall run's)
    several_splits = len({str(r.config.get("split")) for r in runs}) > 1
    metrics = [run_metrics(r, keep_split=several_splits) for r in runs]
    curves = {}
    for run in runs:
        configured = run.config.get("n")
        if run.records and (run.mode != "e2e" or (isinstance(configured, int) and configured > 1)):
            curves[run.name] = [{"k": k, **acc.as_dict()} for k, acc in accuracy_vs_candidates(run)]
    paired = compare_runs(runs)
    markdown = format_markdown(metrics, curves, paired)
    if out is not None:
        write_output_text(out, markdown, what="--out", example="report.md",
                          reads=[f for run in runs for f in run_files(run.path)])
    plots: list[Path] = []
    if plots_dir is not None:
        from binder_py.runs.plots import plot_accuracy_by_subset, plot_accuracy_vs_candidates, plot_reliability

        directory = output_directory(plots_dir, what="--plots")
        plots.append(plot_accuracy_by_subset(runs, metrics, directory / "accuracy_by_subset.png"))
        if curves:
            plots.append(plot_accuracy_vs_candidates(runs, metrics, curves, directory / "accuracy_vs_candidates.png"))
        if any(m.get("calibration") for m in metrics):
            plots.append(plot_reliability(runs, metrics, directory / "reliability.png"))
    return Report(runs=runs, metrics=metrics, markdown=markdown, plots=plots, curves=curves, paired=paired)


__all__ = ["Accuracy", "Report", "Run", "accuracy_by_subset", "accuracy_vs_candidates", "format_markdown",
           "load_run", "load_runs", "report", "revote", "run_metrics", "tie_summary", "vote_candidates"]
