"""Run a compiled program in a prepared namespace (used by the worker and by
the in-process mode). Produces a plain-data outcome dictionary."""
from __future__ import annotations

import ast
import sys
import time
import types
import warnings
from collections.abc import Iterator
from typing import Any, Callable, Mapping

from . import codec, vetting
from .facades import FACADES
from .guards import HOOKS, PROGRAM_MODULE
from .outcome import CallbackError, PolicyError
from .policy import RESULT_NAME, CompileFailure, compile_program
from .safe_builtins import SAFE_BUILTINS

_NO_RESULT = object()
MAX_MESSAGE = 4000


class CPUTimeExceeded(BaseException):
    """Raised in the worker by the SIGXCPU handler."""


class BoundedBuffer:
    """A text sink that keeps at most ``limit`` bytes (UTF-8)."""

    def __init__(self, limit: int) -> None:
        self.limit = max(0, int(limit))
        self.parts: list[str] = []
        self.size = 0
        self.truncated = False

    def write(self, text: Any) -> int:
        if not isinstance(text, str):
            text = str(text)
        if self.truncated:
            return len(text)
        data = text.encode("utf-8", "replace")
        room = self.limit - self.size
        if len(data) <= room:
            self.parts.append(text)
            self.size += len(data)
        else:
            self.parts.append(data[:room].decode("utf-8", "ignore"))
            self.size = self.limit
            self.truncated = True
        return len(text)

    def flush(self) -> None:
        pass

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return False

    def getvalue(self) -> str:
        return "".join(self.parts)


class _NullSink(BoundedBuffer):
    def __init__(self) -> None:
        super().__init__(0)


class PrintCollector:
    """What RestrictedPython's ``_print_`` hook returns: print() -> buffer."""

    def __init__(self, buffer: BoundedBuffer) -> None:
        self._buffer = buffer

    def _call_print(self, *objects: Any, sep: Any = " ", end: Any = "\n", file: Any = None, flush: bool = False) -> None:
        if file is not None:
            raise PolicyError("print(file=...) is not allowed")
        print(*objects, sep=sep, end=end, file=self._buffer)

    def __call__(self) -> str:  # the ``printed`` name
        return self._buffer.getvalue()


def build_namespace(variables: Mapping[str, Any] | None, buffer: BoundedBuffer) -> dict[str, Any]:
    collector = PrintCollector(buffer)
    ns: dict[str, Any] = {
        "__builtins__": SAFE_BUILTINS,
        "__name__": PROGRAM_MODULE,
        "__metaclass__": type,
        "_print_": lambda *_a, **_k: collector,
        "pd": FACADES["pandas"],
        "np": FACADES["numpy"],
    }
    ns.update(HOOKS)
    if variables:
        ns.update(variables)
    ns[RESULT_NAME] = _NO_RESULT
    return ns


def _program_line(tb: types.TracebackType | None, filename: str) -> int | None:
    line = None
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == filename:
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


def _message(exc: BaseException) -> str:
    try:
        text = f"{type(exc).__name__}: {exc}"
    except BaseException:  # noqa: BLE001
        text = f"{type(exc).__name__}: <unprintable message>"
    return text[:MAX_MESSAGE]


def failure_from_exception(exc: BaseException, filename: str) -> dict[str, Any]:
    if isinstance(exc, PolicyError):
        kind = "policy"
    elif isinstance(exc, MemoryError):
        kind = "memory"
    elif isinstance(exc, CPUTimeExceeded):
        kind = "timeout"
    else:
        kind = "runtime"
    if kind == "timeout":
        message = "CPU time limit exceeded"
    elif kind == "memory":
        message = f"memory limit exceeded ({_message(exc).rstrip(': ')})"
    else:
        message = _message(exc)
    try:
        etype = type(exc).__name__
    except BaseException:  # noqa: BLE001
        etype = None
    return {"kind": kind, "message": message, "line": _program_line(exc.__traceback__, filename),
            "exception_type": etype}


def _answer(ns: dict[str, Any]) -> Any:
    value = ns.get(RESULT_NAME, _NO_RESULT)
    if value is not _NO_RESULT:
        return value
    solve = ns.get("solve")
    if isinstance(solve, types.FunctionType) and getattr(solve, "__module__", None) == PROGRAM_MODULE:
        if "df" in ns:
            return solve(ns["df"])
        if "table" in ns:
            return solve(ns["table"])
        return solve()
    return None


