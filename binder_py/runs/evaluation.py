"""``binder-py eval``: answer every question of a benchmark split, one durable JSON line each.

A run directory holds ``config.json`` (the settings, model, versions, data directory, start
time), ``results.jsonl`` (one line per finished question, appended, flushed and fsynced as
it finishes) and ``lm.sqlite`` (every model response the run used, cache hits included), so
``--lm replay:DIR`` reruns it offline with the same answers. Starting again with the same
``--out`` resumes: finished ids are skipped. Settings that change answers must match the
directory's config (else ``force=True`` moves the old results aside and starts over).

The questions run on an *engine* (:mod:`binder_py.engines`): threads of this process
(``local``) or Ray tasks on a cluster (``ray``, docs/SCALE.md). Either way the results come
back to this process, which writes the same run directory.
"""

from __future__ import annotations

import datetime as _dt
import os
import platform
import random
import sys
import time
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from binder_py.calibration import calibrator_identity
from binder_py.engines import Engine, check_concurrency, check_engine
from binder_py.errors import BinderError
from binder_py.evaluate.written import as_written, used_written
from binder_py.jsonable import to_jsonable
from binder_py.lm.client import ReplayLM
from binder_py.lm.spec import open_store
from binder_py.lm.types import LMConfigError
from binder_py.neural.batching import PLAN_PACKING, BatchingBackend, PlanWaves, waves_can_batch
from binder_py.discriminate.answers import can_score_answers
from binder_py.pipeline.settings import SAMPLING_MODES, sampling_is_constrained, ties_are_scored
from binder_py.runs.records import (CONFIG_FILE, RECORDING_FILE, RESULTS_FILE, ResultsWriter, RunLock, result_ids,
                                    config_differences, read_config, read_results, write_config)
from binder_py.runs.judgements import evaluator_names, record_scores, score_prediction
from binder_py.runs.replaying import recorded_waves as read_recorded_waves, replay_misses, wave_groups
from binder_py.safefiles import output_directory
from binder_py.tasks import BENCHMARK_TASKS, task_profile

TASKS = BENCHMARK_TASKS


class EvalInterrupted(KeyboardInterrupt):
    """Ctrl-C during :func:`run_eval`, raised once the finished lines are safely written:
    ``summary`` says how many there are (the command prints it and how to resume)."""

    def __init__(self, summary: "RunSummary"):
        super().__init__()
        self.summary = summary


@dataclass
class RunSummary:
    """What :func:`run_eval` did: counts over the whole run directory (resumed lines included)."""

    out: Path
    config: dict[str, Any]
    total: int = 0  # questions selected (after --ids/--limit)
    finished: int = 0  # lines in results.jsonl for the selected questions
    skipped: int = 0  # already finished when this invocation started
    answered: int = 0  # finished by this invocation
    errors: int = 0
    correct: dict[str, int] = field(default_factory=dict)  # by evaluator: official, binder, semantic (TabFact: correct)
    truncated_bytes: int = 0
    interrupted: bool = False
    seconds: float = 0.0
    usage: dict[str, float] = field(default_factory=dict)
    engine: str = "local"
    startup_seconds: float = 0.0  # the engine's start (connecting to or starting Ray)
    neural_counts: dict[str, int] = field(default_factory=dict)  # neural cache hits and misses, this invocation
    engine_overheads: list[float] = field(default_factory=list)  # Ray: seconds per question the engine added

    def accuracy(self, name: str) -> float:
        """Share of finished questions judged correct by evaluator ``name``."""
        return self.correct.get(name, 0) / self.finished if self.finished else 0.0

    def accuracy_text(self, digits: int = 1) -> str:
        """"official 40.0%, binder 45.0%, semantic 46.0%" (TabFact: "accuracy 60.0%")."""
        names = evaluator_names(str(self.config.get("task") or "wikitq"))
        return ", ".join(f"{'accuracy' if name == 'correct' else name} {100 * self.accuracy(name):.{digits}f}%"
                         for name in names)

    def format(self) -> str:
        acc = self.accuracy_text()
        tokens = int(self.usage.get("prompt_tokens", 0) + self.usage.get("completion_tokens", 0))
        cached = int(self.usage.get("cached_prompt_tokens", 0) + self.usage.get("cached_completion_tokens", 0))
        return (f"{self.out}: {self.finished}/{self.total} questions finished ({self.skipped} from before, "
                f"{self.answered} now, {self.errors} with errors); {acc}; {int(self.usage.get('requests', 0))} "
                f"model requests, {tokens} tokens (+{cached} cached), ${self.usage.get('cost_usd', 0.0):.4f}; "
                f"{self.seconds:.0f} s this time"
                + (f" on Ray ({self.startup_seconds:.1f} s to start)" if self.engine == "ray" else ""))


