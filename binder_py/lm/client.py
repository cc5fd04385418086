"""The one client every call goes through: cache, single-flight, record, replay, usage, log.

:class:`LMClient` wraps a *backend* (OpenAI-compatible HTTP, or the local
llama.cpp model) that knows how to send one request. The client adds, in order:

1. an up-front context check (``LMContextTooLong`` before anything is sent);
2. the persistent cache (hit → ``Completion.cached`` and *cached* usage);
3. single-flight: an identical request already in flight is not sent again,
   the waiter gets the first one's answer (counted as a cache hit);
4. the backend call (which retries and respects the limits);
5. writing the answer to the cache and to the record directory, logging the
   call (purpose, tags, usage, latency) and adding usage to the ledger.

:class:`ReplayLM` answers only from a recorded directory and raises
:class:`LMReplayMiss` on anything else.
"""

from __future__ import annotations

import asyncio
import math
import threading
import time
from collections.abc import Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Protocol

from binder_py.lm.accounting import PriceTable, UsageLedger, estimate_tokens
from binder_py.lm.store import LMStore, cache_key, request_key
from binder_py.lm.types import (EMBEDDED_CAPABILITIES, Capabilities, Choice, Completion, LMContextTooLong, LMReplayMiss,
                                LMRequest, Usage)

MESSAGE_OVERHEAD_TOKENS = 4  # role markers and separators per chat message (an estimate)


@dataclass
class RawResult:
    """What a backend returns for one logical request (possibly several physical ones)."""

    choices: list[Choice]
    prompt_tokens: int
    completion_tokens: int
    requests: int = 1
    metadata: dict[str, object] = field(default_factory=dict)


class Backend(Protocol):
    name: str  # e.g. "openai:gpt-4o-mini"
    endpoint: str  # base URL, or a file path for local models
    model: str
    api: str  # "chat" or "completions"
    context_window: int | None
    exact_tokens: bool  # count_tokens is the model's real tokenizer
    capabilities: Capabilities

    def count_tokens(self, text: str) -> int: ...

    def generate(self, request: LMRequest) -> RawResult: ...

    def close(self) -> None: ...


def request_text(request: LMRequest) -> str:
    if request.prompt is not None:
        return request.prompt
    return "\n".join(content for _, content in request.messages or ())


