"""Where questions run: the ``local`` engine (threads in this process) or the ``ray`` engine
(Ray tasks on a cluster, results streamed back to this process). See docs/SCALE.md.

An engine maps a *job* ``work(binder, item) -> result`` over items and yields ``(index,
result)`` as each finishes. The caller (the evaluation runner, :meth:`Binder.ask_many`)
keeps the one run format: it writes each result as it arrives.

Ray is optional: it is imported only inside functions of :mod:`binder_py.engines.ray_engine` and
:mod:`binder_py.engines.budget`, and
:func:`require_ray` turns its absence into one line saying how to install it.
"""

from __future__ import annotations

import numbers
import os
import socket
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Protocol
from urllib.parse import urlsplit

from binder_py.errors import BinderError

ENGINES = ("local", "ray")
RAY_INSTALL_HINT = ("the ray engine needs Ray: pip install \"binder-py[ray]\" "
                    "(from a checkout: pip install -e \".[ray]\")")
#: how long a cluster's address may take to accept a connection (Ray itself retries for ever)
RAY_CONNECT_SECONDS = 10.0
#: the port of an address that names none: Ray Client (``ray://HEAD``), else the head's GCS
RAY_CLIENT_PORT, RAY_GCS_PORT = 10001, 6379
#: addresses Ray resolves itself, on this machine
RAY_LOCAL_ADDRESSES = ("auto", "local")


class Engine(Protocol):
    """What the evaluation runner and :meth:`Binder.ask_many` use of an engine.

    ``startup_seconds``: the engine's own start (connecting to or starting Ray; 0 for local);
    ``overheads``: seconds per finished question that the engine added beyond the question's
    own time (empty when the engine adds none it can measure)."""

    name: str
    startup_seconds: float
    overheads: list[float]

    def run(self, work: Callable[[Any, Any], Any], items: Iterable[Any]) -> Iterator[tuple[int, Any]]: ...

    def neural_counts(self) -> dict[str, int]: ...

    def close(self) -> None: ...


def check_engine(name: str) -> str:
    """``name`` if it is a known engine, else a one-line :class:`BinderError`."""
    if name not in ENGINES:
        raise BinderError(f"unknown engine {name!r}; use one of {', '.join(ENGINES)}")
    return name


def check_concurrency(value: Any, what: str = "concurrency") -> int:
    """``value`` when it is a whole number of at least 1 (questions at once), else a one-line
    :class:`BinderError` (``ask_many(concurrency=0)`` ran one at a time without a word)."""
    if not isinstance(value, numbers.Integral) or isinstance(value, bool) or value < 1:
        raise BinderError(f"{what} must be a whole number of at least 1 (questions at once), got {value!r}")
    return int(value)


def ray_installed() -> bool:
    from importlib.util import find_spec

    return find_spec("ray") is not None


def require_ray() -> None:
    """Raise a one-line :class:`BinderError` saying how to install Ray when it is missing."""
    if not ray_installed():
        raise BinderError(RAY_INSTALL_HINT)


def ray_address(address: str | None) -> str | None:
    """The cluster the ray engine joins: ``address``, else ``$RAY_ADDRESS``; None: a new local Ray."""
    return address or os.environ.get("RAY_ADDRESS") or None


def check_ray_address(address: str | None) -> None:
    """A one-line :class:`BinderError` when the cluster at :func:`ray_address` does not accept a
    connection within :data:`RAY_CONNECT_SECONDS`: ``ray.init`` would wait for it for ever."""
    address = ray_address(address)
    if address is None or address in RAY_LOCAL_ADDRESSES:
        return
    client = address.startswith("ray://")
    if "://" in address and not client:  # another scheme (a Ray client builder module): Ray's own to resolve
        return
    try:
        parts = urlsplit("//" + address.removeprefix("ray://"))
        host, port = parts.hostname, parts.port or (RAY_CLIENT_PORT if client else RAY_GCS_PORT)
    except ValueError as error:
        raise BinderError(f"the Ray address {address!r} is not HOST:PORT ({error}); give ray://HEAD:10001, "
                          "HEAD:6379 or auto") from None
    if not host:
        raise BinderError(f"the Ray address {address!r} names no host; give ray://HEAD:10001, HEAD:6379 or auto")
    try:
        socket.create_connection((host, port), timeout=RAY_CONNECT_SECONDS).close()
    except socket.gaierror:
        reason = f"unknown host {host!r}"
    except ConnectionRefusedError:
        reason = f"connection refused: nothing is listening at {host}:{port}"
    except TimeoutError:
        reason = f"no answer from {host}:{port} within {RAY_CONNECT_SECONDS:g} s"
    except OSError as error:
        reason = f"{host}:{port}: {error.strerror or error}"
    else:
        return
    raise BinderError(f"cannot reach the Ray cluster at {address} ({reason}); check the address (--ray-address, "
                      "ray_address=, $RAY_ADDRESS), or leave it out to start a local Ray")


def top_up(inflight: dict[Any, Any], pending: Iterator[tuple[int, Any]], limit: int,
           submit: Callable[[int, Any], tuple[Any, Any]]) -> None:
    """Submit ``(index, item)`` pairs from ``pending`` until ``limit`` are in flight; ``submit``
    returns the handle to wait on and what to remember about it (kept in ``inflight``)."""
    while len(inflight) < limit:
        nxt = next(pending, None)
        if nxt is None:
            return
        handle, memo = submit(*nxt)
        inflight[handle] = memo


__all__ = ["ENGINES", "RAY_INSTALL_HINT", "check_engine", "ray_installed", "require_ray", "top_up"]