def select_examples(examples: Sequence[Any], *, limit: int | None = None, ids: Sequence[str] | None = None,
                    sample: int | None = None, sample_seed: int = 0) -> list[Any]:
    """``ids`` (kept in the split's order), then a seeded random ``sample`` of that many
    (kept in the split's order; the same seed always draws the same questions), then the first
    ``limit`` — deterministic."""
    chosen = list(examples)
    if ids is not None:
        wanted = {str(i) for i in ids}
        known = {e.id for e in chosen}
        missing = list(dict.fromkeys(str(i) for i in ids if str(i) not in known))  # an id given twice: once
        if missing:
            raise BinderError(f"{len(missing)} id(s) from --ids are not in this split, e.g. {missing[:3]}; "
                              "check the split (--split) and the ids file")
        chosen = [e for e in chosen if e.id in wanted]
    if sample is not None:
        if sample < 1:
            raise BinderError(f"--sample must be at least 1, got {sample}")
        if sample > len(chosen):
            where = "the ids of --ids" if ids is not None else "this split"
            raise BinderError(f"--sample {sample} is more than the {len(chosen)} question(s) of {where}; "
                              f"use --sample {len(chosen)} or less, or leave --sample out for all of them")
        drawn = set(random.Random(sample_seed).sample(range(len(chosen)), min(sample, len(chosen))))
        chosen = [e for i, e in enumerate(chosen) if i in drawn]
    if limit is not None:
        if limit < 1:
            raise BinderError(f"--limit must be at least 1, got {limit}")
        chosen = chosen[:limit]
    return chosen


def read_ids_file(path: str | os.PathLike[str]) -> list[str]:
    """One id per line; blank lines and ``#`` comments are ignored."""
    p = Path(path)
    if p.is_dir():
        raise BinderError(f"--ids {p} is a directory; give a file with one question id per line")
    if not p.is_file():
        raise BinderError(f"--ids {p}: no such file (one question id per line)")
    try:
        text = p.read_text(encoding="utf-8-sig")  # a BOM (Excel, Notepad) is not part of the first id
    except UnicodeDecodeError:
        raise BinderError(f"--ids {p} is not UTF-8 text; give a file with one question id per line") from None
    ids = [i for i in (line.split("#", 1)[0].strip() for line in text.splitlines()) if i]
    if not ids:  # would select nothing, and the run would report "0/0 questions finished"
        raise BinderError(f"--ids {p} holds no question ids (one per line; blank lines and # comments are skipped)")
    return ids


def _versions() -> dict[str, str]:
    from importlib import metadata

    out = {"python": platform.python_version()}
    for dist in ("binder-py", "pandas", "numpy", "openai", "xllamacpp"):
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            pass
    try:
        import subprocess

        root = Path(__file__).resolve().parents[2]
        commit = subprocess.run(["git", "-C", str(root), "rev-parse", "--short", "HEAD"], capture_output=True,
                                text=True, timeout=5).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=5).stdout.strip()
        if commit:
            out["git"] = commit + ("+dirty" if dirty else "")
    except (OSError, subprocess.SubprocessError):
        pass
    return out


def code_fingerprint() -> str:
    """A hash of the source that shapes prompts and answers (``binder_py``, ``sandbox``, ``prompts``).

    Replay answers only requests identical to the recorded ones, so a replay after the code
    changed (a prompt template, a stop sequence) can miss; the runner warns when this differs.
    """
    import hashlib

    root = Path(__file__).resolve().parents[2]
    digest = hashlib.sha256()
    for folder in ("binder_py", "sandbox", "prompts"):
        base = root / folder
        if not base.is_dir():
            continue
        for path in sorted(base.rglob("*")):
            if path.is_file() and path.suffix in (".py", ".json", ".jsonl", ".txt", ".md") \
                    and "__pycache__" not in path.parts:
                digest.update(str(path.relative_to(root)).encode())
                digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).astimezone().isoformat(timespec="seconds")


def _spec_text(lm: Any) -> str | None:
    if lm is None:
        from binder_py.lm import default_spec

        return default_spec()
    return lm if isinstance(lm, str) else None


def _question_record(example: Any, split: str, data_dir: Path | None) -> dict[str, Any]:
    table = example.table_path
    if data_dir is not None:
        try:
            table = str(Path(example.table_path).resolve().relative_to(data_dir.resolve()))
        except ValueError:
            pass
    return {"id": example.id, "dataset": example.dataset, "split": split, "subsets": sorted(example.subsets),
            "question": example.question, "title": example.title, "table": table, "gold": list(example.gold),
            "gold_canon": list(example.gold_canon) if example.gold_canon is not None else None}


