"""Directories of zygotes killed with SIGKILL are removed by the next sandbox (sandbox/leftovers.py)."""

import os
import signal
import socket
import sys
import time

import pytest

from sandbox import leftovers

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/net/unix")


def _socket_dir(root, name, *, bound: bool, age: float = 3600.0):
    path = root / name
    path.mkdir()
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(str(path / leftovers.SOCKET))
    if not bound:
        sock.close()  # the file stays, nothing holds it: what a killed zygote leaves
    old = time.time() - age
    os.utime(path, (old, old))
    return path, sock


def test_only_old_unbound_zygote_directories_of_this_user_are_removed(tmp_path):
    root = tmp_path / "tmp"
    root.mkdir()
    dead, _ = _socket_dir(root, "binder-sandbox-dead", bound=False)
    alive, held = _socket_dir(root, "binder-sandbox-alive", bound=True)
    young, _ = _socket_dir(root, "binder-sandbox-young", bound=False, age=1.0)
    busy, _ = _socket_dir(root, "binder-sandbox-busy", bound=False)
    (busy / "notes.txt").write_text("not a zygote's leftover")
    other, _ = _socket_dir(root, "other-dead", bound=False)
    (root / "binder-sandbox-file").write_text("x")
    (root / "binder-sandbox-link").symlink_to(dead)
    try:
        removed = leftovers.sweep(str(root))
    finally:
        held.close()
    assert removed == [str(dead)] and not dead.exists()
    for kept in (alive, young, busy, other, root / "binder-sandbox-file", root / "binder-sandbox-link"):
        assert os.path.lexists(kept)
    assert (busy / "notes.txt").exists()


def test_a_zygote_killed_with_sigkill_leaves_a_directory_that_the_sweep_removes():
    from sandbox import Sandbox

    sandbox = Sandbox()
    try:
        assert sandbox.run("1 + 1").value == 2
        zygote = sandbox._zygote
        directory = zygote.dir
        os.kill(zygote.proc.pid, signal.SIGKILL)
        zygote.proc.wait(10)
        assert os.path.isdir(directory)  # SIGKILL: the zygote could not clean up
        socket_path = os.path.join(directory, leftovers.SOCKET)
        deadline = time.monotonic() + 10
        while socket_path in leftovers.bound_socket_paths() and time.monotonic() < deadline:
            time.sleep(0.05)  # its idle workers, which hold the socket too, die with it (PDEATHSIG)
        assert directory in leftovers.sweep(min_age=0.0) and not os.path.exists(directory)
    finally:
        sandbox.close()
