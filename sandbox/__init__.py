"""binder-py sandbox: run language-model-written pandas programs safely.

See docs/SECURITY.md for the threat model and the layers. The names below are imported on
first use, so that :mod:`sandbox.launch` can start the zygote before pandas is imported.
"""
from __future__ import annotations

import importlib
from typing import Any

from .outcome import (
    CallbackError,
    Limits,
    Outcome,
    PolicyError,
    ProgramFailure,
    SandboxUnavailable,
    Timings,
)

#: names of :mod:`sandbox.executor` (which imports pandas), loaded when first used
_FROM_EXECUTOR = ("Sandbox", "default_sandbox", "run_program", "strict_mode_problem")

__all__ = [
    "CallbackError",
    "Limits",
    "Outcome",
    "PolicyError",
    "ProgramFailure",
    "Sandbox",
    "SandboxUnavailable",
    "Timings",
    "default_sandbox",
    "run_program",
    "strict_mode_problem",
]


def __getattr__(name: str) -> Any:
    if name in _FROM_EXECUTOR:
        value = getattr(importlib.import_module(".executor", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