def error_record(example: Any, error: BaseException, *, task: str, split: str, data_dir: Path | None,
                 seconds: float = 0.0) -> dict[str, Any]:
    """The results line of a question that failed with ``error`` (no prediction, judged wrong)."""
    record = _question_record(example, split, data_dir)
    record.update({"prediction": None, "error": f"{type(error).__name__}: {error}", "candidates": [],
                   "seconds": seconds, "finished_at": _now()})
    record.update(score_prediction(task, example.question, example.gold, None, example.gold_canon))
    return record


def answer_example(binder: Any, example: Any, *, task: str, split: str, data_dir: Path | None) -> dict[str, Any]:
    """One results line for ``example`` (an ``error`` line when it fails; :class:`LMConfigError` propagates)."""
    record = _question_record(example, split, data_dir)
    started = time.perf_counter()
    as_written_in_table = task_profile(task).numbers_as_written  # "10,031", not 10031 (evaluate/written.py)
    try:
        table = example.load_table()
        table_writes = example.written_numbers() if as_written_in_table else {}
        answer = binder.ask(table, example.question, example.title, question_id=example.id)
    except LMConfigError:
        raise
    except Exception as error:  # noqa: BLE001 - recorded on the line, the run goes on
        return error_record(example, error, task=task, split=split, data_dir=data_dir,
                            seconds=time.perf_counter() - started)
    data = answer.to_json()
    value = answer.value
    written = used_written(table_writes, [value, *(c.get("value") for c in data["candidates"])])
    value = as_written(value, written)
    record["prediction"] = as_written(data["value"], written)
    if written:
        record["written_numbers"] = written
    record.update(score_prediction(task, example.question, example.gold, value, example.gold_canon))
    calls = [call for c in data["candidates"] for call in (c.get("run") or {}).get("calls", [])]
    record.update({
        "error": None, "confidence": data["confidence"], "lm": data["lm"], "neural": data["neural"],
        "mode": data["mode"], "candidates": data["candidates"], "distribution": data["distribution"],
        "neural_calls": {"calls": len(calls), "programs_with_calls": sum(1 for c in data["candidates"]
                                                                         if c.get("has_neural_calls"))},
        "usage": data["usage"], "timings": data["timings"], "warnings": data["warnings"], "prompt": data["prompt"],
        "seconds": time.perf_counter() - started, "finished_at": _now(),
    })
    misses = replay_misses([data["candidates"], data["warnings"]])
    if misses:  # not the recorded run's answer: a failed question (no prediction), as when its programs' request
        # misses; the candidates stay on the line
        got = repr(record["prediction"])
        got = got if len(got) <= 200 else got[:200] + " …"
        record.update(score_prediction(task, example.question, example.gold, None, example.gold_canon))
        record["prediction"] = None
        record["error"] = (f"LMReplayMiss: {len(misses)} request(s) of this question are not in the recording (a "
                           f"program's neural call, a plan or a score), so the answer the replay got without them "
                           f"({got}) may not be the recorded run's; the first: {misses[0]}")
    return to_jsonable(record)