def excerpt(request: LMRequest, limit: int = 160) -> str:
    text = request_text(request).strip().replace("\n", "⏎")
    return text if len(text) <= limit else text[: limit // 2] + " … " + text[-limit // 2:]


def _tags(tags: Mapping[str, str] | None) -> dict[str, str]:
    return {str(k): str(v) for k, v in (tags or {}).items()}


class _AsyncMixin:
    _executor: ThreadPoolExecutor | None = None
    _executor_lock = threading.Lock()
    async_workers = 64

    def _get_executor(self) -> ThreadPoolExecutor:
        with self._executor_lock:
            if self._executor is None:
                self._executor = ThreadPoolExecutor(max_workers=self.async_workers, thread_name_prefix="binder-lm")
            return self._executor

    async def acomplete(self, request: LMRequest, *, purpose: str = "",
                        tags: Mapping[str, str] | None = None) -> Completion:
        """Async form of :meth:`complete`: runs it on the client's own thread pool, so the
        concurrency and rate limits are shared with threaded callers."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(
            self._get_executor(), partial(self.complete, request, purpose=purpose, tags=tags))  # type: ignore[attr-defined]

    def _shutdown_executor(self) -> None:
        if self._executor is not None:
            self._executor.shutdown(wait=False)
            self._executor = None


class LMClient(_AsyncMixin):
    """A :class:`~binder_py.lm.types.LanguageModel` over a backend, with cache, record and accounting.

    ``store``: the cache/log file (``None`` disables both). ``read_cache=False``
    (``--no-cache``) still writes answers and logs calls, but never answers from
    the cache. ``recorder``: a second store (``record_dir/lm.sqlite``) that gets
    every answer, hits included, so ``replay:record_dir`` can rerun offline.
    """

    def __init__(self, backend: Backend, *, store: LMStore | None = None, read_cache: bool = True,
                 recorder: LMStore | None = None, ledger: UsageLedger | None = None,
                 prices: PriceTable | None = None):
        self.backend = backend
        self.name = backend.name
        self.context_window = backend.context_window or 0
        self.capabilities: Capabilities = backend.capabilities
        self.store = store
        self.read_cache = read_cache
        self.recorder = recorder
        self.ledger = ledger if ledger is not None else UsageLedger()
        self.prices = prices if prices is not None else PriceTable.load()
        self._inflight: dict[str, Future[RawResult]] = {}
        self._inflight_lock = threading.Lock()
        self._counted: set[int] = set()
        self._executor = None
        self._executor_lock = threading.Lock()
        if store is not None:
            store.put_model(self.name, backend.endpoint, backend.model, backend.context_window)
        # the recorder learns of the model with the first answer or count it gets: a client built and
        # not used (a resume refused for other settings) must not describe itself in the run's recording
        self._model_recorded = False

    # --- LanguageModel -----------------------------------------------------------------
    def count_tokens(self, text: str) -> int:
        n = self.backend.count_tokens(text)
        if self.recorder is not None:
            marker = hash(text)
            if marker not in self._counted:  # write each text's count once per process
                self._counted.add(marker)
                self._record_model()
                self.recorder.put_token_count(self.name, text, n)
        return n

    def complete(self, request: LMRequest, *, purpose: str = "", tags: Mapping[str, str] | None = None) -> Completion:
        start = time.perf_counter()
        tags = _tags(tags)
        self.check_fits(request)
        b = self.backend
        key = cache_key(b.endpoint, b.model, b.api, request)
        if self.store is not None and self.read_cache:
            hit = self.store.get(key)
            if hit is not None:
                choices, pt, ct = hit
                return self._finish(request, key, choices, pt, ct, requests=0, source="cache",
                                    start=start, purpose=purpose, tags=tags)
        shareable = (self.store is not None and self.read_cache) or request.temperature == 0 or request.seed is not None
        leader = True
        future: Future[RawResult]
        if shareable:
            with self._inflight_lock:
                existing = self._inflight.get(key)
                if existing is not None:
                    future, leader = existing, False
                else:
                    future = Future()
                    self._inflight[key] = future
        else:
            future = Future()
        if not leader:
            raw = future.result()  # re-raises the leader's error
            return self._finish(request, key, raw.choices, raw.prompt_tokens, raw.completion_tokens, requests=0,
                                source="inflight", start=start, purpose=purpose, tags=tags)
        try:
            raw = b.generate(request)
        except BaseException as error:
            future.set_exception(error)
            future.exception()  # mark retrieved
            if shareable:
                with self._inflight_lock:
                    self._inflight.pop(key, None)
            if self.store is not None:
                try:
                    self.store.log(lm=self.name, purpose=purpose, tags=tags, key=key, source="error",
                                   latency=time.perf_counter() - start, error=f"{type(error).__name__}: {error}",
                                   request=request)
                except Exception:  # noqa: BLE001 - logging must not hide the real error
                    pass
            raise
        if self.store is not None:
            try:
                self.store.put(key, request_key(request), lm=self.name, endpoint=b.endpoint, model=b.model,
                               api=b.api, request=request, choices=raw.choices, prompt_tokens=raw.prompt_tokens,
                               completion_tokens=raw.completion_tokens)
            finally:  # waiters get the answer even if storing it failed
                future.set_result(raw)
                if shareable:
                    with self._inflight_lock:
                        self._inflight.pop(key, None)
        else:
            future.set_result(raw)
            if shareable:
                with self._inflight_lock:
                    self._inflight.pop(key, None)
        return self._finish(request, key, raw.choices, raw.prompt_tokens, raw.completion_tokens,
                            requests=raw.requests, source="model", start=start, purpose=purpose, tags=tags,
                            metadata=raw.metadata)

    # --- helpers -----------------------------------------------------------------------
    def check_fits(self, request: LMRequest) -> None:
        """Raise :class:`LMContextTooLong` up front when the prompt cannot fit the context.

        With the model's own tokenizer the check is exact; with the character
        estimate it only fires when the prompt certainly does not fit (4 characters
        per token), leaving borderline cases to the server's own error.
        """
        window = self.context_window
        if not window:
            return
        text = request_text(request)
        overhead = MESSAGE_OVERHEAD_TOKENS * len(request.messages or ((None, None),))
        if self.backend.exact_tokens:
            n = self.count_tokens(text) + overhead
        else:
            n = math.ceil(len(text) / 4) + overhead
        if n >= window:
            how = "" if self.backend.exact_tokens else "about "
            raise LMContextTooLong(
                f"the prompt has {how}{n} tokens but {self.name} reads at most {window}: shrink the prompt "
                "(fewer examples, fewer table rows) and retry", prompt_tokens=n, limit=window)

    def _finish(self, request: LMRequest, key: str, choices: list[Choice], pt: int, ct: int, *, requests: int,
                source: str, start: float, purpose: str, tags: dict[str, str],
                metadata: dict[str, object] | None = None) -> Completion:
        latency = time.perf_counter() - start
        cached = source != "model"
        if cached:
            usage = Usage(cached_requests=1, cached_prompt_tokens=pt, cached_completion_tokens=ct,
                          wall_seconds=latency)
            cost = 0.0
        else:
            cost = self.prices.cost(self.backend.model if not self.name.startswith("local") else "local", pt, ct)
            usage = Usage(requests=requests, prompt_tokens=pt, completion_tokens=ct, cost_usd=cost,
                          wall_seconds=latency)
        self.ledger.add(usage, purpose=purpose, tags=tags, lm=self.name)
        if self.store is not None:
            self.store.log(lm=self.name, purpose=purpose, tags=tags, key=key, source=source, requests=requests,
                           prompt_tokens=pt, completion_tokens=ct, latency=latency, cost=cost)
        if self.recorder is not None:
            self._record_model()
            b = self.backend
            self.recorder.put(key, request_key(request), lm=self.name, endpoint=b.endpoint, model=b.model,
                              api=b.api, request=request, choices=choices, prompt_tokens=pt, completion_tokens=ct)
        meta = dict(metadata or {})
        meta.update(source=source, purpose=purpose, key=key)
        return Completion(choices=list(choices), usage=usage, model=self.name, cached=cached,
                          latency_seconds=latency, metadata=meta)

    def _record_model(self) -> None:
        """The model's row in the recorder (its name, endpoint and context window: replay reads them),
        before the first thing recorded from it."""
        if not self._model_recorded and self.recorder is not None:
            self._model_recorded = True
            b = self.backend
            self.recorder.put_model(self.name, b.endpoint, b.model, b.context_window)

    @property
    def usage(self) -> Usage:
        """Everything this client's ledger has counted (shared ledgers count all their clients)."""
        return self.ledger.total

    def close(self) -> None:
        self._shutdown_executor()
        self.backend.close()

    def __enter__(self) -> LMClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"LMClient({self.name!r})"


class ReplayLM(_AsyncMixin):
    """Answers only from a recorded directory (``replay:DIR``); a miss raises :class:`LMReplayMiss`.

    Responses are looked up by the request alone (prompt or messages and every
    sampling parameter), so one recording serves both the program-writing and
    the neural-call model. Token counts recorded during the run are replayed
    too, so prompts are budgeted exactly as they were.
    """

    def __init__(self, directory: str | Path, *, ledger: UsageLedger | None = None, lm: str | None = None):
        self.directory = Path(directory).expanduser()
        path = self.directory / "lm.sqlite" if self.directory.suffix != ".sqlite" else self.directory
        self.store = LMStore(path, readonly=True)
        self.only_lm = lm
        models = self.store.models()
        if lm:
            models = [m for m in models if m[0] == lm]
        self.recorded = [m[0] for m in models]
        self.name = f"replay:{models[0][0]}" if len(models) == 1 else f"replay:{self.directory}"
        windows = [m[3] for m in models if m[3]]
        self.context_window = min(windows) if windows else 0
        self.ledger = ledger if ledger is not None else UsageLedger()
        self._executor = None
        self._executor_lock = threading.Lock()
        # requests are built as for the recorded model: its API ("chat" or "completions") and what it
        # takes and returns: for the embedded model its small-model settings, the grammar its programs
        # were sampled under and the log-probabilities its row-by-row neural calls read; for an
        # OpenAI-compatible server, log-probabilities
        api = self._recorded_api() or "completions"
        if any(name.startswith("local:") for name in self.recorded):
            self.capabilities = replace(EMBEDDED_CAPABILITIES, api=api)
        else:
            remote = any(name.startswith(("openai:", "openai-completions:", "azure:")) for name in self.recorded)
            self.capabilities = Capabilities(api=api, exact_tokens=True, logprobs=remote)

    def with_api(self, api: str) -> ReplayLM:
        """Replay as a model of ``api`` (for runs recorded before the API was stored)."""
        self.capabilities = replace(self.capabilities, api=api)
        return self

    def _recorded_api(self) -> str | None:
        apis = self.store.recorded_apis(self.only_lm)
        return apis.pop() if len(apis) == 1 else None

    def count_tokens(self, text: str) -> int:
        n = self.store.get_token_count(text, self.only_lm)
        return estimate_tokens(text) if n is None else n

    def complete(self, request: LMRequest, *, purpose: str = "", tags: Mapping[str, str] | None = None) -> Completion:
        start = time.perf_counter()
        found = self.store.get_by_request(request_key(request), self.only_lm)
        if found is None:
            raise LMReplayMiss(
                f"replay miss: no recorded answer in {self.store.path} for this {purpose or 'unnamed'} request "
                f"(n={request.n}, temperature={request.temperature}, seed={request.seed}, "
                f"max_tokens={request.max_tokens}); prompt: {excerpt(request)!r}. Replay answers only what was "
                "recorded with exactly the same prompt and parameters: rerun with the same settings as the "
                "recorded run, or record again with a live model (binder-py eval ... --out DIR).")
        choices, pt, ct, lm = found
        latency = time.perf_counter() - start
        usage = Usage(cached_requests=1, cached_prompt_tokens=pt, cached_completion_tokens=ct, wall_seconds=latency)
        self.ledger.add(usage, purpose=purpose, tags=_tags(tags), lm=self.name)
        return Completion(choices=list(choices), usage=usage, model=self.name, cached=True, latency_seconds=latency,
                          metadata={"source": "replay", "recorded_lm": lm, "purpose": purpose})

    @property
    def usage(self) -> Usage:
        return self.ledger.total

    def close(self) -> None:
        self._shutdown_executor()
        self.store.close()

    def __repr__(self) -> str:
        return f"ReplayLM({str(self.directory)!r})"
