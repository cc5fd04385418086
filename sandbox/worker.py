"""The worker: one forked process per program.

Runs in a child of the zygote. After accepting a connection it reports its
pid, reads the job, applies resource limits, lets trusted ``worker_globals``
code add to the namespace, installs an audit hook, then compiles and runs the
program and sends the outcome. It always exits afterwards.
"""
from __future__ import annotations

import importlib
import io
import os
import pickle
import resource
import signal
import socket
import struct
import sys
import time
from typing import Any, Callable

from . import codec, handoff, landlock, protocol, runner, seccomp
from .outcome import CallbackError, SandboxPermissionError

# ------------------------------------------------------------------ audit hook

_REFUSED_EVENTS = frozenset({
    "os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork", "os.forkpty",
    "os.startfile", "subprocess.Popen", "pty.spawn", "os.kill", "os.killpg",
    "signal.pthread_kill", "os.remove", "os.rename", "os.rmdir", "os.mkdir",
    "os.chmod", "os.chown", "os.chflags", "os.lchflags", "os.link", "os.symlink",
    "os.truncate", "os.utime", "os.putenv", "os.unsetenv", "os.chdir", "os.mkfifo",
    "os.mknod", "os.setxattr", "os.removexattr", "shutil.copyfile", "shutil.copymode",
    "shutil.copystat", "shutil.copytree", "shutil.move", "shutil.rmtree",
    "shutil.chown", "shutil.make_archive", "shutil.unpack_archive",
    "socket.__new__", "socket.bind", "socket.connect", "socket.getaddrinfo",
    "socket.gethostbyname", "socket.gethostbyaddr", "socket.gethostname",
    "socket.sethostname", "socket.sendmsg", "socket.sendto",
    "_thread.start_new_thread", "sys.settrace", "sys.setprofile", "sys.addaudithook",
    "sys._current_frames", "sys.setrecursionlimit", "marshal.loads", "marshal.load",
    "pickle.find_class", "mmap.__new__", "builtins.input", "code.__new__",
    "function.__new__", "webbrowser.open", "urllib.Request", "http.client.connect",
    "ftplib.connect", "smtplib.connect", "import_module_from_path", "resource.setrlimit",
    "resource.prlimit", "os.setuid", "os.setgid", "gc.get_referrers", "gc.get_referents",
    "gc.get_objects", "sys.monitoring.register_callback",
})
_REFUSED_PREFIXES = ("ctypes.", "winreg.", "msvcrt.", "_winapi.", "syslog.", "os.exec", "os.spawn",
                     "os.posix_spawn", "subprocess.", "socket.", "shutil.")
_PATH_EVENTS = frozenset({"os.listdir", "os.scandir", "glob.glob", "glob.glob/2", "os.walk"})
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC


def _read_roots() -> tuple[str, ...]:
    import site
    import sysconfig

    roots = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix,
             "/usr/share/zoneinfo", os.path.dirname(os.path.abspath(__file__))}
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        try:
            roots.add(sysconfig.get_path(key))
        except KeyError:
            pass
    try:
        roots.update(site.getsitepackages())
    except AttributeError:
        pass
    out = []
    for r in roots:
        if r:
            out.append(os.path.realpath(r).rstrip("/") + "/")
    return tuple(sorted(set(out)))


READ_ROOTS: tuple[str, ...] = _read_roots()  # computed once, in the zygote


def _path_allowed(path: Any) -> bool:
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    if not isinstance(path, str):
        return False  # file descriptors and path-likes are refused
    real = os.path.realpath(path)
    return any((real + "/").startswith(root) for root in READ_ROOTS)


def _audit(event: str, args: tuple) -> None:
    if event == "open":
        path, mode, flags = (tuple(args) + (None, None, None))[:3]
        if mode is not None:
            if isinstance(mode, str) and any(c in mode for c in "wax+"):
                raise SandboxPermissionError(f"the sandbox refuses to open {path!r} for writing")
        elif isinstance(flags, int) and flags & _WRITE_FLAGS:
            raise SandboxPermissionError(f"the sandbox refuses to open {path!r} for writing")
        if not _path_allowed(path):
            raise SandboxPermissionError(f"the sandbox refuses to open {path!r}")
        return
    if event in _REFUSED_EVENTS or event.startswith(_REFUSED_PREFIXES):
        raise SandboxPermissionError(f"the sandbox refuses {event}")
    if event in _PATH_EVENTS:
        if args and not _path_allowed(args[0] if args[0] is not None else "."):
            raise SandboxPermissionError(f"the sandbox refuses {event} outside the Python installation")


_hook_installed = False


def install_audit_hook() -> None:
    global _hook_installed, READ_ROOTS
    if _hook_installed:
        return
    if not READ_ROOTS:
        READ_ROOTS = _read_roots()
    sys.dont_write_bytecode = True
    sys.addaudithook(_audit)
    _hook_installed = True


# --------------------------------------------------------------------- limits