def run_eval(task: str, split: str | None = None, *, out: str | os.PathLike[str], mode: str = "binder",
             lm: Any = None, neural: Any = None, n: int | None = None, seed: int | None = 0,
             limit: int | None = None, ids: Sequence[str] | None = None, sample: int | None = None,
             sample_seed: int | None = None, data_dir: str | os.PathLike[str] | None = None,
             concurrency: int | None = None, force: bool = False, retry_errors: bool = False,
             progress: bool = True, vote: str | None = None, shots: int | None = None, cache: bool = True,
             examples: Sequence[Any] | None = None, command: Sequence[str] | None = None,
             on_record: Callable[[dict[str, Any]], None] | None = None,
             extra_settings: Mapping[str, Any] | None = None, engine: str = "local",
             ray_address: str | None = None) -> RunSummary:
    """Run (or resume) an evaluation into the directory ``out``; see the module docstring.

    ``lm`` is an ``--lm`` spec (recorded into ``out/lm.sqlite``) or a :class:`LanguageModel`
    object (tests; not recorded). ``examples`` replaces loading ``task``/``split`` from the
    data directory. Per-question failures become lines with an ``error``; an
    :class:`LMConfigError` (bad key, unknown model) stops the run at once; ``KeyboardInterrupt``
    stops it after cancelling the questions not started (finished lines are kept) and comes out
    as :class:`EvalInterrupted`, which carries the run's summary.
    ``engine="ray"`` runs the questions as Ray tasks (``ray_address``: the cluster; docs/SCALE.md).
    """
    from binder_py.ask import Binder

    if task not in BENCHMARK_TASKS:
        raise BinderError(f"unknown task {task!r}; use one of {', '.join(BENCHMARK_TASKS)}")
    if sample_seed is not None and sample is None:  # it would draw nothing: the first questions ran
        raise BinderError(f"--sample-seed {sample_seed} needs --sample K, the seeded sample of K questions it draws; "
                          "add --sample K, or leave --sample-seed out")
    sample_seed = sample_seed or 0
    if ids is not None:  # an id given twice selects its question once, and is counted once
        ids = list(dict.fromkeys(str(i) for i in ids))
    check_engine(engine)
    if concurrency is not None:
        check_concurrency(concurrency)
    if engine == "ray":
        from binder_py.engines import check_ray_address, require_ray

        require_ray()  # before anything is read or written
        check_ray_address(ray_address)
    elif ray_address is not None:
        raise BinderError("--ray-address needs --engine ray")
    profile = task_profile(task)
    out = Path(out).expanduser()
    if out.exists() and not out.is_dir():  # before any model loads
        raise BinderError(f"--out {out} is a file, not a directory; give a run directory (new or existing)")
    spec = _spec_text(lm)
    replayed: Path | None = None
    replayed_config: dict[str, Any] = {}
    if spec is not None and spec.startswith("replay:"):
        replayed = Path(spec[len("replay:"):]).expanduser()
        if replayed.resolve() == out.resolve():
            raise BinderError(f"--out {out} is the directory being replayed; write the replay to a new --out")
        if not (replayed / RECORDING_FILE).exists() and not replayed.suffix == ".sqlite":
            raise BinderError(f"--lm {spec}: {replayed / RECORDING_FILE} does not exist; replay a directory written "
                              "by 'binder-py eval --out DIR' with a live model")
        replayed_config = (read_config(replayed) if replayed.is_dir() else None) or {}
        recorded_mode = replayed_config.get("mode")
        if recorded_mode and recorded_mode != mode:  # said under --quiet too
            print(f"binder-py eval: warning: --mode {mode} differs from the recorded run's {recorded_mode}: the "
                  f"requests differ from the recorded ones and replay misses; give --mode {recorded_mode}",
                  file=sys.stderr)
        # settings that default from the model (n, shots) default from the recorded run instead, so
        # the replayed requests are the recorded ones
        recorded_n = replayed_config.get("n") if replayed_config.get("mode") == mode and mode in SAMPLING_MODES \
            else None
        recorded_shots = replayed_config.get("shots_effective")
        for option, given, recorded in (("--n", n, recorded_n), ("--shots", shots, recorded_shots)):
            if given is not None and recorded is not None and int(given) != int(recorded):  # said under --quiet too
                print(f"binder-py eval: warning: {option} {given} differs from the recorded run's {recorded}: the "
                      f"requests differ from the recorded ones and replay misses; leave {option} out to take the "
                      "recorded value", file=sys.stderr)
        if n is None and recorded_n:
            n = int(recorded_n)
        if shots is None and recorded_shots is not None:  # (a zero-shot run too)
            shots = int(recorded_shots)
        recorded_wave = int(replayed_config.get("plan_wave") or 0)
        if engine == "ray" and recorded_wave > 1:  # said under --quiet too
            print(f"binder-py eval: warning: {replayed} packed the plan prompts of each wave of {recorded_wave} "
                  "questions into shared requests (the local engine with a model server); the Ray engine asks "
                  "each question's plan alone, so those requests miss: replay it with --engine local",
                  file=sys.stderr)
        recorded_code = replayed_config.get("code")
        if recorded_code and recorded_code != code_fingerprint():  # said under --quiet too: not progress
            print(f"binder-py eval: warning: the code changed since {replayed} was recorded (prompts or request "
                  "parameters may differ, and replay then misses); replay with the recorded version "
                  f"({replayed_config.get('versions', {}).get('git', '?')}) for exact answers", file=sys.stderr)
    resolved_data: Path | None = None
    if examples is None:
        from binder_py.datasets import DATASETS, load_dataset, resolve_data_dir

        split = split or DATASETS[task][0]
        resolved_data = resolve_data_dir(data_dir, task)
        examples = load_dataset(task, split, resolved_data)
    split = split or "custom"
    selected = select_examples(examples, limit=limit, ids=ids, sample=sample, sample_seed=sample_seed)
    if replayed is not None and replayed.is_dir():
        _warn_unrecorded(selected, replayed, replayed_config)

    settings: dict[str, Any] = {"task": task, "mode": mode, "seed": seed}
    for key, value in (("n", n), ("vote", vote), ("num_shots", shots)):
        if value is not None:
            settings[key] = value
    settings.update(extra_settings or {})
    if replayed_config.get("shots_effective"):
        # the prompt layout as recorded (runs recorded before core exemplars and row caps had neither)
        settings.setdefault("core_shots", int(replayed_config.get("core_shots_effective") or 0))
        settings.setdefault("table_rows", int(replayed_config.get("table_rows_effective") or 0))
    if replayed is not None:
        # programs as long as recorded (runs recorded before the embedded model's cap allowed the task's 512)
        settings.setdefault("max_tokens", int(replayed_config.get("max_tokens_effective") or 512))
        # value linking as recorded (runs recorded before the link stage had none)
        settings.setdefault("link_literals", replayed_config.get("link_effective") is True)
        # total rows as recorded (runs recorded before total rows were set aside kept them)
        settings.setdefault("keep_total_row", replayed_config.get("keep_total_row_effective", True) is True)
        # ties scored as recorded (runs recorded before tie scoring broke ties by the earliest sample)
        settings.setdefault("score_ties", replayed_config.get("score_ties_effective") is True)
    record_dir = out if spec is not None and not spec.startswith("replay:") else None
    RunLock(out).check_free()  # before the model loads (and its recording opens): a run in use is refused now
    if record_dir is not None and (out / RECORDING_FILE).exists():  # the models this run records from now
        open_store(out / RECORDING_FILE).begin_run()  # on (not an earlier run's of this process): what --force keeps
    binder = Binder(lm=lm if lm is not None else spec, neural=neural, cache=cache, record_dir=record_dir,
                    progress=progress, **settings)
    model = binder.lm  # built now: a bad spec or key fails before anything runs
    neural_backend = binder.neural  # and the neural backend (a bad oracle file fails now too)
    binder.progress = False  # the models were built showing their loading unless --quiet; the questions
    # report through the run's own bar
    if isinstance(model, ReplayLM) and replayed_config.get("lm_api"):
        model.with_api(replayed_config["lm_api"])  # prompts are built as for the recorded model
    vote_strategy = profile.vote_strategy(vote, mode=mode)
    config = {
        "format": 1, "task": task, "split": split, "mode": mode, "lm": spec or model.name, "lm_name": model.name,
        "neural": neural if isinstance(neural, str) or neural is None else type(neural).__name__,
        "n": profile.effective_n(model, n, mode=mode), "seed": seed, "vote": vote_strategy, "shots": shots,
        "shots_effective": profile.effective_shots(model, shots), "lm_api": model.capabilities.api,
        "core_shots_effective": len(profile.effective_core(model, settings.get("core_shots"), mode=mode)),
        "table_rows_effective": profile.effective_table_rows(model, settings.get("table_rows")),
        "max_tokens_effective": profile.effective_max_tokens(model, settings.get("max_tokens")),
        "calibrator_effective": calibrator_identity(binder.settings.calibrator),
        # what answers the neural calls, by content where it is a file (an oracle file edited under the
        # same name answers otherwise): the backend's cache id; not for a backend given as an object (a
        # Python function's cache id is its address, another in every process), compared by its type as before
        "neural_effective": neural_backend.cache_id if isinstance(neural, str) or neural is None else None,
        # --unconstrained changes nothing for a model that takes no grammar: compared as what it did
        "constrained_effective": sampling_is_constrained(binder.settings.constrained, model.capabilities.grammar),
        "link_effective": binder.settings.link_literals,
        "keep_total_row_effective": binder.settings.keep_total_row,
        # a tie at the top of the vote scored by the model (binder_py/pipeline/tiebreak.py): asked for, and possible
        "score_ties_effective": ties_are_scored(binder.settings.score_ties, mode, can_score_answers(model)),
        "neural_weight": profile.effective_neural_weight(model, binder.settings.neural_weight), "cache": cache, "limit": limit,
        "settings": dict(extra_settings or {}), "sample": sample, "sample_seed": sample_seed if sample is not None else None,
        "ids": list(ids) if ids is not None else None, "questions": len(selected), "split_size": len(examples),
        "data_dir": str(resolved_data) if resolved_data is not None else None,
        "recording": str(out / RECORDING_FILE) if record_dir is not None else None,
        "command": list(command) if command is not None else None, "versions": _versions(),
        "code": code_fingerprint(),
        "host": {"cpus": os.cpu_count(), "platform": platform.platform()}, "started_at": _now(),
    }

    config["engine"] = engine
    if concurrency is None:
        concurrency = 1 if model.capabilities.embedded else 4
    # local engine: the plan prompts of each wave of questions share requests (neural/batching.py);
    # the waves depend on nothing but the order, so a replay, with the recorded wave size, sends
    # the recorded prompts (runs recorded before waves have none)
    plan_wave = 0
    plan_packing = PLAN_PACKING
    recorded_waves: dict[str, list[str]] = {}  # a replay: each question's wave as its line recorded it
    if engine == "local" and waves_can_batch(binder.neural):
        plan_wave = int(replayed_config.get("plan_wave") or 0) if replayed is not None else concurrency
        if plan_wave > 1 and replayed is not None and replayed.is_dir():
            recorded_waves = read_recorded_waves(replayed)
        # a wave's questions run at once: as many as the largest (a run resumed with another --concurrency)
        concurrency = max(concurrency, plan_wave, *map(len, recorded_waves.values()))
    if replayed is not None and isinstance(binder.neural, BatchingBackend):
        # packed as recorded: runs recorded before version 2 packed in order, 6 tokens an answer
        plan_packing = int(replayed_config.get("plan_packing") or 1)
        binder.neural.pack_by_answer_kind = plan_packing >= 2
    config["plan_wave"] = plan_wave if plan_wave > 1 else 0
    config["plan_packing"] = plan_packing
    job = partial(answer_example, task=task, split=split, data_dir=resolved_data)
    runner = _local_or_ray(engine, binder, max(1, concurrency), lm_arg=lm if lm is not None else spec,
                           neural=neural, cache=cache, settings=settings, record=record_dir is not None,
                           replay_api=replayed_config.get("lm_api") if isinstance(model, ReplayLM) else None,
                           recorder_path=out / RECORDING_FILE if record_dir is not None else None,
                           ray_address=ray_address,
                           lost=partial(error_record, task=task, split=split, data_dir=resolved_data))

    output_directory(out, what="--out")
    lock = RunLock(out).acquire()
    waves = (partial(PlanWaves, binder.neural, size=config["plan_wave"], first_fit=plan_packing >= 2,
                     settle_on_plan=plan_packing >= 3)
             if config["plan_wave"] else None)
    try:
        return _run_locked(out, config, selected, runner, job, task, split, force, retry_errors, progress,
                           on_record, waves, recorded_waves)
    finally:
        lock.release()
        runner.close()


