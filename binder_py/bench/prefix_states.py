"""A new process's first question, with evaluated prompt prefixes kept on disk and without.

    python -m binder_py.bench.prefix_states [--lm local] [--rounds 3] [--json OUT]

Every ``binder-py ask`` is a new process with a new model worker, whose slots start empty: before
:mod:`binder_py.lm.prefix_states` it evaluated the parse prompt's instruction and exemplars and the
row demonstrations again each time. This bench asks the quick start's question
(``examples/shirts.csv``) with ``binder-py ask --no-cache --seed 1`` in new processes, alternating
``BINDER_PREFIX_STATES=0`` (nothing kept) and ``=1`` (kept, in a scratch cache folder that one
unmeasured ask and one more have filled first), ``--rounds`` times each, and prints each run's wall
time, its sample stage's seconds and its answer. Both sides share the machine's load, run for run.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from binder_py.lm.store import default_cache_dir

ROOT = Path(__file__).resolve().parents[2]
QUESTION = "which is the best-selling shirt made in North America and with no chemicals?"


def ask(lm: str, cache_dir: Path, keep: bool) -> dict[str, Any]:
    env = {**os.environ, "BINDER_CACHE_DIR": str(cache_dir), "BINDER_PREFIX_STATES": "1" if keep else "0"}
    command = [sys.executable, "-m", "binder_py", "ask", str(ROOT / "examples" / "shirts.csv"), QUESTION,
               "--lm", lm, "--no-cache", "--seed", "1", "--json", "--quiet"]
    started = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - started
    try:
        record = json.loads(done.stdout)
    except json.JSONDecodeError:
        return {"seconds": round(seconds, 1), "error": done.stderr[-500:]}
    return {"seconds": round(seconds, 1), "sample_seconds": round(record["timings"].get("sample", 0.0), 1),
            "answer": record.get("value")}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m binder_py.bench.prefix_states", description=__doc__)
    parser.add_argument("--lm", default="local")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as scratch:
        cache = Path(scratch)
        models = default_cache_dir() / "models"
        (cache / "models").mkdir()
        for model in models.glob("*.gguf*"):  # the assembled, verified model files, linked not copied
            (cache / "models" / model.name).symlink_to(model)
        for _ in range(2):  # note the prefixes, then save them
            ask(args.lm, cache, keep=True)
        runs: dict[str, list[dict[str, Any]]] = {"not kept": [], "kept": []}
        for _ in range(args.rounds):
            runs["not kept"].append(ask(args.lm, cache, keep=False))
            runs["kept"].append(ask(args.lm, cache, keep=True))
        states = sorted((cache / "prefix-states").rglob("*.state"))
        sizes = [p.stat().st_size for p in states]
        shutil.rmtree(cache / "prefix-states", ignore_errors=True)
    summary = {side: {"median_seconds": statistics.median(r["seconds"] for r in rs),
                      "median_sample_seconds": statistics.median(r.get("sample_seconds", 0.0) for r in rs)}
               for side, rs in runs.items()}
    result = {"lm": args.lm, "load_average": os.getloadavg(), "runs": runs, "summary": summary,
              "states": len(states), "state_megabytes": round(sum(sizes) / 1e6, 1)}
    print(json.dumps(result, indent=1))
    if args.json:
        args.json.write_text(json.dumps(result, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
