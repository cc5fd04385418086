"""User-facing errors. Each message says what went wrong and what to do about it."""

from __future__ import annotations


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
