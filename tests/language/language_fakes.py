"""Test doubles: an in-process stand-in for the sandbox.

``InProcessSandbox`` follows the sandbox contract (docs/CONTRACTS.md) closely enough to
test the language layer without forking: variables are copied, callback arguments and
results must be plain data, the answer is the last expression statement or ``solve(df)``.
"""

from __future__ import annotations

import ast
import copy
import importlib
import pickle
import sys
import traceback
from collections.abc import Mapping
from typing import Any

import pandas as pd
import pytest

from sandbox import Outcome, ProgramFailure

def real_sandbox_available() -> bool:
    try:
        import sandbox

        return hasattr(sandbox, "Sandbox")
    except ImportError:
        return False


requires_sandbox = pytest.mark.skipif(not real_sandbox_available(), reason="the sandbox package is not built yet")

PLAIN = (type(None), bool, int, float, str)


def _check_plain(value: Any) -> None:
    if isinstance(value, PLAIN):
        return
    if isinstance(value, (list, tuple)):
        for v in value:
            _check_plain(v)
        return
    if isinstance(value, dict):
        for k, v in value.items():
            _check_plain(k)
            _check_plain(v)
        return
    raise TypeError(f"not plain data: {type(value).__name__}")


class CallbackError(Exception):
    pass


class InProcessSandbox:
    def __init__(self) -> None:
        self.runs = 0

    def run(self, program: str | ast.Module, *, variables: Mapping[str, Any] | None = None,
            callbacks: Mapping[str, Any] | None = None, worker_globals: str | None = None,
            limits: Any = None, filename: str = "<program>") -> Any:
        self.runs += 1
        tree = ast.parse(program) if isinstance(program, str) else copy.deepcopy(program)
        namespace: dict[str, Any] = pickle.loads(pickle.dumps(dict(variables or {})))
        namespace["__builtins__"] = __builtins__

        def proxy(fn: Any) -> Any:
            def call(*args: Any) -> Any:
                _check_plain(args)
                try:
                    result = fn(*copy.deepcopy(args))
                except Exception as error:  # as the real sandbox: the worker sees CallbackError
                    raise CallbackError(str(error)) from None
                _check_plain(result)
                return copy.deepcopy(result)
            return call

        proxies = {name: proxy(fn) for name, fn in (callbacks or {}).items()}
        if worker_globals:
            module_name, func = worker_globals.split(":")
            namespace.update(getattr(importlib.import_module(module_name), func)(proxies, namespace))
        else:
            namespace.update(proxies)
        body = tree.body
        last = body[-1] if body and isinstance(body[-1], ast.Expr) else None
        try:
            exec(compile(ast.Module(body=body[:-1] if last else body, type_ignores=[]), filename, "exec"),
                 namespace)
            if last is not None:
                value = eval(compile(ast.Expression(body=last.value), filename, "eval"), namespace)
            elif callable(namespace.get("solve")):
                value = namespace["solve"](namespace.get("df", namespace.get("table")))
            else:
                value = None
        except Exception as error:
            line = None
            for frame in traceback.extract_tb(sys.exc_info()[2]):
                if frame.filename == filename:
                    line = frame.lineno
            return Outcome(False, None, ProgramFailure("runtime", f"{type(error).__name__}: {error}", line,
                                                       type(error).__name__))
        return Outcome(True, _plain_value(value), None)


def _plain_value(value: Any) -> Any:
    if isinstance(value, (pd.Series, pd.DataFrame)):
        return value
    if value is pd.NA or value is None:
        return None
    if hasattr(value, "item") and not isinstance(value, (list, dict)):
        try:
            return value.item()
        except Exception:
            return value
    if isinstance(value, list):
        return [_plain_value(v) for v in value]
    return value
