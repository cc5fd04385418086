"""No new sockets in a worker (sandbox/seccomp.py). The filter's verdicts are checked by running
its instructions on sample system calls (any platform), and in a real worker by C library calls
bound before the audit hook went in (escape_helpers.expose_native), which stand in for native
code a memory bug would give a program."""
import os
import platform
import socket

import pytest

from sandbox import seccomp

HELPERS = "escape_helpers:expose_native"
ALLOW, EPERM = 0x7FFF0000, 0x00050001


def verdict(machine: str, arch: int, nr: int) -> int:
    """Run the filter's instructions (load word, jeq, jge, ret) on one system call."""
    data = {0: nr, 4: arch}
    accumulator, pc = 0, 0
    instructions = seccomp.program(machine)
    while True:
        code, jt, jf, k = instructions[pc]
        if code == 0x20:
            accumulator, pc = data[k], pc + 1
        elif code in (0x15, 0x35):
            taken = accumulator == k if code == 0x15 else accumulator >= k
            pc += 1 + (jt if taken else jf)
        elif code == 0x06:
            return k
        else:
            raise AssertionError(f"unexpected instruction {code:#x}")


@pytest.mark.parametrize("machine, arch, socket_nr, socketpair_nr, read_nr", [
    ("x86_64", 0xC000003E, 41, 53, 0),
    ("aarch64", 0xC00000B7, 198, 199, 63),
])
def test_the_filter_refuses_sockets_and_io_uring_and_allows_the_rest(machine, arch, socket_nr, socketpair_nr, read_nr):
    assert verdict(machine, arch, socket_nr) == EPERM
    assert verdict(machine, arch, socketpair_nr) == EPERM
    assert verdict(machine, arch, 425) == EPERM  # io_uring_setup
    assert verdict(machine, arch, read_nr) == ALLOW
    assert verdict(machine, arch, 1) == ALLOW
    assert verdict(machine, 0x40000003, 102) == EPERM  # a 32-bit entry (socketcall): every call refused


def test_x32_system_calls_are_refused():
    assert verdict("x86_64", 0xC000003E, 0x40000000 | 41) == EPERM
    assert verdict("x86_64", 0xC000003E, 0x40000000 | 0) == EPERM


needs_filter = pytest.mark.skipif(not (platform.system() == "Linux" and platform.machine() in ("x86_64", "aarch64")),
                                  reason="the filter is built for Linux on x86_64 and aarch64")


@needs_filter
@pytest.mark.parametrize("family, kind", [(socket.AF_INET, socket.SOCK_DGRAM), (socket.AF_INET6, socket.SOCK_DGRAM),
                                          (socket.AF_UNIX, socket.SOCK_STREAM), (socket.AF_INET, socket.SOCK_STREAM)])
def test_native_code_in_a_worker_cannot_make_a_socket(sb, family, kind):
    outcome = sb.run(f"native_socket({int(family)}, {int(kind)})", worker_globals=HELPERS)
    assert outcome.ok, outcome.error
    assert outcome.value == -1


@needs_filter
def test_programs_still_run_and_read_what_they_need(sb):
    program = 'pd.Timestamp("2020-06-01", tz="Europe/Paris").isoformat()'
    assert sb.run(program).value == "2020-06-01T00:00:00+02:00"


def test_the_filter_can_be_turned_off(monkeypatch):
    monkeypatch.setenv("BINDER_SANDBOX_SECCOMP", "0")
    assert not seccomp.supported() and not seccomp.restrict()
