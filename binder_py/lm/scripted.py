"""``ScriptedLM``: an in-process language model for tests of other layers.

Give it a function or a queue of answers::

    from binder_py.lm import LMRequest, ScriptedLM

    lm = ScriptedLM(lambda request, purpose: "df['a'].sum()")        # same answer every time
    lm = ScriptedLM(["first answer", ["sample 1", "sample 2"]])        # one entry per call, in order
    lm = ScriptedLM(lambda request, purpose: ["yes", "no"] if purpose == "neural" else "...")

    completion = lm.complete(LMRequest(prompt="..."), purpose="parse")
    lm.calls            # [(LMRequest, purpose, tags), ...] every request it got
    lm.usage            # Usage summed over the calls

An answer is a string (repeated for each of the request's ``n`` choices) or a
list of strings (one per choice; cycled when shorter than ``n``, cut when
longer). A ``Choice`` (or a list mixing strings and ``Choice`` objects) is
returned as it is, so a test can script log-probabilities and top alternatives;
a string becomes ``Choice(text, finish_reason="stop")``. A responder may also raise an ``LMError`` to simulate a failure. When
a queue runs out, ``ScriptedLM`` raises ``AssertionError`` naming the purpose and
the prompt. Tokens are counted by splitting on whitespace. Thread-safe.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Union

from binder_py.lm.accounting import UsageLedger
from binder_py.lm.client import _AsyncMixin, excerpt, request_text
from binder_py.lm.types import Capabilities, Choice, Completion, LMContextTooLong, LMRequest, Usage

Answer = Union[str, Choice, list[Union[str, Choice]]]
Responder = Callable[[LMRequest, str], Answer]


class ScriptedLM(_AsyncMixin):
    def __init__(self, responder: Responder | Iterable[Answer], *, name: str = "scripted",
                 context_window: int = 32_768, ledger: UsageLedger | None = None,
                 capabilities: Capabilities | None = None):
        self.name = name
        self.context_window = context_window
        self.capabilities = capabilities or Capabilities()
        self.ledger = ledger if ledger is not None else UsageLedger()
        self.calls: list[tuple[LMRequest, str, dict[str, str]]] = []
        self._lock = threading.Lock()
        self._executor = None
        self._executor_lock = threading.Lock()
        if callable(responder):
            self._responder: Responder | None = responder
            self._queue: list[Answer] = []
        else:
            self._responder = None
            self._queue = list(responder)

    def count_tokens(self, text: str) -> int:
        return len(text.split())

    @property
    def requests(self) -> list[LMRequest]:
        return [request for request, _, _ in self.calls]

    @property
    def usage(self) -> Usage:
        return self.ledger.total

    def complete(self, request: LMRequest, *, purpose: str = "", tags: Mapping[str, str] | None = None) -> Completion:
        started = time.perf_counter()
        tags = {str(k): str(v) for k, v in (tags or {}).items()}
        prompt_tokens = self.count_tokens(request_text(request))
        if self.context_window and prompt_tokens > self.context_window:  # 0: unknown, as for a server
            raise LMContextTooLong(f"{self.name}: prompt of {prompt_tokens} tokens exceeds {self.context_window}",
                                   prompt_tokens=prompt_tokens, limit=self.context_window)
        with self._lock:
            self.calls.append((request, purpose, tags))
            if self._responder is None:
                if not self._queue:
                    raise AssertionError(f"ScriptedLM {self.name!r} has no answer left for a {purpose or 'unnamed'} "
                                         f"request: {excerpt(request)!r}")
                answer: Answer | None = self._queue.pop(0)
            else:
                answer = None
        if answer is None:
            assert self._responder is not None
            answer = self._responder(request, purpose)
        given = [answer] if isinstance(answer, (str, Choice)) else list(answer)
        if not given:
            given = [""]
        given = [given[i % len(given)] for i in range(request.n)]
        choices = [a if isinstance(a, Choice) else Choice(text=a, mean_logprob=None, finish_reason="stop")
                   for a in given]
        usage = Usage(requests=1, prompt_tokens=prompt_tokens,
                      completion_tokens=sum(self.count_tokens(c.text) for c in choices),
                      wall_seconds=time.perf_counter() - started)
        self.ledger.add(usage, purpose=purpose, tags=tags, lm=self.name)
        return Completion(choices=choices, usage=usage, model=self.name, latency_seconds=usage.wall_seconds,
                          metadata={"source": "scripted", "purpose": purpose})

    def close(self) -> None:
        self._shutdown_executor()
