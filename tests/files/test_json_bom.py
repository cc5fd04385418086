"""JSON and JSON-lines files saved with a UTF-8 byte order mark (Excel, Notepad) are read, not refused
(QA round 5, found not fixed: a predictions file or an oracle file with one was 'not valid JSON')."""

from __future__ import annotations

import json

from binder_py.jsonfile import iter_json_lines, read_json
from binder_py.neural.backends import OracleBackend

BOM = b"\xef\xbb\xbf"


def test_a_json_file_with_a_byte_order_mark_is_read(tmp_path):
    path = tmp_path / "oracle.json"
    path.write_bytes(BOM + json.dumps({"f_col": {}, "f_val": {"q": "a"}}).encode())
    assert read_json(path) == {"f_col": {}, "f_val": {"q": "a"}}
    assert OracleBackend.from_file(path).cache_id.startswith("oracle:oracle.json:")


def test_a_json_lines_file_with_a_byte_order_mark_reads_its_first_line(tmp_path):
    path = tmp_path / "predictions.jsonl"
    path.write_bytes(BOM + b'{"id": "nt-1", "prediction": "x"}\n{"id": "nt-2", "prediction": "y"}\n')
    lines = list(iter_json_lines(path))
    assert [line.error for line in lines] == [None, None]
    assert [line.value["id"] for line in lines] == ["nt-1", "nt-2"]
    assert lines[0].raw.startswith(BOM) and lines[1].start == len(lines[0].raw)  # offsets are the file's bytes
