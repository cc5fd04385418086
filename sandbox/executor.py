"""Parent side: the Sandbox object that talks to the zygote and its workers."""
from __future__ import annotations

import ast
import os
import pickle
import signal
import socket
import struct
import sys
import threading
import time
from typing import Any, Callable, Mapping, Sequence

from . import codec, handoff, protocol
from .launch import Zygote, take_prestarted
from .outcome import (
    FAILURE_KINDS,
    CallbackError,
    Limits,
    Outcome,
    ProgramFailure,
    SandboxUnavailable,
    Timings,
)

MODES = ("strict", "unsafe-inprocess")
WORKER_WAIT_TIMEOUT = 60.0   # waiting for an idle worker to accept
_SIGNAL_NAMES = {getattr(signal, n): n for n in dir(signal) if n.startswith("SIG") and not n.startswith("SIG_")}


def strict_mode_problem() -> str | None:
    """Why strict mode cannot run here, or None."""
    missing = []
    if not hasattr(os, "fork"):
        missing.append("os.fork")
    try:
        import resource  # noqa: F401
    except ImportError:
        missing.append("resource rlimits")
    if not hasattr(socket, "AF_UNIX"):
        missing.append("Unix sockets")
    if not hasattr(socket, "send_fds"):
        missing.append("socket.send_fds")
    if missing:
        return (f"strict sandbox mode needs {', '.join(missing)}, which this platform "
                f"({sys.platform}) lacks; pass mode='unsafe-inprocess' to run programs "
                "with the policy guards only (no process isolation, no resource limits)")
    return None


def _failure(kind: str, message: str, line: int | None = None, etype: str | None = None) -> ProgramFailure:
    return ProgramFailure(kind=kind, message=message, line=line, exception_type=etype)  # type: ignore[arg-type]


def _outcome_from_dict(d: Any, callback_ms: float, total_ms: float,
                      stdout_bytes: int = Limits.stdout_bytes) -> Outcome:
    """Build an Outcome from the worker's (untrusted, plain-data) dictionary; its printed output cut to
    ``stdout_bytes`` (UTF-8), as the worker's own buffer would have cut it."""
    if type(d) is not dict:
        raise codec.CodecError("outcome is not a dict")
    compile_ms = float(d.get("compile_ms") or 0.0)
    run_ms = float(d.get("run_ms") or 0.0)
    stdout = d.get("stdout", "")
    stdout = stdout if type(stdout) is str else ""
    truncated = d.get("stdout_truncated") is True
    if len(stdout) * 4 > stdout_bytes:  # (a character is at most 4 bytes: most outputs are not encoded here)
        data = stdout.encode("utf-8", "surrogatepass")
        if len(data) > stdout_bytes:  # only a worker whose memory a program corrupted sends more (red team 10)
            stdout, truncated = data[:stdout_bytes].decode("utf-8", "ignore"), True
    timings = Timings(compile_ms=compile_ms, run_ms=run_ms, callback_ms=callback_ms, total_ms=total_ms)
    if d.get("ok") is True:
        codec.check_answer_size(d.get("value"))  # the worker checked it too, if it was not compromised
        value = codec.to_plain(codec.decode(d.get("value")))
        return Outcome(ok=True, value=value, error=None, stdout=stdout, stdout_truncated=truncated, timings=timings)
    err = d.get("error")
    if type(err) is not dict or err.get("kind") not in FAILURE_KINDS:
        raise codec.CodecError("malformed error")
    line = err.get("line")
    etype = err.get("exception_type")
    message = err.get("message", "")
    # text only: str() of anything else (a list shared with itself 60 levels deep) writes it all out
    failure = _failure(err["kind"], message[:10000] if type(message) is str else "<malformed error message>",
                       line if type(line) is int and 0 < line < 1 << 31 else None,
                       etype[:200] if type(etype) is str else None)
    return Outcome(ok=False, value=None, error=failure, stdout=stdout, stdout_truncated=truncated, timings=timings)


def _call_parent(fn: Callable[..., Any], args: Any, kwargs: Any) -> tuple[bool, Any]:
    try:
        result = fn(*args, **kwargs)
    except Exception as exc:  # noqa: BLE001 - becomes CallbackError in the program
        return False, f"{type(exc).__name__}: {exc}"[:4000]
    return True, codec.encode(result)


