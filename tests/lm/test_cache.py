"""The SQLite cache, its keys, the log, record and replay."""

from __future__ import annotations

import dataclasses
import multiprocessing
import sqlite3

import pytest

from binder_py.lm import LMReplayMiss, LMRequest, LMStore, lm_from_spec
from binder_py.lm.testserver import Fault

BASE = LMRequest(messages=(("system", "You write pandas."), ("user", "sum of a?")), n=2, temperature=0.4,
                 top_p=0.9, stop=("\n\n",), max_tokens=64, seed=7)


def counter_responder():
    calls = {"n": 0}

    def respond(body, api):
        calls["n"] += 1
        return [f"answer {calls['n']}.{i}" for i in range(int(body.get("n") or 1))]

    return respond


def test_second_identical_call_is_a_cache_hit(server, make_lm):
    server.responder = counter_responder()
    lm = make_lm()
    first = lm.complete(BASE, purpose="parse")
    second = lm.complete(BASE, purpose="parse")
    assert not first.cached and second.cached
    assert [c.text for c in first.choices] == [c.text for c in second.choices] == ["answer 1.0", "answer 1.1"]
    assert server.request_count == 1
    # a new client on the same file (another run) hits too
    assert make_lm().complete(BASE).cached


@pytest.mark.parametrize("change", [
    {"messages": (("system", "You write pandas."), ("user", "sum of b?"))},
    {"messages": (("user", "You write pandas."), ("user", "sum of a?"))},
    {"n": 3}, {"temperature": 0.5}, {"top_p": 1.0}, {"stop": ()}, {"max_tokens": 65}, {"seed": 8},
    {"seed": None}, {"logprobs": True},
])
def test_a_changed_parameter_misses(server, make_lm, change):
    lm = make_lm()
    lm.complete(BASE)
    changed = lm.complete(dataclasses.replace(BASE, **change))
    assert not changed.cached
    assert server.request_count == 2


def test_prompt_and_messages_do_not_share_keys(server, make_lm):
    lm = make_lm()
    lm.complete(LMRequest(prompt="sum of a?"))
    assert not lm.complete(LMRequest(messages=(("user", "sum of a?"),))).cached


def test_model_and_endpoint_are_in_the_key(server, make_lm):
    make_lm().complete(BASE)
    assert not make_lm(f"openai:other-model@{server.base_url}").complete(BASE).cached
    assert not make_lm(f"openai-completions:test-model@{server.base_url}").complete(BASE).cached
    assert server.request_count == 3


def test_no_cache_always_asks_but_still_logs(server, make_lm):
    lm = make_lm(cache=False)
    lm.complete(BASE)
    assert not lm.complete(BASE).cached
    assert server.request_count == 2
    sources = [r[0] for r in lm.store._conn.execute("SELECT source FROM log")]
    assert sources == ["model", "model"]


def test_log_has_purpose_tags_usage_and_latency(server, make_lm):
    lm = make_lm()
    lm.complete(BASE, purpose="neural", tags={"run": "r1", "question_id": "q7"})
    lm.complete(BASE, purpose="neural", tags={"run": "r1", "question_id": "q7"})
    rows = lm.store._conn.execute(
        "SELECT purpose, tags, source, prompt_tokens, completion_tokens, latency, key FROM log ORDER BY id").fetchall()
    assert [r[2] for r in rows] == ["model", "cache"]
    assert all(r[0] == "neural" and '"question_id": "q7"' in r[1] and r[3] > 0 and r[4] > 0 and r[5] >= 0
               for r in rows)
    prompt, response = lm.store._conn.execute(
        "SELECT request_json, response_json FROM responses WHERE key = ?", (rows[0][6],)).fetchone()
    assert "sum of a?" in prompt and "answer" in response


def test_cache_stats_and_clear(server, make_lm, tmp_path):
    lm = make_lm()
    lm.complete(BASE)
    lm.complete(BASE)
    stats = lm.store.stats()
    assert stats["responses"] == 1 and stats["hits"] == 1 and stats["misses"] == 1 and stats["hit_rate"] == 0.5
    assert lm.store.clear() == 1
    assert lm.store.stats()["responses"] == 0


