"""The one scoring function: the live run, the report and ``binder-py evaluate`` judge alike."""

import importlib
import json

from binder_py.cli import main
from binder_py.evaluate import judge
from binder_py.evaluate.scoring import score_records
from binder_py.runs import judgements as scoring
from binder_py.runs.judgements import record_scores

CASES = [("How many years?", ["4 years"], 4.0), ("Is it big?", ["Yes"], True), ("When?", ["2001"], "2001-01-01"),
         ("Who?", ["The Beatles", "Queen"], ["queen", "beatles"]), ("How many?", ["10"], 9.999999999999988),
         ("Who?", ["x"], None)]


def test_every_caller_uses_the_same_function():
    assert scoring.score_prediction is judge.score_prediction
    for module in ("binder_py.runs.evaluation", "binder_py.runs.report"):
        assert importlib.import_module(module).score_prediction is judge.score_prediction


def test_run_lines_report_and_evaluate_agree(capsys, tmp_path):
    expected = [judge.score_prediction("wikitq", q, gold, prediction) for q, gold, prediction in CASES]
    assert [sorted(e) for e in expected] == [["binder", "official", "semantic"]] * len(CASES)
    assert len({tuple(e.values()) for e in expected}) > 2  # the cases tell the evaluators apart
    lines = [{"id": str(i), "question": q, "gold": gold, "prediction": prediction}
             for i, (q, gold, prediction) in enumerate(CASES)]
    assert [dict(list(j.items())[1:]) for j in score_records(lines).judgements] == expected
    path = tmp_path / "p.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    assert main(["evaluate", str(path), "--scores", str(tmp_path / "s.jsonl")]) == 0
    written = [json.loads(line) for line in (tmp_path / "s.jsonl").read_text().splitlines()]
    assert written == [{"id": str(i), **e} for i, e in enumerate(expected)]
    recorded = [{**line, **e} for line, e in zip(lines, expected)]
    assert [record_scores(r, "wikitq") for r in recorded] == expected


def test_lines_from_before_the_three_evaluators_are_judged_again():
    old = {"question": "How many?", "gold": ["10"], "prediction": 9.999999999999988, "official": True,
           "semantic": True, "error": None}
    assert record_scores(old, "wikitq") == {"official": False, "binder": False, "semantic": True}
    table = {"question": "Who?", "gold": ["a", "b"], "prediction": {"columns": ["n"], "rows": [["b"], ["a"]]},
             "official": False, "semantic": False}
    assert record_scores(table, "wikitq") == {"official": True, "binder": True, "semantic": True}
    assert record_scores({"error": "boom", "prediction": None, "gold": ["a"]}, "wikitq") == {
        "official": False, "binder": False, "semantic": False}
    assert record_scores({"correct": True}, "tabfact") == {"correct": True}
