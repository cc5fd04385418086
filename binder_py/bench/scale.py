"""The scale benchmark: one ``f_col`` over synthetic tables of growing size.

Each table has a text column ``city`` with a fixed number of distinct values and an
integer column ``value``; the program is::

    df["flag"] = f_col("Is the city in Europe?", "city")
    int(df[df["flag"]]["value"].sum())

It runs through :func:`binder_py.language.execute` in the real sandbox (the table is
handed to a forked worker, the bridge computes the context rows there) with

* a counting callable backend: rows and requests the backend receives, time, memory;
* the LM backend over the loopback OpenAI-compatible server at zero latency, run in a
  process of its own: the model requests and rows in prompts.

Every measurement runs in a fresh process (``python -m binder_py.bench.scale --one ROWS
DISTINCT BACKEND``), with its own sandbox, so that no figure depends on what ran before it.

Memory: the parent's peak RSS during the run above its RSS before (``VmHWM`` after
resetting it through ``/proc/self/clear_refs``), plus the shared memory it wrote the table
into for the worker (:mod:`sandbox.handoff`; it is not in the parent's RSS but it is the
parent's doing); and the worker's peak RSS (``VmHWM`` of the zygote's children, sampled
every few milliseconds; the table's mapped pages count once touched) above the idle
worker's RSS; both against the table's own size (``df.memory_usage(deep=True).sum()``).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import threading
import time
import zlib
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

PROGRAM = 'df["flag"] = f_col("Is the city in Europe?", "city")\nint(df[df["flag"]]["value"].sum())'
QUESTION = "Is the city in Europe?"


def make_table(rows: int, distinct: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    distinct = min(distinct, rows)
    pool = np.array([f"city {i:06d}" for i in range(distinct)], dtype=object)
    picks = np.concatenate([np.arange(distinct), rng.integers(0, distinct, rows - distinct)])
    rng.shuffle(picks)
    return pd.DataFrame({"city": pool[picks], "value": rng.integers(0, 1000, rows)})


def _europe(key: str) -> str:
    return "yes" if zlib.crc32(key.encode()) % 2 == 0 else "no"


def expected_answer(df: pd.DataFrame) -> int:
    flags = df["city"].map(lambda c: _europe(c.lower()) == "yes")
    return int(df.loc[flags, "value"].sum())


# ----------------------------------------------------------------------------- memory probes
def _status_kb(pid: int | str, field: str) -> int:
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def _data_kb(pid: int | str) -> int:
    return _status_kb(pid, "RssAnon") + _status_kb(pid, "RssShmem")


def reset_peak_rss() -> bool:
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        return True
    except OSError:
        return False


class WorkerPeak:
    """Samples the RSS of the sandbox zygote's children (its forked workers) while a run
    lasts: ``extra_kb`` is the largest growth of one worker over its RSS while idle
    (pandas, numpy and the bridge are already loaded in the idle worker)."""

    def __init__(self, zygote_pid: int | None, interval: float = 0.003):
        self.zygote = zygote_pid
        self.interval = interval
        self.idle_kb: dict[str, int] = {pid: _status_kb(pid, "VmRSS") for pid in self._children()}
        self.peak_kb: dict[str, int] = {}
        #: the same for data only: anonymous memory + shared memory (the mapped table), without the
        #: file pages (code of pandas, numpy ...) a run first touches, which the page cache shares
        self.idle_data_kb: dict[str, int] = {pid: _data_kb(pid) for pid in self.idle_kb}
        self.peak_data_kb: dict[str, int] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    @property
    def extra_kb(self) -> int:
        return max([self.peak_kb.get(pid, 0) - idle for pid, idle in self.idle_kb.items()] + [0])

    @property
    def extra_data_kb(self) -> int:
        return max([self.peak_data_kb.get(pid, 0) - idle for pid, idle in self.idle_data_kb.items()] + [0])

    @property
    def idle_of_busiest_kb(self) -> int:
        if not self.idle_kb:
            return 0
        return max(self.idle_kb.items(), key=lambda kv: self.peak_kb.get(kv[0], 0) - kv[1])[1]

    def _sample(self) -> None:
        for pid in self.idle_kb:
            rss = max(_status_kb(pid, "VmRSS"), _status_kb(pid, "VmHWM") if pid in self.peak_kb else 0)
            if rss:
                self.peak_kb[pid] = max(self.peak_kb.get(pid, 0), rss)
            data = _data_kb(pid)
            if data:
                self.peak_data_kb[pid] = max(self.peak_data_kb.get(pid, 0), data)

    def _children(self) -> list[str]:
        try:
            with open(f"/proc/{self.zygote}/task/{self.zygote}/children") as fh:
                return fh.read().split()
        except OSError:
            return []

    def _loop(self) -> None:
        while not self._stop.is_set():
            self._sample()
            self._stop.wait(self.interval)

    def __enter__(self) -> WorkerPeak:
        if self.zygote:
            self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()
        self._sample()


# ----------------------------------------------------------------------------- one measurement
@dataclass
class ScaleResult:
    backend: str
    rows: int
    distinct: int
    table_mb: float
    requests: int
    rows_sent: int
    original_rows_sent: int  # computed: every row, in chunks of 50
    original_requests: int
    seconds: float
    parent_peak_mb: float | None
    worker_peak_mb: float | None
    worker_idle_mb: float | None
    worker_data_mb: float | None  # peak growth of anonymous + shared memory only (sampled)
    ok: bool
    correct: bool | None
    error: str | None = None


def _counting_backend() -> tuple[Any, dict[str, int]]:
    from binder_py.neural import CallableBackend, NeuralAnswer

    seen = {"requests": 0, "rows": 0}
    lock = threading.Lock()

    def answer(request: Any) -> Any:
        with lock:
            seen["requests"] += 1
            seen["rows"] += len(request.rows)
        return NeuralAnswer(answers={k: _europe(k) for k in request.keys})

    backend = CallableBackend(answer)
    backend.name = backend.cache_id = "counting"
    return backend, seen


class ServerProcess:
    """The loopback model server in a process of its own (spawned), so that the parent's memory
    figure is binder-py's alone; ``seen`` fills in with its request and row counts at ``stop``."""

    def __init__(self) -> None:
        import multiprocessing

        context = multiprocessing.get_context("spawn")
        self._conn, child = context.Pipe()
        self._process = context.Process(target=_serve, args=(child,), daemon=True)
        self._process.start()
        self.base_url: str = self._conn.recv()
        self.seen: dict[str, int] = {"requests": 0, "rows": 0}

    def reset(self) -> None:
        """Forget the requests so far (the warm-up's)."""
        self._conn.send("reset")
        self._conn.recv()

    def stop(self) -> None:
        self._conn.send("stop")
        self.seen.update(self._conn.recv())
        self._process.join(10)


