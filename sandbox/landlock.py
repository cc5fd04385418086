"""The kernel's own fence around a worker (Linux Landlock): what the audit hook refuses in Python,
refused again by the kernel, for code that got past Python altogether.

The audit hook (sandbox/worker.py) is a CPython feature: a memory bug that gives a program native
code execution (docs/SECURITY.md, "Known limits") walks past it. So each worker restricts
itself with Landlock at the moment it installs the audit hook (its job read, its limits set,
just before the program runs):

* files: read-only access beneath the same roots the audit hook allows (the Python installation,
  its site-packages, the sandbox's own code, the time-zone database); nothing written, created,
  removed or executed anywhere;
* network (Landlock ABI ≥ 4): no TCP ``bind`` or ``connect``;
* scope (ABI ≥ 6): no signal to a process outside the worker, no connection to an abstract Unix
  socket outside it.

Already open descriptors (the job's connection, the table's memory file) keep working: Landlock
checks opening, not using. Everything degrades to doing nothing where Landlock is missing (not
Linux, a kernel before 5.13, Landlock disabled) or when ``BINDER_SANDBOX_LANDLOCK=0``.
"""
from __future__ import annotations

import ctypes
import os
import struct
from collections.abc import Iterable

_SYS_CREATE_RULESET, _SYS_ADD_RULE, _SYS_RESTRICT_SELF = 444, 445, 446  # the same on every architecture
_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH = 1
_PR_SET_NO_NEW_PRIVS = 38

# filesystem rights, by the ABI that introduced them
_FS_EXECUTE, _FS_WRITE_FILE, _FS_READ_FILE, _FS_READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
_FS_ABI1 = (1 << 13) - 1  # execute … make_sym
_FS_BY_ABI = {1: _FS_ABI1, 2: _FS_ABI1 | 1 << 13, 3: _FS_ABI1 | 1 << 13 | 1 << 14}  # + refer, + truncate
_FS_ABI5 = _FS_BY_ABI[3] | 1 << 15  # + ioctl_dev
_NET_BIND_TCP, _NET_CONNECT_TCP = 1 << 0, 1 << 1
_SCOPE_ABSTRACT_UNIX_SOCKET, _SCOPE_SIGNAL = 1 << 0, 1 << 1

#: the C library, loaded once in the zygote (a worker loads nothing)
_libc = ctypes.CDLL(None, use_errno=True)


def prctl(option: int, *args: int) -> int:
    """``prctl(option, ...)`` with every argument an unsigned long (a plain int would be cut to 32 bits)."""
    words = [ctypes.c_ulong(a) for a in (*args, 0, 0, 0, 0)[:4]]
    return int(_libc.prctl(option, *words))


def no_new_privs() -> bool:
    """Set ``PR_SET_NO_NEW_PRIVS`` (what Landlock and seccomp filters need without privilege)."""
    return prctl(_PR_SET_NO_NEW_PRIVS, 1) == 0


def _syscall(number: int, *args: object) -> int:
    """``syscall(number, ...)``: every argument a machine word (the kernel reads whole registers)."""
    return int(_libc.syscall(ctypes.c_long(number), *args))


def abi_version(*, honour_switch: bool = True) -> int:
    """The kernel's Landlock ABI version; 0 when there is none (or, with ``honour_switch``, when
    ``BINDER_SANDBOX_LANDLOCK=0`` turns the fence off)."""
    if (honour_switch and os.environ.get("BINDER_SANDBOX_LANDLOCK", "1") == "0") or not hasattr(os, "fork"):
        return 0
    try:
        version = _syscall(_SYS_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_ulong(_CREATE_RULESET_VERSION))
    except (OSError, AttributeError):
        return 0
    return max(0, version)


def _handled_fs(abi: int) -> int:
    return _FS_BY_ABI.get(abi, _FS_ABI5)


def restrict(read_roots: Iterable[str]) -> int:
    """Restrict this process (and its future children) as the module says; the ABI version
    applied, 0 when nothing was applied. Must run single-threaded; never raises."""
    abi = abi_version()
    if abi < 1:
        return 0
    fs = _handled_fs(abi)
    net = (_NET_BIND_TCP | _NET_CONNECT_TCP) if abi >= 4 else 0
    scoped = (_SCOPE_ABSTRACT_UNIX_SOCKET | _SCOPE_SIGNAL) if abi >= 6 else 0
    if abi >= 6:
        attr = struct.pack("=QQQ", fs, net, scoped)
    elif abi >= 4:
        attr = struct.pack("=QQ", fs, net)
    else:
        attr = struct.pack("=Q", fs)
    buffer = ctypes.create_string_buffer(attr, len(attr))
    ruleset = _syscall(_SYS_CREATE_RULESET, buffer, ctypes.c_size_t(len(attr)), ctypes.c_ulong(0))
    if ruleset < 0:
        return 0
    try:
        read = (_FS_READ_FILE | _FS_READ_DIR) & fs
        for root in read_roots:
            _allow(ruleset, root, read)
        if not no_new_privs():
            return 0
        if _syscall(_SYS_RESTRICT_SELF, ctypes.c_long(ruleset), ctypes.c_ulong(0)) != 0:
            return 0
        return abi
    finally:
        os.close(ruleset)


def _allow(ruleset: int, path: str, access: int) -> None:
    """Allow ``access`` beneath ``path`` (a file gets only the rights files take: reading it)."""
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return  # a root that does not exist here
    try:
        if not os.path.isdir(path):
            access &= _FS_READ_FILE | _FS_WRITE_FILE | _FS_EXECUTE
        rule = ctypes.create_string_buffer(struct.pack("=Qi", access, fd), 12)
        _syscall(_SYS_ADD_RULE, ctypes.c_long(ruleset), ctypes.c_long(_RULE_PATH_BENEATH), rule, ctypes.c_ulong(0))
    finally:
        os.close(fd)
