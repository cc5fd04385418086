"""Cold start of ``binder-py exec``: a trivial program, from start to answer, against
``python -c "import pandas"``, measured alternately in one run.

    python -m binder_py.bench.cold_start [--repeats 10]

Each repeat starts, one after the other: ``python -c "import pandas"``; ``binder-py exec``
of a 2-row CSV and the program ``df["a"].sum()``; and the same with
``BINDER_EARLY_SANDBOX=0`` (the sandbox's zygote starts only when the program runs, as
before the early start). For ``exec`` two times are taken: until its answer line is read
("to answer") and until the process has exited. The console script is the one installed
beside this Python (not a shim); ``PYTHONPATH`` points at the binder-py being measured.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path


def _script() -> str:
    path = Path(sysconfig.get_path("scripts")) / "binder-py"
    if not path.exists():
        raise SystemExit(f"no binder-py console script at {path}: install binder-py (pip install -e .)")
    return str(path)


def _timed(cmd: list[str], env: dict[str, str], expect: str | None) -> tuple[float, float]:
    """(seconds to the first output line, seconds to exit)."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    assert proc.stdout is not None
    line = proc.stdout.readline().decode().strip()
    answered = time.perf_counter() - start
    _out, err = proc.communicate()
    exited = time.perf_counter() - start
    if proc.returncode != 0 or (expect is not None and line != expect):
        raise RuntimeError(f"{cmd} failed ({proc.returncode}): {line!r} {err.decode()[-500:]}")
    return answered, exited


def run(repeats: int) -> dict[str, list[float]]:
    root = str(Path(__file__).resolve().parents[2])  # the binder-py being measured
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([root, os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep))
    late = dict(env, BINDER_EARLY_SANDBOX="0")
    with tempfile.TemporaryDirectory() as tmp:
        table, program = Path(tmp) / "t.csv", Path(tmp) / "p.py"
        table.write_text("a,b\n1,x\n2,y\n")
        program.write_text('df["a"].sum()\n')
        exec_cmd = [_script(), "exec", str(table), str(program)]
        pandas_cmd = [sys.executable, "-c", "import pandas"]
        times: dict[str, list[float]] = {k: [] for k in (
            "import pandas", "exec: to answer", "exec: to exit", "exec, late zygote: to answer",
            "exec, late zygote: to exit")}
        _timed(exec_cmd, env, "3")  # warm the file cache
        for _ in range(repeats):
            times["import pandas"].append(_timed(pandas_cmd, env, None)[1])
            answered, exited = _timed(exec_cmd, env, "3")
            times["exec: to answer"].append(answered)
            times["exec: to exit"].append(exited)
            answered, exited = _timed(exec_cmd, late, "3")
            times["exec, late zygote: to answer"].append(answered)
            times["exec, late zygote: to exit"].append(exited)
    return times


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=10)
    args = parser.parse_args(argv)
    load = os.getloadavg()
    times = run(args.repeats)
    base = statistics.median(times["import pandas"])
    print(f"load average before/after: {load} / {os.getloadavg()}")
    print(f"machine: {os.cpu_count()} cores, python {sys.version.split()[0]}; {args.repeats} alternating repeats")
    for name, values in times.items():
        median = statistics.median(values)
        print(f"{name:32s} median {median:6.3f} s  ({median / base:.2f}× import pandas)")


if __name__ == "__main__":  # pragma: no cover
    main()
