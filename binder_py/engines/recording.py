"""A worker's LM recording, carried back to the driver with the question's result.

A local run's model client writes every answer it uses into ``DIR/lm.sqlite`` (its
*recorder*). A Ray worker may be on another machine, so its client records into a
:class:`CapturedRecording` instead; the task returns the captured writes with the
question's result and the driver applies them to the run's ``lm.sqlite``
(:func:`write_recording`), so the file is the same as a local run's and
``--lm replay:DIR`` works the same.
"""

from __future__ import annotations

import threading
from typing import Any

#: the recorder methods an :class:`~binder_py.lm.client.LMClient` calls, and the only ones replayed
RECORDED_METHODS = ("put", "put_model", "put_token_count")

Write = tuple[str, tuple[Any, ...], dict[str, Any]]


class CapturedRecording:
    """Stands in for an :class:`~binder_py.lm.store.LMStore` recorder: keeps the writes in memory."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._writes: list[Write] = []

    def _keep(self, method: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        with self._lock:
            self._writes.append((method, args, kwargs))

    def put(self, *args: Any, **kwargs: Any) -> None:
        self._keep("put", args, kwargs)

    def put_model(self, *args: Any, **kwargs: Any) -> None:
        self._keep("put_model", args, kwargs)

    def put_token_count(self, *args: Any, **kwargs: Any) -> None:
        self._keep("put_token_count", args, kwargs)

    def drain(self) -> list[Write]:
        """The writes kept since the last drain (and forget them)."""
        with self._lock:
            writes, self._writes = self._writes, []
        return writes


def write_recording(store: Any, writes: list[Write]) -> int:
    """Apply captured ``writes`` to ``store`` (an :class:`~binder_py.lm.store.LMStore`); returns
    how many were applied. Only recorder methods are called."""
    applied = 0
    for method, args, kwargs in writes:
        if method not in RECORDED_METHODS:
            raise ValueError(f"not a recorder write: {method!r}")
        getattr(store, method)(*args, **kwargs)
        applied += 1
    return applied


__all__ = ["CapturedRecording", "RECORDED_METHODS", "write_recording"]
