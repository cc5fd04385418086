"""The store keeps the protocol's newer fields (grammar, JSON schema, log-probabilities) without
changing the keys of requests that do not use them (old recorded runs still replay)."""

from __future__ import annotations

from dataclasses import replace

from binder_py.lm import LMRequest, LMStore
from binder_py.lm.client import ReplayLM
from binder_py.lm.store import cache_key, request_dict, request_key
from binder_py.lm.types import Choice

PLAIN = LMRequest(messages=(("user", "hi"),), n=5, temperature=0.7, seed=3, stop=("\n",), max_tokens=64)
#: the keys of PLAIN computed by the store before grammar/json_schema/top_logprobs existed
OLD_REQUEST_KEY = "94f03686c54fbb50275a1ae6ff0b5957d47af0b53759d12ec638439412d08705"
OLD_CACHE_KEY = "2bf5a7e71ee223b55480c53f37fcaac80cc04093aa4c4cd48451841b91d13d72"
LOCAL = ("local:qwen2.5-coder-0.5b-instruct-q4_k_m.gguf", "qwen2.5-coder-0.5b-instruct-q4_k_m", "chat")


def test_requests_without_the_new_fields_keep_their_old_keys():
    assert set(request_dict(PLAIN)) == {"prompt", "messages", "n", "temperature", "top_p", "stop", "max_tokens",
                                        "seed", "logprobs"}
    assert request_key(PLAIN) == OLD_REQUEST_KEY
    assert cache_key(*LOCAL, PLAIN) == OLD_CACHE_KEY


def test_each_new_field_is_in_the_key_only_when_set():
    variants = [replace(PLAIN, grammar='root ::= "a"'), replace(PLAIN, json_schema='{"type": "integer"}'),
                replace(PLAIN, top_logprobs=3)]
    keys = {request_key(v) for v in variants}
    assert len(keys) == 3 and OLD_REQUEST_KEY not in keys
    assert request_dict(variants[0])["grammar"] == 'root ::= "a"'
    assert request_dict(variants[2])["top_logprobs"] == 3


def test_log_probabilities_are_recorded_and_replayed(tmp_path):
    request = replace(PLAIN, logprobs=True, top_logprobs=2)
    choices = [Choice(text="ok", mean_logprob=-0.25, finish_reason="stop",
                      token_logprobs=(("o", -0.1), ("k", -0.4)),
                      top_logprobs=((("o", -0.1), ("a", -2.5)), (("k", -0.4), ("x", -1.5)))),
               Choice(text="no", finish_reason="length")]
    store = LMStore(tmp_path / "lm.sqlite")
    store.put(cache_key(*LOCAL, request), request_key(request), lm="local:m", endpoint=LOCAL[0], model=LOCAL[1],
              api="chat", request=request, choices=choices, prompt_tokens=10, completion_tokens=3)
    store.put_model("local:m", LOCAL[0], LOCAL[1], 8192)
    store.close()
    replayed = ReplayLM(tmp_path).complete(request)
    assert replayed.choices == choices
    assert replayed.choices[1].token_logprobs is None and replayed.choices[1].top_logprobs is None
