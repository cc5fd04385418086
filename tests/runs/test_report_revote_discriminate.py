"""``binder-py report`` re-votes a discriminate run as the run voted: by likelihood (issue 10: a report
must not disagree with the run it reports)."""

from __future__ import annotations

from binder_py.runs.report import record_vote
from binder_py.tasks import task_profile

RECORD = {"dataset": "wikitq", "question": "which city is the largest?", "candidates": [
    {"program": "p1", "value": "lima", "count": 2, "ok": True, "sample_orders": [0, 1], "mean_logprob": -9.0},
    {"program": "p2", "value": "oslo", "count": 1, "ok": True, "sample_orders": [2], "mean_logprob": -0.5}]}


def test_a_discriminate_run_is_re_voted_by_likelihood() -> None:
    config = {"task": "wikitq", "mode": "discriminate", "vote": "likelihood"}
    assert task_profile("wikitq").vote_strategy(None, mode="discriminate") == "likelihood"
    assert record_vote(RECORD, 10, config).value == "oslo"  # exp(-0.5) against 2 exp(-9)
    # runs recorded before the config named it wrote the task's vote; the run voted by likelihood
    assert record_vote(RECORD, 10, {**config, "vote": "program_biased"}).value == "oslo"
    # unless the command asked for that vote
    asked = {**config, "vote": "program_biased", "command": ["binder-py", "eval", "--vote", "program_biased"]}
    assert record_vote(RECORD, 10, asked).value == "lima"
    assert record_vote(RECORD, 10, {**config, "mode": "binder", "vote": "program_biased"}).value == "lima"


def test_an_old_discriminate_run_resumes_under_its_own_vote() -> None:
    from binder_py.runs.records import config_differences

    old = {"task": "wikitq", "mode": "discriminate", "vote": "program_biased", "command": ["binder-py", "eval"]}
    assert config_differences(old, {**old, "vote": "likelihood"}) == []
    asked = {**old, "command": ["binder-py", "eval", "--vote", "program_biased"]}
    assert config_differences(asked, {**old, "vote": "likelihood"}) == ["vote: 'program_biased' -> 'likelihood'"]


def test_a_discriminate_run_s_curve_spans_every_proposed_program() -> None:
    from pathlib import Path

    from binder_py.runs.report import Run, accuracy_vs_candidates, curve_length, format_markdown, run_metrics

    proposed = [{"program": f"p{i}", "value": "oslo" if i == 7 else "lima", "count": 1, "ok": True,
                 "origin": "propose", "sample_orders": [i], "mean_logprob": 0.0 if i == 7 else -9.0}
                for i in range(10)]
    record = {"id": "q0", "dataset": "wikitq", "question": "which city is the largest?", "gold": ["oslo"],
              "prediction": "oslo", "candidates": proposed, "mode": "discriminate"}
    # the config records the default n (5) though the proposer builds up to 10 programs
    run = Run(name="d", path=Path("d"), records=[record],
              config={"task": "wikitq", "mode": "discriminate", "vote": "likelihood", "n": 5})
    assert curve_length(run) == 10  # was 5: the curve stopped before the program that decided the answer
    curve = accuracy_vs_candidates(run)
    assert curve[-1][0] == 10 and curve[-1][1].as_dict()["official_accuracy"] == 1.0
    row = next(line for line in format_markdown([run_metrics(run)]).splitlines() if line.startswith("| d |"))
    assert "| discriminate | ? | – |" in row  # n does not apply to the run (no lm in this config: ?)


def test_a_run_that_voted_by_likelihood_is_read_back(tmp_path) -> None:
    # a discriminate run records vote "likelihood"; reading its config.json refused that value, so the run
    # could be neither resumed, reported nor replayed
    import json

    import pytest

    from binder_py.errors import BinderError
    from binder_py.pipeline.settings import VOTE_STRATEGIES
    from binder_py.runs.records import read_config

    for strategy in VOTE_STRATEGIES:
        (tmp_path / "config.json").write_text(json.dumps({"task": "wikitq", "mode": "discriminate", "vote": strategy}))
        assert read_config(tmp_path)["vote"] == strategy
    (tmp_path / "config.json").write_text(json.dumps({"vote": "loudest"}))
    with pytest.raises(BinderError, match="field 'vote' must be one of .*likelihood"):
        read_config(tmp_path)
