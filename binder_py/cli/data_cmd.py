"""``binder-py data``: where to get the benchmark data, and a check of a data directory."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from binder_py.datasets.check import SOURCES, check_data_dir
from binder_py.datasets.common import ENV_VAR, resolve_data_dir
from binder_py.errors import BinderError


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "data", help="where to get WikiTQ/TabFact and check a data directory",
        description="Explain where to get the benchmark data (WikiTQ v1.0.2 with the SQUALL-derived "
                    "program-unsolvable subsets, TabFact small test) and check a data directory: which files "
                    "are present, their counts, and what is missing. Exit status 0 when all required files "
                    "are there, 1 otherwise.",
        epilog=SOURCES, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data-dir", metavar="DIR",
                        help=f"directory holding wikitq/ and tabfact/ (default: ${ENV_VAR}, else ../shared/data)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    try:
        root = resolve_data_dir(args.data_dir)
    except BinderError as error:
        print(SOURCES)
        print(f"No data directory: {error}", file=sys.stderr)  # it names where it looked
        return 1
    print(f"Data directory: {root}")
    checks = check_data_dir(Path(root))
    problems = 0
    for c in checks:
        mark = "ok     " if c.ok else ("MISSING" if "missing" in c.detail or "not found" in c.detail else "WRONG  ")
        if not c.ok and not c.required:
            mark = "note   "
        print(f"  [{mark}] {c.dataset:<8} {c.item:<48} {c.detail}")
        problems += (not c.ok) and c.required
    if problems:
        print(f"\n{problems} required item(s) missing or wrong.\n")
        print(SOURCES)
        return 1
    print("\nAll required files present with the expected counts.")
    return 0
