"""Files binder-py writes atomically get the mode a plain open() would give them (QA round 5)."""

from __future__ import annotations

import os
import stat

from binder_py.safefiles import replace_regular


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def test_a_new_file_gets_the_mode_open_would_give_it(tmp_path):
    """mkstemp made config.json 0600 while results.jsonl (opened plainly) was 0644, so a colleague
    who could read a shared run's results could not read its config."""
    replace_regular(tmp_path / "config.json", b"{}")
    plain = tmp_path / "results.jsonl"
    plain.write_bytes(b"")
    assert _mode(tmp_path / "config.json") == _mode(plain) == 0o666 & ~_umask()


def test_a_replaced_file_keeps_its_mode(tmp_path):
    target = tmp_path / "report.md"
    target.write_text("old")
    os.chmod(target, 0o640)
    replace_regular(target, b"new")
    assert target.read_bytes() == b"new" and _mode(target) == 0o640
