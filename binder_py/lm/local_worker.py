"""The embedded model's worker process: llama.cpp's server, in-process through ``xllamacpp``.

Started by :class:`binder_py.lm.local.LocalBackend` as
``python -m binder_py.lm.local_worker --model FILE ...``; it speaks one JSON object
per line on stdin/stdout, so the process that forks sandbox workers never holds
llama.cpp's threads or the weights.

The server runs ``slots`` parallel slots, each with its own ``n_ctx`` context.
llama.cpp gives a request the idle slot whose cached tokens share the longest
prefix with the prompt (else the least recently used one), so each prompt kind
(parse, repair, neural) keeps its instruction and exemplars evaluated in its own
slot, and the next prompt of that kind evaluates only its new tokens. ``n``
samples come from one evaluated prompt: llama.cpp copies the prompt's cache into
``n - 1`` child slots and decodes the samples together.

With ``--prefix-dir DIR``, the evaluated prefixes of chat requests (their turns before the last) are
also kept on disk and restored by the next worker (:mod:`binder_py.lm.prefix_states`).

Messages in: ``{"op": "tokenize", "text": ...}``, ``{"op": "complete", "request":
{...}}``, ``{"op": "speed"}`` (prompt and generation rates), ``{"op": "exit"}``. Out: ``{"ok": true, ...}`` or ``{"ok": false, "error":
..., "kind": "context" | "request" | "runtime"}``. The first line out says whether
the model loaded.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from binder_py.lm.prefix_states import PrefixStates
from binder_py.lm.seeds import sample_seed

#: host memory for slot states evicted from a slot (llama.cpp's prompt cache), MiB
PROMPT_CACHE_MIB = 2048


@dataclass
class WorkerSettings:
    model: str
    n_ctx: int  # per slot
    slots: int
    threads: int
    prefix_dir: str | None = None  # evaluated prefixes kept on disk (None: not kept)


class RequestError(Exception):
    """The runtime refused a request (bad grammar or schema, prompt too long)."""

    def __init__(self, message: str, kind: str = "request", prompt_tokens: int | None = None):
        super().__init__(message)
        self.kind = kind
        self.prompt_tokens = prompt_tokens


def runtime_version() -> str:
    from importlib.metadata import version

    return f"xllamacpp {version('xllamacpp')}"


class Runtime:
    """One loaded model behind llama.cpp's server."""

    prefixes: PrefixStates | None = None  # evaluated prefixes kept on disk (WorkerSettings.prefix_dir)

    def __init__(self, settings: WorkerSettings):
        import xllamacpp

        params = xllamacpp.CommonParams()
        params.model.path = settings.model
        params.n_parallel = settings.slots
        params.n_ctx = settings.n_ctx * settings.slots
        params.kv_unified = False  # each slot keeps its own prefix
        params.cache_prompt = True
        params.cache_ram_mib = PROMPT_CACHE_MIB
        params.cpuparams.n_threads = settings.threads
        params.cpuparams_batch.n_threads = settings.threads
        params.warmup = False
        params.verbosity = 1  # warnings and errors only (the log is the worker's stderr)
        self._key = secrets.token_hex(16)
        params.api_keys = [self._key]  # the loopback HTTP listener (used for /tokenize) answers only us
        params.hostnames = ["127.0.0.1"]
        if settings.prefix_dir:
            try:
                Path(settings.prefix_dir).mkdir(parents=True, exist_ok=True)
            except OSError as error:  # a cache folder that cannot be written: prefixes are not kept, nothing fails
                print(f"prefixes not kept on disk: {error}", file=sys.stderr)
            else:
                params.slot_save_path = str(Path(settings.prefix_dir)) + os.sep
                params.endpoint_slots = True  # the loopback listener's /slots save and restore (key-protected)
                self.prefixes = PrefixStates(Path(settings.prefix_dir), settings.slots)
        self.settings = settings
        self.server = xllamacpp.Server(params)
        self.address = self.server.listening_address

    def _post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        request = urllib.request.Request(self.address + path, data=json.dumps(body).encode("utf-8"), method="POST",
                                         headers={"Content-Type": "application/json",
                                                  "Authorization": f"Bearer {self._key}"})
        with urllib.request.urlopen(request, timeout=120) as response:
            return dict(json.loads(response.read()))

    # --- tokens --------------------------------------------------------------------------
    def tokenize(self, text: str) -> list[int]:
        return list(self._post("/tokenize", {"content": text, "add_special": False})["tokens"])

    # --- prefixes kept on disk -----------------------------------------------------------
    def _slot_action(self, slot: int, action: str, filename: str) -> bool:
        try:
            reply = self._post(f"/slots/{slot}?action={action}", {"filename": filename})
        except (OSError, ValueError):  # an HTTP error (a file llama.cpp cannot read) or an unreadable reply
            return False
        return "error" not in reply

    def _warm(self, prefix: list[dict[str, str]], slot: int) -> dict[str, Any]:
        """Evaluate ``prefix`` alone in ``slot`` (one generated token), ending on an empty user turn when it
        ends on the model's turn; returns the runtime's timings."""
        messages = prefix if prefix[-1]["role"] == "user" else [*prefix, {"role": "user", "content": ""}]
        reply = self._call({"messages": messages, "max_tokens": 1, "temperature": 0.0, "cache_prompt": True,
                            "id_slot": slot})
        return dict(reply.get("timings", {}))

    # --- speed ---------------------------------------------------------------------------
    def measure_speed(self, prompt_tokens: int = 256, generated_tokens: int = 32) -> dict[str, Any]:
        """Prompt and generation rates on an uncached prompt (fresh text, cache off, no early stop)."""
        text = f"{secrets.token_hex(4)} " + " ".join(f"row {i}: city{i % 17}, {i * 37 % 1000} units;"
                                                     for i in range(prompt_tokens // 10 + 1))
        reply = self.server.handle_completions({"prompt": text, "n_predict": generated_tokens, "ignore_eos": True,
                                                "cache_prompt": False, "temperature": 0.0})
        if reply.get("error"):
            raise RequestError(str(reply["error"]), "runtime")
        timings = reply["timings"]
        return {"ok": True, "prompt_tokens": timings["prompt_n"], "prompt_per_second": timings["prompt_per_second"],
                "generated_tokens": timings["predicted_n"], "generated_per_second": timings["predicted_per_second"]}

    # --- completions ---------------------------------------------------------------------
    def complete(self, request: dict[str, Any]) -> dict[str, Any]:
        """All ``n`` samples of one request, in chunks of at most ``slots`` from one evaluated prompt each."""
        started = time.perf_counter()
        n = int(request.get("n", 1))
        seed = request.get("seed")
        choices: list[dict[str, Any]] = []
        totals = {"prompt_tokens": 0, "cache_n": 0, "prompt_n": 0, "prompt_ms": 0.0, "predicted_ms": 0.0,
                  "requests": 0}
        slot: int | None = None
        if self.prefixes is not None:
            try:
                slot, warmed = self.prefixes.place(request["messages"], self._slot_action, self._warm)
            except RequestError:  # the prefix alone was refused (too long): the request says why itself
                slot, warmed = None, {}
            if warmed:  # the prefix was evaluated just now (to be saved): evaluated, not found cached
                for name in ("prompt_n", "prompt_ms", "predicted_ms"):
                    totals[name] += warmed.get(name, 0)
                totals["cache_n"] -= warmed.get("prompt_n", 0)
        while len(choices) < n:
            k = min(self.settings.slots, n - len(choices))
            chunk_seed = None if seed is None else sample_seed(int(seed), len(choices))  # llama.cpp adds i
            body = _body(request, k, chunk_seed)
            if slot is not None and not choices:
                body["id_slot"] = slot  # the first chunk goes where its prefix was restored or warmed
            reply = self._call(body)
            choices.extend(self._choices(reply, request))
            usage, timings = reply.get("usage", {}), reply.get("timings", {})
            totals["prompt_tokens"] += int(usage.get("prompt_tokens", 0))
            totals["requests"] += 1
            for name in ("cache_n", "prompt_n", "prompt_ms", "predicted_ms"):
                totals[name] += timings.get(name, 0)
        totals["cache_n"] = max(0, totals["cache_n"])
        return {"ok": True, "choices": choices, "prompt_tokens": totals["prompt_tokens"],
                "completion_tokens": sum(c["completion_tokens"] for c in choices), "requests": totals["requests"],
                "cached_prompt_tokens": totals["cache_n"], "evaluated_prompt_tokens": totals["prompt_n"],
                "prompt_seconds": totals["prompt_ms"] / 1000, "generation_seconds": totals["predicted_ms"] / 1000,
                "seconds": time.perf_counter() - started}

    def _call(self, body: dict[str, Any]) -> dict[str, Any]:
        try:
            reply = self.server.handle_chat_completions(body)
        except ValueError as error:  # the schema or grammar could not be compiled
            raise RequestError(f"the runtime rejected the request: {error}") from None
        error = reply.get("error")
        if error:
            message = str(error.get("message", error))
            if error.get("type") == "exceed_context_size_error":
                raise RequestError(message, "context", error.get("n_prompt_tokens"))
            raise RequestError(f"the runtime rejected the request: {message}")
        return reply

    def _choices(self, reply: dict[str, Any], request: dict[str, Any]) -> list[dict[str, Any]]:
        want_top = int(request.get("top_logprobs") or 0)
        want_logprobs = bool(request.get("logprobs")) or want_top > 0
        out = []
        for choice in sorted(reply["choices"], key=lambda c: c.get("index", 0)):
            text = choice.get("message", {}).get("content") or ""
            entry: dict[str, Any] = {"text": text, "finish_reason": choice.get("finish_reason")}
            content = (choice.get("logprobs") or {}).get("content")
            if want_logprobs and content is not None:
                entry["token_logprobs"] = [[t["token"], float(t["logprob"])] for t in content]
                if want_top:
                    entry["top_logprobs"] = [[[a["token"], float(a["logprob"])] for a in t["top_logprobs"][:want_top]]
                                             for t in content]
                entry["completion_tokens"] = len(content)
            else:
                entry["completion_tokens"] = len(self.tokenize(text)) if text else 0
            out.append(entry)
        return out


def _body(request: dict[str, Any], n: int, seed: int | None) -> dict[str, Any]:
    """The chat-completions body llama.cpp's server reads."""
    body: dict[str, Any] = {
        "messages": [{"role": role, "content": content} for role, content in request["messages"]],
        "n": n, "temperature": float(request["temperature"]), "top_p": float(request["top_p"]),
        "max_tokens": int(request["max_tokens"]), "cache_prompt": True,
    }
    if request.get("stop"):
        body["stop"] = list(request["stop"])
    if seed is not None:
        body["seed"] = seed
    top = int(request.get("top_logprobs") or 0)
    if request.get("logprobs") or top:
        body["logprobs"] = True
        body["top_logprobs"] = max(1, top)  # 0 would turn log-probabilities off altogether
    if request.get("grammar") is not None:
        body["grammar"] = request["grammar"]
    if request.get("json_schema") is not None:
        try:
            body["json_schema"] = json.loads(request["json_schema"])
        except json.JSONDecodeError as error:
            raise RequestError(f"LMRequest.json_schema is not JSON ({error}); pass the schema as JSON text") from None
    return body


def serve(settings: WorkerSettings, stdin: TextIO) -> int:
    protocol = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)  # anything the runtime prints goes to the log, not into the protocol

    def send(obj: dict[str, Any]) -> None:
        protocol.write(json.dumps(obj) + "\n")
        protocol.flush()

    started = time.perf_counter()
    try:
        runtime = Runtime(settings)
    except Exception as error:  # noqa: BLE001 - reported to the parent, which raises LMConfigError
        send({"ok": False, "error": f"{type(error).__name__}: {error}"})
        return 1
    send({"ok": True, "runtime": runtime_version(), "model": settings.model, "n_ctx": settings.n_ctx,
          "slots": settings.slots, "threads": settings.threads, "pid": os.getpid(),
          "load_seconds": round(time.perf_counter() - started, 3)})
    for line in stdin:
        try:
            message = json.loads(line)
        except json.JSONDecodeError:
            send({"ok": False, "kind": "runtime", "error": "the worker got a line that is not JSON"})
            continue
        op = message.get("op")
        if op == "exit":
            break
        try:
            if op == "tokenize":
                send({"ok": True, "n": len(runtime.tokenize(message["text"]))})
            elif op == "complete":
                send(runtime.complete(message["request"]))
            elif op == "speed":
                send(runtime.measure_speed(int(message.get("prompt_tokens", 256)),
                                           int(message.get("generated_tokens", 32))))
            else:
                send({"ok": False, "kind": "runtime", "error": f"unknown op {op!r}"})
        except RequestError as error:
            send({"ok": False, "kind": error.kind, "error": str(error), "prompt_tokens": error.prompt_tokens})
        except Exception as error:  # noqa: BLE001
            send({"ok": False, "kind": "runtime", "error": f"{type(error).__name__}: {error}"})
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m binder_py.lm.local_worker",
                                     description="the embedded model's worker (JSON lines on stdin/stdout)")
    parser.add_argument("--model", required=True)
    parser.add_argument("--n-ctx", type=int, required=True, help="context tokens per slot")
    parser.add_argument("--slots", type=int, required=True)
    parser.add_argument("--threads", type=int, required=True)
    parser.add_argument("--parent-pid", type=int, help="leave when this process is gone (default: the parent)")
    parser.add_argument("--prefix-dir", help="keep evaluated prompt prefixes in this folder (binder_py.lm.prefix_states)")
    args = parser.parse_args(argv)
    die_with_parent(args.parent_pid)
    return serve(WorkerSettings(args.model, args.n_ctx, args.slots, args.threads, args.prefix_dir), sys.stdin)


def die_with_parent(parent: int | None = None, poll_seconds: float = 0.5) -> None:
    """Leave when the process that started this one dies, so a killed ``binder-py`` never leaves a
    model worker behind (a worker loading a model reads no stdin yet, so it would not see the end
    of it). A daemon thread polls the parent's pid: the kernel's ``PR_SET_PDEATHSIG`` is not used
    because it fires when the parent *thread* that started the worker exits, and the worker is
    often started lazily from a short-lived thread (a thread pool's first request)."""
    import threading

    if parent is None:
        parent = os.getppid()
        if parent == 1:  # the parent died before this line
            os._exit(1)

    def watch() -> None:
        while True:
            if os.getppid() != parent:  # re-parented: the starting process is gone
                os._exit(1)
            time.sleep(poll_seconds)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


if __name__ == "__main__":
    try:
        code = main()
    except BaseException:  # noqa: BLE001 - a broken pipe to a dead parent, an interrupt
        import traceback

        traceback.print_exc()  # into the worker's log
        code = 1
    # the runtime's threads are not daemons: leave without waiting for them
    sys.stdout.flush()
    os._exit(code)
