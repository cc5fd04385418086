"""Cross-check: the ports judge the generated cases as the original evaluators do, when those can run here.

The originals are not vendored: set WTQ_EVALUATOR (ppasupat/WikiTableQuestions evaluator.py, run under Python 2.7)
and BINDER_REPO (a checkout of xlang-ai/Binder); see original_evaluators.py. Each test skips with its reason otherwise.
"""

import pytest

import wikitq_cases as cases
import original_evaluators as originals
from binder_py.evaluate.binder import binder_match
from binder_py.evaluate.official import official_match


def _run(judge, cases_):
    try:
        return judge([c.as_json() for c in cases_])
    except originals.Unavailable as why:
        pytest.skip(str(why))


def test_official_port_agrees_with_the_original(dev_golds):
    found = list(cases.generate(dev_golds, per_rule=60))
    theirs = _run(originals.official_judgements, found)
    differ = [(c.rule, c.gold, c.prediction, c.canon) for c, t in zip(found, theirs)
              if official_match(c.gold, c.prediction, c.canon) != t]
    assert not differ, f"{len(differ)}/{len(found)} differ, e.g. {differ[:3]}"


@pytest.mark.slow
def test_binder_port_agrees_with_the_original(dev_golds):
    found = list(cases.generate(dev_golds, per_rule=3))
    theirs = _run(originals.binder_judgements, found)
    differ = [(c.rule, c.question, c.gold, c.prediction) for c, t in zip(found, theirs)
              if binder_match(c.question, c.gold, c.prediction) != t]
    assert not differ, f"{len(differ)}/{len(found)} differ, e.g. {differ[:3]}"
