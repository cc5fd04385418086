"""Starting the zygote process (standard library only: importing this module loads no pandas).

:class:`Zygote` is the parent's handle on the zygote (``sandbox/zygote.py``): a fresh
``python -I`` interpreter that imports pandas and the ``preload`` modules and forks the
workers. :func:`prestart` starts one before the caller has finished its own imports, so
that both import at the same time (the command line does this); the first
:class:`~sandbox.Sandbox` with the same pool size and preload list adopts it.
"""
from __future__ import annotations

import atexit
import json
import os
import select
import shutil
import subprocess
import sys
import tempfile
import threading
import weakref
from typing import Sequence

from .leftovers import sweep_in_background
from .outcome import SandboxUnavailable

STARTUP_TIMEOUT = 120.0      # zygote import of pandas on a loaded machine
_BOOT = """
import json, os, sys
data = b""
while not data.endswith(b"\\n"):
    chunk = os.read(0, 65536)
    if not chunk:
        raise SystemExit(0)
    data += chunk
cfg = json.loads(data)
sys.path[:] = cfg["sys_path"]
from sandbox.zygote import main
main(cfg)
"""
_PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

#: the parent's environment variables a zygote (and so every worker) inherits: locale, time zone,
#: paths, library search path, allocator and thread settings. Nothing else: an API key, a token or
#: any other secret in the parent's environment never reaches a process that runs a program, so a
#: memory bug in a worker (docs/SECURITY.md, "Known limits") has no secret to read there.
WORKER_ENV_NAMES = frozenset({"PATH", "HOME", "USER", "LOGNAME", "LANG", "LANGUAGE", "TZ", "TZDIR",
                              "TMPDIR", "TEMP", "TMP", "LD_LIBRARY_PATH", "GLIBC_TUNABLES", "TERM"})
WORKER_ENV_PREFIXES = ("LC_", "OPENBLAS_", "OMP_", "MKL_", "NUMEXPR_", "ARROW_", "MALLOC_", "BINDER_SANDBOX_")


def worker_environment(parent: dict[str, str]) -> dict[str, str]:
    """The environment a zygote starts with: ``parent``'s variables named in
    :data:`WORKER_ENV_NAMES` or starting with :data:`WORKER_ENV_PREFIXES`, one BLAS/OpenMP thread,
    and the system allocator for Arrow."""
    env = {name: value for name, value in parent.items()
           if name in WORKER_ENV_NAMES or name.startswith(WORKER_ENV_PREFIXES)}
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        env[var] = "1"
    # Arrow's own allocator (mimalloc here) keeps freed memory; with the system's, a worker's peak
    # is what it holds at once (an f_col over a 1e6-row table: 3.2x the table -> 2.7x)
    env.setdefault("ARROW_DEFAULT_MEMORY_POOL", "system")
    return env


class Zygote:
    """The parent's handle on one zygote process: started at once, ready after :meth:`wait_ready`."""

    def __init__(self, pool_size: int, preload: Sequence[str]) -> None:
        self.dir = tempfile.mkdtemp(prefix="binder-sandbox-")
        os.chmod(self.dir, 0o700)
        self.path = os.path.join(self.dir, "zygote.sock")
        env = worker_environment(dict(os.environ))
        self.proc = subprocess.Popen(
            [sys.executable, "-I", "-c", _BOOT],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=self.dir, env=env,
            close_fds=True, start_new_session=True,
        )
        paths = [_PACKAGE_ROOT] + [os.path.abspath(p) if p else os.getcwd() for p in sys.path]
        cfg = {"sys_path": list(dict.fromkeys(paths)),
               "socket": self.path, "workdir": self.dir, "pool_size": pool_size,
               "preload": list(preload),
               # BINDER_SANDBOX_PREFAULT=0: idle workers do not copy ahead the pages a job writes
               # (sandbox/prefault.py), which saves about 12 MB per idle worker
               "prefault": os.environ.get("BINDER_SANDBOX_PREFAULT", "1") != "0"}
        assert self.proc.stdin is not None
        self.proc.stdin.write((json.dumps(cfg) + "\n").encode())
        self.proc.stdin.flush()
        self.ready = False
        sweep_in_background()  # directories of zygotes killed earlier (sandbox/leftovers.py)
        self.finalizer = weakref.finalize(self, Zygote._shutdown, self.proc, self.dir)
        # at interpreter exit the zygote is told to go (EOF) without waiting for it: it kills its
        # workers and exits by itself, and a worker dies with it (PR_SET_PDEATHSIG)
        self.finalizer.atexit = False
        _live.add(self.finalizer)

    def wait_ready(self) -> None:
        if self.ready:
            return
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        r, _, _ = select.select([fd], [], [], STARTUP_TIMEOUT)
        line = self.proc.stdout.readline().decode(errors="replace").strip() if r else ""
        if line != "READY":
            self.close()
            raise SandboxUnavailable(f"sandbox zygote failed to start: {line or 'no answer'}")
        self.ready = True

    def alive(self) -> bool:
        return self.proc.poll() is None

    def close(self) -> None:
        _live.discard(self.finalizer)
        self.finalizer()

    @staticmethod
    def _shutdown(proc: subprocess.Popen, directory: str) -> None:
        try:
            if proc.stdin is not None:
                proc.stdin.close()
        except OSError:
            pass
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()
        shutil.rmtree(directory, ignore_errors=True)


_live: set[weakref.finalize] = set()  # finalizers of zygotes not closed yet: told to go at exit


@atexit.register
def _release_at_exit() -> None:
    for finalizer in list(_live):
        state = finalizer.detach()  # (zygote, _shutdown, (proc, directory), {}) while it is alive
        if state is None:
            continue
        proc, directory = state[2]
        try:
            if proc.stdin is not None:
                proc.stdin.close()
        except OSError:
            pass
        shutil.rmtree(directory, ignore_errors=True)
    _live.clear()


_prestarted: dict[tuple[int, tuple[str, ...]], Zygote] = {}
_prestart_lock = threading.Lock()


def prestart(pool_size: int = 2, preload: Sequence[str] = ()) -> None:
    """Start a zygote now, for the first :class:`~sandbox.Sandbox` made with this pool size and
    preload list (strict mode); it shuts down with this process if none is made."""
    key = (max(1, int(pool_size)), tuple(preload))
    with _prestart_lock:
        if key not in _prestarted:
            _prestarted[key] = Zygote(*key)


def take_prestarted(pool_size: int, preload: Sequence[str]) -> Zygote | None:
    """The zygote :func:`prestart` started for this configuration, if any and still running."""
    with _prestart_lock:
        zygote = _prestarted.pop((max(1, int(pool_size)), tuple(preload)), None)
    return zygote if zygote is not None and zygote.alive() else None


__all__ = ["STARTUP_TIMEOUT", "Zygote", "prestart", "take_prestarted"]
