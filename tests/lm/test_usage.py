"""Usage accounting: per call, per question, per run; physical vs cached; cost; n emulation."""

from __future__ import annotations

import pytest

from binder_py.lm import LMRequest, PriceTable, Usage, UsageLedger
from binder_py.lm.seeds import spread_seed
from binder_py.lm.testserver import LoopbackServer


def test_usage_sums_physical_and_cached(server, make_lm):
    ledger = UsageLedger()
    lm = make_lm(ledger=ledger)
    a = lm.complete(LMRequest(prompt="one two three"), purpose="parse", tags={"question_id": "q1"})
    b = lm.complete(LMRequest(prompt="one two three"), purpose="parse", tags={"question_id": "q2"})
    c = lm.complete(LMRequest(prompt="four five", n=3), purpose="neural", tags={"question_id": "q2"})
    assert a.usage.requests == 1 and a.usage.prompt_tokens == 3 and a.usage.completion_tokens == 1
    assert b.cached and b.usage.requests == 0 and b.usage.cached_requests == 1
    assert b.usage.cached_prompt_tokens == 3 and b.usage.cached_completion_tokens == 1
    total = ledger.total
    assert total.requests == 2 and total.cached_requests == 1 and total.virtual_requests == 3
    assert total.prompt_tokens == 3 + 2 and total.completion_tokens == 1 + 3
    assert total.cached_prompt_tokens == 3
    summed = Usage()
    for completion in (a, b, c):
        summed += completion.usage
    assert summed.as_dict() == pytest.approx(total.as_dict())
    assert ledger.for_question("q2").requests == 1 and ledger.for_question("q2").cached_requests == 1
    assert set(ledger.by_purpose()) == {"parse", "neural"}
    assert total.wall_seconds > 0


def test_two_models_share_one_ledger(server, make_lm):
    ledger = UsageLedger()
    make_lm(ledger=ledger).complete(LMRequest(prompt="x"))
    make_lm(f"openai:other@{server.base_url}", ledger=ledger).complete(LMRequest(prompt="x"))
    assert ledger.total.requests == 2
    assert set(ledger.by_lm()) == {"openai:test-model", "openai:other"}


def test_cost_from_price_table(server, make_lm, tmp_path, monkeypatch):
    table = PriceTable.load({"test-model": {"input": 1_000_000, "output": 2_000_000}})
    lm = make_lm(prices=table)
    completion = lm.complete(LMRequest(prompt="a b c d"))
    assert completion.usage.cost_usd == pytest.approx(4 * 1.0 + 1 * 2.0)
    assert lm.complete(LMRequest(prompt="a b c d")).usage.cost_usd == 0  # a hit costs nothing
    prices = tmp_path / "prices.json"
    prices.write_text('{"test-model": [0.5, 1.5]}')
    monkeypatch.setenv("BINDER_PRICES", str(prices))
    assert PriceTable.load().price("test-model-2024") == (0.5, 1.5)
    assert PriceTable.load().price("gpt-4o-mini-2024-07-18") == (0.15, 0.60)
    assert PriceTable.load().price("unknown") == (0.0, 0.0)


def test_n_is_emulated_when_the_server_ignores_it(make_lm, tmp_path):
    with LoopbackServer(responder=lambda body, api: f"seed {body.get('seed')}", ignore_n=True) as srv:
        from binder_py.lm import lm_from_spec

        lm = lm_from_spec(f"openai:m@{srv.base_url}", cache_path=tmp_path / "c.sqlite")
        completion = lm.complete(LMRequest(prompt="q", n=4, temperature=0.8, seed=10))
        spread = spread_seed(10)
        assert [c.text for c in completion.choices] == ["seed 10", f"seed {spread + 1}", f"seed {spread + 2}",
                                                        f"seed {spread + 3}"]
        assert completion.usage.requests == 4
        assert srv.request_count == 4
        # now known to ignore n: the next call fans out at once
        completion = lm.complete(LMRequest(prompt="q2", n=3, temperature=0.8, seed=0))
        assert [c.text for c in completion.choices] == ["seed 0", f"seed {spread_seed(0) + 1}",
                                                        f"seed {spread_seed(0) + 2}"]
        # seed 1's samples share none of seed 0's seeds (as seed + i they shared all but one)
        again = lm.complete(LMRequest(prompt="q2", n=3, temperature=0.8, seed=1))
        assert not {c.text for c in again.choices} & {c.text for c in completion.choices}
        assert srv.request_count == 10
        assert all(r.body.get("n") is None for r in srv.requests[4:])


def test_n_is_passed_when_the_server_honours_it(server, make_lm):
    completion = make_lm().complete(LMRequest(prompt="q", n=5))
    assert len(completion.choices) == 5 and server.request_count == 1
    assert server.requests[0].body["n"] == 5


def test_request_parameters_reach_the_server(server, make_lm):
    make_lm().complete(LMRequest(prompt="q", temperature=0.3, top_p=0.8, stop=("END",), max_tokens=33, seed=5,
                                 logprobs=True))
    body = server.requests[0].body
    assert body["messages"] == [{"role": "user", "content": "q"}]
    assert (body["temperature"], body["top_p"], body["stop"], body["max_tokens"], body["seed"], body["logprobs"]) \
        == (0.3, 0.8, ["END"], 33, 5, True)


def test_logprobs_are_averaged(server, make_lm):
    chat = make_lm().complete(LMRequest(prompt="q", logprobs=True))
    assert chat.choices[0].mean_logprob == pytest.approx(-0.5)
    legacy = make_lm(f"openai-completions:test-model@{server.base_url}").complete(LMRequest(prompt="q", logprobs=True))
    assert legacy.choices[0].mean_logprob == pytest.approx(-0.25)
    assert server.requests[-1].path.endswith("/v1/completions")
    assert make_lm().complete(LMRequest(prompt="q2")).choices[0].mean_logprob is None
