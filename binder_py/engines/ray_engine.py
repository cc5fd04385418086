"""The Ray engine: each question is one Ray task; results stream back to the driver.

Why tasks and not Ray Data ``map_batches``: a question is a long, uneven unit of work
(0.1 s to minutes: 20 candidates, neural calls, sandbox runs) whose result must reach the
driver the moment it finishes, to be appended and fsynced to ``results.jsonl`` so a killed
driver loses only the questions in flight. Tasks give exactly that: ``ray.wait`` hands each
result back as it finishes, a bounded number are in flight (``concurrency``), and a task
whose worker dies is run again (``max_retries``). Ray Data pipelines batches for throughput,
holds finished rows in its operators' buffers and writes its own output files, none of which
the run format wants.

Each worker process builds, once per run (:class:`WorkerRecipe`), its own binder: its own
sandbox pool, its own model client (OpenAI-compatible: every request takes a lease from the
endpoint's cluster-wide budget, :mod:`binder_py.engines.budget`), and its own neural cache
(merged by the driver, :mod:`binder_py.engines.neural_share`). The client records into
memory; the task returns those writes with its result and the driver applies them to the
run's ``lm.sqlite`` (:mod:`binder_py.engines.recording`).

Ray is imported only inside functions (here and in :mod:`binder_py.engines.budget`): the rest of
binder-py runs without it.
"""

from __future__ import annotations

import os
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from binder_py.engines import check_ray_address, ray_address, require_ray, top_up
from binder_py.engines.budget import (BudgetLimits, ClusterRetryPolicy, RemoteLimiter, budget_actor,
                                      find_budget_actor)
from binder_py.engines.neural_share import (Entries, MergedNeuralCache, add_entries, cache_counts, cache_keys,
                                            new_entries)
from binder_py.engines.recording import CapturedRecording, Write, write_recording
from binder_py.errors import BinderError

#: a question's task is run again this many times when its worker dies (not when it raises)
DEFAULT_MAX_RETRIES = 3
#: the driver publishes the neural answers merged since its last snapshot at most this often
SNAPSHOT_SECONDS = 0.5
#: after this many deltas the driver publishes the whole merged cache as a new base (tasks carry the refs)
MAX_DELTAS = 64
#: what each worker process runs when it starts (see :func:`prepare_worker`)
WORKER_SETUP_HOOK = "binder_py.engines.ray_engine.prepare_worker"
#: environment variables a local Ray started by binder-py passes to its workers (model keys and endpoints)
FORWARDED_ENV = ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_API_VERSION", "AZURE_OPENAI_API_KEY",
                 "AZURE_OPENAI_ENDPOINT", "BINDER_LM", "BINDER_CACHE_DIR", "BINDER_DATA", "PYTHONPATH")


@dataclass(frozen=True)
class WorkerRecipe:
    """How a worker builds its binder, once per run.

    ``make_binder(lm)`` returns the binder; ``lm`` is the model the worker built from
    ``lm_spec`` (with the cluster budget and the captured recording), or ``None`` when
    ``lm_spec`` is ``None`` (a model object shipped inside ``make_binder``, or a replay).
    """

    key: str
    make_binder: Callable[[Any], Any]
    lm_spec: str | None = None
    cache: bool = True
    record: bool = False
    budget: BudgetLimits | None = None


@dataclass
class TaskOutput:
    """What a question's task sends back besides its result."""

    result: Any
    recording: list[Write] = field(default_factory=list)
    neural: Entries = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    worker: str = ""
    seconds: float = 0.0  # the job's own time in the worker
    task_seconds: float = 0.0  # the whole task in the worker (building the binder, the cache merge, included)


@dataclass
class _WorkerState:
    key: str
    binder: Any
    recording: CapturedRecording | None
    neural_version: int = 0


_STATE: _WorkerState | None = None
_STATE_LOCK = threading.Lock()


def prepare_worker() -> None:
    """Ray's ``worker_process_setup_hook`` for a Ray binder-py starts or joins: a new worker
    process imports the pipeline and the model client before its first question, so that
    time counts as start-up, not as the first question's."""
    import binder_py.lm.openai_backend  # noqa: F401 - the OpenAI client (0.6 s to import here)
    import binder_py.pipeline  # noqa: F401 - the stages, prompts, neural backends, sandbox client


def _build_lm(recipe: WorkerRecipe, recording: CapturedRecording | None) -> Any:
    from binder_py.lm import lm_from_spec

    limiter = retry = None
    if recipe.budget is not None:
        actor = find_budget_actor(recipe.budget.endpoint)
        limiter = RemoteLimiter(actor, recipe.budget.max_concurrency)
        retry = ClusterRetryPolicy(actor=actor, endpoint=recipe.budget.endpoint)
    lm = lm_from_spec(recipe.lm_spec, cache=recipe.cache, limiter=limiter, retry=retry)
    if recording is not None:
        lm.recorder = recording  # every answer used, cache hits included, as a local run's recorder gets them
        backend = lm.backend  # and the model, as LMClient registers it with its recorder (replay reads its API)
        recording.put_model(lm.name, backend.endpoint, backend.model, backend.context_window)
    return lm


