"""The message a neural call sends from the sandbox worker (the bridge) to the parent, and the
parent's reply to an ``f_col``.

It crosses the sandbox boundary as plain data (:meth:`NeuralCallMessage.to_wire`). The
parent rebuilds it with :meth:`NeuralCallMessage.from_wire` and checks every field's type.
The worker runs untrusted code, so a malformed message is refused with a clear error.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from operator import itemgetter
from typing import Any

from binder_py.errors import ProgramError

KINDS = ("col", "val")


@dataclass(frozen=True)
class NeuralCallMessage:
    """One neural call: which site, which kind, the question and the context's rows.

    ``rows``/``keys`` are the distinct rows (``col``) or every row (``val``) of the context,
    as display strings and row keys; ``n_rows`` is the context's length.
    """

    site: int
    kind: str  # "col" | "val"
    question: str
    columns: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    keys: tuple[str, ...]
    n_rows: int

    def to_wire(self) -> dict[str, Any]:
        """Plain data; the rows go column by column (``cells[j]`` is column ``j`` of every row), so a
        request of many rows crosses the sandbox boundary as a few flat lists of text."""
        return wire_message(self.site, self.kind, self.question, self.columns,
                            rows_to_columns(self.rows, len(self.columns)), self.keys, self.n_rows)

    @classmethod
    def from_wire(cls, payload: Any) -> NeuralCallMessage:
        if not isinstance(payload, Mapping):
            raise ProgramError(f"malformed neural call: expected a message, got {type(payload).__name__}")
        try:
            site, kind, question = payload["site"], payload["kind"], payload["question"]
            columns, cells, keys, n_rows = payload["columns"], payload["cells"], payload["keys"], payload["n_rows"]
        except KeyError as error:
            raise ProgramError(f"malformed neural call: no field {error}") from None
        if not isinstance(site, int) or isinstance(site, bool) or kind not in KINDS or not isinstance(question, str):
            raise ProgramError("malformed neural call: site, kind or question has the wrong type")
        if not isinstance(n_rows, int) or not _texts(columns) or not _texts(keys) \
                or not isinstance(cells, list) or len(cells) != len(columns) \
                or not all(_texts(column) and len(column) == len(keys) for column in cells):
            raise ProgramError("malformed neural call: columns, cells or keys are not lists of text of one length")
        rows = tuple(zip(*cells)) if cells else ((),) * len(keys)
        return cls(site=site, kind=kind, question=question, columns=tuple(columns), rows=rows, keys=tuple(keys),
                   n_rows=n_rows)


def rows_to_columns(rows: Sequence[Sequence[str]], width: int) -> list[list[str]]:
    """Rows of ``width`` cells as ``width`` lists of cells (column ``j`` of every row)."""
    return [list(map(itemgetter(j), rows)) for j in range(width)]


def wire_message(site: int, kind: str, question: str, columns: Sequence[str], cells: list[list[str]],
                 keys: Sequence[str], n_rows: int) -> dict[str, Any]:
    """:meth:`NeuralCallMessage.to_wire` from the rows' cells column by column (``cells[j]`` is
    column ``j`` of every row), without a tuple per row."""
    return {"site": site, "kind": kind, "question": question, "columns": list(columns), "cells": cells,
            "keys": list(keys), "n_rows": n_rows}


def column_reply(answers: list[Any], *, as_dates: bool) -> Any:
    """The parent's reply to an ``f_col``: its answers in the order of the keys sent, as a list; when
    the program reads the column as dates (through ``.dt`` or ``pd.to_datetime``), ISO 8601 texts (the parent has read every
    answer as a date) inside ``{"dates": ...}``, so that the bridge makes a ``datetime64`` column of them."""
    return {"dates": answers} if as_dates else answers


def read_column_reply(reply: Any) -> tuple[Any, bool]:
    """``(answers, as_dates)`` from a reply made by :func:`column_reply`."""
    if isinstance(reply, dict) and set(reply) == {"dates"}:
        return reply["dates"], True
    return reply, False


_TEXT = frozenset({str})


def _texts(items: Any) -> bool:
    """``items`` is a list of ``str`` (checked at C speed: one pass of ``map(type)``)."""
    return isinstance(items, (list, tuple)) and set(map(type, items)) <= _TEXT
