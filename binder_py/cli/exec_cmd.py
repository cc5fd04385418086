"""``binder-py exec``: run one Binder-Python program on a table and show the answer or the trace.

Also the annotation/debugging tool of the paper's appendix F: write a program, run it
with an oracle (answers you wrote) or a real LM, and read every neural call in the trace.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any

import pandas as pd

from binder_py.cli.options import check_last_argument
from binder_py.cli.terminal import terminal_json, terminal_text
from binder_py.errors import BinderError


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "exec", help="run one Binder-Python program on a table",
        description="Run one Binder-Python program (docs/LANGUAGE.md) on a table (CSV/TSV/Parquet/Excel by "
                    "extension), or on several (each named after its file, the first also df, as in "
                    "binder-py ask), and print its answer, or with --json the whole execution trace: the "
                    "rewritten code, the outcome, and every neural call with its request, answers, prompts and "
                    "LM outputs. Exit status 0 when the program ran, 1 when it failed, 2 for bad input.")
    parser.add_argument("tables", metavar="TABLE", nargs="+",
                        help="the table file; several tables: each is a variable named after its file "
                             "(orders.csv: orders), the first also df")
    parser.add_argument("program", metavar="PROGRAM_FILE", help="the program file, or - to read it from stdin")
    parser.add_argument("--neural", metavar="BACKEND",
                        help="who answers f_col/f_val: oracle:FILE.json (answers you wrote: "
                             '{"f_col": {question: {row key: answer}}, "f_val": {question: answer}}) or lm '
                             "(the language model of --lm, else the default model: BINDER_LM, OPENAI_API_KEY's, "
                             "the embedded one; lm-rows / lm-table choose its prompt; lm:SPEC names the model "
                             "instead of --lm). Default: lm when --lm is given, else none")
    parser.add_argument("--lm", metavar="SPEC", help="the language model for neural calls (see docs/LM.md)")
    parser.add_argument("--title", help="the table's title shown to the LM (default: the file name)")
    parser.add_argument("--timeout", type=float, metavar="SECONDS",
                        help="wall-clock limit of the program (time spent answering neural calls not counted)")
    parser.add_argument("--task", choices=("wikitq", "tabfact"),
                        help="read TABLE as binder-py eval's programs see a benchmark table, to rerun a recorded "
                             "program: wikitq (a WikiTQ .tsv/.csv: cells unescaped, a repeated header numbered "
                             "name_2, ...) or tabfact (a #-separated TabFact table), text cells lower-cased as the "
                             "task does; one table")
    parser.add_argument("--no-neural", action="store_true",
                        help="pure-Python mode: a program with a neural call is a policy error "
                             "(not with --neural or --lm)")
    parser.add_argument("--json", action="store_true", help="print the whole trace as JSON")
    parser.set_defaults(func=run)


def make_backend(neural: str | None, lm_spec: str | None, title: str | None) -> Any:
    """The neural backend named on the command line (None when there is none)."""
    from binder_py.neural.backends import OracleBackend

    if lm_spec and neural is not None and (neural.startswith("oracle:") or neural.startswith("lm:")):
        # which one answered went unsaid: the oracle (--lm unused), or --lm (the lm:SPEC unused)
        other = "the oracle answers every neural call" if neural.startswith("oracle:") else \
            f"--neural {neural} names the model too"
        raise BinderError(f"--lm {lm_spec} is not used: {other}; give one of them")
    if neural is None:
        neural = "lm" if lm_spec else None
    if neural is None:
        return None
    if neural.startswith("oracle:"):
        path = neural[len("oracle:"):]
        if not path:
            raise BinderError("--neural oracle: needs a file, as in --neural oracle:answers.json")
        return OracleBackend.from_file(path)
    from binder_py.neural.build import LM_SPECS, lm_backend

    if neural in LM_SPECS or neural.startswith("lm:"):
        from binder_py.lm import lm_from_spec

        spec = lm_spec if lm_spec else (neural[3:] or None if neural.startswith("lm:") else None)
        return lm_backend(lm_from_spec(spec), LM_SPECS.get(neural), title=title)
    raise BinderError(f"unknown --neural {neural!r}; use oracle:FILE.json, lm, lm-rows, lm-table or lm:SPEC")


def _read_program(path: str) -> str:
    try:
        if path == "-":  # as bytes: a C locale would otherwise let bad bytes through as surrogates
            stream = getattr(sys.stdin, "buffer", None)
            return stream.read().decode("utf-8-sig") if stream is not None else sys.stdin.read()
        return Path(path).read_text(encoding="utf-8-sig")  # a BOM (Windows editors) is not code
    except OSError as error:
        raise BinderError(f"cannot read program {path!r}: {error.strerror}") from None
    except UnicodeDecodeError as error:
        where = "on standard input" if path == "-" else f"in {path!r}"
        raise BinderError(f"the program {where} is not UTF-8 text (byte {error.start}); "
                          "save it as UTF-8") from None


def _benchmark_table(task: str, paths: list[str]) -> pd.DataFrame:
    """The table ``binder-py eval --task`` runs programs on: read by the dataset's reader (a WikiTQ
    table with a repeated header, or any TabFact table, is refused or misread as a plain file), its
    text cells lower-cased when the task lower-cases them, as :meth:`binder_py.ask.Binder.ask` does."""
    from binder_py.ask import lowercase_text_cells
    from binder_py.datasets.common import TABLE_LOADERS
    from binder_py.tasks import task_profile

    import binder_py.datasets  # noqa: F401 - registers the readers in TABLE_LOADERS

    if len(paths) != 1:
        raise BinderError(f"--task {task} reads one benchmark table, not {len(paths)}")
    table = TABLE_LOADERS[task](paths[0])
    return lowercase_text_cells(table) if task_profile(task).lowercase_cells else table


def format_value(value: Any) -> str:
    """The answer as printed: all of it, as a DataFrame's ``to_string`` shows every row (the sandbox
    bounds an answer's size); ``--json`` keeps the first 10,000 items and says so."""
    if isinstance(value, (pd.DataFrame, pd.Series)):
        return value.to_string()
    if isinstance(value, (list, tuple, dict)):
        from binder_py.jsonable import to_jsonable

        return json.dumps(to_jsonable(value, max_items=sys.maxsize, infinity_as_text=True), ensure_ascii=False)
    return str(value)


