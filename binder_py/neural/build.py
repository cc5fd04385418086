"""The one place a neural backend is built from what a user passes (``Binder(neural=...)``,
``--neural``): a spec string, a :class:`NeuralBackend`, or a callable."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from binder_py.errors import BinderError
from binder_py.lm.types import LanguageModel
from binder_py.neural.backends import CallableBackend, NeuralBackend, OracleBackend
from binder_py.neural.lm_backend import LMNeuralBackend

SPEC_FORMS = "oracle:FILE.json, lm, lm:SPEC, a NeuralBackend or a callable"


def build_neural_backend(spec: Any, *, lm: Callable[[], LanguageModel],
                         make_lm: Callable[[str], LanguageModel]) -> NeuralBackend:
    """The backend for ``spec``: ``None`` or ``"lm"`` → the program-writing model ``lm()``;
    ``"lm:SPEC"`` → another model ``make_lm(SPEC)``; ``"oracle:FILE.json"`` → answers from a
    file; a :class:`NeuralBackend` as it is; any other callable → :class:`CallableBackend`."""
    if spec is None or spec == "lm":
        return LMNeuralBackend(lm())
    if isinstance(spec, str):
        if spec.startswith("oracle:"):
            return OracleBackend.from_file(spec[len("oracle:"):])
        if spec.startswith("lm:"):
            return LMNeuralBackend(make_lm(spec[3:]))
        raise BinderError(f"unknown neural backend {spec!r}; use {SPEC_FORMS}")
    if isinstance(spec, NeuralBackend):
        return spec
    if callable(spec):
        return CallableBackend(spec)
    raise BinderError(f"neural= takes {SPEC_FORMS}, not {type(spec).__name__}")
