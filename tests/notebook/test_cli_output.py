"""What the command line prints: ties flagged beside the value, the counts when there is no
answer, 'context window: unknown', and a pipe closed early (``| head``) ending quietly."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from binder_py.ask import Binder
from binder_py.cli import BROKEN_PIPE_STATUS, main
from binder_py.lm.testserver import LoopbackServer
from binder_py.views.examples import no_answer_view, tie_view

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"


@pytest.fixture
def table(tmp_path):
    path = tmp_path / "shirts.csv"
    path.write_text((EXAMPLES / "shirts.csv").read_text())
    return path


def ask_cli(monkeypatch, capsys, table, answer):
    monkeypatch.setattr(Binder, "ask", lambda self, *args, **kwargs: answer)
    code = main(["ask", str(table), "which shirt?", "--lm", "openai:m@http://127.0.0.1:9/v1", "--quiet"])
    return code, *capsys.readouterr()


def test_ask_flags_a_tie_beside_the_value(monkeypatch, capsys, table):
    code, out, err = ask_cli(monkeypatch, capsys, table, tie_view())
    assert code == 0 and out.strip() == "pure cotton oxford shirt"
    assert "binder-py ask: Tie: 3 answers got the same vote weight" in err


def test_ask_without_an_answer_gives_the_counts(monkeypatch, capsys, table):
    code, out, err = ask_cli(monkeypatch, capsys, table, no_answer_view())
    assert code == 1 and out == ""
    assert "4 program(s) sampled (2 distinct) + 2 written by repair; 6 failed; 0 voted" in err
    assert "--explain" in err


def test_lm_check_says_unknown_context_window_in_words(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("BINDER_CACHE_DIR", str(tmp_path))
    with LoopbackServer() as server:
        assert main(["lm", "check", f"openai:test-model@{server.base_url}"]) == 0
    out = capsys.readouterr().out
    assert "(context window: unknown)" in out and "unknown tokens" not in out


@pytest.mark.slow
def test_a_pipe_closed_early_ends_quietly():
    command = [sys.executable, "-m", "binder_py", "exec", str(EXAMPLES / "shirts.csv"),
               str(EXAMPLES / "shirts_program.py"), "--neural", f"oracle:{EXAMPLES / 'shirts.oracle.json'}", "--json"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT,
                               env={**os.environ, "PYTHONPATH": str(ROOT)})
    process.stdout.close()  # the reader goes away before the first line, as `| head -0` would
    err = process.stderr.read().decode()
    assert process.wait(timeout=60) == BROKEN_PIPE_STATUS
    assert err == ""