def build_worker_binder(lm: Any, *, lm_arg: Any, neural: Any, cache: bool, settings: Mapping[str, Any],
                        replay_api: str | None = None) -> Any:
    """A Ray worker's binder for an evaluation: ``lm`` (built by the worker) or else ``lm_arg``."""
    from binder_py.ask import Binder

    binder = Binder(lm=lm if lm is not None else lm_arg, neural=neural, cache=cache, progress=False, **settings)
    if replay_api and isinstance(binder.lm, ReplayLM):
        binder.lm.with_api(replay_api)  # prompts are built as for the recorded model, as in the driver
    return binder


def _local_or_ray(engine: str, binder: Any, concurrency: int, *, lm_arg: Any, neural: Any, cache: bool,
                  settings: Mapping[str, Any], record: bool, replay_api: str | None, recorder_path: Path | None,
                  ray_address: str | None, lost: Callable[[Any, BaseException], Any]) -> Engine:
    if engine == "local":
        from binder_py.engines.local import LocalEngine

        return LocalEngine(binder, concurrency)
    from binder_py.engines.ray_engine import RayEngine, recipe_for

    make = partial(build_worker_binder, lm_arg=lm_arg, neural=neural, cache=cache, settings=dict(settings),
                   replay_api=replay_api)
    recipe = recipe_for(make, lm_arg, cache=cache, record=record)
    return RayEngine(recipe, concurrency, address=ray_address,
                     recorder=open_store(recorder_path) if recorder_path is not None else None, lost=lost)


