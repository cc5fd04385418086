"""The zygote: a warm process that forks one worker per program.

Started by the parent as ``python -I -c <bootstrap>`` (a fresh interpreter,
never a fork of the caller); the bootstrap reads a one-line JSON configuration
on stdin and calls :func:`main`. The zygote imports pandas/numpy/RestrictedPython and the
``preload`` modules, listens on a Unix socket in a private directory and keeps
``pool_size`` workers forked ahead of need, blocked in ``accept()``: a worker that takes a
job is replaced when it exits (so the fork does not compete with the run), or at once
when it was the last idle one. When a worker accepts, it
hands the zygote a copy of the connection; when the worker exits, the zygote
writes its exit status on that connection. EOF on stdin (the parent went away)
or SIGTERM makes the zygote kill every worker and exit.
"""
from __future__ import annotations

import os
import select
import signal
import socket
import struct
import sys

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "NUMEXPR_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

_PR_SET_PDEATHSIG = 1


def _pdeathsig_setter():
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        prctl = libc.prctl

        def set_pdeathsig() -> None:
            prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)

        return set_pdeathsig
    except Exception:  # noqa: BLE001 - not Linux: rely on the zygote's cleanup
        return lambda: None


#: modules pandas and numpy import lazily inside common methods (to_records, to_dict,
#: to_string, stack/unstack, Timestamp.strftime); a worker may not load new code
#: (the audit hook refuses marshal.loads), so the zygote loads them before forking
LAZY_MODULES = ("time", "numpy.rec", "pandas.core.methods.to_dict", "pandas.core.methods.select",  # df.select
                "pandas.core.reshape.reshape",
                "pandas.io.formats.string",
                "pandas.core.arrays.arrow._arrow_utils",  # (`.str.len()` of an Arrow string column)
                "pyarrow.acero")  # (a groupby's min/max of a text column: Arrow's grouped aggregation)


#: a small program that touches what LM programs commonly use (run before forking, and by
#: the prefault probe)
SAMPLE_PROGRAM = (
    "import re\nimport math\nimport datetime\n"
    "t = df.copy()\nt['c'] = t['a'] * 2\nt.loc[0, 'a'] = 9\n"
    "g = t.groupby('b').agg({'a': 'sum'})\n"
    "m = t.merge(g, left_on='b', right_index=True)\n"
    "t['d'] = pd.to_datetime(t['d'])\n"
    "y = t['d'].dt.year.max()\n"
    "s = t['b'].str.upper().str.contains('X').sum()\n"
    "v = t['b'].value_counts().idxmax()\n"
    "p = t.pivot_table(index='b', values='a', aggfunc='sum')\n"
    "n = pd.to_numeric(t['a']).apply(lambda x: x + 1).sort_values().iloc[0]\n"
    "print(m.shape)\n"
    "[int(x) for x in t['a']] + sorted(set(t['b']))\n"
)


def _sample_job() -> None:
    """A worker's job from its pickled form to its pickled outcome, on a small table."""
    import pickle

    import pandas as pd

    from . import runner, worker

    df = pd.DataFrame({"a": [1, 2, 3], "b": ["x", "y", "x"], "d": ["2020-01-01", "2021-02-03", "2022-03-04"]})
    job = pickle.loads(pickle.dumps({"variables": {"df": df}, "program": SAMPLE_PROGRAM}, protocol=5))
    buf = runner.BoundedBuffer(1024)
    ns = runner.build_namespace(job["variables"], buf)
    worker._outcome_bytes(runner.run(job["program"], "<sample>", ns, buf), buf)


def _warm_up() -> None:
    """Import what pandas loads lazily and run a small job once, before forking."""
    import importlib

    for name in LAZY_MODULES:
        try:
            importlib.import_module(name)
        except ModuleNotFoundError:  # not in this pandas/pyarrow (pandas 2's has no core.methods.select,
            pass                     # a pyarrow-core build no acero): nothing of it to load then

    from . import reentry, vetting

    vetting.warm()
    _sample_job()
    reentry.install()  # the classes of what was loaded since the guards were imported


def _parent_gone(cfg: dict) -> None:
    """Exit quietly when the parent has already gone and removed the private directory (a command
    that started the zygote early and then ended at once, e.g. ``binder-py exec --help`` or a
    missing table file); any other reason for a missing directory is an error."""
    if not os.path.isdir(cfg["workdir"]):
        raise SystemExit(0)
    raise


