"""binder-py cache stats|clear, lm check, lm log."""

from __future__ import annotations

from binder_py.cli import main
from binder_py.lm import LMRequest


def test_cache_stats_and_clear(server, make_lm, tmp_path, capsys):
    lm = make_lm()
    lm.complete(LMRequest(prompt="q"))
    lm.complete(LMRequest(prompt="q"))
    path = str(tmp_path / "cache.sqlite")
    assert main(["cache", "stats", "--cache-path", path]) == 0
    out = capsys.readouterr().out
    assert "answers stored: 1" in out and "hit rate 50%" in out
    assert main(["lm", "log", "--cache-path", path]) == 0
    assert "openai:test-model" in capsys.readouterr().out
    lm.complete(LMRequest(prompt="r"))
    assert main(["cache", "clear", "--keep-log", "--cache-path", path]) == 0
    assert "cleared 2 cached answers" in (out := capsys.readouterr().out) and "log of calls is kept" in out
    assert main(["lm", "log", "--cache-path", path]) == 0
    assert "openai:test-model" in capsys.readouterr().out
    assert main(["cache", "clear", "--cache-path", path]) == 0
    assert "cleared 0 cached answers and the log of calls" in capsys.readouterr().out
    assert main(["lm", "log", "--cache-path", path]) == 0
    assert "openai:test-model" not in capsys.readouterr().out


def test_lm_check_against_the_loopback_server(server, capsys):
    assert main(["lm", "check", f"openai:test-model@{server.base_url}"]) == 0
    out = capsys.readouterr().out
    assert "answer: 'answer'" in out and "openai:test-model" in out


def test_lm_check_bad_spec_is_a_user_error(capsys):
    assert main(["lm", "check", "nonsense"]) == 2
    assert "accepted forms" in capsys.readouterr().err


def test_lm_check_bad_key(server, capsys, monkeypatch):
    server.api_key = "sk-right"
    monkeypatch.setenv("OPENAI_API_KEY", "sk-wrong")
    assert main(["lm", "check", f"openai:test-model@{server.base_url}"]) == 2
    assert "refused the API key" in capsys.readouterr().err


def test_lm_log_refuses_a_count_below_one(server, make_lm, tmp_path, capsys):
    lm = make_lm()
    for prompt in ("a", "b", "c"):
        lm.complete(LMRequest(prompt=prompt))
    path = str(tmp_path / "cache.sqlite")
    assert main(["lm", "log", "--cache-path", path, "-n", "2"]) == 0
    assert capsys.readouterr().out.count("openai:test-model") == 2
    for bad in ("-1", "0"):  # -1 printed the whole log (SQLite: a negative LIMIT is no limit)
        assert main(["lm", "log", "--cache-path", path, "-n", bad]) == 2
        captured = capsys.readouterr()
        assert "-n must be at least 1" in captured.err and captured.out == ""


def test_lm_log_of_an_empty_log_says_so(make_lm, tmp_path, capsys):
    make_lm().close()
    path = str(tmp_path / "cache.sqlite")
    assert main(["cache", "stats", "--cache-path", path]) == 0  # the file exists, with no call logged
    capsys.readouterr()
    assert main(["lm", "log", "--cache-path", path]) == 0
    captured = capsys.readouterr()
    assert captured.out == "" and "no calls logged in" in captured.err  # it printed nothing at all


def test_lm_log_shows_tags_as_key_value_pairs(make_lm, tmp_path, capsys):
    lm = make_lm()
    lm.complete(LMRequest(prompt="a"), tags={"question_id": "nt-7"})
    lm.complete(LMRequest(prompt="b"))
    path = str(tmp_path / "cache.sqlite")
    assert main(["lm", "log", "--cache-path", path]) == 0
    tagged, plain = capsys.readouterr().out.splitlines()
    assert tagged.endswith("s question_id=nt-7") and "{" not in tagged  # was {"question_id": "nt-7"}
    assert plain.endswith("s") and "{}" not in plain  # was a trailing {}


def test_lm_check_of_a_recording_says_what_it_holds(server, make_lm, tmp_path, capsys):
    """The help offers replay:DIR, but the check sent its own prompt, which no run recorded: it
    always ended in 'replay miss ... rerun with the same settings as the recorded run'."""
    make_lm(record_dir=tmp_path / "run").complete(LMRequest(prompt="recorded", seed=1))
    assert main(["lm", "check", f"replay:{tmp_path / 'run'}"]) == 0
    captured = capsys.readouterr()
    assert "replay miss" not in captured.err
    assert "1 recorded answer" in captured.out and "openai:test-model" in captured.out