@dataclass
class ShippedExample:
    """An example with its table loaded by the driver, so Ray workers need not see the data
    directory (a table that fails to load is left to the worker, which records the error)."""

    example: Any
    table: Any = None
    written: dict[str, str] | None = None

    def load_table(self) -> Any:
        return self.example.load_table() if self.table is None else self.table.copy()

    def written_numbers(self) -> dict[str, str]:
        return self.example.written_numbers() if self.written is None else dict(self.written)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name in ("example", "table", "written"):
            raise AttributeError(name)
        return getattr(self.example, name)


def ship_example(example: Any) -> ShippedExample:
    try:
        return ShippedExample(example, example.load_table(), example.written_numbers())
    except Exception:  # noqa: BLE001 - the worker meets the same error and records it on the line
        return ShippedExample(example)


def _run_locked(out: Path, config: dict[str, Any], selected: list[Any], runner: Engine,
                job: Callable[[Any, Any], dict[str, Any]], task: str, split: str, force: bool, retry_errors: bool,
                progress: bool, on_record: Callable[[dict[str, Any]], None] | None,
                waves: Callable[..., PlanWaves] | None = None,
                recorded_waves: Mapping[str, Sequence[str]] | None = None) -> RunSummary:
    old = read_config(out)
    recoded = None  # the code of the run's earlier answers, when it is not this code
    results_path = out / RESULTS_FILE
    selected_ids = {str(e.id) for e in selected}
    found = None  # results.jsonl as read for a resume (read once; repaired below only if cut off)
    if old is not None:
        diffs = config_differences(old, config)
        if diffs and not force:
            raise BinderError(f"{out} holds a run with other settings ({'; '.join(diffs)}); resuming would mix "
                              "answers. Use a new --out, or --force to move the old results aside and start over")
        # a resume may extend the selection (--limit 20, then --limit 50), not leave finished questions
        # outside it: config.json would describe a selection results.jsonl does not hold ("4 of 1")
        found = read_results(results_path)
        outside = sorted({str(r["id"]) for r in found.records} - selected_ids)
        if outside and not force:
            shown = ", ".join(outside[:3]) + (", ..." if len(outside) > 3 else "")
            redrawn = old.get("sample") is not None and old.get("sample") != config.get("sample")
            raise BinderError(
                f"{out} holds {len(outside)} finished question(s) outside this selection ({shown}; it was "
                f"{_selection_text(old)}, now {_selection_text(config)}); resuming would mix the two. Use the "
                "same or a larger selection"
                + (" (a --sample of another size may be another draw, not this one grown: keep --sample "
                   f"{old['sample']} and raise --limit, or draw the largest sample once)" if redrawn else "")
                + ", a new --out, or --force to move the old results aside and start over")
        if diffs or outside:
            _move_aside(out)
            old = found = None
        else:
            config["started_at"] = old.get("started_at", config["started_at"])
            config["resumed_at"] = list(old.get("resumed_at", [])) + [_now()]
            # the code of each invocation: after an upgrade, the lines before and after were answered by other code
            earlier = old.get("codes") or ([old["code"]] if old.get("code") else [])
            config["codes"] = list(dict.fromkeys([*earlier, config["code"]]))
            if old.get("code") and old["code"] != config["code"] and found.records:
                recoded = old["code"]
    elif results_path.exists() and results_path.stat().st_size:
        if not force:  # results of settings nobody knows: never taken as this run's
            raise BinderError(f"{results_path} exists but {out / CONFIG_FILE} does not; use a new --out or --force "
                              "(moves the old results aside)")
        _move_aside(out)
    elif force and (out / RECORDING_FILE).exists() and open_store(out / RECORDING_FILE).holds_responses():
        # results deleted to start over, or a run killed before its first line: the recording is still the
        # earlier run's, and a replay of this run would read its answers
        _move_aside(out)
    write_config(out, config)

    if found is None or found.truncated_bytes:
        found = read_results(results_path, repair=True)
    if found.truncated_bytes:
        print(f"binder-py eval: dropped a cut-off last line ({found.truncated_bytes} bytes) in {results_path}; "
              "that question runs again", file=sys.stderr)
    finished = {str(r["id"]): r for r in found.records if str(r["id"]) in selected_ids}
    if retry_errors:
        finished = {k: r for k, r in finished.items() if not r.get("error")}
    todo = [e for e in selected if e.id not in finished]
    if recoded is not None and todo and finished:
        print(f"binder-py eval: warning: the code changed since {out} was last run (fingerprint {recoded}, now "
              f"{config['code']}): the {len(finished)} question(s) answered before may have been answered otherwise "
              "now (config.json lists each code under 'codes'); for one code throughout, use a new --out or --force",
              file=sys.stderr)
    planned: PlanWaves | None = None
    if waves is not None:  # the questions to run now, in waves (a resumed run: the ones left; a replay: as recorded)
        groups = wave_groups([str(e.id) for e in todo], config["plan_wave"], recorded_waves or {})
        rank = {qid: i for i, qid in enumerate(qid for group in groups for qid in group)}
        todo.sort(key=lambda e: rank[str(e.id)])  # each wave's questions one after the other
        planned = waves([str(e.id) for e in todo], groups=groups)
        job = planned.wrap(job, key_of=lambda item: str(item.id))

    summary = RunSummary(out=out, config=config, total=len(selected), skipped=len(finished),
                         truncated_bytes=found.truncated_bytes, engine=runner.name)
    usage_keys = ("requests", "prompt_tokens", "completion_tokens", "cached_requests", "cached_prompt_tokens",
                  "cached_completion_tokens", "cost_usd")
    summary.usage = {k: 0.0 for k in usage_keys}

    def count(record: dict[str, Any]) -> None:
        summary.finished += 1
        summary.errors += bool(record.get("error"))
        for name, ok in record_scores(record, task).items():
            summary.correct[name] = summary.correct.get(name, 0) + ok
        for key in usage_keys:
            summary.usage[key] += float((record.get("usage") or {}).get(key, 0) or 0)

    for record in finished.values():
        count(record)

    from tqdm import tqdm

    bar = tqdm(total=len(selected), initial=len(finished), desc=f"{task} {split} {config['mode']}", unit="q",
               file=sys.stderr, disable=not progress, dynamic_ncols=True)

    def postfix() -> None:
        if not progress:
            return
        u = summary.usage
        tokens = u["prompt_tokens"] + u["completion_tokens"]
        bar.set_postfix_str(f"{summary.accuracy_text(0)} | {tokens / 1000:.1f}k tok, {int(u['requests'])} req, "
                            f"${u['cost_usd']:.3f} | err {summary.errors}", refresh=True)

    postfix()
    started = time.perf_counter()
    items = (ship_example(e) for e in todo) if runner.name == "ray" else iter(todo)
    results = runner.run(job, items)
    try:
        with ResultsWriter(results_path) as writer:
            for _, record in results:  # LMConfigError / KeyboardInterrupt stop the run
                if planned is not None:  # its wave, so that a replay packs its plan prompts as they were
                    record = {**record, "plan_wave": planned.members(str(record["id"]))}
                writer.append(record)
                count(record)
                summary.answered += 1
                if on_record is not None:
                    on_record(record)
                bar.update(1)
                postfix()
    except BaseException as error:
        results.close()  # cancels the questions not started
        summary.interrupted = True
        bar.close()
        _finish(summary, runner, started)
        if isinstance(error, KeyboardInterrupt) and not isinstance(error, EvalInterrupted):
            raise EvalInterrupted(summary) from error
        raise
    bar.close()
    _finish(summary, runner, started)
    return summary


