"""The embedded runtime's seeds (no model needed: a fake server records what it is sent)."""

from __future__ import annotations

from typing import Any

from binder_py.lm.local_worker import Runtime, WorkerSettings
from binder_py.lm.seeds import spread_seed


class _Server:
    """Records each chat-completions body and answers its ``n`` samples."""

    def __init__(self) -> None:
        self.bodies: list[dict[str, Any]] = []

    def handle_chat_completions(self, body: dict[str, Any]) -> dict[str, Any]:
        self.bodies.append(body)
        return {"choices": [{"index": i, "message": {"content": f"sample {i}"}, "finish_reason": "stop"}
                            for i in range(body["n"])],
                "usage": {"prompt_tokens": 10}, "timings": {"cache_n": 0, "prompt_n": 10}}

    def tokenize(self, text: str) -> list[int]:  # pragma: no cover - not reached: tokens come with log-probs
        return [0] * len(text.split())


def _runtime(slots: int) -> tuple[Runtime, _Server]:
    runtime = object.__new__(Runtime)
    runtime.settings = WorkerSettings(model="fake.gguf", slots=slots, n_ctx=512, threads=1)
    runtime.server = server = _Server()
    runtime.tokenize = server.tokenize  # type: ignore[method-assign]
    return runtime, server


def _sample_seeds(seed: int, n: int, slots: int) -> list[int]:
    """The seed of each sample: llama.cpp seeds the i-th sample of a body with the body's seed + i."""
    runtime, server = _runtime(slots)
    request = {"messages": [["user", "q"]], "n": n, "temperature": 0.4, "top_p": 1.0, "max_tokens": 8,
               "seed": seed}
    assert len(runtime.complete(request)["choices"]) == n
    return [body["seed"] + i for body in server.bodies for i in range(body["n"])]


def test_consecutive_seeds_draw_disjoint_samples():
    """`--seed 3` drew `--seed 2`'s samples 2–5 and one more: the request's seed went to llama.cpp
    as it was, and llama.cpp seeds sample i with seed + i. Seeds 0–99 now share no sample seed."""
    drawn = [_sample_seeds(seed, n=5, slots=5) for seed in range(100)]
    for seeds in drawn:
        assert len(set(seeds)) == 5 and all(0 <= s < 2**32 - 1 for s in seeds)
    every = [s for seeds in drawn for s in seeds]
    assert len(set(every)) == len(every)


def test_a_seed_is_reproducible_and_chunks_continue_its_samples():
    assert _sample_seeds(7, n=5, slots=5) == _sample_seeds(7, n=5, slots=5)
    # 5 samples in chunks of 2 (2 slots): the same five sample seeds as one chunk of 5
    assert _sample_seeds(7, n=5, slots=2) == _sample_seeds(7, n=5, slots=5)
    assert spread_seed(0) != 0 and spread_seed(2**40) < 2**32 - 2**20
