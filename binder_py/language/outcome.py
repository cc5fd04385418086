"""Build sandbox-style outcomes for programs that never reach the sandbox (syntax/policy)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass
class _Failure:  # same fields as sandbox.ProgramFailure
    kind: str
    message: str
    line: int | None
    exception_type: str | None = None


@dataclass
class _Timings:  # same fields as sandbox.Timings
    compile_ms: float = 0.0
    run_ms: float = 0.0
    callback_ms: float = 0.0
    total_ms: float = 0.0


@dataclass
class _Outcome:  # same fields as sandbox.Outcome
    ok: bool
    value: Any
    error: Any
    stdout: str = ""
    stdout_truncated: bool = False
    timings: Any = None


def failed_outcome(kind: str, message: str, line: int | None, exception_type: str | None = None) -> Any:
    """A failed ``sandbox.Outcome`` (falls back to look-alike classes when the sandbox is absent)."""
    try:
        from sandbox import Outcome, ProgramFailure, Timings  # type: ignore[import-not-found]
    except ImportError:
        Outcome, ProgramFailure, Timings = _Outcome, _Failure, _Timings  # noqa: N806
    try:
        failure = ProgramFailure(kind=kind, message=message, line=line, exception_type=exception_type)
    except TypeError:
        failure = _Failure(kind, message, line, exception_type)
    try:
        timings = Timings(compile_ms=0.0, run_ms=0.0, callback_ms=0.0, total_ms=0.0)
    except TypeError:
        timings = _Timings()
    try:
        return Outcome(ok=False, value=None, error=failure, stdout="", stdout_truncated=False, timings=timings)
    except TypeError:
        return _Outcome(False, None, failure, "", False, timings)
