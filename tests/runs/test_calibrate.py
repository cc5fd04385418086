"""Fitting a confidence calibrator on recorded runs, and answering with it."""

import json

import pandas as pd
import pytest

from binder_py import Binder
from binder_py.calibration import load_calibrator
from binder_py.errors import BinderError
from binder_py.lm import ScriptedLM
from binder_py.runs.calibrate import fit_from_runs, run_examples
from binder_py.runs.report import load_run
from tests.runs.test_runs import binder_run, lines  # noqa: F401 - the module fixture


def test_examples_are_the_answered_questions_judged_by_the_binder_evaluator(binder_run):  # noqa: F811
    out, _ = binder_run
    features, right, shares = run_examples(load_run(out))
    answered = [r for r in lines(out) if r["prediction"] is not None]
    assert len(features) == len(answered)
    assert right == [bool(r["binder"]) for r in answered]
    assert shares == pytest.approx([r["confidence"] for r in answered])  # the live run's vote share


def test_fit_writes_a_calibrator_and_reports_errors(binder_run, tmp_path):  # noqa: F811
    out, _ = binder_run
    fit = fit_from_runs([out], min_examples=3)
    assert fit.examples == len(run_examples(load_run(out))[0])
    assert 0 <= fit.ece_leave_one_out <= 1 and 0 <= fit.ece_vote_share <= 1
    fit.calibrator.save(tmp_path / "c.json")
    assert load_calibrator(tmp_path / "c.json").n == fit.examples
    assert "leave-one-out" in fit.summary() and out.name in fit.calibrator.fitted_on
    with pytest.raises(BinderError, match="needs at least 10"):
        fit_from_runs([out])
    with pytest.raises(BinderError, match="is given twice"):  # its questions counted twice, leave-one-out too
        fit_from_runs([out, out], min_examples=3)


def test_a_test_split_run_is_refused(binder_run, tmp_path):  # noqa: F811
    out, _ = binder_run
    copy = tmp_path / "testrun"
    copy.mkdir()
    config = json.loads((out / "config.json").read_text())
    (copy / "config.json").write_text(json.dumps({**config, "split": "test"}))
    (copy / "results.jsonl").write_text((out / "results.jsonl").read_text())
    with pytest.raises(BinderError, match="never on the test split"):
        fit_from_runs([copy], min_examples=3)


def test_a_run_with_a_cut_off_last_line_is_fitted_without_it_and_says_so(binder_run, tmp_path, capsys):  # noqa: F811
    out, _ = binder_run
    copy = tmp_path / "cut"
    copy.mkdir()
    (copy / "config.json").write_text((out / "config.json").read_text())
    (copy / "results.jsonl").write_text((out / "results.jsonl").read_text() + '{"id": "q9", "dataset"')
    assert fit_from_runs([copy], min_examples=3).examples == fit_from_runs([out], min_examples=3).examples
    assert "cut: the last line of results.jsonl is cut off (22 bytes" in capsys.readouterr().err.replace(
        str(tmp_path) + "/", "")


def test_an_answer_with_a_calibrator_reports_p_right_and_abstains_on_it(binder_run, tmp_path):  # noqa: F811
    out, _ = binder_run
    path = tmp_path / "c.json"
    fit_from_runs([out], min_examples=3).calibrator.save(path)
    table = pd.DataFrame({"name": ["a", "b"], "points": [1, 2]})
    lm = ScriptedLM(lambda r, p: ['df["name"].iloc[0]', 'df["name"].iloc[0]', 'df["name"].iloc[1]'])
    plain = Binder(lm=lm, n=3, progress=False).ask(table, "who?")
    calibrated = Binder(lm=lm, n=3, progress=False, calibrator=str(path)).ask(table, "who?")
    assert not plain.calibrated and plain.confidence == pytest.approx(2 / 3)
    assert calibrated.calibrated and calibrated.value == plain.value
    expected = load_calibrator(path)
    assert calibrated.confidence != plain.confidence and 0 < calibrated.confidence < 1
    assert "(calibrated)" in calibrated.explain() and "(vote share)" in plain.explain()
    above = Binder(lm=lm, n=3, progress=False, calibrator=str(path),
                   abstain_below=min(0.99, calibrated.confidence + 0.01)).ask(table, "who?")
    assert above.value is None and any("abstained" in w for w in above.warnings)
    assert expected.n >= 3


