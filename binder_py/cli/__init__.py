"""The ``binder-py`` command. Each sub-command lives in its own module with a ``register`` function."""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence

# module name -> registers one or more sub-commands
COMMAND_MODULES = (
    "binder_py.cli.ask_cmd",
    "binder_py.cli.exec_cmd",
    "binder_py.cli.eval_cmd",
    "binder_py.cli.data_cmd",
    "binder_py.cli.lm_cmd",
    "binder_py.cli.bench_cmd",
    "binder_py.cli.calibrate_cmd",
)

#: sub-commands whose module registers only them: their command line builds only their parser
ALONE = {"exec": "binder_py.cli.exec_cmd"}


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The parser; given ``argv`` whose sub-command is known, only that command's module is
    imported (``binder-py exec`` does not import what ``eval`` needs)."""
    parser = argparse.ArgumentParser(
        prog="binder-py",
        description="Answer questions about tables with LM-written pandas programs that call the LM back.",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    command = next((arg for arg in (argv or ()) if not arg.startswith("-")), None)
    for name in [ALONE[command]] if command in ALONE else COMMAND_MODULES:
        importlib.import_module(name).register(subparsers)
    return parser


#: exit status when the reader of our output went away (``| head``): 128 + SIGPIPE, as a shell reports it
BROKEN_PIPE_STATUS = 141


def main(argv: Sequence[str] | None = None) -> int:
    from binder_py.errors import BinderError
    from binder_py.lm.types import LMError

    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(argv)
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    try:
        status = int(args.func(args) or 0)
        sys.stdout.flush()  # a closed pipe shows here, inside the handler, not at interpreter exit
        return status
    except BrokenPipeError:
        return _reader_went_away()
    except (BinderError, LMError) as error:
        print(f"binder-py {args.command}: error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"binder-py {args.command}: interrupted", file=sys.stderr)
        return 130


def _reader_went_away() -> int:
    """``binder-py … | head``: the reader closed the pipe. End quietly: point stdout at /dev/null so
    the interpreter's final flush of the unread output cannot raise again (Python's documented recipe)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # stdout is not a file (captured by a test, replaced by a caller)
        pass
    return BROKEN_PIPE_STATUS


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
