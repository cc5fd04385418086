"""A program's text does not drive the terminal (red team 3).

``binder-py exec`` printed the answer, the program's printed lines and its error messages as
they were: ``"41\\r42"`` showed as ``42``, ``"\\x1b[2J"`` cleared the screen and
``"\\x1b]52;c;..."`` set the clipboard of many terminal emulators. Every control character now
reaches the terminal as an escape (``binder_py/cli/terminal.py``; ``ask`` does the same).
"""
import json
import re

import pytest

from binder_py.cli import main
from binder_py.cli.terminal import terminal_json, terminal_text

#: what a terminal acts on: C0 controls but tab and newline, DEL, C1, bidirectional controls
ACTIVE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
HOSTILE = '"41\\r42\\x1b[2J\\x1b]52;c;cHduZWQ=\\x07\\u202e24\\x9b31m"'


@pytest.fixture
def table(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("a,b\n1,x\n")
    return path


@pytest.mark.parametrize("program", [
    f"x = {HOSTILE}\nx",
    f"print({HOSTILE})\n1",
    f"raise ValueError({HOSTILE})",
    f"x = [{HOSTILE}]\nx",
    f"pd.DataFrame({{'a': [{HOSTILE}]}})",
])
@pytest.mark.parametrize("as_json", [False, True])
def test_exec_prints_no_control_characters(table, tmp_path, capsys, program, as_json):
    path = tmp_path / "p.py"
    path.write_text(program + "\n")
    main(["exec", str(table), str(path)] + (["--json"] if as_json else []))
    out, err = capsys.readouterr()
    assert not ACTIVE.search(out) and not ACTIVE.search(err), (out, err)
    assert "41" in out + err and "42" in out + err
    if as_json:
        trace = json.loads(out)  # still the same JSON value
        if trace["ok"] and isinstance(trace["value"], str):
            assert trace["value"].startswith("41\r42\x1b[2J")


def test_escapes_are_readable():
    assert terminal_text("41\r42\x1b[2J\ttab\nline\u202e\x85") == "41\\x0d42\\x1b[2J\ttab\nline\\u202e\\x85"
    assert json.loads(terminal_json(json.dumps("a\x7f\u2066\x9b", ensure_ascii=False))) == "a\x7f\u2066\x9b"
