"""``binder-py evaluate`` (score predictions), ``binder-py eval`` (run a benchmark split into a run
directory) and ``binder-py report`` (compare run directories: markdown table and PNG plots)."""

from __future__ import annotations

import argparse
import json

from binder_py.cli.options import (add_engine_options, add_model_options, add_sampling_options, eval_extra_settings,
                                   refuse_unused_neural)
from binder_py.cli.terminal import terminal_json, terminal_text
from binder_py.tasks import BENCHMARK_TASKS, task_profile
from binder_py.datasets.wikitq import split_answer
from binder_py.errors import BinderError

EPILOG = """\
Two ways to use it:

  binder-py evaluate PREDICTIONS.jsonl [--scores OUT.jsonl] [--dataset wikitq --split dev] [--json]
                    [--show-wrong N]
      Rescore a JSON Lines file. Each line: {"id": ..., "question": ..., "gold": [...], "prediction": ...}
      ("gold_canon", "subsets" and "dataset" optional). "prediction" may be any JSON value (a list is a
      multi-value answer, 3.0 counts as "3", null as no answer). With --dataset, gold, question, canonical
      values and subsets are looked up by id where a line lacks them, and accuracy is broken down by subset
      (dev: solvable-/unsolvable-squall, solvable-/unsolvable-binder).
      WikiTQ prints three accuracies, one per evaluator (docs/RESULTS.md, "Evaluators"):
        official  the official WikiTQ evaluator, judgement for judgement
        binder    Binder's own semantic match (the paper's tables)
        semantic  binder-py's documented semantic match
      TabFact prints accuracy (predictions read as true/false, 1/0, yes/no, entailed/refuted).
      An id that comes again is scored once, by its last line (as in a run's results.jsonl after
      --retry-errors). --scores writes one line per scored line: {"id", "official", "binder", "semantic"}
      (TabFact: {"id", "correct"}), so judgements can be compared.

  binder-py evaluate --gold "a|b" --pred "b|a" [--question Q] [--gold-canon "x|y"] [--task wikitq|tabfact]
      Judge one answer. Values are separated by "|"; write a literal "|" as \\p (WikiTQ escapes).

Exit status: 0 after scoring, 2 on bad input.
"""


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "evaluate", help="score predictions (a JSONL file, or one --gold/--pred pair)",
        description="Score predictions with three WikiTQ evaluators (official, binder, semantic), or TabFact accuracy.",
        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("file", nargs="?", help="predictions file, JSON Lines")
    parser.add_argument("--gold", help='gold answer for one pair, values separated by "|"')
    parser.add_argument("--pred", help='predicted answer for one pair, values separated by "|"')
    parser.add_argument("--question", help="the question (Binder's evaluator reads its 'or' choices)")
    parser.add_argument("--gold-canon", help='WikiTQ targetCanon values for --gold, separated by "|"')
    parser.add_argument("--task", choices=BENCHMARK_TASKS,
                        help="scoring rules (default: the records' dataset field / --dataset, else wikitq)")
    parser.add_argument("--dataset", choices=BENCHMARK_TASKS, help="look up missing gold by id in this dataset")
    parser.add_argument("--split", help="dataset split for --dataset (default: wikitq dev, tabfact test-small)")
    parser.add_argument("--data-dir", metavar="DIR", help="data directory (default: $BINDER_DATA, else ../shared/data)")
    parser.add_argument("--scores", metavar="OUT.jsonl",
                        help="write each line's judgements: {\"id\", \"official\", \"binder\", \"semantic\"}")
    parser.add_argument("--json", action="store_true", help="print the scores as JSON")
    parser.add_argument("--show-wrong", type=int, default=0, metavar="N", help="list up to N wrong predictions")
    parser.set_defaults(func=run)
    _register_eval(subparsers)
    _register_report(subparsers)


