"""binder-py sandbox: run language-model-written pandas programs safely.

See docs/SECURITY.md for the threat model and the layers.
"""
from .executor import Sandbox, default_sandbox, run_program, strict_mode_problem
from .outcome import (
    CallbackError,
    Limits,
    Outcome,
    PolicyError,
    ProgramFailure,
    SandboxUnavailable,
    Timings,
)

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
