"""Directories left by zygotes that were killed (standard library only).

A zygote removes its directory (``binder-sandbox-*`` in the temporary directory, holding only
its socket ``zygote.sock``) when it exits, even when its parent was killed. A zygote killed
with SIGKILL cannot: Ray kills the child processes of a worker it stops, and the kernel's
out-of-memory killer picks large processes. :func:`sweep` removes such leftovers: directories
of this user, at least ``min_age`` seconds old, whose socket is no longer bound by any process
and on which nothing listens (Linux lists bound sockets in ``/proc/net/unix``, and a connection
attempt to the socket is refused; elsewhere nothing is swept). It removes only the socket file and
the then-empty directory, never anything else, and follows no symlink.
:func:`sweep_in_background` runs it once per process, off the caller's path.
"""
from __future__ import annotations

import os
import socket
import stat
import tempfile
import threading
import time

PREFIX = "binder-sandbox-"
SOCKET = "zygote.sock"
#: a directory younger than this may belong to a zygote that has not bound its socket yet
MIN_AGE = 60.0
_BOUND_SOCKETS = "/proc/net/unix"


def bound_socket_paths() -> set[str] | None:
    """Paths of the Unix sockets bound now, or None where the system does not list them."""
    try:
        with open(_BOUND_SOCKETS, encoding="utf-8", errors="replace") as listing:
            lines = listing.read().splitlines()[1:]
    except OSError:
        return None
    paths = set()
    for line in lines:
        fields = line.split(None, 7)
        if len(fields) == 8 and fields[7].startswith("/"):
            paths.add(fields[7])
    return paths


def sweep(directory: str | None = None, *, min_age: float = MIN_AGE) -> list[str]:
    """Remove the leftover zygote directories in ``directory`` (default: the temporary
    directory); returns the paths removed."""
    bound = bound_socket_paths()
    if bound is None:
        return []
    root = directory or tempfile.gettempdir()
    uid, now, removed = os.getuid(), time.time(), []
    try:
        root_fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        return []
    try:
        try:
            names = [n for n in os.listdir(root_fd) if n.startswith(PREFIX)]
        except OSError:
            return []
        for name in names:
            path = os.path.join(root, name)
            if _remove_if_left_over(root_fd, name, path, uid=uid, now=now, min_age=min_age, bound=bound):
                removed.append(path)
    finally:
        os.close(root_fd)
    return removed


def _remove_if_left_over(root_fd: int, name: str, path: str, *, uid: int, now: float, min_age: float,
                         bound: set[str]) -> bool:
    """Check and remove one entry, through a descriptor of the directory itself (opened without
    following a symlink), so every step is about the directory that was checked."""
    try:
        fd = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=root_fd)
    except OSError:
        return False  # a symlink, a file, gone meanwhile, or not ours to open
    try:
        info = os.fstat(fd)
        if info.st_uid != uid or now - info.st_mtime < min_age:
            return False
        if os.listdir(fd) != [SOCKET]:
            return False  # not a zygote's directory as a zygote leaves it: not ours to judge
        if not stat.S_ISSOCK(os.stat(SOCKET, dir_fd=fd, follow_symlinks=False).st_mode):
            return False
        if os.path.join(path, SOCKET) in bound or _listening(fd):
            return False
        os.unlink(SOCKET, dir_fd=fd)
    except OSError:
        return False  # gone meanwhile, or not ours
    finally:
        os.close(fd)
    try:
        os.rmdir(name, dir_fd=root_fd)  # removes an empty directory only
    except OSError:
        return False
    return True


def _listening(dir_fd: int) -> bool:
    """Whether a process listens on the socket in the directory ``dir_fd``.

    /proc/net/unix is not enough to call a socket dead: it lists only the sockets of this
    process's network namespace (a zygote started in a container sharing /tmp, or under
    ``unshare -n``, is missing), under the path as the zygote spelled it (``TMPDIR`` through a
    symlink, or ``//tmp``, is another string). A connection attempt finds the socket by its file:
    refused means nothing listens; accepted, queued or any other answer means keep it. (A live
    zygote's worker takes the connection, sees it close, and is replaced.)"""
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        probe.setblocking(False)
        probe.connect(f"/proc/self/fd/{dir_fd}/{SOCKET}")
    except ConnectionRefusedError:
        return False
    except OSError:
        return True  # busy (its backlog is full) or cannot tell: keep it
    finally:
        probe.close()
    return True


_started = threading.Event()


def sweep_in_background() -> None:
    """Run :func:`sweep` once in this process, in a daemon thread."""
    if _started.is_set():
        return
    _started.set()
    threading.Thread(target=sweep, name="binder-sandbox-sweep", daemon=True).start()


__all__ = ["MIN_AGE", "bound_socket_paths", "sweep", "sweep_in_background"]
