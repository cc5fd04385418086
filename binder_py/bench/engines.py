"""The engine benchmark: the same evaluation on the local engine and on the Ray engine.

Both sides run ``binder-py eval``'s runner (:func:`binder_py.runs.run_eval`, binder mode,
n = 20) over the same questions, against the same loopback OpenAI-compatible server
(real HTTP, a fixed latency per request) answering with the macro benchmark's scripted
programs and neural answers (:mod:`binder_py.bench.macro`), at the same concurrency.
The questions are the ten scripted WikiTQ dev questions, repeated to the number asked for
(each copy has its own id, ``nt-305~2``…), so later copies can hit the neural cache.

Measured per side: wall time of the run, model requests, the neural cache's hit rate;
for Ray also its start-up: ``ray.init`` (a local Ray started here, with ``concurrency``
logical CPUs) and the warm-up (the first question on every worker: the worker process
starts, imports binder-py, builds its binder and forks its sandbox). Both sides are warmed
with one unmeasured question per concurrency slot at zero latency first. Then the two
engines run ``--repeats`` times each, alternating (local, Ray, Ray, local, …) so that a
change in the machine's load hits both alike; the medians are compared. The Ray engine also
times its own part of each question directly: from submitting the task to having its result,
less the question's own time in the worker (scheduling, shipping the table and the result,
the recorded answers and the neural answers).

    python -m binder_py.bench.engines --questions 50 --latency 0.3 --concurrency 4 --repeats 3
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from binder_py.engines.neural_share import hit_rate, model_answers


@dataclasses.dataclass
class EngineRun:
    engine: str
    questions: int
    seconds: float
    requests: int
    neural_hit_rate: float
    neural_model_answers: int
    neural_counts: dict[str, int]
    errors: int
    predictions: dict[str, Any]
    overheads: list[float] = dataclasses.field(default_factory=list)


def repeated_questions(count: int) -> list[Any]:
    """The ten scripted dev questions, repeated to ``count`` (copies get ids ``ID~2``, ``ID~3``…)."""
    from binder_py.bench.macro import load_examples

    base = load_examples()
    out = []
    for i in range(count):
        example = base[i % len(base)]
        copy = i // len(base) + 1
        out.append(example if copy == 1 else dataclasses.replace(example, id=f"{example.id}~{copy}"))
    return out


def responder_for(examples: list[Any], n: int) -> Any:
    from binder_py.bench.macro import Responder
    from binder_py.bench.questions import QUESTIONS

    scripted = {q.id: q for q in QUESTIONS}
    return Responder({e.question.strip().lower(): scripted[e.id.split("~")[0]] for e in examples}, n=n)


def run_engine(engine: str, examples: list[Any], out: Path, *, latency: float, concurrency: int, n: int = 20,
               ray_address: str | None = None) -> EngineRun:
    """One evaluation of ``examples`` on ``engine`` against a fresh loopback server."""
    from binder_py.lm.testserver import LoopbackServer
    from binder_py.runs import run_eval

    with LoopbackServer(responder=responder_for(examples, n), latency=latency) as server:
        spec = f"openai:gpt-4o-mini@{server.base_url}?concurrency=64"
        summary = run_eval("wikitq", "dev", out=out, mode="binder", lm=spec, n=n, examples=examples, cache=False,
                           concurrency=concurrency, progress=False, engine=engine, ray_address=ray_address)
        records = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
        return EngineRun(engine=engine, questions=summary.answered, seconds=summary.seconds - summary.startup_seconds,
                         requests=server.request_count, neural_hit_rate=hit_rate(summary.neural_counts),
                         neural_model_answers=model_answers(summary.neural_counts),
                         neural_counts=summary.neural_counts, errors=summary.errors,
                         predictions={r["id"]: r["prediction"] for r in records},
                         overheads=summary.engine_overheads)


def run(questions: int = 50, latency: float = 0.3, concurrency: int = 4, n: int = 20,
        repeats: int = 3) -> dict[str, Any]:
    """Both engines, warmed, ``repeats`` times each, alternating; returns the figures (and shuts
    down the Ray it started)."""
    import ray

    from binder_py.engines.ray_engine import WORKER_SETUP_HOOK

    examples = repeated_questions(questions)
    warm = examples[:concurrency]
    runs: dict[str, list[EngineRun]] = {"local": [], "ray": []}
    with tempfile.TemporaryDirectory(prefix="binder-bench-engines-") as tmp:
        root = Path(tmp)
        run_engine("local", warm, root / "local-warm", latency=0.0, concurrency=concurrency, n=n)
        started = time.perf_counter()
        ray.init(num_cpus=concurrency, include_dashboard=False, logging_level="WARNING",
                 runtime_env={"worker_process_setup_hook": WORKER_SETUP_HOOK})
        init_seconds = time.perf_counter() - started
        try:
            started = time.perf_counter()
            run_engine("ray", warm, root / "ray-warm", latency=0.0, concurrency=concurrency, n=n)
            warm_seconds = time.perf_counter() - started
            for repeat in range(repeats):
                order = ("local", "ray") if repeat % 2 == 0 else ("ray", "local")
                for engine in order:
                    runs[engine].append(run_engine(engine, examples, root / f"{engine}-{repeat}", latency=latency,
                                                   concurrency=concurrency, n=n))
        finally:
            ray.shutdown()
    local_s = statistics.median(r.seconds for r in runs["local"])
    ray_s = statistics.median(r.seconds for r in runs["ray"])
    overheads = [x for r in runs["ray"] for x in r.overheads]
    return {"questions": questions, "latency": latency, "concurrency": concurrency, "n": n, "repeats": repeats,
            "local": [dataclasses.asdict(r) for r in runs["local"]], "ray": [dataclasses.asdict(r) for r in runs["ray"]],
            "local_median_seconds": local_s, "ray_median_seconds": ray_s,
            "ray_init_seconds": init_seconds, "ray_warm_seconds": warm_seconds,
            "wall_difference_per_question_ms": 1000 * (ray_s - local_s) / questions,
            "ray_vs_local": ray_s / local_s if local_s else None,
            "task_overhead_ms": {"median": 1000 * statistics.median(overheads),
                                 "mean": 1000 * statistics.mean(overheads),
                                 "max": 1000 * max(overheads)} if overheads else None,
            "same_predictions": all(r.predictions == runs["local"][0].predictions
                                    for r in runs["local"] + runs["ray"])}


def markdown(result: dict[str, Any]) -> str:
    rows = [
        "| engine | run | wall (s) | model requests | neural cache hit rate | neural answers asked of the model "
        "| errors |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for engine in ("local", "ray"):
        for i, side in enumerate(result[engine], 1):
            rows.append(f"| {engine} | {i} | {side['seconds']:.2f} | {side['requests']} "
                        f"| {100 * side['neural_hit_rate']:.1f}% | {side['neural_model_answers']} | {side['errors']} |")
    over = result["task_overhead_ms"] or {}
    rows.append("")
    rows.append(f"Median wall: local {result['local_median_seconds']:.2f} s, Ray {result['ray_median_seconds']:.2f} s "
                f"(Ray / local {result['ray_vs_local']:.3f}×, {result['wall_difference_per_question_ms']:+.0f} ms per "
                f"question). Ray's own time per question (submission to result, less the question's time in the "
                f"worker): median {over.get('median', 0):.1f} ms, mean {over.get('mean', 0):.1f} ms, max "
                f"{over.get('max', 0):.1f} ms. Ray start-up: ray.init {result['ray_init_seconds']:.1f} s, warm-up of "
                f"the workers {result['ray_warm_seconds']:.1f} s. Same predictions on every run: "
                f"{result['same_predictions']}.")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m binder_py.bench.engines", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--questions", type=int, default=50)
    parser.add_argument("--latency", type=float, default=0.3, help="seconds per model request (default 0.3)")
    parser.add_argument("--concurrency", type=int, default=4, help="questions at once, both engines (default 4)")
    parser.add_argument("--n", type=int, default=20, help="candidates per question (default 20)")
    parser.add_argument("--repeats", type=int, default=3, help="measured runs per engine, alternating (default 3)")
    parser.add_argument("--json", dest="json_path", help="also write the figures as JSON here")
    args = parser.parse_args(argv)
    result = run(args.questions, args.latency, args.concurrency, args.n, args.repeats)
    if args.json_path:
        Path(args.json_path).write_text(json.dumps(result, indent=2))
    print(markdown(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
