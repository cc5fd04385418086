"""Agreement of binder-py's three evaluators with the original evaluators on the generated cases.

    WTQ_EVALUATOR=.../evaluator.py BINDER_REPO=.../Binder PYTHONPATH=. \
        python tests/evaluate/agreement.py [--split dev|test] [--binder-per-rule N] [--data-dir DIR]

``--split test`` perturbs the test split's gold answers instead and gives every case the real ``targetCanon``
(rules that write their own canon get the real one instead); its cases have no expected judgements.
Prints, per evaluator, how many cases it agrees with each original on, and the rules where they differ.
"""

from __future__ import annotations

import argparse
import collections
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import wikitq_cases as generated  # noqa: E402
import original_evaluators as originals  # noqa: E402

from binder_py.evaluate.binder import binder_match  # noqa: E402
from binder_py.evaluate.official import official_match  # noqa: E402
from binder_py.evaluate.semantic import semantic_match  # noqa: E402


def _test_split_cases(data_dir: str | None) -> list[generated.Case]:
    from binder_py.datasets.wikitq import load_wikitq

    examples = load_wikitq("test", data_dir)
    golds = [(e.id, e.question, tuple(e.gold)) for e in examples if e.gold_canon is not None]
    canon = {e.id: tuple(e.gold_canon) for e in examples if e.gold_canon is not None}
    return [generated.Case(c.rule, c.id, c.question, c.gold, c.prediction, canon[c.id], {})
            for c in generated.generate(golds, evaluators=())]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--split", choices=("dev", "test"), default="dev")
    parser.add_argument("--binder-per-rule", type=int, default=200,
                        help="cases per rule for the binder comparison (the recogniser takes ~20 ms a value; "
                             "0 leaves it out)")
    parser.add_argument("--data-dir")
    args = parser.parse_args()
    cases = (list(generated.generate(generated.dev_golds(args.data_dir))) if args.split == "dev"
             else _test_split_cases(args.data_dir))
    rows = [c.as_json() for c in cases]
    seen: collections.Counter[str] = collections.Counter()
    binder_rows = []
    for case, row in zip(cases, rows):
        seen[case.rule] += 1
        if seen[case.rule] <= args.binder_per_rule:
            binder_rows.append((case, row))
    print(f"{len(cases)} cases from the {args.split} gold answers, {len(seen)} rules; "
          f"{len(binder_rows)} in the binder comparison")

    started = time.perf_counter()
    ours = {"official": [official_match(c.gold, c.prediction, c.canon) for c in cases],
            "semantic": [semantic_match(c.gold, c.prediction, c.canon) for c in cases]}
    ours_binder = [binder_match(c.question, c.gold, c.prediction) for c, _ in binder_rows]
    semantic_on_binder_rows = [semantic_match(c.gold, c.prediction, c.canon) for c, _ in binder_rows]
    print(f"ours: {time.perf_counter() - started:.0f} s")

    def report(label: str, mine: list[bool], theirs: list[bool], subset: list[generated.Case]) -> None:
        same = sum(a == b for a, b in zip(mine, theirs))
        print(f"{label}: agrees on {same}/{len(theirs)} = {100 * same / len(theirs):.2f}%")
        differ = collections.Counter(c.rule for c, a, b in zip(subset, mine, theirs) if a != b)
        for rule, count in differ.most_common():
            print(f"    {count:5d}  {rule}")

    try:
        started = time.perf_counter()
        official = originals.official_judgements(rows)
        print(f"original official evaluator (Python 2.7): {time.perf_counter() - started:.0f} s")
        report("official vs original official", ours["official"], official, cases)
        report("semantic vs original official", ours["semantic"], official, cases)
    except originals.Unavailable as why:
        print(f"original official evaluator not run: {why}")
    if not binder_rows:
        return 0
    try:
        started = time.perf_counter()
        binder = originals.binder_judgements([row for _, row in binder_rows])
        print(f"Binder's original evaluator: {time.perf_counter() - started:.0f} s")
        subset = [c for c, _ in binder_rows]
        report("binder vs Binder's original", ours_binder, binder, subset)
        report("semantic vs Binder's original", semantic_on_binder_rows, binder, subset)
    except originals.Unavailable as why:
        print(f"Binder's original evaluator not run: {why}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