#: pandas objects that stand for a computation not yet done, by their class's own module: a program
#: ending in one forgot its last step
_UNFINISHED_MODULES = (("pandas.core.strings", "the .str accessor: call one of its methods, e.g. .str.lower()"),
                       ("pandas.core.indexes.accessors", "the .dt accessor: read one of its fields, e.g. .dt.year"),
                       ("pandas.core.indexing", "an indexer (.loc/.iloc): index it, e.g. .loc[0, 'name']"))


def _unfinished_classes() -> tuple[tuple[tuple[type, ...], str], ...]:
    from pandas.api import typing as pandas_types

    def present(*names: str) -> tuple[type, ...]:
        return tuple(getattr(pandas_types, name) for name in names if hasattr(pandas_types, name))
    return ((present("Resampler"), "a pandas resampler: aggregate it, e.g. .sum()"),
            (present("DataFrameGroupBy", "SeriesGroupBy"),
             "a pandas GroupBy: aggregate it, e.g. .sum(), .size() or .max()"),
            (present("Rolling", "Expanding", "ExponentialMovingWindow", "Window"),
             "a pandas rolling/expanding window: aggregate it, e.g. .mean()"))


def _not_an_answer(value: Any) -> str | None:
    """Why ``value`` is no answer (a method the program forgot to call, a GroupBy it forgot to
    aggregate, a generator), or None. Such a value used to become its repr and vote as text
    ("<bound method Series.sum of ...>")."""
    if isinstance(value, Iterator):
        return "an iterator or generator, not a value: make it a list, e.g. list(...)"
    for classes, why in _unfinished_classes():
        if classes and isinstance(value, classes):
            return why
    module = getattr(type(value), "__module__", None) or ""
    for prefix, why in _UNFINISHED_MODULES:
        if module.startswith(prefix):
            return why
    if isinstance(value, type):  # type(1), pd.DataFrame: a class is no value either, and no function
        return (f"the class {str(value.__qualname__)[:80]} itself, not a value: answer with a value of the "
                "table (a number, text, a list or a DataFrame), e.g. df['sales'].dtype.name rather than type(...)")
    if callable(value):
        name = getattr(value, "__qualname__", None) or getattr(value, "__name__", None) or type(value).__name__
        return (f"the function or method {str(name)[:80]} itself, not its result: call it, "
                "e.g. df['sales'].sum() rather than df['sales'].sum")
    return None


def run(program: str | ast.Module, filename: str, ns: dict[str, Any], buffer: BoundedBuffer,
        before_exec: Callable[[], None] | None = None) -> dict[str, Any]:
    """Compile and execute; return the outcome dict (value already encoded)."""
    t0 = time.perf_counter()
    try:
        code: types.CodeType | CompileFailure = compile_program(program, filename)
    except (CPUTimeExceeded, MemoryError) as exc:  # the limits reach the compiler too: a 100,000-term chained
        # comparison compiles for seconds, and the CPU limit's exception escaped the worker, which then exited
        # with no outcome (reported as killed, red team 10)
        return {"ok": False, "value": None, "error": failure_from_exception(exc, filename),
                "compile_ms": (time.perf_counter() - t0) * 1000.0, "run_ms": 0.0}
    t1 = time.perf_counter()
    out: dict[str, Any] = {"ok": False, "value": None, "error": None, "compile_ms": (t1 - t0) * 1000.0}
    if isinstance(code, CompileFailure):
        out["error"] = {"kind": code.kind, "message": code.message[:MAX_MESSAGE], "line": code.line,
                        "exception_type": "SyntaxError" if code.kind == "syntax" else "PolicyError"}
        out["run_ms"] = 0.0
        return out
    old_out, old_err = sys.stdout, sys.stderr
    t2 = time.perf_counter()
    trusted = vetting.trust_namespace(ns)
    try:
        sys.stdout, sys.stderr = buffer, _NullSink()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if before_exec is not None:
                before_exec()
            exec(code, ns)  # noqa: S102 - restricted code, guarded namespace
            value = _answer(ns)
            why = _not_an_answer(value)
            if why is not None:
                raise TypeError(f"the program's answer is {why}")
        out["value"] = codec.encode_answer(value)
        out["ok"] = True
    except BaseException as exc:  # noqa: BLE001 - report every failure
        out["error"] = failure_from_exception(exc, filename)
    finally:
        vetting.untrust(trusted)
        sys.stdout, sys.stderr = old_out, old_err
    out["run_ms"] = (time.perf_counter() - t2) * 1000.0
    return out


__all__ = ["BoundedBuffer", "CPUTimeExceeded", "CallbackError", "build_namespace", "run"]
