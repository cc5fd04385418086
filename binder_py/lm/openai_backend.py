"""The OpenAI-compatible backend (OpenAI, Azure OpenAI, vLLM, llama.cpp's server, Ollama, ...).

Built on the ``openai`` SDK with the SDK's own retries switched off
(``max_retries=0``): this module retries, with the policy of
:mod:`binder_py.lm.reliability`, and turns the SDK's errors into the
:mod:`binder_py.lm.types` errors. Only timeouts, HTTP 429 and HTTP 5xx are retried
(each retry announced as it happens); a refused connection or an unknown host fails at
once, naming the address it tried.
"""

from __future__ import annotations

import errno
import json
import re
import socket
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any
from urllib.parse import urlsplit

import openai

from binder_py.lm.accounting import estimate_tokens
from binder_py.lm.client import RawResult, request_text
from binder_py.lm.reliability import Limiter, RetryPolicy, parse_retry_after
from binder_py.lm.seeds import fan_out_seed
from binder_py.lm.types import (Capabilities, Choice, LMAuthError, LMContextTooLong, LMError, LMModelNotFound, LMRequest,
                                LMUnavailable, LMUnreachable)

DEFAULT_OPENAI_MODEL = "gpt-4o-mini"
OPENAI_BASE_URL = "https://api.openai.com/v1"

# Known context windows (tokens). Others: unknown (0) unless given with ?ctx=N.
KNOWN_CONTEXT_WINDOWS = {
    "gpt-4o-mini": 128_000,
    "gpt-4o": 128_000,
    "gpt-4.1": 1_047_576,
    "gpt-3.5-turbo-instruct": 4_096,
    "gpt-3.5-turbo": 16_385,
}

_CONTEXT_PATTERNS = (
    re.compile(r"maximum context length is (\d+) tokens.*?(?:resulted in|requested) (\d+) tokens", re.S),
    re.compile(r"context length (?:of|is) (\d+).*?(\d+) tokens", re.S),
)


def known_context_window(model: str) -> int:
    best = ""
    for name in KNOWN_CONTEXT_WINDOWS:
        if model.startswith(name) and len(name) > len(best):
            best = name
    return KNOWN_CONTEXT_WINDOWS[best] if best else 0


class _Transient(Exception):
    """A failure worth retrying (a timeout, HTTP 429, HTTP 5xx); carries the server's Retry-After when given."""

    def __init__(self, message: str, retry_after: float | None = None):
        super().__init__(message)
        self.retry_after = retry_after