def run(args: argparse.Namespace) -> int:
    pair = args.gold is not None or args.pred is not None
    if pair and args.file:
        raise BinderError("give either a predictions FILE or --gold/--pred, not both")
    if pair:
        if args.scores:
            raise BinderError("--scores needs a predictions FILE: it writes one line per predictions line")
        if args.gold is None or args.pred is None:
            raise BinderError("--gold and --pred go together: give both (values separated by '|')")
        _refuse_unused(args, ("show_wrong", "split", "data_dir"), "a predictions FILE")
        return _run_pair(args)
    if not args.file:
        raise BinderError("nothing to score: give a predictions FILE (JSON Lines) or --gold A --pred B; "
                          "see 'binder-py evaluate --help'")
    _refuse_unused(args, ("question", "gold_canon"), "--gold/--pred (a FILE's lines carry their own)")
    from binder_py.evaluate.scoring import score_file, write_judgements

    if args.scores:  # said before scoring, not after
        from binder_py.safefiles import output_file

        output_file(args.scores, what="--scores", example="scores.jsonl", reads=[args.file])
    examples = None
    if args.dataset:
        from binder_py.datasets import load_dataset
        examples = load_dataset(args.dataset, args.split, args.data_dir)
    elif args.split:
        raise BinderError("--split needs --dataset")
    report = score_file(args.file, task=args.task or args.dataset, examples=examples)
    if args.scores:
        try:
            write_judgements(report, args.scores)
        except OSError as error:
            raise BinderError(f"cannot write --scores {args.scores}: {error.strerror}; check the path") from None
    # subset names, questions, golds and predictions come from the file: no control reaches the terminal
    if args.json:
        print(terminal_json(json.dumps(report.as_dict(), indent=2)))
    else:
        print(terminal_text(report.format()))
    for wrong in report.wrong[: max(args.show_wrong, 0)]:
        print(terminal_json(json.dumps(wrong, ensure_ascii=False, default=str)))
    return 0


def _refuse_unused(args: argparse.Namespace, names: tuple[str, ...], needs: str) -> None:
    """Options this way of scoring would ignore, refused in one line (they were ignored without a word)."""
    given = ["--" + name.replace("_", "-") for name in names if vars(args)[name]]
    if given:
        raise BinderError(f"{', '.join(given)}: {'these apply' if len(given) > 1 else 'it applies'} only with "
                          f"{needs}; leave {'them' if len(given) > 1 else 'it'} out")


def _run_pair(args: argparse.Namespace) -> int:
    from binder_py.evaluate.judge import score_prediction
    from binder_py.evaluate.label import normalize_tabfact_prediction

    task = args.task or args.dataset or "wikitq"
    if task_profile(task).evaluator == "label":
        if normalize_tabfact_prediction(args.gold) is None:
            raise BinderError(f"--gold {args.gold!r} is not a TabFact label; use true/false, 1/0 or entailed/refuted")
        ok = score_prediction(task, args.question, args.gold, args.pred)["correct"]
        print(json.dumps({"task": task, "correct": ok}) if args.json
              else f"{task}: {'correct' if ok else 'wrong'}")
        return 0
    gold = split_answer(args.gold)
    canon = split_answer(args.gold_canon) if args.gold_canon is not None else None
    if canon is not None and len(canon) != len(gold):
        raise BinderError(f"--gold-canon has {len(canon)} values but --gold has {len(gold)}; give one per gold value")
    judgement = score_prediction(task, args.question, gold, split_answer(args.pred), canon)
    if args.json:
        print(json.dumps({"task": task, **judgement}))
    else:
        for name, ok in judgement.items():
            print(f"{name}: {'correct' if ok else 'wrong'}")
    return 0


# --- binder-py eval -----------------------------------------------------------------------

EVAL_EPILOG = """\
The run directory (--out) gets:
  config.json     the settings, the model, versions, data directory, split, limit, seed, start time
  results.jsonl   one JSON line per finished question (prediction, official/binder/semantic judgements, every
                  candidate program with its outcome and votes, neural calls, usage, timings), appended
                  and fsynced as each question finishes
  lm.sqlite       every model response the run used (cache hits included)

Run the same command again to resume: finished ids are skipped, a line cut off by a kill is dropped
and redone. Settings that change answers (task, split, mode, --lm, --neural, --n, --seed, --vote,
--neural-weight, --shots, --core-shots, --table-rows, --unconstrained, --no-link, --no-score-ties,
--abstain-below, --calibrator) must take the same values (one given at its default matches one left out; --lm's ?rpm= and other pacing
options may change), and the selection (--limit, --sample, --ids) may grow but must hold every finished
question (a --sample of another size may be another draw: grow --limit within one); otherwise use a new
--out or --force (moves the old results and recording aside).
Rerun offline from the recording:  binder-py eval ... --lm replay:runs/NAME --out runs/NAME-replay
On a Ray cluster (--engine ray [--ray-address ADDR]) each question is a Ray task; the results come
back here and go into the same run directory (docs/SCALE.md).
Per-question failures are recorded as lines with an "error" field and the run goes on; a bad key, an
unknown model or a server that nothing answers at (connection refused, unknown host) stops it at once.
Ctrl-C stops it; finished lines are kept.

Example:
  binder-py eval wikitq --split unsolvable-squall --mode binder --lm local --limit 20 --out runs/local-binder-squall20
  binder-py report runs/local-binder-squall20 runs/local-python-squall20 --plots runs/plots
"""


