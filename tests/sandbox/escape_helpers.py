"""Trusted ``worker_globals`` entry points used by the tests to simulate a
guard bypass: they hand the program raw functions, so only the worker's audit
hook and rlimits stand between the program and the system."""
import builtins
import ctypes
import os
import socket
import subprocess
import threading


def expose_raw(callbacks, namespace):
    return {
        "raw_open": builtins.open,
        "raw_system": os.system,
        "raw_fork": os.fork,
        "raw_execv": os.execv,
        "raw_popen": subprocess.Popen,
        "raw_socket": socket.socket,
        "raw_listdir": os.listdir,
        "raw_remove": os.remove,
        "raw_kill": os.kill,
        "raw_string_at": ctypes.string_at,
        "raw_thread": threading.Thread,
        "raw_posix_spawn": os.posix_spawn,
    }


def add_constant(callbacks, namespace):
    return {"answer_base": 40, "ask": callbacks.get("ask")}


def expose_leaked(callbacks, namespace):
    """Objects a program must never be able to use, hidden inside containers: as if some
    pandas/numpy call had produced them (the way a name-dispatch hole once did)."""
    import copyreg

    import numpy as np
    import pandas as pd

    bad = [copyreg._reconstructor, os.system, os, pd.DataFrame({"a": [1]}).__init__, type(os)]
    objects = np.empty(len(bad), dtype=object)
    objects[:] = bad
    return {
        "leaked_tuple": tuple(bad),
        "leaked_list": list(bad),
        "leaked_dict": {i: b for i, b in enumerate(bad)},
        "leaked_kwargs": {f"k{i}": b for i, b in enumerate(bad)},
        "leaked_array": objects,
        "leaked_series": pd.Series(objects),
        "leaked_frame": pd.DataFrame({"f": objects}),
        # raw (unguarded) entry points, as if a library call had put them in a container
        "leaked_entry_points": [pd.DataFrame({"a": [1]}).agg, pd.DataFrame.agg, pd.Series([1]).apply],
    }


def expose_internals(callbacks, namespace):
    """pandas' bookkeeping of a table (its block manager, as ``s.agg(x="__dict__")`` once handed it out)
    inside a container, as if some pandas call had put it there."""
    import pandas as pd

    series = pd.Series([1, 2, 3])
    return {"leaked_internals": [series._mgr, series._mgr.blocks[0], series._mgr.blocks[0].mgr_locs]}


class _LeakingContext:
    """A context manager whose ``__enter__`` hands back a module."""

    def __enter__(self):
        return os

    def __exit__(self, *exc):
        return False


def expose_leaky_callables(callbacks, namespace):
    """Callables that return a module, as an allowed decorator or context manager might: what
    Python itself then binds (a decorated name, a ``with ... as`` target) must still be checked."""
    return {"leak": lambda fn: os, "keep": lambda fn: fn, "cm": _LeakingContext}


def expose_native(callbacks, namespace):
    """C library calls bound before the audit hook goes in, standing in for native code a memory bug
    would give a program: they pass the audit hook, so only the kernel's fence (sandbox/landlock.py)
    stands between them and the system. Each returns the C call's result (-1: refused)."""
    import ctypes
    import socket as socket_module
    import struct

    libc = ctypes.CDLL(None, use_errno=True)
    libc.open.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_int]
    sock = socket_module.socket(socket_module.AF_INET, socket_module.SOCK_STREAM)  # made before the hook

    def native_open(path, flags=os.O_RDONLY):
        fd = libc.open(os.fsencode(path), flags, 0o600)
        if fd >= 0:
            os.close(fd)
        return fd

    address = ctypes.create_string_buffer(16)  # a sockaddr_in, filled in by native_connect
    connect = libc.connect  # looked up now: a lookup after the hook is refused (ctypes.dlsym)

    def native_connect(port):
        address.raw = struct.pack("=HH4s8x", socket_module.AF_INET, socket_module.htons(port), bytes([127, 0, 0, 1]))
        return connect(sock.fileno(), address, 16)

    native_socket_call = libc.socket  # looked up now (a lookup after the hook is refused)

    def native_socket(family=socket_module.AF_INET, kind=socket_module.SOCK_DGRAM):
        fd = native_socket_call(family, kind, 0)
        if fd >= 0:
            os.close(fd)
        return fd

    return {"native_open": native_open, "native_connect": native_connect, "native_socket": native_socket}


class _Lingering:
    """Stays in the worker after its outcome is sent: freed with the program's namespace when the
    worker's handler returns, it then sleeps (no CPU, so no CPU limit ends it), standing in for native
    code a memory bug would give a program."""

    def __init__(self, seconds):
        self.seconds = seconds

    def __del__(self):
        import time

        time.sleep(self.seconds)


def linger_after_outcome(callbacks, namespace):
    return {"lingering": _Lingering(8.0)}


def call_and_stall(callbacks, namespace):
    """Stands in for native code that asks the parent a callback and then never reads the reply (a worker
    whose memory a program corrupted): ``stall(name)`` sends the call frame and sleeps."""
    from sandbox import codec, protocol

    proxy = callbacks["big"]

    def stall(seconds):
        import time

        conn = object.__getattribute__(proxy, "_conn")
        protocol.send(conn, protocol.CALL, codec.dumps(("big", codec.encode([]), codec.encode({}))))
        time.sleep(seconds)

    return {"stall": stall}


def forge_outcome(callbacks, namespace):
    """Stands in for native code that sends the parent an outcome of its own (``forge(stdout_chars)``): an
    answer of 1 with that much printed output and a long exception type name, then sleeps."""
    from sandbox import codec, protocol

    proxy = callbacks["big"]

    def forge(chars):
        import time

        conn = object.__getattribute__(proxy, "_conn")
        out = {"ok": True, "value": codec.encode(1), "compile_ms": 0.0, "run_ms": 0.0,
               "stdout": "\u20ac" * chars, "stdout_truncated": False}
        protocol.send(conn, protocol.OUTCOME, codec.dumps(out))
        time.sleep(30)

    return {"forge": forge}
