"""Directories left by zygotes that were killed (standard library only).

A zygote removes its directory (``binder-sandbox-*`` in the temporary directory, holding only
its socket ``zygote.sock``) when it exits, even when its parent was killed. A zygote killed
with SIGKILL cannot: Ray kills the child processes of a worker it stops, and the kernel's
out-of-memory killer picks large processes. :func:`sweep` removes such leftovers: directories
of this user, at least ``min_age`` seconds old, whose socket is no longer bound by any process
(Linux lists bound sockets in ``/proc/net/unix``; elsewhere nothing is swept). It removes only
the socket file and the then-empty directory, never anything else, and follows no symlink.
:func:`sweep_in_background` runs it once per process, off the caller's path.
"""
from __future__ import annotations

import os
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
        names = [n for n in os.listdir(root) if n.startswith(PREFIX)]
    except OSError:
        return []
    for name in names:
        path = os.path.join(root, name)
        try:
            info = os.lstat(path)
            if not stat.S_ISDIR(info.st_mode) or info.st_uid != uid or now - info.st_mtime < min_age:
                continue
            if os.listdir(path) != [SOCKET]:
                continue  # not a zygote's directory as a zygote leaves it: not ours to judge
            socket_path = os.path.join(path, SOCKET)
            if not stat.S_ISSOCK(os.lstat(socket_path).st_mode) or socket_path in bound:
                continue
            os.unlink(socket_path)
            os.rmdir(path)
            removed.append(path)
        except OSError:
            continue  # gone meanwhile, or not ours
    return removed


_started = threading.Event()


def sweep_in_background() -> None:
    """Run :func:`sweep` once in this process, in a daemon thread."""
    if _started.is_set():
        return
    _started.set()
    threading.Thread(target=sweep, name="binder-sandbox-sweep", daemon=True).start()


__all__ = ["MIN_AGE", "bound_socket_paths", "sweep", "sweep_in_background"]