def _writer(path: str, worker: int) -> None:
    store = LMStore(path)
    for i in range(40):
        request = LMRequest(prompt=f"w{worker} r{i}")
        from binder_py.lm.store import cache_key, request_key
        from binder_py.lm.types import Choice

        store.put(cache_key("e", "m", "chat", request), request_key(request), lm="x", endpoint="e", model="m",
                  api="chat", request=request, choices=[Choice(f"{worker}-{i}")], prompt_tokens=1,
                  completion_tokens=1)
        store.log(lm="x", purpose="p", tags={}, key=None, source="model")


def test_several_processes_share_the_cache_file(tmp_path):
    path = str(tmp_path / "shared.sqlite")
    LMStore(path)  # create the schema
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(path, w)) for w in range(3)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT COUNT(*) FROM responses").fetchone()[0] == 120
    assert conn.execute("SELECT COUNT(*) FROM log").fetchone()[0] == 120
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_record_then_replay_gives_identical_answers(server, make_lm, tmp_path):
    server.responder = counter_responder()
    record = tmp_path / "recorded"
    lm = make_lm(record_dir=record)
    requests = [LMRequest(prompt=f"q{i}", n=2, temperature=0.7, seed=i) for i in range(4)]
    lm.complete(requests[0])  # already in the cache before the recorded run ...
    lm = make_lm(record_dir=record)
    answers = [lm.complete(r, purpose="parse") for r in requests]
    assert answers[0].cached  # ... and a hit is recorded too
    tokens = lm.count_tokens("some prompt text for budgeting")
    calls = server.request_count

    replay = lm_from_spec(f"replay:{record}")
    assert replay.name == "replay:openai:test-model"
    replayed = [replay.complete(r, purpose="parse") for r in requests]
    assert [[c.text for c in a.choices] for a in replayed] == [[c.text for c in a.choices] for a in answers]
    assert all(a.cached for a in replayed)
    assert replay.count_tokens("some prompt text for budgeting") == tokens
    assert replay.context_window == lm.context_window
    assert server.request_count == calls  # nothing sent
    assert replay.usage.cached_requests == 4 and replay.usage.requests == 0


def test_replay_miss_fails_loudly(server, make_lm, tmp_path):
    record = tmp_path / "recorded"
    make_lm(record_dir=record).complete(LMRequest(prompt="recorded question", seed=1))
    replay = lm_from_spec(f"replay:{record}")
    with pytest.raises(LMReplayMiss) as info:
        replay.complete(LMRequest(prompt="a question never asked", seed=1), purpose="neural")
    message = str(info.value)
    assert "neural" in message and "a question never asked" in message and "record" in message
    with pytest.raises(LMReplayMiss):
        replay.complete(LMRequest(prompt="recorded question", seed=2))  # a changed parameter misses too


def test_replay_of_a_missing_directory_says_so(tmp_path):
    from binder_py.lm import LMConfigError

    with pytest.raises(LMConfigError, match="record"):
        lm_from_spec(f"replay:{tmp_path / 'nothing'}")


def test_errors_are_not_cached(server, make_lm):
    server.faults.append(Fault.bad_key())
    lm = make_lm()
    with pytest.raises(Exception):
        lm.complete(BASE)
    assert not lm.complete(BASE).cached


@pytest.mark.parametrize("recorded, grammar, logprobs, embedded", [
    ("local:qwen2.5-coder-0.5b-instruct-q4_k_m", True, True, True),
    ("openai:test-model", False, True, False),
])
def test_replay_claims_what_the_recorded_model_took(tmp_path, recorded, grammar, logprobs, embedded):
    """A replay builds its requests as the recorded model did: a run of the embedded model sampled
    its programs under a grammar and read its row-by-row neural answers from log-probabilities, so
    a replay that claimed neither sent other requests and missed on every question."""
    from binder_py.lm.types import Choice

    record = tmp_path / "recorded"
    record.mkdir()
    store = LMStore(record / "lm.sqlite")
    store.put_model(recorded, "", recorded.split(":", 1)[1], 8192)
    request = LMRequest(messages=(("user", "q"),), grammar='root ::= "x"')
    store.put("k", "rk", lm=recorded, endpoint="", model="m", api="chat", request=request,
              choices=[Choice("x")], prompt_tokens=1, completion_tokens=1)
    store.close()
    replay = lm_from_spec(f"replay:{record}")
    assert replay.capabilities.api == "chat"
    assert replay.capabilities.grammar is grammar
    assert replay.capabilities.logprobs is logprobs
    assert replay.capabilities.embedded is embedded


