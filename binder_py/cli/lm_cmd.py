"""``binder-py cache stats|clear`` and ``binder-py lm check SPEC`` / ``binder-py lm log``."""

from __future__ import annotations

from typing import TYPE_CHECKING

import argparse
import json
import sqlite3
import sys
import time
from pathlib import Path

from binder_py.errors import BinderError

if TYPE_CHECKING:
    from binder_py.lm.local import LocalBackend


def register(subparsers: argparse._SubParsersAction) -> None:
    cache = subparsers.add_parser("cache", help="the language-model cache: statistics, clearing")
    cache_sub = cache.add_subparsers(dest="cache_command", metavar="ACTION", required=True)
    stats = cache_sub.add_parser("stats", help="show what the cache holds and how often it answered")
    stats.add_argument("--cache-path", help="cache file (default: $BINDER_CACHE_DIR or the user cache dir)")
    stats.add_argument("--json", action="store_true", help="print JSON")
    stats.set_defaults(func=_cache_stats)
    clear = cache_sub.add_parser("clear", help="delete every cached answer (and the call log)")
    clear.add_argument("--cache-path")
    clear.add_argument("--keep-log", action="store_true", help="keep the log of calls")
    clear.set_defaults(func=_cache_clear)

    lm = subparsers.add_parser("lm", help="language models: check a --lm spec, show the call log")
    lm_sub = lm.add_subparsers(dest="lm_command", metavar="ACTION", required=True)
    check = lm_sub.add_parser("check", help="send one tiny request to SPEC (uncached) and report")
    check.add_argument("spec", nargs="?", default=None,
                       help="e.g. openai:gpt-4o-mini, openai:MODEL@http://127.0.0.1:8000/v1, local, "
                            "local:/path/model.gguf, replay:DIR (default: $BINDER_LM, else openai when "
                            "OPENAI_API_KEY is set, else local)")
    check.add_argument("--prompt", default="Reply with the single word: ok")
    check.add_argument("--max-tokens", type=int, default=16)
    check.add_argument("--timeout", type=float, default=None)
    check.set_defaults(func=_lm_check)
    log = lm_sub.add_parser("log", help="show the most recent calls from the log")
    log.add_argument("--cache-path")
    log.add_argument("-n", "--limit", type=int, default=20, metavar="N",
                     help="how many of the most recent calls (default 20)")
    log.set_defaults(func=_lm_log)


def _store(path: str | None):
    from binder_py.lm.store import LMStore, default_cache_path

    target = Path(path).expanduser() if path else default_cache_path()
    if not target.exists():
        return None, target
    return LMStore(target), target


def _cache_stats(args: argparse.Namespace) -> int:
    store, target = _store(args.cache_path)
    if store is None:
        print(f"no cache yet at {target}")
        return 0
    stats = store.stats()
    if args.json:
        print(json.dumps(stats, indent=2))
        return 0
    print(f"cache: {stats['path']} ({stats['bytes'] / 1e6:.1f} MB)")
    print(f"answers stored: {stats['responses']}")
    for lm, n in sorted(stats["responses_by_lm"].items()):
        print(f"  {lm}: {n}")
    rate = stats["hit_rate"]
    print(f"calls logged: hits {stats['hits']}, sent to a model {stats['misses']}"
          + (f", hit rate {rate:.0%}" if rate is not None else ""))
    for source, row in sorted(stats["log"].items()):
        print(f"  {source}: {row['calls']} calls, {row['prompt_tokens']} prompt + {row['completion_tokens']} "
              f"completion tokens, ${row['cost_usd']:.4f}")
    return 0


def _cache_clear(args: argparse.Namespace) -> int:
    store, target = _store(args.cache_path)
    if store is None:
        print(f"no cache at {target}")
        return 0
    n = store.clear(log=not args.keep_log)
    if args.keep_log:
        print(f"cleared {n} cached answers from {target}; the log of calls is kept")
    else:
        print(f"cleared {n} cached answers and the log of calls from {target} (--keep-log keeps the log)")
    return 0