def _serve(conn: Any) -> None:
    from binder_py.lm.testserver import LoopbackServer

    seen = {"requests": 0, "rows": 0}
    server = LoopbackServer(responder=_lm_responder(seen), latency=0.0).start()
    conn.send(server.base_url)
    while conn.recv() == "reset":
        seen.update(requests=0, rows=0)
        conn.send("ok")
    server.stop()
    conn.send(seen)


def _lm_responder(log: dict[str, int]) -> Any:
    from binder_py.bench.macro import Responder

    lock = threading.Lock()

    def respond(body: dict[str, Any], api: str) -> str:
        text = str(body.get("prompt") or "\n".join(str(m.get("content", "")) for m in body.get("messages", [])))
        lines = Responder._target_table(text)
        out = [lines[0] + "\t" + QUESTION]
        for line in lines[1:]:
            out.append(line + "\t" + _europe(line.split("\t", 1)[1].strip().lower()))
        with lock:
            log["requests"] += 1
            log["rows"] += len(lines) - 1
        return "\n".join(out) + "\n*/"

    return respond


def measure(df: pd.DataFrame, backend_kind: str, sandbox: Any, distinct: int, *, check: bool = True
            ) -> ScaleResult:
    """One measurement in this process (see :func:`measure_fresh` for one in a fresh process)."""
    from binder_py.neural import LMNeuralBackend, NeuralCache
    from binder_py.language import execute

    rows = len(df)
    table_bytes = int(df.memory_usage(deep=True).sum())
    server = None
    if backend_kind == "lm":
        from binder_py.lm import lm_from_spec

        server = ServerProcess()  # the model server is another process, as a real one would be
        seen = server.seen
        backend = LMNeuralBackend(lm_from_spec(f"openai:gpt-4o-mini@{server.base_url}", cache=False,
                                               api_key="bench"))
    else:
        backend, seen = _counting_backend()
    try:
        # modules the run imports are loaded (the LM client's too: its first request imports the
        # HTTP stack), and a warm worker is waiting
        execute(PROGRAM, make_table(10, 10, seed=1), neural=backend if server is not None else _counting_backend()[0],
                sandbox=sandbox, cache=NeuralCache())
        if server is not None:
            server.reset()
        time.sleep(0.2)  # the pool refills: idle workers are waiting for a job
        zygote = sandbox.zygote_pid()
        before_kb = _status_kb("self", "VmRSS")
        can_reset = reset_peak_rss()
        with WorkerPeak(zygote) as probe:
            t0 = time.perf_counter()
            run = execute(PROGRAM, df, neural=backend, sandbox=sandbox, cache=NeuralCache())
            seconds = time.perf_counter() - t0
        shared_kb = _shared_kb(sandbox)
        parent_peak = (max(0, _status_kb("self", "VmHWM") - before_kb) + shared_kb) / 1024 if can_reset else None
    finally:
        if server is not None:
            server.stop()
    correct = (run.value == expected_answer(df)) if (check and run.ok) else None
    error = None if run.ok else f"{run.error.kind}: {run.error.message}"[:300]
    return ScaleResult(
        backend=backend_kind, rows=rows, distinct=distinct, table_mb=table_bytes / 2**20,
        requests=seen["requests"], rows_sent=seen["rows"], original_rows_sent=rows,
        original_requests=math.ceil(rows / 50), seconds=seconds, parent_peak_mb=parent_peak,
        worker_peak_mb=(probe.idle_of_busiest_kb + probe.extra_kb) / 1024 if probe.peak_kb else None,
        worker_idle_mb=probe.idle_of_busiest_kb / 1024 if probe.peak_kb else None,
        worker_data_mb=probe.extra_data_kb / 1024 if probe.peak_data_kb else None, ok=run.ok, correct=correct, error=error)