def run(args: argparse.Namespace) -> int:
    from binder_py.language.execute import execute, no_answer_statement

    from binder_py.language.table_names import load_table_files

    check_last_argument(args.program, "program file", "binder-py exec TABLE... PROGRAM_FILE")
    program = _read_program(args.program)
    if program.lstrip().startswith("```"):  # pasted from a chat answer: a syntax error at line 1, column 0
        raise BinderError("the program is wrapped in a markdown fence (```python ... ```); keep only the code "
                          "between the fences")
    if args.task is not None:
        table, named = _benchmark_table(args.task, args.tables), None
    else:
        loaded = load_table_files(args.tables)
        table = next(iter(loaded.values()))
        named = loaded if len(loaded) > 1 else None  # one table is df only, as in binder-py ask
    title = args.title or (Path(args.tables[0]).stem.replace("_", " ") if named is None else None)
    if args.no_neural and (args.neural is not None or args.lm):
        given = " and ".join(f"--{name} {value}" for name, value in (("neural", args.neural), ("lm", args.lm)) if value)
        raise BinderError(f"--no-neural runs the program without neural calls, so {given} would answer none; "
                          "leave out one or the other")
    backend = make_backend(args.neural, args.lm, title)
    limits = None
    if args.timeout is not None:
        if not math.isfinite(args.timeout) or args.timeout <= 0:
            raise BinderError(f"--timeout must be a positive number of seconds, not {args.timeout:g}")
        from dataclasses import replace

        from sandbox import Limits  # type: ignore[import-not-found]

        limits = replace(Limits(), wall_seconds=args.timeout, cpu_seconds=min(Limits().cpu_seconds, args.timeout))
    filename = "<stdin>" if args.program == "-" else args.program
    result = execute(program, table, neural=backend, title=title, allow_neural=not args.no_neural,
                     limits=limits, filename=filename, tables=named)
    # the answer, printed output, warnings and errors are the program's text: no control characters
    # reach the terminal (binder_py.cli.terminal)
    notes = no_answer_statement(result)
    if args.json:
        trace = result.to_json()
        trace["warnings"] = [*trace["warnings"], *notes]
        print(terminal_json(json.dumps(trace, ensure_ascii=False, indent=2)))
    else:
        for warning in [*result.warnings, *notes]:
            print(terminal_text(f"warning: {warning}"), file=sys.stderr)
        if result.outcome.stdout:
            sys.stderr.write(terminal_text(result.outcome.stdout))
        if result.ok:
            print(terminal_text(format_value(result.value)))
    if not result.ok:
        error = result.error
        where = f" at line {error.line}" if error is not None and error.line else ""
        print(terminal_text(f"binder-py exec: {error.kind} error{where}: {error.message}"), file=sys.stderr)
        return 1
    return 0
