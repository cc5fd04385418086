"""The kernel's fence around a worker (sandbox/landlock.py), tested with C library calls bound
before the audit hook went in (escape_helpers.expose_native): they stand in for native code that a
memory bug would give a program, which the audit hook cannot see. Skipped where the kernel has no
Landlock."""
import os
import socket

import pytest

from sandbox import landlock

HELPERS = "escape_helpers:expose_native"

# skipped by what the kernel supports, not by BINDER_SANDBOX_LANDLOCK: with the fence turned off
# these tests fail (the native calls succeed), which is what they are for
KERNEL_ABI = landlock.abi_version(honour_switch=False)
pytestmark = pytest.mark.skipif(KERNEL_ABI < 1, reason="this kernel has no Landlock")


@pytest.fixture()
def secret_file(tmp_path):
    path = tmp_path / "credentials"
    path.write_text("s3cret")
    return path


def test_native_code_cannot_read_outside_the_installation(sb, secret_file):
    outcome = sb.run(f"native_open({str(secret_file)!r})", worker_globals=HELPERS)
    assert outcome.ok, outcome.error
    assert outcome.value == -1


def test_native_code_cannot_create_a_file(sb, tmp_path):
    target = tmp_path / "planted"
    outcome = sb.run(f"native_open({str(target)!r}, {os.O_WRONLY | os.O_CREAT})", worker_globals=HELPERS)
    assert outcome.ok, outcome.error
    assert outcome.value == -1 and not target.exists()


@pytest.mark.skipif(KERNEL_ABI < 4, reason="Landlock ABI < 4 does not fence TCP")
def test_native_code_cannot_connect_out(sb):
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        outcome = sb.run(f"native_connect({server.getsockname()[1]})", worker_globals=HELPERS)
    assert outcome.ok, outcome.error
    assert outcome.value == -1


def test_what_programs_need_to_read_stays_readable(sb):
    outcome = sb.run('native_open("/usr/share/zoneinfo/UTC")', worker_globals=HELPERS)
    assert outcome.ok, outcome.error
    if os.path.exists("/usr/share/zoneinfo/UTC"):
        assert outcome.value >= 0
    program = 'pd.Timestamp("2020-01-01", tz="Europe/Paris").isoformat()'
    assert sb.run(program).value == "2020-01-01T00:00:00+01:00"


def test_the_fence_can_be_turned_off(monkeypatch):
    monkeypatch.setenv("BINDER_SANDBOX_LANDLOCK", "0")
    assert landlock.abi_version() == 0 and landlock.restrict(["/usr"]) == 0
