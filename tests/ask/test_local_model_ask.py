"""End to end on the embedded local model, for real (slow; needs the 'local' extra).

The default 1.5B model is small: this checks that the whole pipeline runs on it (programs written,
run in the sandbox, neural calls answered by the same model, votes counted), not that its
answer is right.
"""

from __future__ import annotations

import json

import pytest

from binder_py import Binder
from tests.ask.shirts_case import QUESTION

pytestmark = [pytest.mark.local_model, pytest.mark.slow]


def test_the_motivating_example_runs_end_to_end_on_the_local_model(tmp_path, shirts):
    pytest.importorskip("xllamacpp", reason="the 'local' extra is not installed: pip install -e '.[local]'")
    from binder_py.lm import lm_from_spec

    lm = lm_from_spec("local", cache_path=tmp_path / "cache.sqlite")
    try:
        answer = Binder(lm=lm, task="analyst", n=3, seed=0).ask(shirts, QUESTION)
    finally:
        lm.close()
    assert answer.lm == "local:qwen2.5-coder-1.5b-instruct-q4_k_m"
    assert sum(c.count for c in answer.candidates if c.origin == "sample") == 3
    assert all(c.run is not None and c.run.outcome is not None for c in answer.candidates)
    assert answer.usage.requests >= 1 and answer.usage.completion_tokens > 0
    assert 0.0 <= answer.confidence <= 1.0
    json.dumps(answer.to_json())
    assert "Question:" in answer.explain()