def _lm_check(args: argparse.Namespace) -> int:
    from binder_py.lm import LMRequest, lm_from_spec

    lm = lm_from_spec(args.spec, cache=False, log=False, timeout=args.timeout)
    window = f"{lm.context_window:,} tokens" if lm.context_window else "unknown"
    print(f"model: {lm.name} (context window: {window})")
    from binder_py.lm.client import LMClient, ReplayLM
    from binder_py.lm.local import LocalBackend

    if isinstance(lm, ReplayLM):  # it answers only recorded requests: say what it holds, ask nothing
        by_lm = lm.store.stats()["responses_by_lm"]
        held = "; ".join(f"{count:,} recorded answer{'s' if count != 1 else ''} from {name}"
                         for name, count in sorted(by_lm.items())) or "no recorded answers"
        print(f"recording: {lm.store.path}: {held}")
        print("replay answers only requests recorded there, with the same prompt and parameters "
              "(binder-py eval ... --lm replay:DIR with the recorded run's settings)")
        lm.close()
        return 0 if by_lm else 2
    if isinstance(lm, LMClient) and isinstance(lm.backend, LocalBackend):
        _check_local(lm.backend)
    started = time.perf_counter()
    completion = lm.complete(LMRequest(prompt=args.prompt, max_tokens=args.max_tokens), purpose="check")
    seconds = time.perf_counter() - started
    usage = completion.usage
    print(f"answer: {completion.text.strip()!r}")
    print(f"time: {seconds:.2f}s; tokens: {usage.prompt_tokens + usage.cached_prompt_tokens} prompt, "
          f"{usage.completion_tokens + usage.cached_completion_tokens} completion; cost ${usage.cost_usd:.6f}")
    lm.close()
    return 0


def _check_local(backend: LocalBackend) -> None:
    """What runs the embedded model, which file it loaded and how that file was checked, and its speed."""
    started = time.perf_counter()
    verification = backend.prepare()
    checked = time.perf_counter() - started
    print(f"model file: {verification.path} ({verification.path.stat().st_size:,} bytes; GGUF "
          f"{verification.header.architecture!r}, {verification.header.name!r})")
    hash_line = (f"verified, SHA-256 {verification.sha256[:16]}… ({verification.how}; {checked:.1f}s)"
                 if verification.sha256 else verification.how)
    print(f"hash: {hash_line}")
    speed = backend.measure_speed(160, 24)  # short, so the check stays within a few seconds
    info = backend.info
    print(f"runtime: {info.runtime} in worker process {info.extra.get('pid')} ({info.slots} slots, "
          f"{info.threads} threads; loaded in {info.load_seconds:.1f}s)")
    print(f"speed: prompt {speed['prompt_per_second']:.0f} tokens/s ({speed['prompt_tokens']} uncached tokens), "
          f"generation {speed['generated_per_second']:.1f} tokens/s ({speed['generated_tokens']} tokens)")
    print(f"prompt prefixes kept on disk: {_prefix_states_line(verification.path, backend.context_window)}")


def _prefix_states_line(model_path: Path, n_ctx: int) -> str:
    """Where the worker keeps evaluated prompt prefixes for the next process, and how many it keeps."""
    from binder_py.lm.local import prefix_states_dir

    folder = prefix_states_dir(model_path, n_ctx)
    if folder is None:
        return "off (BINDER_PREFIX_STATES=0)"
    states = list(folder.glob("*.state")) if folder.is_dir() else []
    size = sum(path.stat().st_size for path in states)
    return f"{len(states)} ({size / 1e6:.0f} MB) in {folder}"


def _lm_log(args: argparse.Namespace) -> int:
    from binder_py.lm.store import default_cache_path

    if args.limit < 1:  # SQLite reads a negative LIMIT as no limit, and 0 shows nothing
        raise BinderError(f"-n must be at least 1 (how many recent calls to show), got {args.limit}")
    target = Path(args.cache_path).expanduser() if args.cache_path else default_cache_path()
    if not target.exists():
        raise BinderError(f"no cache/log at {target}")
    conn = sqlite3.connect(f"file:{target}?mode=ro", uri=True)
    rows = conn.execute("SELECT ts, lm, purpose, source, prompt_tokens, completion_tokens, latency, error, tags "
                        "FROM log ORDER BY id DESC LIMIT ?", (args.limit,)).fetchall()
    if not rows:
        print(f"no calls logged in {target}", file=sys.stderr)
    for ts, lm, purpose, source, pt, ct, latency, error, tags in reversed(rows):
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(ts))
        print(f"{when} {lm} {purpose or '-'} {source} {pt}+{ct} tok {latency:.2f}s{_tags_text(tags)}"
              + (f" ERROR {error}" if error else ""))
    return 0


def _tags_text(tags: str | None) -> str:
    """A call's tags as `` key=value ...`` (nothing when it has none; the stored JSON printed ``{}``)."""
    try:
        parsed = json.loads(tags) if tags else {}
    except ValueError:
        return f" {tags}"
    if not isinstance(parsed, dict):
        return f" {tags}"
    return "".join(f" {key}={value}" for key, value in parsed.items())
