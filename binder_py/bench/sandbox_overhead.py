"""Sandbox overhead: per-program cost of `Sandbox.run` against plain in-process
`exec` of the same programs, and throughput with a warm worker pool.

    python -m binder_py.bench.sandbox_overhead [--repeats 30] [--threads 4] [--total 200]
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import threading
import time

import numpy as np
import pandas as pd

from sandbox import Sandbox

PROGRAMS = [
    'df.groupby("team")["score"].sum().idxmax()',
    'df.loc[df["score"] > 50, "name"].tolist()',
    'df["score"].mean()',
    'df.sort_values("score").iloc[-1]["name"]',
    'df["name"].str.contains("a").sum()',
    'pd.to_datetime(df["born"]).dt.year.max()',
    'df["team"].value_counts().to_dict()',
    'df.pivot_table(index="team", values="score", aggfunc="mean")',
    'df["x"] = df["score"] * 2\ndf["x"].sum()',
    "def solve(table):\n    return len(table[table['score'] % 2 == 0])",
    'import re\n[re.sub(r"\\d", "", n) for n in df["name"]][:3]',
    'df.merge(df[["team"]].drop_duplicates(), on="team").shape[0]',
]


def make_table(rows: int = 200) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    return pd.DataFrame({
        "name": [f"name{i}a" for i in range(rows)],
        "team": rng.choice(["red", "blue", "green"], rows),
        "score": rng.integers(0, 100, rows),
        "born": pd.date_range("1980-01-01", periods=rows, freq="7D").astype(str),
    })


def plain_exec(program: str, df: pd.DataFrame) -> None:
    ns = {"df": df.copy(), "pd": pd, "np": np}
    exec(compile(program, "<plain>", "exec"), ns)  # noqa: S102 - benchmark baseline
    if "solve" in ns:
        ns["solve"](ns["df"])


def busy_cpu_seconds() -> float | None:
    """CPU seconds all processes of the machine have spent so far (``/proc/stat``), None elsewhere."""
    try:
        with open("/proc/stat") as stat:
            fields = [int(x) for x in stat.readline().split()[1:]]
    except OSError:
        return None
    idle = fields[3] + fields[4]  # idle, iowait
    return (sum(fields) - idle) / os.sysconf("SC_CLK_TCK")


def cpu_per_program(sb: Sandbox, df: pd.DataFrame, count: int) -> tuple[float, float | None]:
    """Median wall ms of ``count`` sandboxed runs with nothing between them, and the CPU ms the
    whole machine spent per run (parent, zygote, the worker, its replacement's fork and pages)."""
    time.sleep(0.5)  # let the pool settle
    before, wall = busy_cpu_seconds(), []
    for i in range(count):
        t0 = time.perf_counter()
        sb.run(PROGRAMS[i % len(PROGRAMS)], variables={"df": df})
        wall.append((time.perf_counter() - t0) * 1000)
    time.sleep(0.5)  # the last replacement worker gets ready (its pages count too)
    after = busy_cpu_seconds()
    cpu = None if before is None or after is None else (after - before) / count * 1000
    return statistics.median(wall), cpu


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=30)
    ap.add_argument("--threads", type=int, default=4)
    ap.add_argument("--total", type=int, default=200)
    ap.add_argument("--pool-size", type=int, default=2)
    ap.add_argument("--gap-ms", type=float, default=0.0,
                    help="pause before each sandboxed run (idle workers finish copying their pages ahead)")
    ap.add_argument("--back-to-back", type=int, default=120, metavar="N",
                    help="then N sandboxed runs with nothing between them: wall time and machine CPU per run")
    args = ap.parse_args()
    df = make_table()
    load0 = os.getloadavg()
    with Sandbox(pool_size=args.pool_size) as sb:
        for p in PROGRAMS:  # warm-up and correctness check
            out = sb.run(p, variables={"df": df})
            assert out.ok, (p, out.error)
        guards_only = Sandbox(mode="unsafe-inprocess")
        overheads, sandbox_ms, plain_ms, guard_ms = [], [], [], []
        for p in PROGRAMS:
            s_times, p_times, g_times = [], [], []
            for _ in range(args.repeats):
                t0 = time.perf_counter()
                guards_only.run(p, variables={"df": df})
                g_times.append((time.perf_counter() - t0) * 1000)
                t0 = time.perf_counter()
                plain_exec(p, df)
                p_times.append((time.perf_counter() - t0) * 1000)
                if args.gap_ms:
                    time.sleep(args.gap_ms / 1000)
                t0 = time.perf_counter()
                sb.run(p, variables={"df": df})
                s_times.append((time.perf_counter() - t0) * 1000)
            sandbox_ms.append(statistics.median(s_times))
            plain_ms.append(statistics.median(p_times))
            guard_ms.append(statistics.median(g_times))
            overheads.append(sandbox_ms[-1] - plain_ms[-1])

        lock = threading.Lock()
        counter = {"n": 0}

        def worker() -> None:
            i = 0
            while True:
                with lock:
                    if counter["n"] >= args.total:
                        return
                    counter["n"] += 1
                sb.run(PROGRAMS[i % len(PROGRAMS)], variables={"df": df})
                i += 1

        b2b_wall, b2b_cpu = cpu_per_program(sb, df, args.back_to_back) if args.back_to_back else (None, None)

        t0 = time.perf_counter()
        threads = [threading.Thread(target=worker) for _ in range(args.threads)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        elapsed = time.perf_counter() - t0

    print(f"load average before/after: {load0} / {os.getloadavg()}")
    print(f"machine: {os.cpu_count()} cores, python {sys.version.split()[0]}, pandas {pd.__version__}")
    print(f"programs: {len(PROGRAMS)}, repeats: {args.repeats}, table rows: {len(df)}")
    print(f"median plain exec per program:   {statistics.median(plain_ms):7.2f} ms")
    print(f"median guards only (in-process): {statistics.median(guard_ms):7.2f} ms")
    print(f"median sandboxed per program:    {statistics.median(sandbox_ms):7.2f} ms")
    print(f"median overhead per program:     {statistics.median(overheads):7.2f} ms")
    print(f"max per-program median overhead: {max(overheads):7.2f} ms")
    if b2b_wall is not None:
        cpu = "unknown (no /proc/stat)" if b2b_cpu is None else f"{b2b_cpu:.2f} ms"
        print(f"back to back, {args.back_to_back} runs: median {b2b_wall:.2f} ms a run; "
              f"machine CPU per run (all processes): {cpu}")
    print(f"throughput, {args.threads} threads, pool {args.pool_size}: "
          f"{args.total / elapsed:7.1f} programs/s ({args.total} programs in {elapsed:.2f} s)")


if __name__ == "__main__":
    main()