def test_a_calibrator_file_fitted_on_another_model_or_mode_is_said(binder_run, tmp_path):  # noqa: F811
    out, _ = binder_run
    path = tmp_path / "c.json"
    fitted = fit_from_runs([out], min_examples=3).calibrator  # the run's model is "scripted", in binder mode
    fitted.save(path)
    table = pd.DataFrame({"name": ["a", "b"], "points": [1, 2]})
    lm = ScriptedLM(lambda r, p: 'df["name"].iloc[0]')
    same = Binder(lm=lm, n=2, progress=False, calibrator=str(path)).ask(table, "who?")
    assert same.calibrated and not any("was fitted on" in w for w in same.warnings)
    other = Binder(lm=lm, n=2, progress=False, calibrator=str(path), mode="python").ask(table, "who?")
    # it was applied without a word, though fitted on binder-mode runs
    said = f"the calibrator {path} was fitted on runs of scripted in binder mode, not of scripted in python mode"
    assert other.calibrated and any(w.startswith(said) for w in other.warnings)


def test_a_missing_or_bad_calibrator_is_a_clear_error_before_any_model_call(tmp_path):
    lm = ScriptedLM([])
    with pytest.raises(BinderError, match="binder-py calibrate"):
        Binder(lm=lm, calibrator=str(tmp_path / "nope.json"))
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "other"}')
    with pytest.raises(BinderError, match="binder-py calibrate"):
        Binder(lm=lm, calibrator=str(bad))
    assert lm.calls == []


def test_a_fit_records_its_model_and_modes(binder_run):  # noqa: F811
    out, _ = binder_run
    config = json.loads((out / "config.json").read_text())
    calibrator = fit_from_runs([out], min_examples=3).calibrator
    assert calibrator.model == config["lm_name"] and calibrator.modes == (config["mode"],)


def test_a_shipped_calibrator_is_used_for_its_own_model_and_mode_only(binder_run, tmp_path, monkeypatch):  # noqa: F811
    from dataclasses import replace

    from binder_py import calibration

    out, _ = binder_run
    fitted = fit_from_runs([out], min_examples=3).calibrator
    table = pd.DataFrame({"name": ["a", "b"], "points": [1, 2]})
    lm = ScriptedLM(lambda r, p: ['df["name"].iloc[0]', 'df["name"].iloc[0]', 'df["name"].iloc[1]'])
    shipped = tmp_path / "shipped"
    shipped.mkdir()
    monkeypatch.setattr(calibration, "SHIPPED_DIR", shipped)
    replace(fitted, model=lm.name, modes=("binder",)).save(shipped / "mine.json")
    replace(fitted, model="another-model", modes=("binder", "python")).save(shipped / "other.json")

    auto = Binder(lm=lm, n=3, progress=False).ask(table, "who?")  # "auto" is the default
    assert auto.calibrated and auto.confidence != pytest.approx(2 / 3)
    assert auto.confidence_label().endswith("(calibrated)")
    off = Binder(lm=lm, n=3, progress=False, calibrator="none").ask(table, "who?")
    assert not off.calibrated and off.confidence == pytest.approx(2 / 3)
    # fitted for binder mode only: a python-mode answer keeps the vote share
    python_mode = Binder(lm=lm, n=3, progress=False, mode="python").ask(table, "who?")
    assert not python_mode.calibrated
    # no shipped calibrator for this model: the vote share
    (shipped / "mine.json").unlink()
    assert not Binder(lm=lm, n=3, progress=False).ask(table, "who?").calibrated


def test_a_replay_of_the_embedded_model_gets_its_shipped_calibrator():
    """``--lm replay:DIR`` of a local-model run reproduces its answers: it must reproduce their
    calibrated confidences too (the replay is named ``replay:local:…``, not ``local:…``)."""
    from binder_py.calibration import shipped_calibrator

    model = "local:qwen2.5-coder-0.5b-instruct-q4_k_m"
    assert shipped_calibrator(model, "binder") is not None
    assert shipped_calibrator(f"replay:{model}", "binder") == shipped_calibrator(model, "binder")
    assert shipped_calibrator("replay:another-model", "binder") is None


