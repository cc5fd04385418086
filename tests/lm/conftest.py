"""Fixtures for the language-model layer: a loopback OpenAI-compatible server and clients on it."""

from __future__ import annotations

import os

import pytest

from binder_py.lm import Limiter, RetryPolicy, lm_from_spec
from binder_py.lm.testserver import LoopbackServer


ORIGINAL_CACHE_DIR = os.environ.get("BINDER_CACHE_DIR")


class FakeSleep:
    """Records the waits instead of sleeping."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch, tmp_path):
    for name in ("BINDER_LM", "OPENAI_API_KEY", "OPENAI_BASE_URL", "BINDER_PRICES"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("BINDER_CACHE_DIR", str(tmp_path / "cache-dir"))


@pytest.fixture
def original_cache_dir():
    """BINDER_CACHE_DIR as it was before the tests isolated it (None when unset)."""
    return ORIGINAL_CACHE_DIR


@pytest.fixture
def server():
    with LoopbackServer(responder=lambda body, api: "answer") as srv:
        yield srv


@pytest.fixture
def fake_sleep():
    return FakeSleep()


@pytest.fixture
def make_lm(server, tmp_path, fake_sleep):
    """make_lm(**kw) → an LMClient on the loopback server with fast, recorded retries."""

    def make(spec: str | None = None, *, retry: RetryPolicy | None = None, **kw):
        kw.setdefault("cache_path", tmp_path / "cache.sqlite")
        kw.setdefault("timeout", 5.0)
        return lm_from_spec(spec or f"openai:test-model@{server.base_url}",
                            retry=retry or RetryPolicy(sleep=fake_sleep, base_seconds=0.01), **kw)

    return make


__all__ = ["FakeSleep", "Limiter"]
