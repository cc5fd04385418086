"""The 20 WikiTQ dev questions of ``embedded_model --wikitq 20 --sample-seed 7`` on the code this round
started from (commit 0ea533e, the 0.5B model through llama-cpp-python), timed per question, for the
side-by-side figure in docs/BENCHMARKS.md ("against the round's starting code").

That code has no bench module and its ``select_examples`` takes no sample, so this script is run BY
PATH from this tree with the old checkout on ``PYTHONPATH`` (it imports the old ``binder_py``), in a
venv with ``llama-cpp-python==0.3.36``; the question ids come from this tree, written first:

    python -c "import json; from binder_py.datasets.wikitq import load_wikitq; \\
        from binder_py.runs.evaluation import select_examples; \\
        json.dump([e.id for e in select_examples(load_wikitq('dev'), sample=20, sample_seed=7)], open('ids.json', 'w'))"
    cd /tmp && OMP_WAIT_POLICY=PASSIVE OLD_EVAL_LOG=/tmp/old-eval.jsonl PYTHONPATH=/path/to/0ea533e \\
        /path/to/venv/bin/python /path/to/this/tree/binder_py/bench/round_start.py ids.json old.json

The old worker does not report the prompt tokens llama.cpp evaluates; a measurement-only patch to its
``binder_py/lm/local.py`` (not in any commit) counts them: in ``_serve``, after the model loads, wrap
``llm.eval`` so that the first call of each completion adds ``len(tokens)`` to a counter (llama-cpp-python
evaluates a prompt's uncached suffix in that call, then one token per call); in ``_complete``, reset the
counter before the samples and mark each sample's first call; after them, append
``{"evaluated", "prompt_tokens", "n", "completion_tokens", "seconds"}`` as a JSON line to ``$OLD_EVAL_LOG``.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any


def main(argv: list[str]) -> int:
    from binder_py.ask import Binder  # the OLD tree's
    from binder_py.datasets.wikitq import load_wikitq
    from binder_py.lm.spec import lm_from_spec

    ids, out = json.loads(Path(argv[0]).read_text()), Path(argv[1])
    log = Path(os.environ["OLD_EVAL_LOG"])
    by_id = {e.id: e for e in load_wikitq("dev")}
    lm = lm_from_spec("local", cache=False, log=False)
    lm.count_tokens("warm up")  # load the model before the clock starts
    binder = Binder(lm=lm, cache=False, task="wikitq", seed=1)

    def calls() -> list[str]:
        return log.read_text().splitlines() if log.exists() else []

    rows: list[dict[str, Any]] = []
    for question_id in ids:
        example = by_id[question_id]
        before = len(calls())
        started = time.perf_counter()
        answer = binder.ask(example.load_table(), example.question, title=example.title)
        seconds = time.perf_counter() - started
        made = [json.loads(line) for line in calls()[before:]]
        rows.append({"id": question_id, "seconds": round(seconds, 1), "calls": len(made),
                     "evaluated": sum(c["evaluated"] for c in made),
                     "prompt_tokens": sum(c["prompt_tokens"] for c in made),
                     "answer": str(answer.value), "gold": example.gold})
        print(rows[-1], "load", os.getloadavg()[0], flush=True)
        out.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
