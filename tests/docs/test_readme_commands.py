"""README's command table is where a user looks for a command's options: every option of
``binder-py ask`` and ``binder-py exec`` is in its row, and ``bench --parts`` lists every part."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from binder_py.cli import build_parser

README = (Path(__file__).resolve().parents[2] / "README.md").read_text()


def command_row(command: str) -> str:
    return next(line for line in README.splitlines() if line.startswith(f"| `binder-py {command} "))


def options(command: str) -> list[str]:
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return [o for action in sub.choices[command]._actions for o in action.option_strings
            if o.startswith("--") and o != "--help"]


@pytest.mark.parametrize("command", ["ask", "exec"])
def test_every_option_is_in_the_readme_row(command):
    row = command_row(command)
    missing = [o for o in options(command) if f"{o}" not in row.replace("\\|", "|")]
    assert not missing, f"README's row of binder-py {command} lacks {missing}"


def test_bench_row_names_every_part():
    from binder_py.cli.bench_cmd import PARTS

    row = command_row("bench")
    assert f"--parts {','.join(PARTS)}" in row
