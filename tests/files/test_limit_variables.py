"""The size limits README's "Limits" names are raised with environment variables; a value that
is not a positive whole number is a one-line error (exit status 2), as for the table limits, not a
traceback when the module is imported, and a file over a limit says which variable raises it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from binder_py.cli import main

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("name", ["BINDER_MAX_ORACLE_BYTES", "BINDER_MAX_RESULT_LINE_BYTES"])
def test_a_bad_limit_variable_is_a_one_line_error(name, tmp_path):
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), "BINDER_CACHE_DIR": str(tmp_path), name: "1e6"}
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "results.jsonl").write_text('{"id": "q1"}\n')
    args = (["exec", "examples/shirts.csv", "examples/shirts_program.py", "--neural",
             "oracle:examples/shirts.oracle.json"] if name == "BINDER_MAX_ORACLE_BYTES"
            else ["report", str(tmp_path / "run")])
    done = subprocess.run([sys.executable, "-m", "binder_py", *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert f"{name}='1e6' must be a whole number" in done.stderr


def test_an_oracle_over_the_limit_names_the_variable(tmp_path, monkeypatch, capsys):
    oracle = tmp_path / "oracle.json"
    oracle.write_text(json.dumps({"f_col": {"q": {"a": "yes" * 20}}, "f_val": {}}))
    monkeypatch.setenv("BINDER_MAX_ORACLE_BYTES", "10")
    code = main(["exec", str(ROOT / "examples/shirts.csv"), str(ROOT / "examples/shirts_program.py"),
                 "--neural", f"oracle:{oracle}"])
    err = capsys.readouterr().err
    assert code == 2
    assert "larger than the limit of 10 bytes; raise it with BINDER_MAX_ORACLE_BYTES" in err
