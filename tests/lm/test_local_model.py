"""Smoke test: the embedded local model, for real (slow; needs the 'local' extra)."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.local_model, pytest.mark.slow]


def test_local_model_writes_pandas(tmp_path, monkeypatch, original_cache_dir):
    pytest.importorskip("llama_cpp", reason="the 'local' extra is not installed: pip install -e '.[local]'")
    import platformdirs

    # the model file lives in the real user cache (assembled once, verified on every load)
    monkeypatch.setenv("BINDER_CACHE_DIR", original_cache_dir or platformdirs.user_cache_dir("binder-py"))
    from binder_py.lm import LMRequest, lm_from_spec
    from binder_py.lm.local import DEFAULT_MODEL_SIZE, ensure_default_model, verify_default_model

    path = ensure_default_model()
    assert path.stat().st_size == DEFAULT_MODEL_SIZE
    verify_default_model(path)
    lm = lm_from_spec("local", cache_path=tmp_path / "c.sqlite", record_dir=tmp_path / "rec")
    try:
        assert lm.name == "local:qwen2.5-coder-0.5b-instruct-q4_k_m" and lm.context_window == 8192
        n_tokens = lm.count_tokens("import pandas as pd")
        assert 3 <= n_tokens <= 8
        request = LMRequest(messages=(("user", "Write one line of pandas that returns the sum of column 'a' of "
                                               "the DataFrame df. Only the code."),), max_tokens=48, seed=1, n=2)
        completion = lm.complete(request, purpose="parse")
        assert len(completion.choices) == 2
        assert "sum" in completion.text and "df" in completion.text
        assert completion.usage.prompt_tokens > 20 and 0 < completion.usage.completion_tokens <= 96
        assert completion.usage.cost_usd == 0
        again = lm.complete(request, purpose="parse")
        assert again.cached and again.text == completion.text
    finally:
        lm.close()
    replay = lm_from_spec(f"replay:{tmp_path / 'rec'}")
    assert replay.complete(request).text == completion.text
    assert replay.count_tokens("import pandas as pd") == n_tokens  # the recorded count, not an estimate
