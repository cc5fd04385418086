"""The embedded model's speed: its rates, one question end to end, and n = 5 samples of one parse prompt.

    python -m binder_py.bench.embedded_model --lm local:0.5b [--json out.json]

1. the runtime's prompt and generation rates on an uncached prompt (when the backend measures them);
2. the shirts question (``examples/shirts.csv``) asked once through :class:`binder_py.Binder` with the
   LM cache off, every model call recorded: purpose, prompt tokens (cached in a slot / evaluated),
   the longest sample, seconds, and the floor ``evaluated ÷ prompt rate + longest sample ÷ generation
   rate`` (calls are serialised, so the question's floor is the sum);
3. the question's first parse request again with n = 5 on a fresh worker (nothing cached), then once
   more on the same worker with another seed (its prefix cached);
4. with ``--wikitq N``: N WikiTQ dev questions (a seeded random sample, ``--sample-seed``), asked one
   after another on one worker (task wikitq, binder mode, n = 5, LM cache off), each with its
   seconds, prompt tokens evaluated and found cached, and floor, as in 2.

Evaluated prefixes are not kept on disk here (``BINDER_PREFIX_STATES=0`` unless set), so that "fresh
worker" means nothing cached; ``python -m binder_py.bench.prefix_states`` measures keeping them.

It uses only the public API, so it also runs on older code (``PYTHONPATH=/path/to/old/checkout``);
figures the old backend does not report are left empty. The machine's load average is printed
beside the numbers.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pandas as pd

from binder_py.lm import LMRequest, lm_from_spec

ROOT = Path(__file__).resolve().parents[1]
SHIRTS_QUESTION = "which is the best-selling shirt made in North America and with no chemicals?"


class RecordingLM:
    """A LanguageModel that passes calls through and remembers what each one cost."""

    def __init__(self, inner: Any):
        self.inner = inner
        self.name, self.context_window = inner.name, inner.context_window
        self.capabilities = inner.capabilities
        self.calls: list[dict[str, Any]] = []

    def complete(self, request: LMRequest, *, purpose: str = "", tags: Any = None) -> Any:
        started = time.perf_counter()
        completion = self.inner.complete(request, purpose=purpose, tags=tags)
        meta = completion.metadata
        longest = max((self.inner.count_tokens(c.text) for c in completion.choices), default=0)
        self.calls.append({"purpose": purpose, "n": request.n, "prompt_tokens": completion.usage.prompt_tokens,
                           "cached": meta.get("cached_prompt_tokens"), "evaluated": meta.get("evaluated_prompt_tokens"),
                           "completion_tokens": completion.usage.completion_tokens, "longest_sample": longest,
                           "seconds": round(time.perf_counter() - started, 2), "request": request})
        return completion

    async def acomplete(self, request: LMRequest, *, purpose: str = "", tags: Any = None) -> Any:
        return self.complete(request, purpose=purpose, tags=tags)

    def count_tokens(self, text: str) -> int:
        return self.inner.count_tokens(text)

    def close(self) -> None:
        self.inner.close()


def floor_seconds(evaluated: int | None, longest: int, rates: dict[str, float] | None) -> float | None:
    if rates is None or evaluated is None:
        return None
    return evaluated / rates["prompt_per_second"] + longest / rates["generated_per_second"]


def rates_of(lm: Any) -> dict[str, float] | None:
    """The embedded runtime's measured prompt and generation rates (None for any other model)."""
    from binder_py.lm.client import LMClient
    from binder_py.lm.local import LocalBackend

    if isinstance(lm, LMClient) and isinstance(lm.backend, LocalBackend):
        return lm.backend.measure_speed(512, 64)
    return None


def load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def ask_shirts(spec: str, seed: int) -> tuple[dict[str, Any], RecordingLM]:
    from binder_py.ask import Binder

    client = lm_from_spec(spec, cache=False, log=False)
    client.count_tokens("warm up")  # load the model before the clock starts
    rates = rates_of(client)
    lm = RecordingLM(client)
    binder = Binder(lm=lm, cache=False, task="analyst", seed=seed)
    df = pd.read_csv(ROOT / "examples" / "shirts.csv")
    started = time.perf_counter()
    answer = binder.ask(df, SHIRTS_QUESTION)
    seconds = time.perf_counter() - started
    for call in lm.calls:
        call["floor"] = floor_seconds(call["evaluated"], call["longest_sample"], rates)
    floors = [c["floor"] for c in lm.calls]
    summary = {"answer": str(answer.value), "seconds": round(seconds, 1), "calls": len(lm.calls),
               "prompt_tokens": sum(c["prompt_tokens"] for c in lm.calls),
               "evaluated": sum(c["evaluated"] or 0 for c in lm.calls) if rates else None,
               "cached": sum(c["cached"] or 0 for c in lm.calls) if rates else None,
               "floor": round(sum(floors), 1) if rates else None, "rates": rates}
    return summary, lm