def _shared_kb(sandbox: Any) -> int:
    """The shared memory the sandbox holds for handing tables over (its memory files)."""
    pool = getattr(sandbox, "_memfds", None)
    return pool.held_bytes() // 1024 if pool is not None else 0


def measure_here(rows: int, distinct: int, backend_kind: str) -> ScaleResult:
    """One measurement with a sandbox of its own (what :func:`execute` makes by default)."""
    from binder_py.language.worker import DEFAULT_POOL_SIZE, PRELOAD
    from sandbox import Sandbox

    df = make_table(rows, distinct)
    with Sandbox(pool_size=DEFAULT_POOL_SIZE, preload=PRELOAD) as sandbox:
        return measure(df, backend_kind, sandbox, min(distinct, rows))


def measure_fresh(rows: int, distinct: int, backend_kind: str) -> ScaleResult:
    """:func:`measure_here` in a fresh Python process (nothing loaded or allocated before it)."""
    root = str(Path(__file__).resolve().parents[2])
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH")) if p))
    done = subprocess.run([sys.executable, "-m", "binder_py.bench.scale", "--one", str(rows), str(distinct),
                           backend_kind], capture_output=True, text=True, env=env, check=False)
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        raise RuntimeError(f"scale measurement {rows}/{distinct}/{backend_kind} failed: {done.stderr[-2000:]}")
    return ScaleResult(**json.loads(lines[-1]))


def run(sizes: tuple[int, ...] = (1_000, 100_000, 1_000_000), distincts: tuple[int, ...] = (100, 10_000),
        backends: tuple[str, ...] = ("counting", "lm"), progress: Any = None) -> list[ScaleResult]:
    """Every (size, distinct values, backend) measured in a fresh process."""
    results = []
    for rows in sizes:
        for distinct in distincts:
            for kind in backends:
                result = measure_fresh(rows, distinct, kind)
                results.append(result)
                if progress:
                    progress(result)
    return results


def markdown(results: list[ScaleResult]) -> str:
    lines = ["| rows | distinct | table MB | backend | requests | rows sent | original: rows / requests "
             "| time s | parent peak + shared MB (× table) | worker peak − idle MB (× table) "
             "| worker data only MB (× table) | answer |",
             "| ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |"]
    for r in results:
        parent = f"{r.parent_peak_mb:.1f} ({r.parent_peak_mb / r.table_mb:.2f}×)" if r.parent_peak_mb is not None \
            else "—"
        if r.worker_peak_mb is not None and r.worker_idle_mb is not None:
            extra = r.worker_peak_mb - r.worker_idle_mb
            worker = f"{extra:.1f} ({extra / r.table_mb:.2f}×)"
        else:
            worker = "—"
        data = f"{r.worker_data_mb:.1f} ({r.worker_data_mb / r.table_mb:.2f}×)" if r.worker_data_mb is not None \
            else "—"
        verdict = ("correct" if r.correct else "WRONG") if r.ok else f"failed: {r.error}"
        lines.append(f"| {r.rows:,} | {r.distinct:,} | {r.table_mb:.1f} | {r.backend} | {r.requests:,} | "
                     f"{r.rows_sent:,} | {r.original_rows_sent:,} / {r.original_requests:,} | {r.seconds:.2f} | "
                     f"{parent} | {worker} | {data} | {verdict} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="one f_col over synthetic tables; each measurement in a fresh "
                                                 "process")
    parser.add_argument("--one", nargs=3, metavar=("ROWS", "DISTINCT", "BACKEND"),
                        help="run one measurement in this process and print it as JSON")
    parser.add_argument("--rows", default="1000,100000,1000000")
    parser.add_argument("--distinct", default="100,10000")
    parser.add_argument("--backends", default="counting,lm")
    args = parser.parse_args(argv)
    if args.one:
        rows, distinct, kind = args.one
        print(json.dumps(asdict(measure_here(int(rows), int(distinct), kind))))
        return
    load = os.getloadavg()
    results = run(tuple(int(x) for x in args.rows.split(",")), tuple(int(x) for x in args.distinct.split(",")),
                  tuple(b.strip() for b in args.backends.split(",") if b.strip()))
    print(f"load average before/after: {load} / {os.getloadavg()}")
    print(markdown(results))


if __name__ == "__main__":  # pragma: no cover
    main()
