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


def _listening_dir(root, name, bind_root):
    """A live zygote's directory: its socket bound through ``bind_root`` and listening."""
    path = root / name
    path.mkdir()
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(str(bind_root / name / leftovers.SOCKET))
    sock.listen(4)
    old = time.time() - 3600.0
    os.utime(path, (old, old))
    return path, sock


def test_a_live_zygote_bound_through_another_spelling_of_the_temp_dir_is_kept(tmp_path):
    # one process has TMPDIR=/x/link (a symlink to /x/tmp), the other TMPDIR=/x/tmp: /proc/net/unix
    # lists the path as bound ('/x/link/...'), which is not the path the sweep builds
    root = tmp_path / "tmp"
    root.mkdir()
    link = tmp_path / "link"
    link.symlink_to(root)
    alive, held = _listening_dir(root, "binder-sandbox-alive", link)
    try:
        removed = leftovers.sweep(str(root))
        assert removed == [] and (alive / leftovers.SOCKET).exists()
    finally:
        held.close()


def test_a_live_zygote_in_another_network_namespace_is_kept(tmp_path, monkeypatch):
    # /proc/net/unix lists the sockets of this process's network namespace only: a zygote started
    # by a process in another one (a container sharing /tmp, `unshare -n`, systemd PrivateNetwork=)
    # is missing from the listing although it is alive
    root = tmp_path / "tmp"
    root.mkdir()
    alive, held = _listening_dir(root, "binder-sandbox-alive", root)
    dead, _ = _socket_dir(root, "binder-sandbox-dead", bound=False)
    monkeypatch.setattr(leftovers, "bound_socket_paths", lambda: set())
    try:
        removed = leftovers.sweep(str(root))
        assert removed == [str(dead)] and (alive / leftovers.SOCKET).exists()
    finally:
        held.close()


def test_the_connection_probe_leaves_a_live_sandbox_working(monkeypatch):
    from sandbox import Sandbox

    sandbox = Sandbox()
    try:
        assert sandbox.run("1 + 1").value == 2
        zygote = sandbox._zygote
        old = time.time() - 3600.0
        os.utime(zygote.dir, (old, old))
        monkeypatch.setattr(leftovers, "bound_socket_paths", lambda: set())
        assert zygote.dir not in leftovers.sweep(os.path.dirname(zygote.dir))
        for _ in range(3):
            assert sandbox.run("2 + 2").value == 4
        assert sandbox._zygote is zygote and os.path.exists(zygote.path)
    finally:
        sandbox.close()