def ask_wikitq(spec: str, count: int, sample_seed: int, seed: int) -> dict[str, Any]:
    """Part 4: ``count`` seeded-random WikiTQ dev questions, each timed with its floor."""
    from binder_py.ask import Binder
    from binder_py.datasets.wikitq import load_wikitq
    from binder_py.runs.evaluation import select_examples

    examples = select_examples(load_wikitq("dev"), sample=count, sample_seed=sample_seed)
    client = lm_from_spec(spec, cache=False, log=False)
    client.count_tokens("warm up")
    rates = rates_of(client)
    lm = RecordingLM(client)
    binder = Binder(lm=lm, cache=False, task="wikitq", seed=seed, progress=False)
    questions = []
    try:
        for example in examples:
            first = len(lm.calls)
            started = time.perf_counter()
            answer = binder.ask(example.load_table(), example.question, title=example.title)
            seconds = time.perf_counter() - started
            calls = lm.calls[first:]
            floor = [floor_seconds(c["evaluated"], c["longest_sample"], rates) for c in calls]
            questions.append({"id": example.id, "seconds": round(seconds, 1), "calls": len(calls),
                              "prompt_tokens": sum(c["prompt_tokens"] for c in calls),
                              "evaluated": sum(c["evaluated"] or 0 for c in calls),
                              "cached": sum(c["cached"] or 0 for c in calls),
                              "floor": round(sum(f for f in floor if f is not None), 1) if rates else None,
                              "answer": str(answer.value), "gold": example.gold,
                              "each_call": [[c["purpose"], c["evaluated"], c["cached"], c["seconds"]] for c in calls]})
            shown = {k: v for k, v in questions[-1].items() if k != "each_call"}
            print(f"  {example.id}: {shown}; load {load()}", flush=True)
    finally:
        lm.close()

    def median(values: list[float]) -> float:
        ordered = sorted(values)
        middle = len(ordered) // 2
        return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2

    summary = {"questions": len(questions), "rates": rates,
               "median_seconds": median([q["seconds"] for q in questions]),
               "mean_seconds": round(sum(q["seconds"] for q in questions) / max(1, len(questions)), 1),
               "median_evaluated": median([q["evaluated"] for q in questions]),
               "median_cached": median([q["cached"] for q in questions]),
               "median_prompt_tokens": median([q["prompt_tokens"] for q in questions])}
    if rates:
        ratios = [q["seconds"] / q["floor"] for q in questions if q["floor"]]
        summary["median_seconds_over_floor"] = round(median(ratios), 2) if ratios else None
    return {"summary": summary, "per_question": questions}


def five_samples(spec: str, request: LMRequest) -> dict[str, Any]:
    client = lm_from_spec(spec, cache=False, log=False)
    try:
        client.count_tokens("warm up")
        rates = rates_of(client)
        out: dict[str, Any] = {"rates": rates}
        for label, seed in (("cold", 101), ("warm", 102)):
            started = time.perf_counter()
            completion = client.complete(replace(request, n=5, seed=seed), purpose="parse")
            seconds = time.perf_counter() - started
            longest = max(client.count_tokens(c.text) for c in completion.choices)
            evaluated = completion.metadata.get("evaluated_prompt_tokens")
            floor = floor_seconds(evaluated, longest, rates)
            out[label] = {"seconds": round(seconds, 1), "prompt_tokens": completion.usage.prompt_tokens,
                          "evaluated": evaluated, "longest_sample": longest,
                          "distinct": len({c.text for c in completion.choices}),
                          "floor": round(floor, 1) if floor is not None else None}
        return out
    finally:
        client.close()


def main() -> int:
    os.environ.setdefault("BINDER_PREFIX_STATES", "0")  # a fresh worker finds nothing cached (module docstring)
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lm", default="local")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", help="also write the results here")
    parser.add_argument("--wikitq", type=int, metavar="N", help="only part 4: N WikiTQ dev questions")
    parser.add_argument("--sample-seed", type=int, default=0, help="which WikiTQ dev questions (part 4)")
    args = parser.parse_args()
    print(f"{args.lm}: load average before {load()}")
    if args.wikitq:
        result = ask_wikitq(args.lm, args.wikitq, args.sample_seed, args.seed)
        print(f"{args.wikitq} WikiTQ dev questions: {result['summary']}; load {load()}")
        if args.json:
            Path(args.json).write_text(json.dumps({"lm": args.lm, "wikitq": result, "load": load()}, indent=1))
        return 0
    summary, lm = ask_shirts(args.lm, args.seed)
    print(f"shirts question: {summary['seconds']} s, {summary['calls']} calls, answer {summary['answer']!r}; "
          f"prompt tokens {summary['prompt_tokens']} (evaluated {summary['evaluated']}, cached in a slot "
          f"{summary['cached']}); floor {summary['floor']} s; rates {summary['rates']}; load {load()}")
    for call in lm.calls:
        print(f"  {call['purpose']:<8} n={call['n']} prompt {call['prompt_tokens']:>5} (cached {call['cached']}, "
              f"evaluated {call['evaluated']}) longest sample {call['longest_sample']:>4} "
              f"{call['seconds']:>6.1f} s  floor {call['floor'] if call['floor'] is None else round(call['floor'], 1)}")
    parse = next(c["request"] for c in lm.calls if c["purpose"] == "parse")
    lm.close()
    samples = five_samples(args.lm, parse)
    print(f"n=5 of the first parse prompt: cold {samples['cold']}; warm {samples['warm']}; load {load()}")
    if args.json:
        calls = [{k: v for k, v in c.items() if k != "request"} for c in lm.calls]
        Path(args.json).write_text(json.dumps({"lm": args.lm, "shirts": summary, "calls": calls,
                                               "five_samples": samples, "load": load()}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