class OpenAIBackend:
    """Sends requests to one model on one OpenAI-compatible endpoint.

    ``api="chat"`` uses chat completions (a ``prompt`` request becomes one user
    message); ``api="completions"`` uses legacy completions (``messages`` are
    flattened to ``role: content`` lines). When the server returns fewer
    choices than ``n`` (many servers ignore ``n``), the missing ones are asked
    for with concurrent ``n=1`` requests that differ only in the seed
    (:func:`binder_py.lm.seeds.fan_out_seed` when a seed is set); the server is then remembered as
    ignoring ``n``.
    """

    exact_tokens = False

    def __init__(self, model: str, *, base_url: str | None = None, api_key: str | None = None, api: str = "chat",
                 azure: bool = False, api_version: str | None = None, timeout: float = 60.0,
                 retry: RetryPolicy | None = None, limiter: Limiter | None = None,
                 context_window: int | None = None, name: str | None = None, client: Any = None):
        if api not in ("chat", "completions"):
            raise ValueError(f"api must be 'chat' or 'completions', not {api!r}")
        self.model = model
        self.api = api
        self.timeout = timeout
        self.retry = retry or RetryPolicy()
        self.limiter = limiter or Limiter()
        if client is not None:
            self.client = client
        elif azure:
            self.client = openai.AzureOpenAI(api_key=api_key, azure_endpoint=base_url, api_version=api_version,
                                             max_retries=0, timeout=timeout)
        else:
            self.client = openai.OpenAI(api_key=api_key, base_url=base_url, max_retries=0, timeout=timeout)
        self.endpoint = str(base_url or self.client.base_url).rstrip("/")
        self.context_window = context_window if context_window is not None else known_context_window(model)
        prefix = "azure" if azure else ("openai" if api == "chat" else "openai-completions")
        self.name = name or f"{prefix}:{model}"
        self._n_supported: bool | None = None
        self._pool: ThreadPoolExecutor | None = None
        self._pool_lock = threading.Lock()

    @property
    def capabilities(self) -> Capabilities:
        return Capabilities(api=self.api, logprobs=True, n_in_one_request=self._n_supported is not False,
                            parallel_requests=self.limiter.max_concurrency, exact_tokens=False)

    def count_tokens(self, text: str) -> int:
        return estimate_tokens(text)

    # --- one logical request -------------------------------------------------------------
    def generate(self, request: LMRequest) -> RawResult:
        if request.n > 1 and self._n_supported is False:
            return self._fan_out(request, 0, [], 0, 0, 0)
        choices, pt, ct = self._send_with_retries(request, request.n, request.seed)
        if len(choices) >= request.n:
            if request.n > 1:
                self._n_supported = True
            return RawResult(choices[: request.n], pt, ct, requests=1)
        self._n_supported = False
        return self._fan_out(request, len(choices), choices, pt, ct, 1)

    def _fan_out(self, request: LMRequest, have: int, choices: list[Choice], pt: int, ct: int,
                 requests: int) -> RawResult:
        missing = range(have, request.n)
        seeds = [None if request.seed is None else fan_out_seed(request.seed, i) for i in missing]
        with self._pool_lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(max_workers=16, thread_name_prefix="binder-lm-n")
        futures = [self._pool.submit(self._send_with_retries, request, 1, seed) for seed in seeds]
        results = [f.result() for f in futures]
        out = list(choices)
        for extra, p, c in results:
            out.extend(extra[:1])
            pt += p
            ct += c
        return RawResult(out[: request.n], pt, ct, requests=requests + len(results),
                         metadata={"n_emulated": True})

    # --- one physical request, retried --------------------------------------------------
    def _send_with_retries(self, request: LMRequest, n: int, seed: int | None) -> tuple[list[Choice], int, int]:
        policy = self.retry
        started = policy.clock()
        attempt = 0
        while True:
            try:
                with self.limiter.slot(estimate_tokens(request_text(request)) + request.max_tokens * n):
                    return self._send(request, n, seed)
            except _Transient as failure:
                elapsed = policy.clock() - started
                if attempt >= policy.max_retries:
                    raise LMUnavailable(f"{self.name}: gave up after {attempt + 1} attempts in {elapsed:.1f}s; "
                                        f"last error: {failure}") from None
                if failure.retry_after is not None and failure.retry_after > policy.max_retry_after_seconds:
                    raise LMUnavailable(f"{self.name}: the server asks to wait {failure.retry_after:.0f}s "
                                        f"(Retry-After), more than we wait; last error: {failure}") from None
                wait = policy.backoff(attempt, failure.retry_after)
                if elapsed + wait > policy.max_total_seconds:
                    raise LMUnavailable(f"{self.name}: gave up after {attempt + 1} attempts: waiting {wait:.1f}s "
                                        f"more would exceed the {policy.max_total_seconds:.0f}s retry budget; "
                                        f"last error: {failure}") from None
                policy.announce(policy.retry_message(f"{self.name} at {self.endpoint}", failure, attempt, wait))
                policy.sleep(wait)
                attempt += 1

    def _params(self, request: LMRequest, n: int, seed: int | None) -> dict[str, Any]:
        params: dict[str, Any] = {"model": self.model, "temperature": request.temperature, "top_p": request.top_p,
                                  "max_tokens": request.max_tokens}
        if n != 1:
            params["n"] = n
        if request.stop:
            params["stop"] = list(request.stop)
        if seed is not None:
            params["seed"] = seed
        if self.api == "chat":
            if request.messages is not None:
                params["messages"] = [{"role": r, "content": c} for r, c in request.messages]
            else:
                params["messages"] = [{"role": "user", "content": request.prompt}]
            if request.logprobs:
                params["logprobs"] = True
        else:
            if request.prompt is not None:
                params["prompt"] = request.prompt
            else:
                params["prompt"] = "\n\n".join(f"{r}: {c}" for r, c in request.messages or ()) + "\n\nassistant:"
            if request.logprobs:
                params["logprobs"] = 1
        return params

    def _send(self, request: LMRequest, n: int, seed: int | None) -> tuple[list[Choice], int, int]:
        params = self._params(request, n, seed)
        try:
            if self.api == "chat":
                response = self.client.chat.completions.create(**params, timeout=self.timeout)
            else:
                response = self.client.completions.create(**params, timeout=self.timeout)
        except openai.APITimeoutError as error:
            raise _Transient(f"timed out after {self.timeout:g}s") from error
        except openai.APIConnectionError as error:
            raise self._connection_error(error) from None
        except openai.APIStatusError as error:
            raise self._status_error(error, request) from None
        except openai.APIResponseValidationError as error:
            raise self._malformed(str(error)) from None
        except (json.JSONDecodeError, ValueError, TypeError, AttributeError) as error:
            raise self._malformed(f"{type(error).__name__}: {error}") from None
        return self._parse(response, request)

    def _malformed(self, detail: str) -> LMError:
        return LMError(f"{self.name} at {self.endpoint} sent a malformed response ({detail[:300]}); is it an "
                       "OpenAI-compatible server? Check the URL after '@' in --lm (it usually ends in /v1).")

    def _connection_error(self, error: openai.APIConnectionError) -> LMUnavailable:
        """A connection that could not be made (or broke): not retried, the address in the message."""
        host = urlsplit(self.endpoint).hostname or self.endpoint
        chain, cause = [], error.__cause__ or error.__context__
        while cause is not None and len(chain) < 8:
            chain.append(cause)
            cause = cause.__cause__ or cause.__context__
        detail = str(chain[0]) if chain else str(error)
        hint = "Check the URL after '@' in --lm (or OPENAI_BASE_URL)."
        if any(isinstance(c, socket.gaierror) for c in chain) or "name or service not known" in detail.lower() \
                or "name resolution" in detail.lower() or "nodename nor servname" in detail.lower():
            return LMUnreachable(f"{self.name}: unknown host {host!r} (tried {self.endpoint}): {detail}. {hint}")
        if any(isinstance(c, ConnectionRefusedError) or getattr(c, "errno", None) == errno.ECONNREFUSED
               for c in chain) or "connection refused" in detail.lower():
            return LMUnreachable(f"{self.name}: connection refused by {self.endpoint}: nothing is listening "
                                 f"there. Is the server running? {hint}")
        return LMUnavailable(f"{self.name}: cannot reach {self.endpoint}: {detail or type(error).__name__}. {hint}")

    def _parse(self, response: Any, request: LMRequest) -> tuple[list[Choice], int, int]:
        if isinstance(response, (str, bytes)) or not hasattr(response, "choices") or response.choices is None:
            raise self._malformed(f"body {str(response)[:200]!r}")
        choices = []
        try:
            for c in response.choices:
                if self.api == "chat":
                    text = c.message.content or ""
                    logprob = None
                    if getattr(c, "logprobs", None) is not None and getattr(c.logprobs, "content", None):
                        values = [t.logprob for t in c.logprobs.content if t.logprob is not None]
                        logprob = sum(values) / len(values) if values else None
                else:
                    text = c.text or ""
                    logprob = None
                    lp = getattr(c, "logprobs", None)
                    if lp is not None and getattr(lp, "token_logprobs", None):
                        values = [v for v in lp.token_logprobs if v is not None]
                        logprob = sum(values) / len(values) if values else None
                choices.append(Choice(text=text, mean_logprob=logprob, finish_reason=c.finish_reason))
        except (AttributeError, TypeError) as error:
            raise self._malformed(f"body: {error}") from None
        usage = getattr(response, "usage", None)
        pt = getattr(usage, "prompt_tokens", None)
        ct = getattr(usage, "completion_tokens", None)
        if pt is None:  # server gave no usage: estimate
            pt = estimate_tokens(request_text(request))
        if ct is None:
            ct = sum(estimate_tokens(c.text) for c in choices)
        return choices, int(pt), int(ct)

    def _status_error(self, error: openai.APIStatusError, request: LMRequest) -> Exception:
        status = error.status_code
        body = error.body if isinstance(error.body, dict) else {}
        inner = body.get("error") if isinstance(body.get("error"), dict) else body
        code = str((inner or {}).get("code") or error.code or "")
        message = str((inner or {}).get("message") or error.message)
        if status in (401, 403):
            return LMAuthError(f"{self.name} at {self.endpoint} refused the API key (HTTP {status}): {message}. "
                               "Set OPENAI_API_KEY (or AZURE_OPENAI_API_KEY) to a valid key.")
        if status == 404 or code == "model_not_found":
            return LMModelNotFound(f"{self.endpoint} does not know the model {self.model!r} (HTTP {status}): "
                                   f"{message}. Check the name after 'openai:' in --lm, and the base URL "
                                   "(it usually ends in /v1).")
        lowered = message.lower()
        if code == "context_length_exceeded" or (status in (400, 413) and (
                "context length" in lowered or "context_length" in lowered or "too long" in lowered
                or "maximum context" in lowered)):
            prompt_tokens = limit = None
            for pattern in _CONTEXT_PATTERNS:
                m = pattern.search(message)
                if m:
                    limit, prompt_tokens = int(m.group(1)), int(m.group(2))
                    break
            return LMContextTooLong(f"{self.name}: the prompt is longer than the model's context ({message}); "
                                    "shrink the prompt and retry", prompt_tokens=prompt_tokens, limit=limit)
        if status == 429:
            if code == "insufficient_quota":
                return LMUnavailable(f"{self.name}: the account has no quota left: {message}")
            return _Transient(f"rate limited (HTTP 429): {message}", self._retry_after(error))
        if status >= 500:
            return _Transient(f"server error (HTTP {status}): {message}", self._retry_after(error))
        if status == 408:  # the server timed the request out
            return _Transient(f"request timeout (HTTP 408): {message}", self._retry_after(error))
        return LMError(f"{self.name}: the server rejected the request (HTTP {status}): {message}")

    @staticmethod
    def _retry_after(error: openai.APIStatusError) -> float | None:
        headers = error.response.headers
        ms = headers.get("retry-after-ms")
        if ms is not None:
            try:
                return max(0.0, float(ms) / 1000)
            except ValueError:
                pass
        return parse_retry_after(headers.get("retry-after"), now=time.time())

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False)
        try:
            self.client.close()
        except Exception:  # noqa: BLE001
            pass
