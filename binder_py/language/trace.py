"""Execution trace / provenance of one program run."""

from __future__ import annotations

from collections.abc import Sequence

from dataclasses import asdict, dataclass, field
from typing import Any

from binder_py.jsonable import to_jsonable
from binder_py.language.program import CallSite
from binder_py.lm.types import Usage
from sandbox import ProgramFailure


@dataclass
class NeuralCallTrace:
    """One evaluation of a neural call site (a site inside a loop is traced once per call).

    ``order`` is -1 for a prefetched request the program never reached (kept for its usage).
    """

    order: int  # 0-based order in which the calls reached the parent
    site: int
    name: str  # the form as written: f_col, f_val, f, qa_map, qa_ans
    kind: str  # col | val
    span: tuple[int, int]
    line: int
    col: int
    text: str  # the call's source text
    question: str
    columns: list[str]
    rows: list[Sequence[str]]  # col: the DISTINCT rows sent; val: every row of the context (tuples from the bridge)
    keys: list[str]
    n_rows: int  # rows in the context (before de-duplication)
    backend: str
    answers: dict[str, Any] = field(default_factory=dict)  # col: row key → raw answer
    value: Any = None  # val: raw answer
    from_cache: bool = False  # everything came from the cache
    prefetched: bool = False  # answered by a request sent before the program reached the call
    cached_keys: list[str] = field(default_factory=list)  # col: rows answered from the cache
    prompts: list[str] = field(default_factory=list)
    raw_outputs: list[str] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    seconds: float = 0.0
    warnings: list[str] = field(default_factory=list)
    error: str | None = None
    threshold: str | None = None  # col: how yes/no answers scored by the model were read (neural/yes_scores.py)
    p_yes_range: tuple[float, float] | None = None  # col: the lowest and highest P(yes) of its scored rows

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["span"] = list(self.span)
        data["p_yes_range"] = list(self.p_yes_range) if self.p_yes_range is not None else None
        data["usage"] = self.usage.as_dict()
        data["answers"] = to_jsonable(self.answers, infinity_as_text=True)
        data["value"] = to_jsonable(self.value, infinity_as_text=True)
        return data


def sites_json(sites: list[CallSite]) -> list[dict[str, Any]]:
    out = []
    for s in sites:
        d = s.to_dict()
        d["span"] = list(s.span)
        out.append(d)
    return out


def failure_json(failure: ProgramFailure | None) -> dict[str, Any] | None:
    if failure is None:
        return None
    return {"kind": failure.kind, "message": failure.message, "line": failure.line,
            "exception_type": failure.exception_type}