def _register_eval(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "eval", help="run a benchmark split into a run directory (resumable, recorded for replay)",
        description="Answer every question of a WikiTQ or TabFact split and record the results, "
                    "one JSON line per question, into a run directory.",
        epilog=EVAL_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("task", choices=BENCHMARK_TASKS, help="the benchmark")
    parser.add_argument("--split", help="wikitq: dev (default), test, unsolvable-squall, unsolvable-binder, "
                                        "solvable-squall, solvable-binder; tabfact: test-small")
    add_model_options(parser, lm_help="the model (docs/LM.md); replay:DIR reruns a recorded run offline",
                      neural_help="who answers neural calls: lm (default), lm-rows, lm-table, lm:SPEC, oracle:FILE.json")
    add_sampling_options(parser, seed_default=0)
    parser.add_argument("--limit", type=int, metavar="K", help="only the first K questions of the split (file order)")
    parser.add_argument("--sample", type=int, metavar="K",
                        help="a seeded random sample of K questions of the split (kept in file order)")
    parser.add_argument("--sample-seed", type=int, metavar="S", help="the sample's seed (default 0; with --sample)")
    parser.add_argument("--ids", metavar="FILE", help="only these question ids (one per line), in the split's order")
    parser.add_argument("--out", "--record-lm", dest="out", required=True, metavar="DIR",
                        help="the run directory (results, config and the model recording)")
    parser.add_argument("--data-dir", metavar="DIR", help="data directory (default: $BINDER_DATA, else ../shared/data)")
    parser.add_argument("--concurrency", type=int, metavar="C",
                        help="questions at once (default 1 for the local model, 4 otherwise)")
    add_engine_options(parser)
    parser.add_argument("--force", action="store_true", help="start over when --out holds a run with other settings")
    parser.add_argument("--retry-errors", action="store_true", help="on resume, run questions that failed again")
    parser.add_argument("--quiet", action="store_true", help="no progress bar (warnings still show)")
    parser.set_defaults(func=run_eval_command)


def run_eval_command(args: argparse.Namespace) -> int:
    import sys

    from binder_py.runs import read_ids_file, run_eval

    refuse_unused_neural(args)
    if args.concurrency is not None:
        from binder_py.engines import check_concurrency

        check_concurrency(args.concurrency, "--concurrency")
    ids = read_ids_file(args.ids) if args.ids else None
    try:
        summary = run_eval(args.task, args.split, out=args.out, mode=args.mode, lm=args.lm, neural=args.neural,
                           n=args.n, seed=args.seed, limit=args.limit, ids=ids, sample=args.sample,
                           sample_seed=args.sample_seed, data_dir=args.data_dir,
                           concurrency=args.concurrency, force=args.force, retry_errors=args.retry_errors,
                           progress=not args.quiet, vote=args.vote, shots=args.shots, cache=not args.no_cache,
                           command=["binder-py", *sys.argv[1:]], engine=args.engine,
                           ray_address=args.ray_address,
                           extra_settings=eval_extra_settings(args))
    except KeyboardInterrupt as interrupt:
        from binder_py.runs.evaluation import EvalInterrupted

        summary = interrupt.summary if isinstance(interrupt, EvalInterrupted) else None
        done = f"{summary.finished} finished line(s) kept in {summary.out}/results.jsonl; " if summary else ""
        print(f"binder-py eval: interrupted; {done}run the same command to resume", file=sys.stderr, flush=True)
        import os

        os._exit(130)  # do not wait for the questions still in flight
    print(summary.format())
    return 0


# --- binder-py report ---------------------------------------------------------------------

def _register_report(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "report", help="compare run directories: a markdown table and PNG plots",
        description="Read run directories written by 'binder-py eval' and print a side-by-side markdown table "
                    "(accuracy overall and by subset under the official, binder and semantic evaluators; requests, "
                    "tokens, cost and time per question; accuracy against the number of voting candidates, "
                    "recomputed from the recorded candidates with no model calls; confidence against accuracy, "
                    "with the expected calibration error). With --plots, also draw accuracy by subset and mode "
                    "(accuracy_by_subset.png), accuracy against the number of voting candidates "
                    "(accuracy_vs_candidates.png) and the reliability plot of the confidence (reliability.png).")
    parser.add_argument("runs", nargs="+", metavar="RUN_DIR", help="run directories (binder-py eval --out)")
    parser.add_argument("--out", metavar="FILE.md", help="also write the markdown to this file")
    parser.add_argument("--plots", metavar="DIR", help="write PNG plots into this directory")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON instead of markdown")
    parser.set_defaults(func=run_report_command)


def run_report_command(args: argparse.Namespace) -> int:
    from binder_py.runs import report

    result = report(args.runs, out=args.out, plots_dir=args.plots)
    if args.json:
        print(terminal_json(json.dumps(result.as_dict(), indent=2)))
    else:
        print(terminal_text(result.markdown))
    for path in result.plots:
        print(f"wrote {path}", file=__import__("sys").stderr)
    return 0
