"""``binder-py bench``: the performance benchmark (docs/BENCHMARKS.md).

Parts: ``macro`` (this pipeline against the original Binder strategy on WikiTQ dev
questions with scripted programs, over a loopback OpenAI-compatible server with a fixed
latency), ``eval`` (the same questions as one evaluation run of each strategy, 4 questions at
a time), ``sandbox`` (binder_py/bench/sandbox_overhead.py), ``scale`` (one ``f_col`` over
synthetic tables of growing size). The code lives in :mod:`binder_py.bench`.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from binder_py.errors import BinderError

PARTS = ("macro", "eval", "sandbox", "scale")


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("bench", help="measure requests, tokens, time and memory against the original Binder",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--parts", default=",".join(PARTS), help="comma-separated: macro,eval,sandbox,scale (default: all)")
    p.add_argument("--latency", type=float, default=0.3, help="seconds per model request (default 0.3)")
    p.add_argument("--questions", type=int, default=None, help="use the first K scripted questions (default: 10)")
    p.add_argument("--n", type=int, default=20, help="candidates sampled per question (default 20)")
    p.add_argument("--rows", default="1000,100000,1000000", help="scale: table sizes")
    p.add_argument("--distinct", default="100,10000", help="scale: distinct values of the f_col column")
    p.add_argument("--scale-backends", default="counting,lm", help="scale: counting and/or lm")
    p.add_argument("--sandbox-args", default="--repeats 30 --threads 4 --total 200",
                   help="arguments for python -m binder_py.bench.sandbox_overhead")
    p.add_argument("--json", dest="json_path", default=None, help="write the raw results as JSON here")
    p.add_argument("--markdown", dest="md_path", default=None, help="write the tables as Markdown here")
    p.set_defaults(func=run)


def _ints(text: str, option: str = "") -> tuple[int, ...]:
    """Comma-separated whole numbers of at least 1 (``option`` names them in the error)."""
    try:
        numbers = tuple(int(float(x)) for x in text.split(",") if x.strip())
    except (ValueError, OverflowError):
        raise BinderError(f"{option or 'expected'}: comma-separated numbers, got {text!r}") from None
    if not numbers or min(numbers) < 1:
        raise BinderError(f"{option or 'expected'}: comma-separated numbers of at least 1, got {text!r}")
    return numbers


def machine() -> str:
    cpu = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    ram = "?"
    try:
        kb = int(Path("/proc/meminfo").read_text().split("\n", 1)[0].split()[1])
        ram = f"{kb / 2**20:.1f} GiB"
    except (OSError, ValueError, IndexError):
        pass
    import pandas as pd

    return (f"{os.cpu_count()} CPUs ({cpu}), {ram} RAM, {platform.system()} {platform.release()}, "
            f"Python {platform.python_version()}, pandas {pd.__version__}")


def run_sandbox_part(args_text: str) -> dict[str, Any]:
    cmd = [sys.executable, "-m", "binder_py.bench.sandbox_overhead", *args_text.split()]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
    if proc.returncode != 0:
        raise BinderError(f"{' '.join(cmd)} failed: {proc.stderr.strip()[-2000:]}")
    return {"command": "python -m binder_py.bench.sandbox_overhead " + args_text, "output": proc.stdout.strip()}


def run(args: argparse.Namespace) -> int:
    parts = [p.strip() for p in args.parts.split(",") if p.strip()]
    unknown = set(parts) - set(PARTS)
    if unknown:
        raise BinderError(f"unknown part(s) {sorted(unknown)}; use {', '.join(PARTS)}")
    for name, value, least in (("--n", args.n, 1), ("--questions", args.questions, 1)):
        if value is not None and value < least:
            raise BinderError(f"{name} must be at least {least}, got {value}")
    if not 0 <= args.latency < float("inf"):
        raise BinderError(f"--latency is a finite number of seconds, 0 or more, got {args.latency}")
    if "scale" in parts:  # checked before the other parts run for minutes
        _ints(args.rows, "--rows")
        _ints(args.distinct, "--distinct")
    out: dict[str, Any] = {"machine": machine(), "argv": sys.argv[1:]}
    md: list[str] = [f"Machine: {out['machine']}", ""]

    def say(text: str) -> None:
        print(text, file=sys.stderr, flush=True)

    if "macro" in parts:
        from binder_py.bench import macro

        say(f"macro: {args.questions or len(macro.QUESTIONS)} question(s), n={args.n}, latency {args.latency} s")
        t0 = time.perf_counter()
        results = macro.run(latency=args.latency, limit=args.questions, n=args.n,
                            progress=lambda s, r: say(f"  {s:9s} {r.id:8s} {r.requests:4d} requests "
                                                      f"{r.seconds:6.2f} s  answer {r.answer!r}"))
        out["macro"] = macro.as_json(results, args.latency)
        md += ["## Macro: binder-py vs the original strategy", "", macro.markdown(results, args.latency), "",
               f"(macro part took {time.perf_counter() - t0:.0f} s)", ""]
    if "eval" in parts:
        from binder_py.bench import macro

        say(f"eval: the same questions as one evaluation run, 4 at a time, latency {args.latency} s")
        examples = macro.load_examples(args.questions)
        runs = [macro.run_eval_strategy(s, examples, latency=args.latency, n=args.n) for s in ("binder-py", "original")]
        out["eval"] = [vars(r) for r in runs]
        md += ["## Evaluation run: binder-py vs the original strategy", "", macro.eval_markdown(runs), ""]
    if "sandbox" in parts:
        say("sandbox: python -m binder_py.bench.sandbox_overhead " + args.sandbox_args)
        out["sandbox"] = run_sandbox_part(args.sandbox_args)
        md += ["## Sandbox", "", "```", out["sandbox"]["output"], "```", ""]
    if "scale" in parts:
        from binder_py.bench import scale

        backends = tuple(b.strip() for b in args.scale_backends.split(",") if b.strip())
        say(f"scale: rows {args.rows}, distinct {args.distinct}, backends {backends}")
        results_s = scale.run(sizes=_ints(args.rows, "--rows"), distincts=_ints(args.distinct, "--distinct"),
                              backends=backends,
                              progress=lambda r: say(f"  {r.rows:>9,} rows {r.distinct:>6,} distinct {r.backend:8s} "
                                                     f"{r.requests:5d} requests {r.seconds:6.2f} s ok={r.ok}"))
        from dataclasses import asdict

        out["scale"] = [asdict(r) for r in results_s]
        md += ["## Scale: one f_col", "", scale.markdown(results_s), ""]
    text = "\n".join(md)
    print(text)
    if args.md_path:
        Path(args.md_path).write_text(text + "\n", encoding="utf-8")
    if args.json_path:
        Path(args.json_path).write_text(json.dumps(out, indent=1, default=str) + "\n", encoding="utf-8")
    return 0
