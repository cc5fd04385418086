"""``binder-py evaluate``: score predictions against gold answers (WikiTQ official + semantic match, TabFact)."""

from __future__ import annotations

import argparse
import json

from binder_py.datasets.wikitq import split_answer
from binder_py.errors import BinderError

EPILOG = """\
Two ways to use it:

  binder-py evaluate PREDICTIONS.jsonl [--dataset wikitq --split dev] [--json] [--show-wrong N]
      Rescore a JSON Lines file. Each line: {"id": ..., "question": ..., "gold": [...], "prediction": ...}
      ("gold_canon", "subsets" and "dataset" optional). "prediction" may be any JSON value (a list is a
      multi-value answer, 3.0 counts as "3", null as no answer). With --dataset, gold, question, canonical
      values and subsets are looked up by id where a line lacks them, and accuracy is broken down by subset
      (dev: solvable-/unsolvable-squall, solvable-/unsolvable-binder).
      WikiTQ prints the official evaluator's accuracy and the semantic match's (Binder paper, appendix A.5);
      TabFact prints accuracy (predictions read as true/false, 1/0, yes/no, entailed/refuted).

  binder-py evaluate --gold "a|b" --pred "b|a" [--question Q] [--gold-canon "x|y"] [--task wikitq|tabfact]
      Judge one answer. Values are separated by "|"; write a literal "|" as \\p (WikiTQ escapes).

Exit status: 0 after scoring, 2 on bad input.
"""


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "evaluate", help="score predictions (a JSONL file, or one --gold/--pred pair)",
        description="Score predictions with WikiTQ's official evaluator and Binder's semantic match, or TabFact accuracy.",
        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("file", nargs="?", help="predictions file, JSON Lines")
    parser.add_argument("--gold", help='gold answer for one pair, values separated by "|"')
    parser.add_argument("--pred", help='predicted answer for one pair, values separated by "|"')
    parser.add_argument("--question", help="the question (used by the A-or-B choice rule)")
    parser.add_argument("--gold-canon", help='WikiTQ targetCanon values for --gold, separated by "|"')
    parser.add_argument("--task", choices=("wikitq", "tabfact"),
                        help="scoring rules (default: the records' dataset field / --dataset, else wikitq)")
    parser.add_argument("--dataset", choices=("wikitq", "tabfact"), help="look up missing gold by id in this dataset")
    parser.add_argument("--split", help="dataset split for --dataset (default: wikitq dev, tabfact test-small)")
    parser.add_argument("--data-dir", metavar="DIR", help="data directory (default: $BINDER_DATA, else ../shared/data)")
    parser.add_argument("--json", action="store_true", help="print the scores as JSON")
    parser.add_argument("--show-wrong", type=int, default=0, metavar="N", help="list up to N wrong predictions")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    pair = args.gold is not None or args.pred is not None
    if pair and args.file:
        raise BinderError("give either a predictions FILE or --gold/--pred, not both")
    if pair:
        if args.gold is None or args.pred is None:
            raise BinderError("--gold and --pred go together: give both (values separated by '|')")
        return _run_pair(args)
    if not args.file:
        raise BinderError("nothing to score: give a predictions FILE (JSON Lines) or --gold A --pred B; "
                          "see 'binder-py evaluate --help'")
    from binder_py.evaluate.scoring import score_file

    examples = None
    if args.dataset:
        from binder_py.datasets import load_dataset
        examples = load_dataset(args.dataset, args.split, args.data_dir)
    elif args.split:
        raise BinderError("--split needs --dataset")
    report = score_file(args.file, task=args.task or args.dataset, examples=examples)
    if args.json:
        print(json.dumps(report.as_dict(), indent=2))
    else:
        print(report.format())
    for wrong in report.wrong[: max(args.show_wrong, 0)]:
        print(json.dumps(wrong, ensure_ascii=False, default=str))
    return 0


def _run_pair(args: argparse.Namespace) -> int:
    task = args.task or args.dataset or "wikitq"
    if task == "tabfact":
        from binder_py.evaluate.tabfact import normalize_tabfact_prediction, tabfact_match
        if normalize_tabfact_prediction(args.gold) is None:
            raise BinderError(f"--gold {args.gold!r} is not a TabFact label; use true/false, 1/0 or entailed/refuted")
        ok = tabfact_match(args.gold, args.pred)
        result = {"task": "tabfact", "correct": ok}
        print(json.dumps(result) if args.json else f"tabfact: {'correct' if ok else 'wrong'}")
        return 0
    from binder_py.evaluate.official import official_match
    from binder_py.evaluate.semantic import semantic_match
    gold = split_answer(args.gold)
    pred = split_answer(args.pred)
    canon = split_answer(args.gold_canon) if args.gold_canon is not None else None
    if canon is not None and len(canon) != len(gold):
        raise BinderError(f"--gold-canon has {len(canon)} values but --gold has {len(gold)}; give one per gold value")
    official = official_match(gold, pred, canon)
    semantic = official or semantic_match(args.question, gold, pred, canon)
    if args.json:
        print(json.dumps({"task": "wikitq", "official": official, "semantic": semantic}))
    else:
        print(f"official: {'correct' if official else 'wrong'}")
        print(f"semantic: {'correct' if semantic else 'wrong'}")
    return 0
