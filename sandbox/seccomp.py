"""No new sockets in a worker (a seccomp filter): the part of the kernel's fence Landlock lacks.

A worker needs no socket beyond the connection it already holds (its job, its callbacks). Landlock
(sandbox/landlock.py) keeps files read-only and fences TCP, but not UDP, named Unix sockets or
io_uring. So, at the moment Landlock goes in, the worker also installs a seccomp filter that
refuses ``socket``, ``socketpair`` and ``io_uring_setup`` with ``EPERM``, and every system call made
through another architecture's entry (32-bit ``int 0x80``, x32), where the numbers differ. Native
code that a memory bug gives a program can then send nothing anywhere: no DNS query, no datagram,
no connection to a local daemon's socket.

Linux on x86_64 and aarch64 only; elsewhere (and with ``BINDER_SANDBOX_SECCOMP=0``) it does
nothing.
"""
from __future__ import annotations

import ctypes
import errno
import os
import platform
import struct

from .landlock import no_new_privs, prctl

_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER = 22, 2
_RET_ALLOW = 0x7FFF0000
_RET_EPERM = 0x00050000 | errno.EPERM
# BPF opcodes: load a 32-bit word of seccomp_data; jump if equal / if greater or equal; return
_LD_W_ABS, _JEQ_K, _JGE_K, _RET_K = 0x20, 0x15, 0x35, 0x06
_OFFSET_NR, _OFFSET_ARCH = 0, 4
_X32_SYSCALL_BIT = 0x40000000

#: per machine: its audit architecture and the numbers of socket, socketpair, io_uring_setup
_MACHINES = {
    "x86_64": (0xC000003E, (41, 53, 425)),
    "aarch64": (0xC00000B7, (198, 199, 425)),
}


def supported() -> bool:
    return (hasattr(os, "fork") and platform.system() == "Linux" and platform.machine() in _MACHINES
            and os.environ.get("BINDER_SANDBOX_SECCOMP", "1") != "0")


def program(machine: str) -> list[tuple[int, int, int, int]]:
    """The filter for ``machine`` as (code, jump if true, jump if false, k) instructions."""
    arch, denied = _MACHINES[machine]
    n = len(denied)
    # 0 load arch; 1 foreign arch -> deny; 2 load nr; 3 x32 -> deny; 4.. denied numbers -> deny; allow; deny
    out = [(_LD_W_ABS, 0, 0, _OFFSET_ARCH),
           (_JEQ_K, 0, n + 3, arch),
           (_LD_W_ABS, 0, 0, _OFFSET_NR)]
    out.append((_JGE_K, n + 1, 0, _X32_SYSCALL_BIT) if machine == "x86_64" else (_JEQ_K, 0, 0, 0))
    for index, number in enumerate(denied):
        out.append((_JEQ_K, n - index, 0, number))
    out += [(_RET_K, 0, 0, _RET_ALLOW), (_RET_K, 0, 0, _RET_EPERM)]
    return out


def restrict() -> bool:
    """Install the filter on this process (and its future children); True when installed.
    Must run single-threaded; never raises."""
    if not supported():
        return False
    instructions = program(platform.machine())
    raw = b"".join(struct.pack("=HBBI", *instruction) for instruction in instructions)
    filters = ctypes.create_string_buffer(raw, len(raw))
    fprog = struct.pack("=H6xQ", len(instructions), ctypes.addressof(filters))
    prog = ctypes.create_string_buffer(fprog, len(fprog))
    if not no_new_privs():
        return False
    return prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.addressof(prog)) == 0