def _worker_state(recipe: WorkerRecipe) -> _WorkerState:
    """This worker's binder for the run ``recipe.key`` (built on its first question)."""
    global _STATE
    with _STATE_LOCK:
        if _STATE is None or _STATE.key != recipe.key:
            if _STATE is not None:
                _STATE.binder.close()
            recording = CapturedRecording() if recipe.record and recipe.lm_spec is not None else None
            lm = _build_lm(recipe, recording) if recipe.lm_spec is not None else None
            _STATE = _WorkerState(recipe.key, recipe.make_binder(lm), recording)
        return _STATE


def _catch_up(cache: Any, state: _WorkerState, snapshot: list[Any]) -> None:
    """Add the driver's merged neural answers this worker has not seen: ``snapshot`` is
    ``[base version, base ref, [(version, delta ref), ...]]`` (empty before the first one)."""
    if not snapshot:
        return
    import ray

    base_version, base_ref, deltas = snapshot
    if state.neural_version < base_version:
        add_entries(cache, ray.get(base_ref))
        state.neural_version = base_version
    newer = [(version, ref) for version, ref in deltas if version > state.neural_version]
    for (version, _), entries in zip(newer, ray.get([ref for _, ref in newer])):
        add_entries(cache, entries)
        state.neural_version = version


def run_question(recipe: WorkerRecipe, work: Callable[[Any, Any], Any], item: Any,
                 snapshot: list[Any]) -> TaskOutput:
    """The body of a question's Ray task (also callable in-process, for tests)."""
    task_started = time.perf_counter()
    state = _worker_state(recipe)
    cache = state.binder.neural_cache
    _catch_up(cache, state, snapshot)
    before_keys, before_counts = cache_keys(cache), cache_counts(cache)
    started = time.perf_counter()
    result = work(state.binder, item)
    seconds = time.perf_counter() - started
    after = cache_counts(cache)
    output = TaskOutput(result=result, recording=state.recording.drain() if state.recording is not None else [],
                        neural=new_entries(cache, before_keys),
                        counts={k: after[k] - before_counts.get(k, 0) for k in after},
                        worker=f"{os.uname().nodename}:{os.getpid()}", seconds=seconds)
    output.task_seconds = time.perf_counter() - task_started
    return output


