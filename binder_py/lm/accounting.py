"""Token estimates, the price table and usage accounting (per call, per question, per run)."""

from __future__ import annotations

import json
import math
import os
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from binder_py.lm.types import LMConfigError, Usage

CHARS_PER_TOKEN_ESTIMATE = 3.0


def estimate_tokens(text: str) -> int:
    """A conservative token estimate for models whose tokenizer we do not ship.

    One token per 3 characters: English prose averages ~4 characters per token
    in OpenAI's tokenizers, code and tables somewhat fewer, so this usually
    over-counts, which is the safe side when fitting a prompt into a budget.
    """
    return math.ceil(len(text) / CHARS_PER_TOKEN_ESTIMATE) if text else 0


# USD per one million tokens (input, output). Estimates copied from public price
# lists at the time of writing; they change, so override them (BINDER_PRICES).
DEFAULT_PRICES: dict[str, tuple[float, float]] = {
    "gpt-4o-mini": (0.15, 0.60),
    "gpt-4o": (2.50, 10.00),
    "gpt-4.1-nano": (0.10, 0.40),
    "gpt-4.1-mini": (0.40, 1.60),
    "gpt-4.1": (2.00, 8.00),
    "gpt-3.5-turbo": (0.50, 1.50),
    "gpt-3.5-turbo-instruct": (1.50, 2.00),
    "local": (0.0, 0.0),
}


@dataclass
class PriceTable:
    """Model name → (input, output) USD per 1M tokens; the longest matching prefix wins.

    Unknown models cost 0 (reported as such: the estimate is only as good as the table).
    """

    prices: dict[str, tuple[float, float]]

    @classmethod
    def load(cls, source: str | Path | Mapping[str, object] | None = None) -> PriceTable:
        """Defaults, updated from ``source`` (a mapping or a JSON file) or ``$BINDER_PRICES``.

        JSON shape: ``{"gpt-4o-mini": {"input": 0.15, "output": 0.6}, ...}`` or
        ``{"gpt-4o-mini": [0.15, 0.6]}`` (USD per 1M tokens).
        """
        prices = dict(DEFAULT_PRICES)
        if source is None and os.environ.get("BINDER_PRICES"):
            source = os.environ["BINDER_PRICES"]
        if source is not None:
            if isinstance(source, Mapping):
                data = source
            else:
                try:
                    data = json.loads(Path(source).read_text(encoding="utf-8"))
                except (OSError, json.JSONDecodeError) as error:
                    raise LMConfigError(f"cannot read the price table {source}: {error}") from error
            for model, value in data.items():
                try:
                    if isinstance(value, Mapping):
                        prices[str(model)] = (float(value["input"]), float(value["output"]))
                    else:
                        inp, out = value  # type: ignore[misc]
                        prices[str(model)] = (float(inp), float(out))
                except (KeyError, TypeError, ValueError) as error:
                    raise LMConfigError(
                        f"price table entry {model!r} must be {{\"input\": USD, \"output\": USD}} per 1M tokens"
                    ) from error
        return cls(prices)

    def price(self, model: str) -> tuple[float, float]:
        best = ""
        for name in self.prices:
            if model.startswith(name) and len(name) > len(best):
                best = name
        return self.prices[best] if best else (0.0, 0.0)

    def cost(self, model: str, prompt_tokens: int, completion_tokens: int) -> float:
        inp, out = self.price(model)
        return (prompt_tokens * inp + completion_tokens * out) / 1_000_000


class UsageLedger:
    """Thread-safe sums of :class:`Usage`: for the run, per question and per purpose.

    Several clients (the program-writing and the neural-call model) may share
    one ledger. The question is ``tags["question_id"]`` when given.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._total = Usage()
        self._by_question: dict[str, Usage] = {}
        self._by_purpose: dict[str, Usage] = {}
        self._by_lm: dict[str, Usage] = {}

    def add(self, usage: Usage, *, purpose: str = "", tags: Mapping[str, str] | None = None, lm: str = "") -> None:
        with self._lock:
            self._total += usage
            question = (tags or {}).get("question_id")
            if question is not None:
                self._by_question.setdefault(str(question), Usage())
                self._by_question[str(question)] += usage
            self._by_purpose.setdefault(purpose, Usage())
            self._by_purpose[purpose] += usage
            self._by_lm.setdefault(lm, Usage())
            self._by_lm[lm] += usage

    @property
    def total(self) -> Usage:
        with self._lock:
            return self._total + Usage()

    def for_question(self, question_id: str) -> Usage:
        with self._lock:
            return self._by_question.get(str(question_id), Usage()) + Usage()

    def by_question(self) -> dict[str, Usage]:
        with self._lock:
            return {k: v + Usage() for k, v in self._by_question.items()}

    def by_purpose(self) -> dict[str, Usage]:
        with self._lock:
            return {k: v + Usage() for k, v in self._by_purpose.items()}

    def by_lm(self) -> dict[str, Usage]:
        with self._lock:
            return {k: v + Usage() for k, v in self._by_lm.items()}

    def summary(self) -> dict[str, object]:
        total = self.total
        return {
            "total": total.as_dict(),
            "virtual_requests": total.virtual_requests,
            "by_purpose": {k: v.as_dict() for k, v in self.by_purpose().items()},
            "by_lm": {k: v.as_dict() for k, v in self.by_lm().items()},
        }
