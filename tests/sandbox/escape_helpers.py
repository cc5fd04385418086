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
