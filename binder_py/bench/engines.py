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
with one unmeasured question per concurrency slot at zero latency first.

    python -m binder_py.bench.engines --questions 50 --latency 0.3 --concurrency 4
"""

from __future__ import annotations

import argparse
import dataclasses
import json
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
                         predictions={r["id"]: r["prediction"] for r in records})


def run(questions: int = 50, latency: float = 0.3, concurrency: int = 4, n: int = 20) -> dict[str, Any]:
    """Local then Ray, each warmed first; returns the figures (and shuts the Ray it started down)."""
    import ray

    examples = repeated_questions(questions)
    warm = examples[:concurrency]
    with tempfile.TemporaryDirectory(prefix="binder-bench-engines-") as tmp:
        root = Path(tmp)
        run_engine("local", warm, root / "local-warm", latency=0.0, concurrency=concurrency, n=n)
        local = run_engine("local", examples, root / "local", latency=latency, concurrency=concurrency, n=n)
        started = time.perf_counter()
        ray.init(num_cpus=concurrency, include_dashboard=False, logging_level="WARNING")
        init_seconds = time.perf_counter() - started
        try:
            started = time.perf_counter()
            run_engine("ray", warm, root / "ray-warm", latency=0.0, concurrency=concurrency, n=n)
            warm_seconds = time.perf_counter() - started
            remote = run_engine("ray", examples, root / "ray", latency=latency, concurrency=concurrency, n=n)
        finally:
            ray.shutdown()
    same = local.predictions == remote.predictions
    return {"questions": questions, "latency": latency, "concurrency": concurrency, "n": n,
            "local": dataclasses.asdict(local), "ray": dataclasses.asdict(remote),
            "ray_init_seconds": init_seconds, "ray_warm_seconds": warm_seconds,
            "overhead_per_question_ms": 1000 * (remote.seconds - local.seconds) / questions,
            "ray_vs_local": remote.seconds / local.seconds if local.seconds else None,
            "same_predictions": same}


def markdown(result: dict[str, Any]) -> str:
    local, remote = result["local"], result["ray"]
    rows = [
        "| engine | wall (s) | per question (ms) | model requests | neural cache hit rate | neural answers asked "
        "of the model | errors |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for side in (local, remote):
        rows.append(f"| {side['engine']} | {side['seconds']:.2f} | {1000 * side['seconds'] / result['questions']:.0f} "
                    f"| {side['requests']} | {100 * side['neural_hit_rate']:.1f}% | {side['neural_model_answers']} "
                    f"| {side['errors']} |")
    rows.append("")
    rows.append(f"Ray / local: {result['ray_vs_local']:.3f}× ({result['overhead_per_question_ms']:+.0f} ms per "
                f"question); Ray start-up: ray.init {result['ray_init_seconds']:.1f} s, warm-up of the workers "
                f"{result['ray_warm_seconds']:.1f} s; same predictions: {result['same_predictions']}.")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m binder_py.bench.engines", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--questions", type=int, default=50)
    parser.add_argument("--latency", type=float, default=0.3, help="seconds per model request (default 0.3)")
    parser.add_argument("--concurrency", type=int, default=4, help="questions at once, both engines (default 4)")
    parser.add_argument("--n", type=int, default=20, help="candidates per question (default 20)")
    parser.add_argument("--json", dest="json_path", help="also write the figures as JSON here")
    args = parser.parse_args(argv)
    result = run(args.questions, args.latency, args.concurrency, args.n)
    if args.json_path:
        Path(args.json_path).write_text(json.dumps(result, indent=2))
    print(markdown(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
