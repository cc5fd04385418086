"""Neural backends: what answers a :class:`NeuralRequest`.

* :class:`OracleBackend` — answers read from a JSON file or dict (tests, demos,
  "perfect neural module" ablations);
* :class:`CallableBackend` — any Python function a user binds (the paper's
  appendix D: bind a specialised model);
* :class:`binder_py.neural.lm_backend.LMNeuralBackend` — the prompted LM.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import numpy as np

from binder_py.errors import BinderError, env_whole_number
from binder_py.neural.requests import NeuralRequest, normalize_key, plain_scalar, shown_key
from binder_py.lm.types import Usage


@dataclass
class NeuralAnswer:
    """What a backend returns. Kind ``col``: ``answers`` maps row key → raw answer (a key
    left out means the backend failed on that row; ``None``/"unknown" means unknown).
    Kind ``val``: ``value`` is the raw answer (text, number, bool, list or None)."""

    answers: dict[str, Any] = field(default_factory=dict)
    value: Any = None
    prompts: list[str] = field(default_factory=list)
    raw_outputs: list[str] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    warnings: list[str] = field(default_factory=list)


@runtime_checkable
class NeuralBackend(Protocol):
    """Answers neural requests.

    ``name`` is shown in traces; ``cache_id`` identifies the backend's answers in a shared
    :class:`NeuralCache`; ``prefetch``: a program's predictable requests are asked
    concurrently while it starts; ``dedup``: each distinct row of an ``f_col`` context is
    sent once (False: every row, like the original Binder).
    """

    name: str
    cache_id: str
    prefetch: bool
    dedup: bool

    def answer(self, request: NeuralRequest) -> NeuralAnswer: ...


@runtime_checkable
class PlanningBackend(NeuralBackend, Protocol):
    """A backend that answers several questions, and several column sets, in one prompt
    (what :mod:`binder_py.neural.plan` uses to answer a question's calls up front)."""

    combine_tables: bool

    def answer_many(self, requests: Sequence[NeuralRequest]) -> Any: ...

    def plan_tables(self, groups: Sequence[Sequence[NeuralRequest]]) -> list[list[int]]: ...

    def answer_tables(self, groups: Sequence[Sequence[NeuralRequest]], vals: Sequence[NeuralRequest] = ()) -> Any: ...

    def pack_values(self, groups: Sequence[Sequence[NeuralRequest]], vals: Sequence[NeuralRequest]) -> list[int]: ...


#: the largest oracle file read (raise with BINDER_MAX_ORACLE_BYTES, read when a file is)
MAX_ORACLE_BYTES = 256 * 1024 * 1024


def backend_cache_id(backend: NeuralBackend) -> str:
    return backend.cache_id


def plain_answer(value: Any) -> Any:
    """An answer as plain data that can cross the sandbox boundary."""
    if value is None or isinstance(value, (str, bool, int, float)):
        return value
    if isinstance(value, np.generic):
        return plain_scalar(value)
    if isinstance(value, (list, tuple)):
        return [plain_answer(v) for v in value]
    return str(value)


def _norm_question(q: str) -> str:
    return " ".join(str(q).split()).lower()


class OracleBackend:
    """Answers from ``{"f_col": {question: {key: answer}}, "f_val": {question: answer}}``.

    A row's key is its context cells joined with ``" | "`` in context column order,
    lower-cased and stripped; keys in the data are normalised the same way. Questions match
    exactly, else ignoring case and repeated spaces. A missing question or key means unknown; the
    answer's warnings say so (a misspelt question would otherwise pass unnoticed).
    """

    def __init__(self, data: Mapping[str, Any], name: str = "oracle"):
        if not isinstance(data, Mapping):
            raise BinderError("oracle answers must be a JSON object with keys f_col and f_val")
        unknown = set(data) - {"f_col", "f_val"}
        if unknown:
            raise BinderError(f"oracle answers have unknown keys {sorted(unknown)}; use f_col and f_val")
        self.name = name
        self._col: dict[str, dict[str, Any]] = {}
        for q, table in (data.get("f_col") or {}).items():
            if not isinstance(table, Mapping):
                raise BinderError(f"oracle f_col[{q!r}] must map row keys to answers")
            self._col[q] = _normalized_keys(q, table)
        self._val: dict[str, Any] = dict(data.get("f_val") or {})
        self._col_folded = {_norm_question(q): v for q, v in self._col.items()}
        self._val_folded = {_norm_question(q): v for q, v in self._val.items()}
        digest = hashlib.sha1(json.dumps(data, sort_keys=True, default=str).encode()).hexdigest()[:12]
        self.cache_id = f"{name}:{digest}"
        self.prefetch = False
        self.dedup = True
        self.requests: list[NeuralRequest] = []  # every request answered, for tests and demos
        self._lock = threading.Lock()

    @classmethod
    def from_file(cls, path: str | os.PathLike[str], name: str | None = None) -> OracleBackend:
        """Read an oracle file through the one JSON reader (size and depth limits, its shape checked)."""
        from binder_py.jsonfile import Shape, read_json

        shape = Shape(dict, {"f_col": Shape((dict, type(None))), "f_val": Shape((dict, type(None)))})
        try:
            data = read_json(path, shape, max_bytes=env_whole_number("BINDER_MAX_ORACLE_BYTES", MAX_ORACLE_BYTES),
                             what="oracle file", follow_symlinks=True, hint="raise it with BINDER_MAX_ORACLE_BYTES")
        except FileNotFoundError:
            raise BinderError(f"cannot read oracle answers {str(path)!r}: no such file") from None
        for question, table in (data.get("f_col") or {}).items():
            if not isinstance(table, dict):
                raise BinderError(f"{path}: field 'f_col.{question}' must map row keys to answers")
        return cls(data, name=name or f"oracle:{os.path.basename(str(path))}")

    def answer(self, request: NeuralRequest) -> NeuralAnswer:
        with self._lock:
            self.requests.append(request)
        if request.kind == "col":
            table = self._col.get(request.question)
            if table is None:
                table = self._col_folded.get(_norm_question(request.question))
            if table is None:  # a misspelt question would otherwise answer silently with all rows unknown
                return NeuralAnswer(answers=dict.fromkeys(request.keys),
                                    warnings=[self._no_question("f_col", request.question, self._col)])
            unknown = [k for k in request.keys if k not in table]
            warnings = [f"{self.name} has no answer for {len(unknown)} of {len(request.keys)} row key(s) of "
                        f"{request.question!r}, left unknown: " + "; ".join(shown_key(k) for k in unknown[:5])
                        + ("; ..." if len(unknown) > 5 else "")] if unknown else []
            return NeuralAnswer(answers={k: table.get(k) for k in request.keys}, warnings=warnings)
        if request.question in self._val:
            return NeuralAnswer(value=self._val[request.question])
        folded = _norm_question(request.question)
        if folded in self._val_folded:
            return NeuralAnswer(value=self._val_folded[folded])
        return NeuralAnswer(value=None, warnings=[self._no_question("f_val", request.question, self._val)])

    def _no_question(self, kind: str, question: str, known: Mapping[str, Any]) -> str:
        shown = ", ".join(repr(q) for q in list(known)[:5]) + (", ..." if len(known) > 5 else "")
        return (f"{self.name} has no {kind} answers for {question!r}, so it is unknown; the file's {kind} "
                f"questions are: {shown or '(none)'}")


def _normalized_keys(question: str, table: Mapping[str, Any]) -> dict[str, Any]:
    """An oracle question's answers by normalised row key. Two keys that normalise alike ("France"
    and "france ") name one row: with different answers the file contradicts itself, which is an
    error (one of the answers was dropped without a word)."""
    out: dict[str, Any] = {}
    spelled: dict[str, str] = {}
    for key, answer in table.items():
        normal = normalize_key(key)
        if normal in out and out[normal] != answer:
            raise BinderError(f"oracle f_col[{question!r}] answers the row key {normal!r} twice, differently: "
                              f"{spelled[normal]!r}: {out[normal]!r} and {key!r}: {answer!r} (keys match "
                              "ignoring case and surrounding spaces); keep one")
        out[normal], spelled[normal] = answer, str(key)
    return out


class CallableBackend:
    """Bind any Python function as the neural module.

    ``fn(request)`` gets a :class:`NeuralRequest` and returns, for kind ``col``, a dict
    row key → answer or a list with one answer per ``request.rows`` (same order, same
    length), and for kind ``val`` the answer; or a :class:`NeuralAnswer`. Use
    :meth:`per_row` to bind a function of one row instead.
    """

    def __init__(self, fn: Callable[[NeuralRequest], Any], name: str = "callable"):
        if not callable(fn):
            raise TypeError("CallableBackend needs a callable")
        self.fn = fn
        self.name = name
        self.cache_id = f"callable:{name}:{id(fn):x}"
        self.prefetch = False
        self.dedup = True

    @classmethod
    def per_row(cls, row_fn: Callable[[str, dict[str, str]], Any],
                val_fn: Callable[[str, list[dict[str, str]]], Any] | None = None,
                name: str = "callable") -> CallableBackend:
        """``row_fn(question, {column: cell})`` answers one row of an f_col;
        ``val_fn(question, rows)`` answers an f_val (without it, f_val is unknown)."""

        def fn(request: NeuralRequest) -> Any:
            dicts = [dict(zip(request.columns, row)) for row in request.rows]
            if request.kind == "col":
                return {k: row_fn(request.question, d) for k, d in zip(request.keys, dicts)}
            return val_fn(request.question, dicts) if val_fn else None

        backend = cls(fn, name=name)
        backend.cache_id = f"callable:{name}:{id(row_fn):x}:{id(val_fn):x}"
        return backend

    def answer(self, request: NeuralRequest) -> NeuralAnswer:
        result = self.fn(request)
        if isinstance(result, NeuralAnswer):
            return result
        if request.kind == "val":
            return NeuralAnswer(value=result)
        if isinstance(result, Mapping):
            return NeuralAnswer(answers={normalize_key(k): v for k, v in result.items()})
        if isinstance(result, (list, tuple)):
            if len(result) != len(request.rows):
                raise BinderError(f"the neural function {self.name!r} returned {len(result)} answers for "
                                  f"{len(request.rows)} rows; return one per row or a dict keyed by row key")
            return NeuralAnswer(answers=dict(zip(request.keys, result)))
        raise BinderError(f"the neural function {self.name!r} returned {type(result).__name__} for an f_col; "
                          f"return a dict keyed by row key or a list with one answer per row")
