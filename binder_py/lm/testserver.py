"""A loopback OpenAI-compatible server for tests and benchmarks.

Real HTTP on 127.0.0.1 (a free port), one thread per connection, serving
``POST /v1/chat/completions``, ``POST /v1/completions`` and ``GET /v1/models``
with scripted answers, a fixed latency and injected faults::

    from binder_py.lm.testserver import Fault, LoopbackServer

    with LoopbackServer(responder=lambda body, api: "42", latency=0.3) as server:
        lm = lm_from_spec(f"openai:test-model@{server.base_url}", cache=False)
        server.faults.extend([Fault.rate_limit(retry_after=0.01), Fault.server_error()])
        ...
        server.request_count, server.max_in_flight, server.requests  # what it saw

``responder(body, api)`` gets the decoded JSON body and ``"chat"`` or
``"completions"`` and returns a string (used for every one of the ``n``
choices), a list of strings (one per choice), or a :class:`Fault`. Faults
queued in ``server.faults`` are used first, one per request; ``fault_plan``
(a function of the request number and body) may return one too.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Fault:
    """An injected failure: ``kind`` is one of rate_limit, server_error, hang, malformed,
    bad_key, unknown_model, context_too_long, empty_choices."""

    kind: str
    retry_after: str | None = None
    seconds: float = 0.0
    status: int = 500

    @classmethod
    def rate_limit(cls, retry_after: float | str | None = None) -> Fault:
        return cls("rate_limit", retry_after=None if retry_after is None else str(retry_after), status=429)

    @classmethod
    def server_error(cls, status: int = 500) -> Fault:
        return cls("server_error", status=status)

    @classmethod
    def hang(cls, seconds: float = 30.0) -> Fault:
        """Answer only after ``seconds`` (past the client's timeout)."""
        return cls("hang", seconds=seconds)

    @classmethod
    def malformed(cls) -> Fault:
        return cls("malformed", status=200)

    @classmethod
    def bad_key(cls) -> Fault:
        return cls("bad_key", status=401)

    @classmethod
    def unknown_model(cls) -> Fault:
        return cls("unknown_model", status=404)

    @classmethod
    def context_too_long(cls) -> Fault:
        return cls("context_too_long", status=400)


def _error_body(message: str, type_: str, code: str | None, param: str | None = None) -> dict[str, Any]:
    return {"error": {"message": message, "type": type_, "param": param, "code": code}}


@dataclass
class RecordedRequest:
    path: str
    body: dict[str, Any]
    headers: dict[str, str]
    started: float
    fault: str | None = None


@dataclass
class LoopbackServer:
    responder: Callable[[dict[str, Any], str], Any] | None = None
    latency: float = 0.0
    fault_plan: Callable[[int, dict[str, Any]], Fault | None] | None = None
    api_key: str | None = None  # when set, other keys get 401
    models: tuple[str, ...] = ()  # when set, other models get 404
    ignore_n: bool = False  # answer one choice whatever n is (like many local servers)
    context_window: int | None = None  # when set, longer prompts (chars/4) get a 400 context error
    faults: list[Fault] = field(default_factory=list)
    requests: list[RecordedRequest] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self.request_count = 0
        self.in_flight = 0
        self.max_in_flight = 0
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # --- lifecycle ---------------------------------------------------------------------
    def start(self) -> LoopbackServer:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def do_GET(self) -> None:
                if self.path.rstrip("/").endswith("/models"):
                    data = [{"id": m, "object": "model", "created": 0, "owned_by": "loopback"}
                            for m in (server.models or ("test-model",))]
                    self._send(200, {"object": "list", "data": data})
                else:
                    self._send(404, _error_body(f"no route {self.path}", "invalid_request_error", None))

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw or b"{}")
                except json.JSONDecodeError:
                    self._send(400, _error_body("bad JSON", "invalid_request_error", None))
                    return
                server._handle(self, body)

            def _send(self, status: int, payload: Any, headers: dict[str, str] | None = None,
                      raw: bytes | None = None) -> None:
                data = raw if raw is not None else json.dumps(payload).encode()
                try:
                    self.send_response(status)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(data)))
                    for k, v in (headers or {}).items():
                        self.send_header(k, v)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="loopback-openai", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> LoopbackServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        assert self._httpd is not None, "start the server first"
        return self._httpd.server_address[1]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def reset(self) -> None:
        with self._lock:
            self.requests.clear()
            self.faults.clear()
            self.request_count = 0
            self.max_in_flight = 0

    # --- one request ---------------------------------------------------------------------
    def _handle(self, handler: Any, body: dict[str, Any]) -> None:
        path = handler.path.split("?")[0].rstrip("/")
        api = "chat" if path.endswith("/chat/completions") else ("completions" if path.endswith("/completions")
                                                                   else None)
        if api is None:
            handler._send(404, _error_body(f"no route {handler.path}", "invalid_request_error", None))
            return
        with self._lock:
            number = self.request_count
            self.request_count += 1
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            fault = self.faults.pop(0) if self.faults else None
            record = RecordedRequest(path, body, {k.lower(): v for k, v in handler.headers.items()}, time.time())
            self.requests.append(record)
        try:
            if fault is None and self.fault_plan is not None:
                fault = self.fault_plan(number, body)
            if fault is None:
                fault = self._config_fault(handler, body, api)
            answer = None
            if fault is None and self.responder is not None:
                answer = self.responder(body, api)
                if isinstance(answer, Fault):
                    fault = answer
            record.fault = fault.kind if fault else None
            if self.latency:
                self._stop.wait(self.latency)
            if fault is not None:
                self._send_fault(handler, fault, body)
                return
            handler._send(200, self._response(body, api, answer))
        finally:
            with self._lock:
                self.in_flight -= 1

    def _config_fault(self, handler: Any, body: dict[str, Any], api: str) -> Fault | None:
        if self.api_key is not None:
            if handler.headers.get("authorization", "") != f"Bearer {self.api_key}":
                return Fault.bad_key()
        if self.models and body.get("model") not in self.models:
            return Fault.unknown_model()
        if self.context_window is not None:
            text = body.get("prompt") or "".join(m.get("content", "") for m in body.get("messages", []))
            if len(str(text)) / 4 > self.context_window:
                return Fault.context_too_long()
        return None

    def _send_fault(self, handler: Any, fault: Fault, body: dict[str, Any]) -> None:
        kind = fault.kind
        if kind == "rate_limit":
            headers = {"retry-after": fault.retry_after} if fault.retry_after is not None else {}
            handler._send(429, _error_body("Rate limit reached, slow down", "requests", "rate_limit_exceeded"),
                          headers)
        elif kind == "server_error":
            handler._send(fault.status, _error_body("The server had an error", "server_error", None))
        elif kind == "hang":
            self._stop.wait(fault.seconds)
            handler._send(200, self._response(body, "chat", "too late"))
        elif kind == "malformed":
            handler._send(200, None, raw=b'{"id": "x", "choices": [ {"mess')
        elif kind == "empty_choices":
            handler._send(200, {"id": "x", "object": "chat.completion", "created": 0, "model": "m"})
        elif kind == "bad_key":
            handler._send(401, _error_body("Incorrect API key provided: sk-***.", "invalid_request_error",
                                           "invalid_api_key"))
        elif kind == "unknown_model":
            handler._send(404, _error_body(f"The model `{body.get('model')}` does not exist or you do not have "
                                           "access to it.", "invalid_request_error", "model_not_found"))
        elif kind == "context_too_long":
            text = body.get("prompt") or "".join(m.get("content", "") for m in body.get("messages", []))
            n = max(1, len(str(text)) // 4)
            limit = self.context_window or max(1, n - 1)
            handler._send(400, _error_body(
                f"This model's maximum context length is {limit} tokens. However, your messages resulted in "
                f"{n} tokens. Please reduce the length of the messages.", "invalid_request_error",
                "context_length_exceeded", "messages"))
        else:
            handler._send(500, _error_body(f"unknown fault {kind}", "server_error", None))

    def _response(self, body: dict[str, Any], api: str, answer: Any) -> dict[str, Any]:
        n = 1 if self.ignore_n else int(body.get("n") or 1)
        if answer is None:
            answer = "ok"
        texts = list(answer) if isinstance(answer, (list, tuple)) else [answer] * n
        texts = (texts * n)[:n] if texts else [""] * n
        text_in = body.get("prompt") or " ".join(m.get("content", "") for m in body.get("messages", []))
        prompt_tokens = max(1, len(str(text_in).split()))
        completion_tokens = sum(max(1, len(str(t).split())) for t in texts)
        usage = {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                 "total_tokens": prompt_tokens + completion_tokens}
        want_logprobs = bool(body.get("logprobs"))
        if api == "chat":
            choices = []
            for i, t in enumerate(texts):
                choice: dict[str, Any] = {"index": i, "finish_reason": "stop",
                                          "message": {"role": "assistant", "content": str(t)}}
                if want_logprobs:
                    choice["logprobs"] = {"content": [{"token": w, "logprob": -0.5, "bytes": None,
                                                       "top_logprobs": []} for w in str(t).split() or [""]]}
                choices.append(choice)
            return {"id": f"chatcmpl-{self.request_count}", "object": "chat.completion", "created": int(time.time()),
                    "model": body.get("model", "test-model"), "choices": choices, "usage": usage}
        choices = []
        for i, t in enumerate(texts):
            choice = {"index": i, "finish_reason": "stop", "text": str(t), "logprobs": None}
            if want_logprobs:
                words = str(t).split() or [""]
                choice["logprobs"] = {"tokens": words, "token_logprobs": [-0.25] * len(words),
                                      "top_logprobs": None, "text_offset": [0] * len(words)}
            choices.append(choice)
        return {"id": f"cmpl-{self.request_count}", "object": "text_completion", "created": int(time.time()),
                "model": body.get("model", "test-model"), "choices": choices, "usage": usage}