class Sandbox:
    """Runs untrusted programs. Thread-safe; each run gets a fresh worker."""

    def __init__(self, limits: Limits = Limits(), *, pool_size: int = 2,
                 preload: Sequence[str] = (), mode: str = "strict", shared_memory: bool = True) -> None:
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
        self.limits = limits
        self.mode = mode
        self.pool_size = max(1, int(pool_size))
        self.preload = tuple(preload)
        self._lock = threading.Lock()
        self._zygote: Zygote | None = None
        self._closed = False
        #: memory files that carry large tables to the workers (sandbox.handoff), reused across runs
        #: (``shared_memory=False``: every job whole through the socket, as before; for comparisons)
        self._memfds = handoff.MemfdPool(keep=self.pool_size) \
            if shared_memory and mode == "strict" and handoff.available() else None
        if mode == "strict":
            problem = strict_mode_problem()
            if problem:
                raise SandboxUnavailable(problem)
            # a zygote the command line started while it was importing (sandbox.launch.prestart)
            self._zygote = take_prestarted(self.pool_size, self.preload) or Zygote(self.pool_size, self.preload)

    # ------------------------------------------------------------ lifecycle
    def __enter__(self) -> "Sandbox":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        with self._lock:
            self._closed = True
            if self._zygote is not None:
                self._zygote.close()
                self._zygote = None
            if self._memfds is not None:
                self._memfds.close()

    def zygote_pid(self) -> int | None:
        """Pid of the warm zygote (for tests and diagnostics)."""
        z = self._zygote
        return z.proc.pid if z is not None and z.alive() else None

    def _ready_zygote(self, restart: bool = False) -> Zygote:
        with self._lock:
            if self._closed:
                raise SandboxUnavailable("the sandbox is closed")
            z = self._zygote
            if z is None or restart or not z.alive():
                if z is not None:
                    z.close()
                z = self._zygote = Zygote(self.pool_size, self.preload)
            z.wait_ready()
            return z

    # ------------------------------------------------------------------ run
    def run(self, program: str | ast.Module, *, variables: Mapping[str, Any] | None = None,
            callbacks: Mapping[str, Callable[..., Any]] | None = None,
            worker_globals: str | None = None, limits: Limits | None = None,
            filename: str = "<program>") -> Outcome:
        limits = limits or self.limits
        callbacks = dict(callbacks or {})
        start = time.perf_counter()
        if self.mode == "unsafe-inprocess":
            return self._run_inprocess(program, variables, callbacks, worker_globals, limits, filename, start)
        job = handoff.pack({
            "program": program, "variables": dict(variables or {}), "callbacks": sorted(callbacks),
            "worker_globals": worker_globals, "limits": limits, "filename": filename,
        }, self._memfds)
        try:
            return self._run_job(job, callbacks, limits, start)
        finally:
            job.done()

    def _run_job(self, job: handoff.PackedJob, callbacks: dict[str, Callable[..., Any]], limits: Limits,
                 start: float) -> Outcome:
        sock = pid = None
        last_error: BaseException | None = None
        for attempt in range(2):
            try:
                sock, pid = self._connect(restart=attempt > 0)
                break
            except (OSError, protocol.ProtocolError, protocol.Timeout) as exc:
                last_error = exc
        if sock is None or pid is None:
            total = (time.perf_counter() - start) * 1000.0
            return Outcome(ok=False, error=_failure("killed", f"no sandbox worker available: {last_error!r}"),
                           timings=Timings(total_ms=total))
        try:
            return self._drive(sock, pid, job, callbacks, limits, start)
        finally:
            sock.close()

    def _connect(self, restart: bool) -> tuple[socket.socket, int]:
        z = self._ready_zygote(restart=restart)
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.connect(z.path)
            kind, payload = protocol.recv(sock, time.monotonic() + WORKER_WAIT_TIMEOUT)
            if kind != protocol.PID or len(payload) != 4:
                raise protocol.ProtocolError("bad greeting from worker")
            (pid,) = struct.unpack("!i", payload)
            return sock, pid
        except BaseException:
            sock.close()
            raise

    def _drive(self, sock: socket.socket, pid: int, job: handoff.PackedJob, callbacks: dict[str, Callable[..., Any]],
               limits: Limits, start: float) -> Outcome:
        pidfd = None
        if hasattr(os, "pidfd_open"):
            try:
                pidfd = os.pidfd_open(pid)  # the worker is waiting for its job: cannot have exited
            except OSError:
                pidfd = None
        killed = False

        def kill() -> None:
            nonlocal killed
            killed = True
            try:
                if pidfd is not None:
                    signal.pidfd_send_signal(pidfd, signal.SIGKILL)
                else:
                    os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, OSError):
                pass

        def end() -> None:
            """End the worker when its run is over, not trusting it to exit: one that stayed (a program
            with native code through a memory bug) would outlive its wall clock, and its private mapping
            of the job's memory file shows the pages it never wrote, into which the next run's table goes
            once this run returns (red team 8). Only through the pidfd: the worker is exiting by itself
            now, so its pid may be another process's by the time kill(pid) would reach it."""
            if pidfd is not None:
                try:
                    signal.pidfd_send_signal(pidfd, signal.SIGKILL)
                except OSError:
                    pass

        callback_s = 0.0
        callback_size = [0, 0]  # values, text: what this run's callback requests wrote out so far
        try:
            _send_job(sock, job)
            run_start = time.monotonic()
            reply: bytes | None = None  # the answer to the worker's last call, sent by the run's deadline
            while True:
                deadline = run_start + callback_s + float(limits.wall_seconds)
                try:
                    if reply is not None:
                        # a worker that stopped reading its reply (red team 10: native code a memory bug gave a
                        # program) made sendall raise out of run() once the socket's timeout ran out
                        protocol.send(sock, protocol.REPLY, reply, deadline)
                        reply = None
                    kind, payload = protocol.recv(sock, deadline)
                except protocol.Timeout:
                    kill()
                    _drain_exit(sock)
                    return self._failed(_failure("timeout", f"wall-clock limit of {limits.wall_seconds:g} s exceeded"),
                                        callback_s, start)
                except (protocol.ProtocolError, OSError):
                    end()  # its socket is gone, the worker perhaps not (see OUTCOME below)
                    return self._failed(_failure("killed", "the sandbox worker disappeared without a result"),
                                        callback_s, start)
                if kind == protocol.CALL:
                    t0 = time.monotonic()
                    reply = codec.dumps(self._handle_call(payload, callbacks, callback_size))
                    callback_s += time.monotonic() - t0
                elif kind == protocol.OUTCOME:
                    end()
                    total = (time.perf_counter() - start) * 1000.0
                    try:
                        return _outcome_from_dict(codec.safe_loads(payload), callback_s * 1000.0, total,
                                                  int(limits.stdout_bytes))
                    except Exception as exc:  # noqa: BLE001 - hostile or broken worker output
                        return self._failed(_failure("killed", f"malformed result from the worker: {exc}"),
                                            callback_s, start)
                elif kind == protocol.EXIT and len(payload) == protocol.EXIT_STRUCT.size:
                    sig, code, cpu = protocol.EXIT_STRUCT.unpack(payload)
                    return self._failed(_classify_exit(sig, code, cpu, limits), callback_s, start)
                else:
                    kill()
                    return self._failed(_failure("killed", "protocol violation by the sandbox worker"),
                                        callback_s, start)
        except BaseException:
            if not killed:
                kill()
            raise
        finally:
            if pidfd is not None:
                os.close(pidfd)

    @staticmethod
    def _failed(failure: ProgramFailure, callback_s: float, start: float) -> Outcome:
        total = (time.perf_counter() - start) * 1000.0
        return Outcome(ok=False, value=None, error=failure,
                       timings=Timings(callback_ms=callback_s * 1000.0, total_ms=total))

    @staticmethod
    def _handle_call(payload: bytes, callbacks: dict[str, Callable[..., Any]],
                     used: list[int] | None = None) -> tuple[bool, Any]:
        try:
            request = codec.safe_loads(payload)
            name, args, kwargs = request
            if type(name) is not str or name not in callbacks:
                return False, f"unknown callback {name!r}"
            # bounded as written out, like an answer: pickle sends a shared text or row once, and the
            # callback (a neural backend) writes every occurrence out into prompts and traces, which
            # keep every call of the run: so all of a run's requests share one budget (``used``)
            codec.check_answer_size([args, kwargs], f"a call of {name}()", used)
            args = codec.decode(args)
            kwargs = codec.decode(kwargs)
            if type(args) is not list or type(kwargs) is not dict or not all(type(k) is str for k in kwargs):
                return False, "malformed callback arguments"
        except codec.CodecError as exc:
            return False, str(exc)
        except Exception as exc:  # noqa: BLE001
            return False, f"malformed callback request: {exc}"
        return _call_parent(callbacks[name], args, kwargs)

    # ---------------------------------------------------- in-process mode
    def _run_inprocess(self, program: Any, variables: Mapping[str, Any] | None,
                       callbacks: dict[str, Callable[..., Any]], worker_globals: str | None,
                       limits: Limits, filename: str, start: float) -> Outcome:
        from . import runner, worker

        spent = [0.0]
        callback_size = [0, 0]

        def proxy(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
            def call(*args: Any, **kwargs: Any) -> Any:
                t0 = time.perf_counter()
                try:
                    sent = [codec.encode(list(args)), codec.encode(dict(kwargs))]
                    try:
                        codec.check_answer_size(sent, f"a call of {name}()", callback_size)
                    except codec.CodecError as exc:
                        raise CallbackError(str(exc)) from None
                    ok, value = _call_parent(fn, codec.decode(sent[0]), codec.decode(sent[1]))
                finally:
                    spent[0] += time.perf_counter() - t0
                if not ok:
                    raise CallbackError(value)
                return codec.decode(value)

            call.__name__ = name
            return call

        buffer = runner.BoundedBuffer(limits.stdout_bytes)
        fresh = pickle.loads(pickle.dumps(dict(variables or {}), protocol=5))
        ns = runner.build_namespace(fresh, buffer)
        proxies = {name: proxy(name, fn) for name, fn in callbacks.items()}
        ns.update(proxies)
        if isinstance(program, ast.Module):
            program = pickle.loads(pickle.dumps(program))
        try:
            if worker_globals:
                extra = worker._load_entry(worker_globals)(dict(proxies), ns)
                if extra:
                    ns.update(extra)
        except Exception as exc:  # noqa: BLE001
            return self._failed(_failure("killed", f"sandbox setup failed: {exc!r}"), spent[0], start)
        out = runner.run(program, filename, ns, buffer)
        out["stdout"] = buffer.getvalue()
        out["stdout_truncated"] = buffer.truncated
        total = (time.perf_counter() - start) * 1000.0
        return _outcome_from_dict(codec.safe_loads(codec.dumps(out)), spent[0] * 1000.0, total,
                                 int(limits.stdout_bytes))


def _send_job(sock: socket.socket, job: handoff.PackedJob) -> None:
    if job.fd is None:
        protocol.send(sock, protocol.JOB, job.payload)
        return
    readonly = job.readonly_fd()  # the worker gets a descriptor that cannot write the file
    try:
        protocol.send_with_fd(sock, protocol.JOB, job.payload, readonly)
    finally:
        os.close(readonly)


def _drain_exit(sock: socket.socket, timeout: float = 3.0) -> tuple[int, int, float] | None:
    """After killing a worker, read to EOF and return the zygote's exit report."""
    deadline = time.monotonic() + timeout
    tail = b""
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            break
        sock.settimeout(remaining)
        try:
            chunk = sock.recv(1 << 16)
        except (socket.timeout, OSError):
            break
        if not chunk:
            break
        tail = (tail + chunk)[-64:]
    frame = protocol.HEADER.size + protocol.EXIT_STRUCT.size
    if len(tail) >= frame:
        length, kind = protocol.HEADER.unpack(tail[-frame:-protocol.EXIT_STRUCT.size])
        if kind == protocol.EXIT and length == protocol.EXIT_STRUCT.size:
            return protocol.EXIT_STRUCT.unpack(tail[-protocol.EXIT_STRUCT.size:])
    return None


def _classify_exit(sig: int, code: int, cpu: float, limits: Limits) -> ProgramFailure:
    cpu_limit = max(1, int(-(-float(limits.cpu_seconds) // 1)))
    if sig == getattr(signal, "SIGXCPU", -1) or (sig == signal.SIGKILL and cpu >= cpu_limit - 0.05):
        return _failure("timeout", f"CPU time limit of {limits.cpu_seconds:g} s exceeded")
    if sig == getattr(signal, "SIGXFSZ", -1):
        return _failure("policy", "the program tried to write a file")
    if sig:
        return _failure("killed", f"the sandbox worker was killed by {_SIGNAL_NAMES.get(sig, f'signal {sig}')}")
    return _failure("killed", f"the sandbox worker exited with status {code} without a result")


_default: Sandbox | None = None
_default_lock = threading.Lock()


def default_sandbox() -> Sandbox:
    """The process-wide sandbox, started lazily and closed at exit."""
    global _default
    with _default_lock:
        if _default is None or _default._closed:
            _default = Sandbox()
        return _default


def run_program(program: str | ast.Module, **kw: Any) -> Outcome:
    return default_sandbox().run(program, **kw)