class RayEngine:
    """Run ``work(binder, item)`` for each item as Ray tasks, ``concurrency`` in flight,
    yielding ``(index, result)`` as each finishes (see the module docstring).

    ``address``: the cluster (``ray.init(address=...)``; ``None``: ``$RAY_ADDRESS`` or a
    new local Ray). ``recorder``: the run's ``lm.sqlite`` store that the workers' captured
    writes go to. ``lost(item, error)``: the result for a question whose worker died more
    than ``max_retries`` times (default: the error is raised).
    """

    name = "ray"

    def __init__(self, recipe: WorkerRecipe, concurrency: int, *, address: str | None = None,
                 recorder: Any = None, cpus_per_question: float = 1.0, max_retries: int = DEFAULT_MAX_RETRIES,
                 lost: Callable[[Any, BaseException], Any] | None = None):
        require_ray()
        self.recipe = recipe
        self.concurrency = max(1, concurrency)
        self.address = address
        self.recorder = recorder
        self.cpus_per_question = cpus_per_question
        self.max_retries = max_retries
        self.lost = lost
        self.merged = MergedNeuralCache()
        self._version = 0  # of the last neural snapshot
        self.startup_seconds = 0.0
        self.workers: set[str] = set()
        self.overheads: list[float] = []  # per question: submission to result, less the job's own time
        self.task_extras: list[float] = []  # of which in the worker, around the job
        self.absorb_seconds: list[float] = []  # the driver's part: recording and neural answers merged
        self._started_ray = False

    # --- connection ---------------------------------------------------------------------
    def connect(self) -> None:
        """Join the cluster (or start a local Ray sized for ``concurrency`` questions)."""
        import ray

        if ray.is_initialized():
            return
        started = time.perf_counter()
        runtime_env: dict[str, Any] = {"worker_process_setup_hook": WORKER_SETUP_HOOK}
        kwargs: dict[str, Any] = {"runtime_env": runtime_env}
        address = ray_address(self.address)
        check_ray_address(address)
        if address is None:
            # a cluster's workers get their keys from their own environment (not the job's, shown on the dashboard)
            runtime_env["env_vars"] = {name: os.environ[name] for name in FORWARDED_ENV if os.environ.get(name)}
            # questions mostly wait on the model: give the local Ray enough logical CPUs for them
            kwargs.update(num_cpus=max(os.cpu_count() or 1, int(self.concurrency * self.cpus_per_question + 0.999)),
                          include_dashboard=False)
            self._started_ray = True
        ray.init(address=address, logging_level="WARNING", **kwargs)
        self.startup_seconds = time.perf_counter() - started

    # --- the map --------------------------------------------------------------------------
    def run(self, work: Callable[[Any, Any], Any], items: Iterable[Any]) -> Iterator[tuple[int, Any]]:
        import ray
        from ray.exceptions import RayTaskError

        self.connect()
        if self.recipe.budget is not None:
            _, held = budget_actor(self.recipe.budget)
            if held != self.recipe.budget:
                print(f"binder-py: another run is using {held.endpoint} with other limits (concurrency "
                      f"{held.max_concurrency}, rpm {held.rpm}, tpm {held.tpm}); those hold for this run too",
                      file=sys.stderr)
        task = ray.remote(run_question).options(max_retries=self.max_retries, retry_exceptions=False,
                                                num_cpus=self.cpus_per_question)
        try:
            recipe_ref, work_ref = ray.put(self.recipe), ray.put(work)
        except Exception as error:  # noqa: BLE001 - pickling fails in many ways (locks, open files, clients)
            raise BinderError(f"the ray engine sends the model and settings to its workers, and these cannot be sent "
                              f"({type(error).__name__}: {str(error)[:200]}); give the model as an --lm spec "
                              "string, or use the local engine") from None
        snapshot: list[Any] = []
        published_at = 0.0
        inflight: dict[Any, tuple[int, Any, float]] = {}
        pending = iter(enumerate(items))
        try:
            while True:
                top_up(inflight, pending, self.concurrency,
                       lambda index, item: (task.remote(recipe_ref, work_ref, item, snapshot),
                                            (index, item, time.perf_counter())))
                if not inflight:
                    break
                done, _ = ray.wait(list(inflight), num_returns=1, timeout=0.5)
                for ref in done:
                    index, item, submitted = inflight.pop(ref)
                    try:
                        output: TaskOutput = ray.get(ref)
                    except RayTaskError as error:  # the job raised: raise what it raised
                        cause = getattr(error, "cause", None)
                        raise (cause if isinstance(cause, BaseException) else error) from None
                    except ray.exceptions.RayError as error:  # its worker died max_retries + 1 times
                        if self.lost is None:
                            raise
                        yield index, self.lost(item, error)
                        continue
                    self.overheads.append(time.perf_counter() - submitted - output.seconds)
                    self.task_extras.append(output.task_seconds - output.seconds)
                    absorbing = time.perf_counter()
                    self._absorb(output)
                    self.absorb_seconds.append(time.perf_counter() - absorbing)
                    yield index, output.result
                if self.merged.has_pending and time.monotonic() - published_at >= SNAPSHOT_SECONDS:
                    snapshot = self._publish(snapshot)
                    published_at = time.monotonic()
        except BaseException:
            for ref in inflight:
                ray.cancel(ref)
            raise

    def _publish(self, snapshot: list[Any]) -> list[Any]:
        """The next snapshot: the answers merged since the last one as a new delta, or, after
        :data:`MAX_DELTAS` deltas, the whole merged cache as a new base."""
        import ray

        self._version += 1
        delta = self.merged.take_pending()
        if not snapshot or len(snapshot[2]) >= MAX_DELTAS:
            return [self._version, ray.put(self.merged.entries), []]
        return [snapshot[0], snapshot[1], [*snapshot[2], (self._version, ray.put(delta))]]

    def _absorb(self, output: TaskOutput) -> None:
        if self.recorder is not None and output.recording:
            write_recording(self.recorder, output.recording)
        self.merged.merge(output.neural, output.counts)
        self.workers.add(output.worker)

    def neural_counts(self) -> dict[str, int]:
        """The workers' neural cache hits and misses, summed over the questions so far."""
        return dict(self.merged.counts)

    def close(self) -> None:
        """Shut down a local Ray this engine started (a cluster it joined is left running)."""
        if self._started_ray:
            import ray

            ray.shutdown()
            self._started_ray = False


def new_run_key() -> str:
    """A key for one run's :class:`WorkerRecipe` (workers rebuild their binder when it changes)."""
    return uuid.uuid4().hex




def recipe_for(make_binder: Callable[[Any], Any], lm_arg: Any, *, cache: bool, record: bool) -> WorkerRecipe:
    """The recipe of a run whose model is ``lm_arg``: an ``--lm`` spec is built in each worker
    (with the endpoint's cluster-wide budget, recorded when ``record``); a model object or a
    ``replay:`` spec is left to ``make_binder``."""
    from binder_py.engines.budget import limits_for_spec
    from binder_py.lm import parse_spec

    spec = lm_arg if isinstance(lm_arg, str) else None
    if spec is not None and parse_spec(spec).provider == "replay":
        spec = None
    return WorkerRecipe(key=new_run_key(), make_binder=make_binder, lm_spec=spec, cache=cache,
                        record=record and spec is not None, budget=limits_for_spec(spec) if spec else None)


__all__ = ["DEFAULT_MAX_RETRIES", "RayEngine", "TaskOutput", "WorkerRecipe", "new_run_key", "recipe_for", "run_question"]
