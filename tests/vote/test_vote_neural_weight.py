"""The weight of programs with neural calls under ``program_biased``: the paper's ×10 by default,
×1 (a plain majority) for the embedded model, whatever was asked when asked."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from binder_py import Binder
from binder_py.errors import BinderError
from binder_py.lm import ScriptedLM
from binder_py.lm.types import Capabilities
from binder_py.pipeline import AskSettings
from binder_py.tasks import task_profile

TABLE = pd.DataFrame({"city": ["Oslo", "Lima", "Pune"], "country": ["norway", "peru", "india"]})
NEURAL = 'f_val("Which city is in Europe?", df[["city", "country"]])'
PLAIN = 'df["city"].iloc[1]'


def _Embedded(responder) -> ScriptedLM:
    return ScriptedLM(responder, capabilities=Capabilities(embedded=True))


@pytest.fixture
def oracle(tmp_path) -> str:
    path = tmp_path / "oracle.json"
    path.write_text(json.dumps({"f_val": {"Which city is in Europe?": "Oslo"}}))
    return f"oracle:{path}"


def _ask(lm: ScriptedLM, oracle: str, **settings) -> object:
    return Binder(lm=lm, neural=oracle, task="wikitq", n=3, rescope=False, **settings).ask(
        TABLE, "which city is in europe?")


def test_the_profile_weighs_neural_programs_by_model() -> None:
    profile = task_profile("wikitq")
    assert profile.vote == "program_biased"
    assert profile.effective_neural_weight(ScriptedLM(lambda r, p: []), None) == 10.0
    assert profile.effective_neural_weight(_Embedded(lambda r, p: []), None) == 1.0
    assert profile.effective_neural_weight(_Embedded(lambda r, p: []), 4) == 4.0


def test_one_neural_program_outvotes_two_plain_ones_only_at_the_papers_weight(oracle) -> None:
    programs = [PLAIN, PLAIN, NEURAL]
    assert _ask(ScriptedLM(lambda r, p: programs), oracle).value == "Oslo"  # 10 against 2
    assert _ask(_Embedded(lambda r, p: programs), oracle).value == "lima"  # 1 against 2
    assert _ask(_Embedded(lambda r, p: programs), oracle, neural_weight=10.0).value == "Oslo"


@pytest.mark.parametrize("weight", [-1.0, float("inf"), float("nan")])
def test_a_bad_weight_is_refused(weight) -> None:
    with pytest.raises(BinderError, match="neural_weight"):
        AskSettings(neural_weight=weight)


def test_a_run_resumed_with_another_weight_is_refused() -> None:
    from binder_py.runs.records import config_differences

    old = {"task": "wikitq", "mode": "binder", "vote": "program_biased", "neural_weight": 10.0}
    assert config_differences(old, {**old, "neural_weight": 1.0}) == ["neural_weight: 10.0 -> 1.0"]
    assert config_differences(old, dict(old)) == []
