"""binder-py evaluate (CLI) and score_records."""

import json

import pytest

from binder_py.cli import main
from binder_py.evaluate.scoring import score_records


def _write(path, records):
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")
    return path


def test_pair(capsys):
    assert main(["evaluate", "--gold", "Yes", "--pred", "1",
                 "--question", "Are there at least 13 different components on the chart?"]) == 0
    assert capsys.readouterr().out == "official: wrong\nbinder: correct\nsemantic: correct\n"
    assert main(["evaluate", "--gold", "a|b", "--pred", "b|a", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"task": "wikitq", "official": True, "binder": True, "semantic": True}
    assert main(["evaluate", "--gold", "12,467", "--pred", "12467", "--gold-canon", "12467.0"]) == 0
    assert "official: correct" in capsys.readouterr().out
    assert main(["evaluate", "--gold", r"a\pb", "--pred", "a|b"]) == 0           # \p is a literal |
    assert "semantic: wrong" in capsys.readouterr().out
    assert main(["evaluate", "--task", "tabfact", "--gold", "1", "--pred", "entailed"]) == 0
    assert capsys.readouterr().out == "tabfact: correct\n"


@pytest.mark.parametrize("argv, message", [
    (["evaluate"], "nothing to score"),
    (["evaluate", "--gold", "a"], "--gold and --pred go together"),
    (["evaluate", "x.jsonl", "--gold", "a", "--pred", "b"], "not both"),
    (["evaluate", "--gold", "a|b", "--pred", "a", "--gold-canon", "1"], "--gold-canon has 1 values"),
    (["evaluate", "--task", "tabfact", "--gold", "maybe", "--pred", "1"], "not a TabFact label"),
    (["evaluate", "/nonexistent/preds.jsonl"], "no such predictions file"),
    (["evaluate", "--gold", "a", "--pred", "a", "--scores", "x.jsonl"], "--scores needs a predictions FILE"),
])
def test_errors(capsys, argv, message):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("binder-py evaluate: error: ") and message in err
    assert "Traceback" not in err


def test_bad_jsonl(tmp_path, capsys):
    p = tmp_path / "p.jsonl"
    p.write_text('{"gold": ["a"], "prediction": "a"}\nnot json\n', encoding="utf-8")
    assert main(["evaluate", str(p)]) == 2
    assert "line 2: not valid JSON" in capsys.readouterr().err
    p.write_text('{"gold": ["a"]}\n', encoding="utf-8")
    assert main(["evaluate", str(p)]) == 2
    assert "no 'prediction' field" in capsys.readouterr().err
    p.write_text('{"id": "x", "prediction": "a"}\n', encoding="utf-8")
    assert main(["evaluate", str(p)]) == 2
    assert "no 'gold' field" in capsys.readouterr().err


def test_a_missing_gold_or_prediction_says_what_to_do(tmp_path, capsys):
    """Without --dataset, a line with no gold was said to have an id "not in the dataset given",
    when no dataset was given; a line with no prediction was refused without saying what to write."""
    from binder_py.errors import BinderError
    from binder_py.evaluate.scoring import score_records

    p = tmp_path / "p.jsonl"
    p.write_text('{"id": "x", "prediction": "a"}\n', encoding="utf-8")
    assert main(["evaluate", str(p)]) == 2
    err = capsys.readouterr().err
    # one sentence that reads (it said "has no 'gold' field and add gold answers, or pass ...")
    assert "record 1 (id 'x') has no 'gold' field; add gold answers, or pass --dataset (and --split) to look them " \
        "up by id" in err
    assert "not in the dataset given" not in err
    with pytest.raises(BinderError, match="has no 'gold' field and its id is not in the dataset given; check "
                                          "--dataset/--split"):
        score_records([{"id": "x", "prediction": "a"}], examples=[])
    p.write_text('{"id": "x", "gold": ["a"]}\n', encoding="utf-8")
    assert main(["evaluate", str(p)]) == 2
    assert "give one on every line (null for no answer)" in capsys.readouterr().err


def test_file_scores_with_subsets(tmp_path, capsys):
    p = _write(tmp_path / "p.jsonl", [
        {"id": "1", "question": "q", "gold": ["a", "b"], "prediction": ["b", "a"], "subsets": ["s1"]},
        {"id": "2", "question": "Are there at least 13 components?", "gold": ["Yes"], "prediction": 1, "subsets": ["s1"]},
        {"id": "3", "question": "how long?", "gold": ["4 years"], "prediction": 4.0, "subsets": ["s2"]},
        {"id": "4", "question": "who?", "gold": ["x"], "prediction": None, "subsets": ["s2"]},
    ])
    assert main(["evaluate", str(p), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["evaluators"] == ["official", "binder", "semantic"]
    assert report["overall"]["total"] == 4
    assert report["overall"]["official_correct"] == 1
    assert report["overall"]["binder_correct"] == 3
    assert report["overall"]["semantic_correct"] == 3
    assert report["subsets"]["s1"]["semantic_accuracy"] == 1.0
    assert report["subsets"]["s2"]["official_correct"] == 0
    assert main(["evaluate", str(p), "--show-wrong", "5", "--scores", str(tmp_path / "s.jsonl")]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].split() == ["subset", "n", "official", "binder", "semantic"]
    assert out.splitlines()[1].split() == ["all", "4", "25.00%", "75.00%", "75.00%"]
    assert '"id": "4"' in out and '"id": "1"' not in out
    scores = [json.loads(line) for line in (tmp_path / "s.jsonl").read_text().splitlines()]
    assert scores == [{"id": "1", "official": True, "binder": True, "semantic": True},
                      {"id": "2", "official": False, "binder": True, "semantic": True},
                      {"id": "3", "official": False, "binder": True, "semantic": True},
                      {"id": "4", "official": False, "binder": False, "semantic": False}]


def test_scores_go_into_a_new_folder_and_a_directory_is_refused(tmp_path, capsys):
    """--scores in a folder that did not exist failed with 'No such file or directory' after scoring."""
    p = _write(tmp_path / "p.jsonl", [{"id": "1", "question": "q", "gold": ["a"], "prediction": "a"}])
    assert main(["evaluate", str(p), "--scores", str(tmp_path / "new" / "s.jsonl")]) == 0
    assert json.loads((tmp_path / "new" / "s.jsonl").read_text())["official"] is True
    capsys.readouterr()
    assert main(["evaluate", str(p), "--scores", str(tmp_path / "new")]) == 2
    assert "--scores " + str(tmp_path / "new") + " is a directory; give a file name in it" in capsys.readouterr().err


def test_tabfact_records():
    report = score_records([{"gold": ["True"], "prediction": True}, {"gold": 0, "prediction": "refuted"},
                            {"gold": 1, "prediction": "no idea"}], task="tabfact")
    assert report.overall.total == 3 and report.overall.correct == {"correct": 2}
    assert "66.67%" in report.format() and report.judgements[2] == {"id": None, "correct": False}


def test_gold_from_dataset(tmp_path, capsys):
    from binder_py.datasets.common import candidate_data_dirs
    DATA_DIR = next((d for d in candidate_data_dirs() if (d / "wikitq").is_dir()), None)
    if DATA_DIR is None:
        pytest.skip("shared benchmark data not found (../shared/data)")
    p = _write(tmp_path / "p.jsonl", [{"id": "nt-2", "prediction": "Wolfe Tones"},
                                      {"id": "nt-9", "prediction": ["Andri Aganits", "Siim Ennemuist"]},
                                      {"id": "nt-69", "prediction": "nope"}])
    assert main(["evaluate", str(p), "--dataset", "wikitq", "--split", "dev", "--data-dir", str(DATA_DIR), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["overall"]["official_correct"] == 2 and report["overall"]["total"] == 3
    assert report["subsets"]["unsolvable-squall"]["total"] == 1       # nt-69 has no SQUALL SQL
    assert report["subsets"]["dev"]["total"] == 3


def test_options_the_chosen_way_of_scoring_ignores_are_refused(tmp_path, capsys):
    """'evaluate FILE --question Q --gold-canon X' and 'evaluate --gold a --pred b --show-wrong 3
    --split dev' scored as if those options were not there, without a word."""
    p = tmp_path / "p.jsonl"
    p.write_text('{"id": "x", "gold": ["a"], "prediction": "a"}\n', encoding="utf-8")
    assert main(["evaluate", str(p), "--question", "a or b?", "--gold-canon", "a"]) == 2
    assert "--question, --gold-canon: these apply only with --gold/--pred" in capsys.readouterr().err
    assert main(["evaluate", "--gold", "a", "--pred", "b", "--show-wrong", "3"]) == 2
    assert "--show-wrong: it applies only with a predictions FILE; leave it out" in capsys.readouterr().err
    assert main(["evaluate", "--gold", "a", "--pred", "b", "--split", "dev", "--data-dir", "/data"]) == 2
    assert "--split, --data-dir: these apply only with a predictions FILE" in capsys.readouterr().err
    assert main(["evaluate", "--gold", "a", "--pred", "a", "--question", "a or b?", "--gold-canon", "a"]) == 0
    assert main(["evaluate", str(p), "--show-wrong", "1"]) == 0


def test_a_run_with_retried_questions_scores_each_question_once(tmp_path, capsys):
    """'evaluate runs/X/results.jsonl' after '--retry-errors' counted a retried question twice (its
    error line and its new line), where 'binder-py report' reads the last line per id: 4 questions
    and 25% instead of 2 and 50%."""
    p = _write(tmp_path / "results.jsonl", [
        {"id": "q1", "gold": ["a"], "prediction": None, "error": "LMUnavailable: 503"},
        {"id": "q2", "gold": ["b"], "prediction": "b"},
        {"id": "q1", "gold": ["a"], "prediction": "a"},
        {"gold": ["c"], "prediction": "c"}, {"gold": ["c"], "prediction": "d"},  # no id: each line counts
    ])
    assert main(["evaluate", str(p), "--scores", str(tmp_path / "s.jsonl"), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["overall"]["total"] == 4 and report["overall"]["official_correct"] == 3
    assert report["repeated"] == 1
    scored = [json.loads(line) for line in (tmp_path / "s.jsonl").read_text().splitlines()]
    assert [(s["id"], s["official"]) for s in scored] == [("q2", True), ("q1", True), (None, True), (None, False)]
    assert main(["evaluate", str(p)]) == 0
    assert "(1 line(s) left out: their id comes again later" in capsys.readouterr().out