def main(cfg: dict) -> None:
    """Run the zygote with the configuration the parent sent on stdin."""
    try:
        os.chdir(cfg["workdir"])
    except FileNotFoundError:
        _parent_gone(cfg)
    import gc
    import importlib

    try:
        from . import prefault, worker

        for name in cfg.get("preload", ()):
            importlib.import_module(name)
        _warm_up()
    except BaseException as exc:  # noqa: BLE001
        sys.stdout.write(f"ERROR {type(exc).__name__}: {exc}\n")
        sys.stdout.flush()
        raise SystemExit(1) from None

    set_pdeathsig = _pdeathsig_setter()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        listener.bind(cfg["socket"])
    except FileNotFoundError:
        _parent_gone(cfg)
    listener.listen(256)
    notify_r, notify_w = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
    notify_r.setblocking(False)  # socket.recv_fds ignores its flags argument
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    os.set_blocking(wake_r, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    stop = {"now": False}

    def _on_term(*_a: object) -> None:
        stop["now"] = True

    signal.signal(signal.SIGTERM, _on_term)
    pool_size = max(1, int(cfg.get("pool_size", 2)))
    me = os.getpid()
    idle: set[int] = set()
    active: dict[int, int] = {}  # worker pid -> dup of its connection fd

    gc.collect()
    gc.freeze()

    def sample_as_worker() -> None:  # what a worker does, to learn the pages its job writes
        gc.disable()
        _sample_job()

    # the pages to copy into each idle worker ahead of its job (sandbox.prefault), learned by a
    # probe child started after READY: not on the way to the first answer
    prefault_ranges: list[tuple[int, int]] = []
    probe: prefault.Probe | None = None

    def spawn() -> None:
        pid = os.fork()
        if pid == 0:  # worker
            try:
                signal.set_wakeup_fd(-1)
                signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                signal.signal(signal.SIGTERM, signal.SIG_DFL)
                set_pdeathsig()
                if os.getppid() != me:
                    os._exit(0)
                for fd in (wake_r, wake_w):
                    os.close(fd)
                notify_r.close()
                for fd in active.values():
                    os.close(fd)
                if probe is not None:
                    os.close(probe.fd)
                gc.disable()  # one short-lived program per worker: skip collections
                prefault.populate(prefault_ranges, lambda: bool(select.select([listener], [], [], 0)[0]))
                worker.serve(listener, notify_w)
            finally:
                os._exit(0)
        idle.add(pid)

    def report(pid: int, status: int, cpu: float) -> None:
        fd = active.pop(pid, None)
        if fd is None:
            return
        sig = os.WTERMSIG(status) if os.WIFSIGNALED(status) else 0
        code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else -1
        frame = struct.pack("!IB", 16, ord("X")) + struct.pack("!iid", sig, code, cpu)
        try:
            os.set_blocking(fd, False)
            os.write(fd, frame)
        except OSError:
            pass
        os.close(fd)

    for _ in range(pool_size):
        spawn()
    try:
        sys.stdout.write("READY\n")
        sys.stdout.flush()
    except (BrokenPipeError, OSError):  # the parent went away while we started: clean up quietly
        stop["now"] = True
        os.dup2(os.open(os.devnull, os.O_WRONLY), 1)  # the interpreter's last flush must not raise again
    if not stop["now"] and cfg.get("prefault", True) and prefault.can_learn():
        probe = prefault.Probe(sample_as_worker, in_child=set_pdeathsig)

    try:
        while not stop["now"]:
            try:
                readable, _, _ = select.select([0, notify_r, wake_r] + ([probe.fd] if probe else []), [], [], 1.0)
            except InterruptedError:
                continue
            if probe is not None and probe.fd in readable:
                learned = probe.read_some()
                if learned is not None:
                    prefault_ranges, probe = learned, None
            if 0 in readable:
                try:
                    if not os.read(0, 4096):
                        break  # parent closed our stdin: shut down
                except OSError:
                    break
            # always drain: a worker's datagram must be read before it is reaped
            while True:
                try:
                    msg, fds, _flags, _addr = socket.recv_fds(notify_r, 16, 1)
                except (BlockingIOError, InterruptedError):
                    break
                if len(msg) < 4:
                    for fd in fds:
                        os.close(fd)
                    continue
                (pid,) = struct.unpack("!i", msg[:4])
                idle.discard(pid)
                if fds:
                    active[pid] = fds[0]
                    for fd in fds[1:]:
                        os.close(fd)
            if wake_r in readable:
                try:
                    while os.read(wake_r, 4096):
                        pass
                except (BlockingIOError, InterruptedError):
                    pass
            while True:
                try:
                    pid, status, usage = os.wait4(-1, os.WNOHANG)
                except ChildProcessError:
                    break
                if pid == 0:
                    break
                idle.discard(pid)
                report(pid, status, usage.ru_utime + usage.ru_stime)
            # refill: idle + busy workers make pool_size, and one is always idle; so a run's worker
            # is replaced when it exits (the fork does not compete with the run it serves), unless
            # runs are taking the last idle worker (then at once)
            while len(idle) < max(1, pool_size - len(active)):
                spawn()
    finally:
        for pid in list(idle) + list(active) + ([probe.pid] if probe else []):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        while True:
            try:
                pid, status, usage = os.wait4(-1, 0)
            except ChildProcessError:
                break
            report(pid, status, usage.ru_utime + usage.ru_stime)
        try:
            os.unlink(cfg["socket"])
        except OSError:
            pass
        try:  # the directory the parent made for us: gone even when the parent was killed
            os.rmdir(cfg["workdir"])
        except OSError:
            pass