def _warn_unrecorded(selected: Sequence[Any], replayed: Path, recorded: dict[str, Any]) -> None:
    """Say when questions of the selection are not among those the replayed run answered: their
    requests were never recorded, so each becomes an error line (a replay without the recorded
    run's --split or selection)."""
    try:
        answered = result_ids(replayed / RESULTS_FILE)
    except (BinderError, OSError):  # a line too long to read, a symlink: only this warning is given up;
        return  # the replay reads lm.sqlite, not results.jsonl
    if not answered:
        return
    outside = [str(e.id) for e in selected if str(e.id) not in answered]
    if outside:
        print(f"binder-py eval: warning: {len(outside)} of the {len(selected)} selected question(s) (e.g. "
              f"{outside[0]}) are not among the {len(answered)} that {replayed} answered (--split "
              f"{recorded.get('split') or '?'} {_selection_text(recorded)}); nothing was recorded for them, so "
              "their replay misses: give the recorded run's --split and selection", file=sys.stderr)


def _move_aside(out: Path) -> None:
    """``--force``: the run directory's results and config renamed ``NAME.replaced-STAMP``, kept, not read;
    the old run's recording copied to ``lm.sqlite.replaced-STAMP`` and taken out of ``lm.sqlite`` (open
    already: this run's models are recording into it), so that a replay of this run replays only it."""
    stamp = _dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    # a second --force within the same second must not replace the first one's moved-aside files
    suffix, count = stamp, 1
    while any((out / f"{name}.replaced-{suffix}").exists() for name in (RESULTS_FILE, CONFIG_FILE, RECORDING_FILE)):
        count += 1
        suffix = f"{stamp}-{count}"
    for name in (RESULTS_FILE, CONFIG_FILE):
        if (out / name).exists():
            os.replace(out / name, out / f"{name}.replaced-{suffix}")
    if (out / RECORDING_FILE).exists():
        open_store(out / RECORDING_FILE).move_aside(out / f"{RECORDING_FILE}.replaced-{suffix}")


def _selection_text(config: dict[str, Any]) -> str:
    """How a run chose its questions, as its command said it (``--sample 3 --sample-seed 11``)."""
    parts = []
    if config.get("ids") is not None:
        parts.append(f"--ids ({len(config['ids'])} ids)")
    if config.get("sample") is not None:
        parts.append(f"--sample {config['sample']} --sample-seed {config.get('sample_seed') or 0}")
    if config.get("limit") is not None:
        parts.append(f"--limit {config['limit']}")
    return " ".join(parts) or "the whole split"


def _finish(summary: RunSummary, runner: Engine, started: float) -> None:
    summary.seconds = time.perf_counter() - started
    summary.startup_seconds = runner.startup_seconds
    summary.neural_counts = runner.neural_counts()
    summary.engine_overheads = list(runner.overheads)


__all__ = ["EvalInterrupted", "RunSummary", "TASKS", "answer_example", "build_worker_binder", "error_record", "read_ids_file",
           "run_eval", "select_examples"]
