"""binder-py report's paired comparison: McNemar's exact test and the counts it is computed from."""

from __future__ import annotations

import json
from math import comb
from pathlib import Path

import pytest

from binder_py.runs import report
from binder_py.runs.paired import compare, mcnemar_exact
from binder_py.runs.report import Run


def _binomial_two_sided(b: int, c: int) -> float:
    n = b + c
    return min(1.0, 2 * sum(comb(n, i) for i in range(min(b, c) + 1)) / 2**n)


@pytest.mark.parametrize(("b", "c", "expected"), [(0, 0, 1.0), (5, 5, 1.0), (0, 6, 0.03125), (6, 0, 0.03125),
                                                  (2, 8, 0.109375), (1, 0, 1.0), (0, 10, 2 / 1024)])
def test_mcnemar_exact_known_values(b, c, expected):
    assert mcnemar_exact(b, c) == pytest.approx(expected)


def test_mcnemar_exact_agrees_with_the_binomial_sum_and_handles_thousands():
    for b, c in [(3, 17), (40, 60), (120, 80)]:
        assert mcnemar_exact(b, c) == pytest.approx(_binomial_two_sided(b, c))
    assert 0 < mcnemar_exact(1000, 1200) < 1e-4  # exact integers; no overflow at these sizes
    assert mcnemar_exact(3000, 3000) == 1.0
    with pytest.raises(ValueError):
        mcnemar_exact(-1, 3)


def _run(name: str, judged: dict[str, tuple[bool, bool, bool]], task: str = "wikitq") -> Run:
    records = [{"id": qid, "official": o, "binder": b, "semantic": s} for qid, (o, b, s) in judged.items()]
    return Run(name=name, path=Path(name), config={"task": task}, records=records)


def test_compare_counts_only_the_questions_both_runs_recorded():
    first = _run("a", {"q1": (True, True, True), "q2": (True, True, False), "q3": (False, False, False),
                       "q4": (False, True, True), "only-a": (True, True, True)})
    second = _run("b", {"q1": (True, True, True), "q2": (False, True, True), "q3": (False, False, True),
                        "q4": (True, True, True), "only-b": (False, False, False)})
    official, binder, semantic = compare(first, second)
    assert (official.judged_by, official.questions, official.both, official.only_first, official.only_second,
            official.neither) == ("official", 4, 1, 1, 1, 1)
    assert (binder.both, binder.only_first, binder.only_second, binder.neither) == (3, 0, 0, 1)
    assert (semantic.both, semantic.only_first, semantic.only_second, semantic.neither) == (2, 0, 2, 0)
    assert official.first_accuracy == 0.5 and official.second_accuracy == 0.5 and official.p_value == 1.0
    assert semantic.second_accuracy == 1.0 and semantic.p_value == 0.5


def test_compare_skips_other_tasks_no_shared_questions_and_lines_without_an_id():
    a = _run("a", {"q1": (True, True, True)})
    assert compare(a, _run("b", {"q2": (True, True, True)})) == []
    tabfact = Run(name="t", path=Path("t"), config={"task": "tabfact"}, records=[{"id": "q1", "correct": True}])
    assert compare(a, tabfact) == []
    no_id = Run(name="c", path=Path("c"), config={"task": "wikitq"},
                records=[{"official": True, "binder": True, "semantic": True}, {"id": ["q1"], "official": True}])
    assert compare(no_id, a) == [] and compare(a, no_id) == []


def test_whole_number_ids_are_compared_too():
    """Results lines may have whole-number ids (the report counts them); the comparison left them out."""
    first = Run(name="a", path=Path("a"), config={"task": "wikitq"},
                records=[{"id": 7, "official": True, "binder": True, "semantic": True}])
    second = Run(name="b", path=Path("b"), config={"task": "wikitq"},
                 records=[{"id": 7, "official": False, "binder": False, "semantic": False}])
    assert [c.only_first for c in compare(first, second)] == [1, 1, 1]


def test_each_run_is_judged_once_however_many_pairs(monkeypatch):
    from binder_py.runs import paired

    runs = [_run(name, {"q1": (True, True, True)}) for name in "abcd"]
    calls = []
    real = paired.record_scores
    monkeypatch.setattr(paired, "record_scores", lambda record, task: calls.append(1) or real(record, task))
    assert len(paired.compare_runs(runs)) == 6 * 3
    assert len(calls) == 4


def test_tabfact_runs_are_compared_by_their_one_accuracy():
    first = Run(name="x", path=Path("x"), config={"task": "tabfact"},
                records=[{"id": f"s{i}", "correct": i < 8} for i in range(10)])
    second = Run(name="y", path=Path("y"), config={"task": "tabfact"},
                 records=[{"id": f"s{i}", "correct": i < 2} for i in range(10)])
    (only,) = compare(first, second)
    assert (only.judged_by, only.only_first, only.only_second, only.both) == ("correct", 6, 0, 2)
    assert only.p_value == pytest.approx(0.03125)


def _write_run(directory: Path, judged: dict[str, bool]) -> Path:
    directory.mkdir(parents=True)
    (directory / "config.json").write_text(json.dumps({"task": "wikitq", "split": "dev", "mode": "python", "n": 1}))
    lines = [json.dumps({"id": qid, "question": "q?", "gold": ["x"], "prediction": "x" if right else "y",
                         "official": right, "binder": right, "semantic": right, "candidates": [], "subsets": ["dev"],
                         "error": None, "mode": "python"}) for qid, right in judged.items()]
    (directory / "results.jsonl").write_text("\n".join(lines) + "\n")
    return directory


def test_the_report_shows_the_paired_comparison_in_markdown_and_json(tmp_path):
    python = _write_run(tmp_path / "python", {f"q{i}": i < 2 for i in range(20)})
    binder = _write_run(tmp_path / "binder", {f"q{i}": i < 10 for i in range(20)})
    result = report([python, binder])
    assert "## Paired comparison (the questions both runs recorded)" in result.markdown
    assert "| python | binder | official | 20 | 2 | 0 | 8 | 10 | 10.0% / 50.0% | 0.00781 |" in result.markdown
    paired = result.as_dict()["paired"]
    assert [p["judged_by"] for p in paired] == ["official", "binder", "semantic"]
    assert paired[0]["p_value"] == pytest.approx(2 / 256) and paired[0]["only_second"] == 8
    alone = report([python])
    assert "Paired comparison" not in alone.markdown and alone.as_dict()["paired"] == []


def test_the_runs_table_says_where_a_tabfact_accuracy_is(tmp_path):
    """A TabFact run's one accuracy sits in the 'official' column; the header now says so (QA round 5)."""
    directory = tmp_path / "tabfact-run"
    directory.mkdir()
    (directory / "config.json").write_text(json.dumps({"task": "tabfact", "split": "test-small", "mode": "binder",
                                                       "n": 5}))
    (directory / "results.jsonl").write_text(json.dumps({"id": "s1", "question": "x", "gold": True, "prediction": True,
                                                         "correct": True, "candidates": [], "error": None}) + "\n")
    wikitq = _write_run(tmp_path / "wikitq-run", {"q1": True})
    both = report([directory, wikitq]).markdown
    assert "| errors | official (TabFact: accuracy) | binder | semantic |" in both
    assert "| errors | official | binder | semantic |" in report([wikitq]).markdown
