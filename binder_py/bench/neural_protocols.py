"""The embedded model's neural calls, table prompt against row by row, side by side in one run.

    python -m binder_py.bench.neural_protocols --lm local:0.5b [--repeats 2]

Runs the quick start's two ``f_col`` calls (``examples/shirts.csv``, cells lower-cased as the analyst
task sees them) with each protocol in turn, ``repeats`` rounds, the model's response cache off, and
prints one JSON line per run: seconds, requests, prompt tokens the runtime evaluated and found
cached (its own counts), generated tokens. The first round is a new question for both protocols;
later rounds show what each keeps cached when the same calls come again.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

import pandas as pd
from binder_py.lm import lm_from_spec
from binder_py.language import execute
from binder_py.neural.build import lm_backend
from binder_py.tables import prepare_table

PROGRAM = ('a = f_col("Is the country in North America?", ["made in"])\n'
           'b = f_col("Does it have no chemicals?", ["shirt"])\n'
           '(a.astype(str) + "/" + b.astype(str)).tolist()')
SHIRTS = Path(__file__).resolve().parents[2] / "examples" / "shirts.csv"


class CountingLM:
    """The model, counting what the runtime reports for each request (evaluated and cached tokens)."""

    def __init__(self, lm: Any):
        self._lm = lm
        self.totals: dict[str, int] = {"requests": 0, "evaluated_prompt_tokens": 0, "cached_prompt_tokens": 0,
                                       "completion_tokens": 0}

    def __getattr__(self, name: str) -> Any:
        return getattr(self._lm, name)

    def complete(self, request: Any, **kwargs: Any) -> Any:
        completion = self._lm.complete(request, **kwargs)
        for name in ("evaluated_prompt_tokens", "cached_prompt_tokens"):
            self.totals[name] += int(completion.metadata.get(name) or 0)
        self.totals["requests"] += 1
        self.totals["completion_tokens"] += completion.usage.completion_tokens
        return completion


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m binder_py.bench.neural_protocols", description=__doc__)
    parser.add_argument("--lm", default="local", help="the embedded model (local, local:1.5b)")
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args(argv)
    table = prepare_table(pd.read_csv(SHIRTS))
    table = table.apply(lambda column: column.str.lower() if column.dtype == object else column)
    model = lm_from_spec(args.lm, cache=False, log=False)
    model.count_tokens("load the model before timing")
    try:
        for round_number in range(args.repeats):
            for protocol in ("table", "rows"):
                counting = CountingLM(model)
                start = time.perf_counter()
                run = execute(PROGRAM, table, neural=lm_backend(counting, protocol), title="shirts")
                print(json.dumps({"model": model.name, "protocol": protocol, "round": round_number,
                                  "seconds": round(time.perf_counter() - start, 1), "ok": run.outcome.ok,
                                  "answer": run.outcome.value if run.outcome.ok else None, **counting.totals}),
                      flush=True)
    finally:
        model.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
