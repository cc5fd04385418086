"""User-facing errors. Each message says what went wrong and what to do about it."""

from __future__ import annotations

import os


class BinderError(Exception):
    """Base of errors caused by input or configuration (files, tables, questions, programs, settings).

    The command-line interface prints the message (no traceback) and exits with
    status 2.
    """


class TableError(BinderError):
    """A table file or DataFrame cannot be used as it is."""


class ProgramError(BinderError):
    """A program cannot be parsed or uses the neural API wrongly. Carries a position."""

    def __init__(self, message: str, line: int | None = None, column: int | None = None):
        where = f" (line {line}, column {column})" if line is not None and column is not None else (
            f" (line {line})" if line is not None else "")
        super().__init__(message + where)
        self.detail = message
        self.line = line
        self.column = column


def env_whole_number(name: str, default: int, error: type[BinderError] = BinderError) -> int:
    """A positive whole number from the environment variable ``name`` (``default`` when unset or
    empty); anything else is an ``error`` that names the variable, not a traceback."""
    text = os.environ.get(name)
    if not text:
        return default
    try:
        value = int(text)
    except ValueError:
        raise error(f"{name}={text!r} must be a whole number") from None
    if value <= 0:
        raise error(f"{name}={text!r} must be positive")
    return value