@pytest.mark.parametrize("l2", ["0", "-1", "nan", "inf"])
def test_calibrate_refuses_a_penalty_that_is_not_a_positive_number(l2, tmp_path, capsys):
    from binder_py.cli import main

    # each ended in a ValueError traceback after reading the runs
    assert main(["calibrate", str(tmp_path), "--out", str(tmp_path / "c.json"), "--l2", l2]) == 2
    assert "--l2 is the fit's penalty, a finite number above 0" in capsys.readouterr().err


def test_calibrate_makes_the_folder_of_its_out_file(binder_run, tmp_path, capsys):  # noqa: F811
    """`calibrate ... --out new/c.json` fitted, then failed with "No such file or directory" (report
    --out makes the folder)."""
    import shutil

    from binder_py.cli import main

    out, _ = binder_run
    for name in ("a", "b"):  # two runs of five answered questions: the ten a fit needs
        shutil.copytree(out, tmp_path / name)
    target = tmp_path / "new" / "c.json"
    assert main(["calibrate", str(tmp_path / "a"), str(tmp_path / "b"), "--out", str(target)]) == 0, \
        capsys.readouterr().err
    assert load_calibrator(target).n == 10


def test_a_fit_on_a_replayed_run_is_of_the_recorded_model(binder_run, tmp_path):  # noqa: F811
    """A run replayed with --lm replay:DIR records lm_name 'replay:NAME'; a calibrator fitted on it
    recorded that name, and answering with it said 'fitted on runs of replay:NAME ..., not of NAME'
    (and fitted on the replay and the original together, 'several models')."""
    from dataclasses import replace

    out, _ = binder_run
    copy = tmp_path / "replayed"
    copy.mkdir()
    config = json.loads((out / "config.json").read_text())
    (copy / "config.json").write_text(json.dumps({**config, "lm": f"replay:{out}", "lm_name": "replay:scripted"}))
    (copy / "results.jsonl").write_text((out / "results.jsonl").read_text())
    assert fit_from_runs([copy], min_examples=3).calibrator.model == "scripted"
    assert fit_from_runs([copy, out], min_examples=3).calibrator.model == "scripted"
    path = tmp_path / "c.json"  # one written before: its model still names the replay
    replace(fit_from_runs([out], min_examples=3).calibrator, model="replay:scripted").save(path)
    table = pd.DataFrame({"name": ["a", "b"], "points": [1, 2]})
    lm = ScriptedLM(lambda r, p: 'df["name"].iloc[0]')
    answer = Binder(lm=lm, n=2, progress=False, calibrator=str(path)).ask(table, "who?")
    assert answer.calibrated and not any("was fitted on" in w for w in answer.warnings)


def test_a_run_resumed_after_its_calibrator_file_was_fitted_again_is_refused(binder_run, tmp_path):  # noqa: F811
    """A run given '--calibrator cal.json' was resumed without a word after cal.json had been fitted
    again (the path was the same), so its confidences and abstentions mixed two calibrators. The
    calibrator is now compared by content: another one is refused, the same one elsewhere resumes."""
    from dataclasses import replace

    from tests.runs import conftest
    from tests.runs.test_runs import e2e_run

    out, _ = binder_run
    fitted = fit_from_runs([out], min_examples=3).calibrator
    path = tmp_path / "cal.json"
    fitted.save(path)
    table = tmp_path / "t.csv"
    table.write_text(conftest.TABLE)
    questions = [conftest.Example(id=f"q{i}", question=q, table_path=str(table), gold=gold, title="scores",
                                  subsets=frozenset({"dev"}))
                 for i, (q, (gold, _)) in enumerate(conftest.CASES.items())]
    run = tmp_path / "run"
    e2e_run(questions, run, limit=2, extra_settings={"calibrator": str(path)})
    moved = tmp_path / "elsewhere.json"
    path.rename(moved)
    summary, _ = e2e_run(questions, run, limit=3, extra_settings={"calibrator": str(moved)})
    assert summary.skipped == 2 and summary.answered == 1
    replace(fitted, bias=fitted.bias + 1.0).save(moved)  # fitted again, under the same name
    with pytest.raises(BinderError, match=r"calibrator: 'sha256:[0-9a-f]{16}' -> 'sha256:[0-9a-f]{16}'"):
        e2e_run(questions, run, limit=3, extra_settings={"calibrator": str(moved)})