def _vm_size() -> int:
    try:
        with open("/proc/self/statm", "rb") as fh:
            return int(fh.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def apply_limits(limits: Any) -> None:
    def setlim(which: int, soft: int, hard: int | None = None) -> None:
        cur_soft, cur_hard = resource.getrlimit(which)
        hard = soft if hard is None else hard
        if cur_hard != resource.RLIM_INFINITY:
            hard = min(hard, cur_hard)
            soft = min(soft, hard)
        resource.setrlimit(which, (soft, hard))

    cpu = max(1, int(-(-float(limits.cpu_seconds) // 1)))  # ceil, at least 1 s
    setlim(resource.RLIMIT_CPU, cpu, cpu + 1)
    setlim(resource.RLIMIT_AS, _vm_size() + int(limits.memory_bytes))
    setlim(resource.RLIMIT_FSIZE, 0)
    setlim(resource.RLIMIT_CORE, 0)
    setlim(resource.RLIMIT_NOFILE, max(8, int(limits.open_files)))
    if hasattr(resource, "RLIMIT_NPROC"):
        try:
            setlim(resource.RLIMIT_NPROC, 0)
        except (ValueError, OSError):
            pass


def _on_sigxcpu(signum: int, frame: Any) -> None:
    raise runner.CPUTimeExceeded()


# ------------------------------------------------------------------ callbacks

class CallbackProxy:
    """Worker-side stand-in for a parent callback: data in, data out."""

    __slots__ = ("_name", "_conn")

    def __init__(self, name: str, conn: socket.socket) -> None:
        self._name = name
        self._conn = conn

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        request = (self._name, codec.encode(list(args)), codec.encode(dict(kwargs)))
        protocol.send(self._conn, protocol.CALL, codec.dumps(request))
        kind, payload = protocol.recv(self._conn)
        if kind != protocol.REPLY:
            raise CallbackError("sandbox protocol error while waiting for a callback")
        ok, value = codec.safe_loads(payload)
        if not ok:
            raise CallbackError(str(value))
        return codec.decode(value)

    def __repr__(self) -> str:
        return f"<callback {self._name}>"


def _load_entry(spec: str) -> Callable[..., Any]:
    module, _, func = spec.partition(":")
    if not module or not func:
        raise ValueError(f"worker_globals must be 'module:function', got {spec!r}")
    return getattr(importlib.import_module(module), func)


# ----------------------------------------------------------------------- main

def _outcome_bytes(out: dict[str, Any], buffer: runner.BoundedBuffer) -> bytes:
    out["stdout"] = buffer.getvalue()
    out["stdout_truncated"] = buffer.truncated
    return codec.dumps(out)


def _shared_buffers(reader: Any, fds: list[int]) -> list[memoryview]:
    """The job's out-of-band buffers: its spans read from the payload's head, mapped from the
    memory file that came with the frame (every descriptor received is closed here)."""
    try:
        spans = handoff.read_spans(reader.read)
        if spans and not fds:
            raise handoff.HandoffError("shared buffers announced without their memory file")
        if not spans:
            return []
        fd = fds.pop(0)
        return handoff.map_buffers(fd, spans)  # closes fd
    finally:
        for fd in fds:
            os.close(fd)


def handle(conn: socket.socket) -> None:
    """Serve one job on ``conn`` (already accepted). Called in the worker."""
    protocol.send(conn, protocol.PID, struct.pack("!i", os.getpid()))
    kind, length, fds = protocol.recv_header_fds(conn)
    if kind != protocol.JOB:
        for fd in fds:
            os.close(fd)
        return
    # trusted direction (parent -> worker): large buffers come mapped from shared memory
    # (sandbox.handoff); the rest is read from the socket as it is unpickled, so the table is
    # never held twice (received bytes + DataFrame)
    if length < protocol.LARGE:  # small: one read, then unpickle from memory
        reader: Any = io.BytesIO(protocol.recv_exact(conn, length))
    else:
        reader = protocol.PayloadReader(conn, length)
    job = pickle.load(reader, buffers=_shared_buffers(reader, fds))
    limits = job["limits"]
    buffer = runner.BoundedBuffer(limits.stdout_bytes)
    filename = job["filename"]
    try:
        apply_limits(limits)
        signal.signal(signal.SIGXCPU, _on_sigxcpu)
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        ns = runner.build_namespace(job["variables"], buffer)
        proxies = {name: CallbackProxy(name, conn) for name in job["callbacks"]}
        ns.update(proxies)
        if job["worker_globals"]:
            extra = _load_entry(job["worker_globals"])(dict(proxies), ns)
            if extra:
                ns.update(extra)
    except BaseException as exc:  # noqa: BLE001
        out = {"ok": False, "value": None, "compile_ms": 0.0, "run_ms": 0.0,
               "error": {"kind": "killed", "message": f"sandbox setup failed: {runner._message(exc)}",
                         "line": None, "exception_type": type(exc).__name__}}
        protocol.send(conn, protocol.OUTCOME, _outcome_bytes(out, buffer))
        return
    landlock.restrict(READ_ROOTS)  # the same policy, from the same moment, enforced by the kernel
    seccomp.restrict()  # and no new socket (UDP, named Unix sockets, io_uring: what Landlock leaves)
    install_audit_hook()
    out = runner.run(job["program"], filename, ns, buffer)
    try:
        data = _outcome_bytes(out, buffer)
    except BaseException as exc:  # noqa: BLE001
        out = {"ok": False, "value": None, "compile_ms": out.get("compile_ms", 0.0),
               "run_ms": out.get("run_ms", 0.0),
               "error": {"kind": "memory" if isinstance(exc, MemoryError) else "runtime",
                         "message": f"could not send the result: {runner._message(exc)}",
                         "line": None, "exception_type": type(exc).__name__}}
        buffer.parts, buffer.size = [], 0
        data = _outcome_bytes(out, buffer)
    protocol.send(conn, protocol.OUTCOME, data)


def serve(listener: socket.socket, notify: socket.socket) -> None:
    """Entry point in a freshly forked worker: accept one connection, serve it."""
    conn, _ = listener.accept()
    listener.close()
    try:
        socket.send_fds(notify, [struct.pack("!i", os.getpid())], [conn.fileno()])
    finally:
        notify.close()
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    os.close(devnull)
    try:
        handle(conn)
    except BaseException:  # noqa: BLE001 - the parent sees EOF + exit status
        pass
    finally:
        try:
            conn.close()
        except OSError:
            pass