def _as_unprivileged(code: str) -> "subprocess.CompletedProcess[str]":
    """Run ``code`` in a Python that file permissions apply to (as root: without the
    capabilities that override them), with this checkout on its path."""
    import os
    import shutil
    import subprocess
    import sys
    from pathlib import Path

    command = [sys.executable, "-c", code]
    if os.geteuid() == 0:
        if shutil.which("setpriv") is None:
            pytest.skip("running as root without setpriv: file permissions cannot be made to apply")
        command = ["setpriv", "--bounding-set=-dac_override,-dac_read_search", *command]
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2]))
    return subprocess.run(command, capture_output=True, text=True, env=env, timeout=120)


def _read_only_recording(tmp_path, server):
    """A recording (a WAL database, closed) in a directory no one may write."""
    import os

    import subprocess
    import sys

    record = tmp_path / "recorded"
    subprocess.run([sys.executable, "-c", "from binder_py.lm import LMRequest, lm_from_spec\n"
                    f"lm = lm_from_spec('openai:test-model@{server.base_url}', cache=False, record_dir='{record}')\n"
                    "lm.complete(LMRequest(prompt='recorded question', seed=1))\n"], check=True, timeout=120)
    assert sorted(p.name for p in record.iterdir()) == ["lm.sqlite"]  # the process ended: no -wal, no -shm
    for path in (record / "lm.sqlite", record):
        os.chmod(path, 0o555 if path.is_dir() else 0o444)
    return record


def test_a_recording_in_a_read_only_directory_replays(server, tmp_path):
    """SQLite opens a WAL database read-only only when it can create its -shm file beside it: in a
    read-only directory replay said the recording was 'not a binder-py recording' and to remove it."""
    record = _read_only_recording(tmp_path, server)
    done = _as_unprivileged(
        "from binder_py.lm import LMRequest, lm_from_spec\n"
        f"replay = lm_from_spec('replay:{record}')\n"
        "print(replay.complete(LMRequest(prompt='recorded question', seed=1)).choices[0].text)\n")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "answer"


def test_a_recording_that_cannot_be_written_says_so_and_not_to_remove_it(server, tmp_path):
    record = _read_only_recording(tmp_path, server)
    done = _as_unprivileged(
        "from binder_py.lm import lm_from_spec\n"
        "from binder_py.lm.types import LMConfigError\n"
        "try:\n"
        f"    lm_from_spec('openai:test-model@http://127.0.0.1:9/v1', cache=False, record_dir='{record}')\n"
        "except LMConfigError as error:\n"
        "    print(error)\n"
        "try:\n"
        f"    lm_from_spec('openai:test-model@http://127.0.0.1:9/v1', cache=False, record_dir='{record / 'new'}')\n"
        "except LMConfigError as error:\n"
        "    print(error)\n")
    assert done.returncode == 0, done.stderr
    cannot_write, cannot_create = done.stdout.strip().splitlines()
    assert "cannot be written" in cannot_write and "read-only" in cannot_write
    assert "not a binder-py recording" not in cannot_write and "remove it" not in cannot_write
    assert str(record / "new") in cannot_create and "Permission denied" in cannot_create


def test_a_cache_folder_that_cannot_be_made_is_a_one_line_error(tmp_path, monkeypatch):
    """BINDER_CACHE_DIR naming a file ended `binder-py ask` with a FileExistsError traceback."""
    from binder_py.lm.types import LMConfigError

    a_file = tmp_path / "table.csv"
    a_file.write_text("a\n1\n")
    monkeypatch.setenv("BINDER_CACHE_DIR", str(a_file))
    with pytest.raises(LMConfigError, match=f"cannot make the folder {a_file} for lm-cache.sqlite "
                                            r"\(a file has that name\); .* set BINDER_CACHE_DIR"):
        lm_from_spec("openai:test-model@http://127.0.0.1:9/v1")
