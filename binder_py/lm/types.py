"""The contract of the language-model layer: requests, completions, usage, errors.

Every call to a language model in binder-py (writing programs, answering neural
calls, end-to-end answers) is an :class:`LMRequest` given to a
:class:`LanguageModel`, which returns a :class:`Completion`. Other layers depend
only on this module, never on a concrete client.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Protocol, runtime_checkable


@dataclass(frozen=True)
class LMRequest:
    """One request: a completion-style ``prompt`` or chat ``messages`` (exactly one)."""

    prompt: str | None = None
    messages: tuple[tuple[str, str], ...] | None = None  # ((role, content), ...)
    n: int = 1
    temperature: float = 0.0
    top_p: float = 1.0
    stop: tuple[str, ...] = ()
    max_tokens: int = 512
    seed: int | None = None
    logprobs: bool = False
    #: GBNF grammar the output must match (only for models whose ``capabilities.grammar``)
    grammar: str | None = None
    #: JSON schema (as JSON text) the output must match (only for ``capabilities.json_schema``)
    json_schema: str | None = None
    #: how many top alternatives to report per generated token (0: none); needs ``capabilities.logprobs``
    top_logprobs: int = 0

    def __post_init__(self) -> None:
        if (self.prompt is None) == (self.messages is None):
            raise ValueError("LMRequest needs exactly one of prompt= or messages=")
        if self.n < 1:
            raise ValueError(f"LMRequest.n must be at least 1, got {self.n}")


@dataclass
class Usage:
    """Counts that add up: per call, per question, per run.

    ``requests``/``prompt_tokens``/``completion_tokens`` are *physical*: what was
    really sent to a model. ``cached_*`` count what a cache answered instead
    (the *virtual* usage is physical + cached).
    """

    requests: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_requests: int = 0
    cached_prompt_tokens: int = 0
    cached_completion_tokens: int = 0
    cost_usd: float = 0.0
    wall_seconds: float = 0.0

    def __add__(self, other: Usage) -> Usage:
        return Usage(**{f.name: getattr(self, f.name) + getattr(other, f.name) for f in fields(self)})

    def __iadd__(self, other: Usage) -> Usage:
        for f in fields(self):
            setattr(self, f.name, getattr(self, f.name) + getattr(other, f.name))
        return self

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    @property
    def virtual_requests(self) -> int:
        return self.requests + self.cached_requests

    def as_dict(self) -> dict[str, float | int]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


@dataclass(frozen=True)
class Choice:
    text: str
    mean_logprob: float | None = None  # mean token log-probability, when the server gives it
    finish_reason: str | None = None
    #: per generated token: (token text, log-probability), when the request asked for logprobs
    token_logprobs: tuple[tuple[str, float], ...] | None = None
    #: per generated token: its top alternatives ((token text, log-probability), ...), when asked for
    top_logprobs: tuple[tuple[tuple[str, float], ...], ...] | None = None


@dataclass(frozen=True)
class Capabilities:
    """What a model accepts and returns; callers read this instead of probing attributes."""

    api: str = "completions"  # "chat" (messages with roles) or "completions" (one prompt text)
    logprobs: bool = False  # returns token log-probabilities (Choice.mean_logprob / token_logprobs)
    grammar: bool = False  # honours LMRequest.grammar (GBNF)
    json_schema: bool = False  # honours LMRequest.json_schema
    n_in_one_request: bool = False  # draws LMRequest.n samples from one evaluated prompt
    parallel_requests: int = 1  # requests worth sending at once (1: send one after another)
    exact_tokens: bool = False  # count_tokens is the model's real tokenizer
    embedded: bool = False  # the small embedded model (its task profile's small-model settings apply)

    @property
    def chat(self) -> bool:
        return self.api == "chat"


#: what the embedded local model takes and returns (``binder_py.lm.local``); a replay of a run it
#: recorded claims the same, so the pipeline builds the same requests (grammars, log-probabilities)
EMBEDDED_CAPABILITIES = Capabilities(api="chat", logprobs=True, grammar=True, json_schema=True,
                                     n_in_one_request=True, parallel_requests=1, exact_tokens=True, embedded=True)


@dataclass
class Completion:
    choices: list[Choice]
    usage: Usage
    model: str
    cached: bool = False
    latency_seconds: float = 0.0
    metadata: dict[str, object] = field(default_factory=dict)

    @property
    def text(self) -> str:
        return self.choices[0].text if self.choices else ""


@runtime_checkable
class LanguageModel(Protocol):
    """What every client (OpenAI-compatible, local llama.cpp, replay, scripted) provides."""

    name: str  # e.g. "openai:gpt-4o-mini" or "local:qwen2.5-coder-0.5b-instruct-q4_k_m"
    context_window: int  # tokens (0: unknown)
    capabilities: Capabilities

    def complete(
        self, request: LMRequest, *, purpose: str = "", tags: Mapping[str, str] | None = None
    ) -> Completion: ...

    async def acomplete(
        self, request: LMRequest, *, purpose: str = "", tags: Mapping[str, str] | None = None
    ) -> Completion: ...

    def count_tokens(self, text: str) -> int: ...

    def close(self) -> None: ...


class LMError(Exception):
    """Base of every language-model error; the message says what to do."""


class LMConfigError(LMError):
    """Bad --lm spec, missing key, unknown model: fix the configuration."""


class LMAuthError(LMConfigError):
    """The server refused the API key."""


class LMModelNotFound(LMConfigError):
    """The server does not know the model name."""


class LMContextTooLong(LMError):
    """The prompt does not fit the model's context: shrink it and retry."""

    def __init__(self, message: str, prompt_tokens: int | None = None, limit: int | None = None):
        super().__init__(message)
        self.prompt_tokens = prompt_tokens
        self.limit = limit


class LMReplayMiss(LMError):
    """Replay mode was asked something that was never recorded."""


class LMUnavailable(LMError):
    """Retries were exhausted (rate limits, server errors, timeouts, connection errors)."""


class LMUnreachable(LMUnavailable, LMConfigError):
    """Nothing answers at the model's address (connection refused, unknown host): a wrong URL or a
    server that is not running. A configuration error too, so an evaluation stops at once instead of
    recording the same failure for every question."""
