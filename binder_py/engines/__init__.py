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

from collections.abc import Callable, Iterable, Iterator
from typing import Any, Protocol

from binder_py.errors import BinderError

ENGINES = ("local", "ray")
RAY_INSTALL_HINT = ("the ray engine needs Ray: pip install \"binder-py[ray]\" "
                    "(from a checkout: pip install -e \".[ray]\")")


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


def ray_installed() -> bool:
    from importlib.util import find_spec

    return find_spec("ray") is not None


def require_ray() -> None:
    """Raise a one-line :class:`BinderError` saying how to install Ray when it is missing."""
    if not ray_installed():
        raise BinderError(RAY_INSTALL_HINT)


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
