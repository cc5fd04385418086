"""Result types shared by the parent and the worker (no heavy imports here)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

FailureKind = Literal["syntax", "policy", "runtime", "timeout", "memory", "killed"]
FAILURE_KINDS = ("syntax", "policy", "runtime", "timeout", "memory", "killed")


@dataclass(frozen=True)
class Limits:
    """Per-program resource limits.

    ``memory_bytes`` is the address space a program may allocate on top of the
    warm worker it runs in (the worker itself already maps pandas/numpy).
    """

    wall_seconds: float = 10.0
    cpu_seconds: float = 5.0
    memory_bytes: int = 2 * 1024**3
    stdout_bytes: int = 64 * 1024
    open_files: int = 32


@dataclass(frozen=True)
class Timings:
    compile_ms: float = 0.0
    run_ms: float = 0.0
    callback_ms: float = 0.0
    total_ms: float = 0.0


@dataclass(frozen=True)
class ProgramFailure:
    kind: FailureKind
    message: str
    line: int | None = None
    exception_type: str | None = None


@dataclass(frozen=True)
class Outcome:
    ok: bool
    value: Any = None
    error: ProgramFailure | None = None
    stdout: str = ""
    stdout_truncated: bool = False
    timings: Timings = field(default_factory=Timings)


class CallbackError(Exception):
    """Raised inside the program when a parent-side callback failed."""


class PolicyError(Exception):
    """The program did something the sandbox policy forbids."""


class SandboxPermissionError(PermissionError, PolicyError):
    """Raised by the worker's audit hook (an OSError, so library code that
    tolerates failed file operations keeps working)."""


class SandboxUnavailable(RuntimeError):
    """Strict mode cannot run on this platform, or the zygote failed to start."""
