"""The one place a neural backend is built from what a user passes (``Binder(neural=...)``,
``--neural``): a spec string, a :class:`NeuralBackend`, or a callable."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from binder_py.errors import BinderError
from binder_py.lm.types import LanguageModel
from binder_py.neural.backends import CallableBackend, NeuralBackend, OracleBackend
from binder_py.neural.lm_backend import LMNeuralBackend
from binder_py.neural.rowwise import RowwiseNeuralBackend

#: the specs that name the prompted-LM backend, with the protocol each asks for (None: the model's)
LM_SPECS: dict[str, str | None] = {"lm": None, "lm-rows": "rows", "lm-table": "table"}
SPEC_FORMS = "oracle:FILE.json, lm, lm-rows, lm-table, lm:SPEC, a NeuralBackend or a callable"


def lm_backend(lm: LanguageModel, protocol: str | None = None, *, title: str | None = None) -> NeuralBackend:
    """The prompted-LM backend for ``lm``: ``protocol`` "rows" (one short request per distinct
    row after a fixed cached prefix, yes/no read from log-probabilities: what small embedded
    models answer best) or "table" (the paper's QA-map prompt, planned several questions at a
    time: what capable API models answer best). None: rows for the embedded model, else table."""
    if protocol is None:
        protocol = "rows" if lm.capabilities.embedded else "table"
    if protocol not in ("rows", "table"):
        raise BinderError(f"unknown neural protocol {protocol!r}; use rows or table")
    return RowwiseNeuralBackend(lm, title=title) if protocol == "rows" else LMNeuralBackend(lm, title=title)


def early_neural_backend(spec: Any) -> NeuralBackend | None:
    """Refuse at once what :func:`build_neural_backend` would refuse later, and build now what needs
    no model: the backend is otherwise built only when a program first makes a neural call, and a
    typo must not pass unnoticed until then, or at all. Returns the oracle backend for an
    ``oracle:FILE`` spec (its file is read here, once), else None (nothing is loaded)."""
    if spec is None or spec in LM_SPECS or isinstance(spec, NeuralBackend) or callable(spec):
        return None
    if isinstance(spec, str):
        if spec.startswith("oracle:"):
            return OracleBackend.from_file(spec[len("oracle:"):])
        if spec.startswith("lm:"):
            from binder_py.lm.spec import parse_spec

            if not spec[3:].strip():  # (an empty spec would be the default model, not the one meant)
                raise BinderError(f"--neural {spec!r} names no model: give lm:SPEC (e.g. lm:local:0.5b), or lm "
                                  "for the model that writes the programs")
            parse_spec(spec[3:])
            return None
        raise BinderError(f"unknown neural backend {spec!r}; use {SPEC_FORMS}")
    raise BinderError(f"neural= takes {SPEC_FORMS}, not {type(spec).__name__}")


def build_neural_backend(spec: Any, *, lm: Callable[[], LanguageModel],
                         make_lm: Callable[[str], LanguageModel]) -> NeuralBackend:
    """The backend for ``spec``: ``None`` or ``"lm"`` → the program-writing model ``lm()``
    (:func:`lm_backend` picks its protocol; ``"lm-rows"``/``"lm-table"`` choose one);
    ``"lm:SPEC"`` → another model ``make_lm(SPEC)``; ``"oracle:FILE.json"`` → answers from a
    file; a :class:`NeuralBackend` as it is; any other callable → :class:`CallableBackend`."""
    if spec is None or spec in LM_SPECS:
        return lm_backend(lm(), LM_SPECS.get(spec))
    if isinstance(spec, str):
        if spec.startswith("oracle:"):
            return OracleBackend.from_file(spec[len("oracle:"):])
        if spec.startswith("lm:"):
            early_neural_backend(spec)  # (its checks: an empty or malformed SPEC)
            return lm_backend(make_lm(spec[3:]))
        raise BinderError(f"unknown neural backend {spec!r}; use {SPEC_FORMS}")
    if isinstance(spec, NeuralBackend):
        return spec
    if callable(spec):
        return CallableBackend(spec)
    raise BinderError(f"neural= takes {SPEC_FORMS}, not {type(spec).__name__}")
