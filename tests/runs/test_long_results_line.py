"""A results line is always short enough to read back (red team 7).

A results line holds a question's prediction, every candidate's answer and run (with its neural-call
traces), and the reader takes a line of at most 64 MB (``MAX_RESULT_LINE_BYTES``). A program may
answer 100,000,000 characters: three candidates answering ``"x" * 30000000`` wrote a 180 MB line, and
``report`` and resume of the run then stopped at it ("longer than the limit ...; the file is damaged or
crafted"). The judges also took 165 s over that one prediction (about 5 s per million characters).
"""
import json
import time

from binder_py.evaluate.judge import score_prediction
from binder_py.runs import records
from binder_py.runs.records import ResultsWriter, read_results, shortened_record


def _record(qid, prediction, candidate_value):
    return {"id": qid, "question": "who scored the most points?", "gold": ["bob"], "prediction": prediction,
            "official": False, "candidates": [{"count": 1, "ok": True, "value": candidate_value,
                                               "run": {"calls": [{"rows": [[candidate_value]] * 3}]}}] * 3,
            "usage": {"requests": 1}, "seconds": 1.0}


def test_a_line_too_long_to_read_back_is_cut(tmp_path, monkeypatch):
    monkeypatch.setattr(records, "MAX_RESULT_LINE_BYTES", 2_000_000)
    long_text = "x" * 1_000_000
    path = tmp_path / "results.jsonl"
    with ResultsWriter(path) as writer:
        writer.append(_record("q0", long_text, long_text))
        writer.append(_record("q1", list(range(300_000)), [long_text] * 5))
        writer.append(_record("q2", "bob", "bob"))
    assert all(len(line) <= 2_000_000 for line in path.read_bytes().splitlines())
    found = {r["id"]: r for r in read_results(path).records}
    assert set(found) == {"q0", "q1", "q2"}
    assert found["q0"]["prediction"].startswith("x" * records.KEPT_TEXT) and "characters cut" in found["q0"]["prediction"]
    assert "cut" in found["q0"] and found["q0"]["usage"] == {"requests": 1} and found["q0"]["seconds"] == 1.0
    assert "cut" not in found["q2"] and found["q2"]["candidates"][0]["value"] == "bob"


def test_a_shortened_record_is_bounded_whatever_its_nesting():
    nested = [[["y" * 100] * 1000] * 1000] * 1000  # 10^11 characters written out
    short = shortened_record(_record("q", nested, nested))
    assert len(json.dumps(short)) < records.MAX_RESULT_LINE_BYTES


def test_the_judges_do_not_read_a_prediction_longer_than_any_gold():
    start = time.monotonic()
    for prediction in ["x" * 30_000_000, list(range(4_000_000)), ["x" * 1000] * 1000]:
        assert score_prediction("wikitq", "who?", ["bob"], prediction) == \
            {"official": False, "binder": False, "semantic": False}
    assert time.monotonic() - start < 5
    assert score_prediction("wikitq", "who?", ["bob"], "Bob")["official"]
    assert score_prediction("wikitq", "who?", ["x" * 100], ["x" * 100])["official"]


def test_long_dictionary_keys_are_cut_too(tmp_path, monkeypatch):
    """A program may answer a dict whose key is 30,000,000 characters: keys were copied whole, so the
    shortened line was still 120 MB and every report and resume stopped at it (review of red team 7)."""
    key = "x" * 3_000_000
    answer = {key: 1, key[:-1] + "y": 2}  # two keys that cut to the same text keep both entries
    monkeypatch.setattr(records, "MAX_RESULT_LINE_BYTES", 2_000_000)
    path = tmp_path / "results.jsonl"
    with ResultsWriter(path) as writer:
        writer.append(_record("q0", answer, answer))
    (found,) = read_results(path).records
    assert len(path.read_bytes()) <= 2_000_000 and "cut" in found
    assert len(found["prediction"]) == 2 and all(len(k) < 20_000 for k in found["prediction"])


def test_a_line_still_too_long_after_cutting_leaves_out_its_bulky_fields(tmp_path, monkeypatch):
    monkeypatch.setattr(records, "MAX_RESULT_LINE_BYTES", 30_000)  # below what the cut texts take
    path = tmp_path / "results.jsonl"
    with ResultsWriter(path) as writer:
        writer.append(_record("q0", "x" * 100_000, "y" * 100_000))
    (found,) = read_results(path).records
    assert found["id"] == "q0" and found["gold"] == ["bob"] and found["official"] is False
    assert found["prediction"] == "" and found["candidates"] == [] and found["cut"].startswith("left out: prediction")
