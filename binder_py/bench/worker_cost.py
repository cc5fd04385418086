"""What a program pays to reach its worker, and an ``f_col`` over many distinct values.

    python -m binder_py.bench.worker_cost [--rows 1000000] [--repeats 15]

* **Table hand-off**: the median time of ``Sandbox.run("len(df)")`` with a table of ``--rows``
  rows (a text column of 10,000 distinct values and an integer column, as in
  :mod:`binder_py.bench.scale`) minus the same with a 100-row table, through shared memory
  (the default, :mod:`sandbox.handoff`) and through the socket (``shared_memory=False``),
  measured alternately in one run.
* **Many distinct values**: ``df["flag"] = f_col(...)`` over 100,000 distinct values with an
  instant callable backend (every row "yes", answered at C speed), through :func:`binder_py.language.execute` in a sandbox with the
  bridge preloaded: the median wall time.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

import pandas as pd


def _median_ms(run: Callable[[], Any], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        times.append((time.perf_counter() - start) * 1000.0)
    return statistics.median(times)


def handoff_ms(rows: int, repeats: int) -> dict[str, float]:
    """Median hand-off cost (ms) of a ``rows``-row table, shared memory and socket, side by side."""
    from binder_py.bench.scale import make_table
    from sandbox import Sandbox

    big, small = make_table(rows, 10_000), make_table(100, 100)
    out: dict[str, list[float]] = {"shared memory": [], "socket": []}
    with Sandbox(pool_size=2) as shared, Sandbox(pool_size=2, shared_memory=False) as through_socket:
        for box in (shared, through_socket):
            for df in (small, big):
                outcome = box.run("len(df)", variables={"df": df})
                assert outcome.ok and outcome.value == len(df), outcome.error
        for _ in range(3):  # alternate, so that a change in load hits both alike
            for name, box in (("shared memory", shared), ("socket", through_socket)):
                big_ms = _median_ms(lambda b=box: b.run("len(df)", variables={"df": big}), repeats)
                small_ms = _median_ms(lambda b=box: b.run("len(df)", variables={"df": small}), repeats)
                out[name].append(big_ms - small_ms)
    return {name: statistics.median(values) for name, values in out.items()} | {
        "table MB": float(big.memory_usage(deep=True).sum()) / 2**20}


def many_distinct_s(distinct: int, repeats: int) -> float:
    """Median seconds of one ``f_col`` over ``distinct`` distinct values (instant backend)."""
    from binder_py.bench.scale import PROGRAM, make_table
    from binder_py.language import execute
    from binder_py.neural import CallableBackend, NeuralAnswer, NeuralCache
    from sandbox import Sandbox

    df = make_table(distinct, distinct)
    # instant: every row "yes" at C speed, so the time is binder-py's (the scale benchmark's
    # counting backend hashes every key in Python, about 0.1 s for 100,000 keys by itself)
    backend = CallableBackend(lambda request: NeuralAnswer(answers=dict.fromkeys(request.keys, "yes")))
    backend.name = backend.cache_id = "instant"
    # the bridge preloaded, spelt out (not binder_py.language.worker.PRELOAD) so that this also runs
    # against a binder-py from before that name
    with Sandbox(preload=("binder_py.language.worker.bridge",)) as sandbox:
        first = execute(PROGRAM, df, neural=backend, sandbox=sandbox, cache=NeuralCache())
        assert first.ok and first.value == int(df["value"].sum()), first.error
        return _median_ms(lambda: execute(PROGRAM, df, neural=backend, sandbox=sandbox, cache=NeuralCache()),
                          repeats) / 1000.0


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--distinct", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--parts", default="handoff,fcol",
                        help="handoff, fcol or both (fcol alone also runs against an older binder-py: "
                             "PYTHONPATH=OLD python binder_py/bench/worker_cost.py --parts fcol)")
    args = parser.parse_args(argv)
    parts = {p.strip() for p in args.parts.split(",")}
    load = os.getloadavg()
    hand = handoff_ms(args.rows, args.repeats) if "handoff" in parts else None
    fcol = many_distinct_s(args.distinct, max(3, args.repeats // 3)) if "fcol" in parts else None
    print(f"load average before/after: {load} / {os.getloadavg()}")
    print(f"machine: {os.cpu_count()} cores, python {sys.version.split()[0]}, pandas {pd.__version__}")
    if hand is not None:
        print(f"table hand-off, {args.rows:,} rows ({hand['table MB']:.1f} MB): shared memory "
              f"{hand['shared memory']:.1f} ms, socket {hand['socket']:.1f} ms (median of 3 alternating medians "
              f"of {args.repeats})")
    if fcol is not None:
        print(f"f_col over {args.distinct:,} distinct values, instant backend: {fcol:.3f} s (median)")


if __name__ == "__main__":  # pragma: no cover
    main()
