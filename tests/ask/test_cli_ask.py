"""``binder-py ask``: answers, exit codes and messages for bad input (no tracebacks)."""

from __future__ import annotations

import json

import pytest

from binder_py.cli import main
from binder_py.lm.testserver import LoopbackServer
from tests.ask.shirts_case import NEURAL_PROGRAM, QUESTION


@pytest.fixture()
def server():
    with LoopbackServer(responder=lambda body, api: NEURAL_PROGRAM) as srv:
        yield srv


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_ask_with_the_question_first_says_it_comes_last(capsys, shirts_path):
    """`ask QUESTION shirts.csv` said "QUESTION: unknown table format '(no extension)'"."""
    code, out, err = run(capsys, "ask", QUESTION, str(shirts_path))
    assert code == 2 and "the question comes last, after the table file(s): binder-py ask TABLE... QUESTION" in err


def test_ask_prints_the_answer(capsys, server, shirts_path, oracle_spec, tmp_path, monkeypatch):
    monkeypatch.setenv("BINDER_CACHE_DIR", str(tmp_path))
    code, out, err = run(capsys, "ask", str(shirts_path), QUESTION, "--lm", f"openai:m@{server.base_url}",
                         "--neural", oracle_spec, "--n", "2")
    assert code == 0, err
    assert out.strip() == "pure cotton oxford shirt"
    assert "writing 2 candidate program(s)" in err  # progress while it works


def test_ask_json_and_explain(capsys, server, shirts_path, oracle_spec, tmp_path, monkeypatch):
    monkeypatch.setenv("BINDER_CACHE_DIR", str(tmp_path))
    lm = f"openai:m@{server.base_url}"
    code, out, _ = run(capsys, "ask", str(shirts_path), QUESTION, "--lm", lm, "--neural", oracle_spec,
                       "--n", "1", "--json", "--quiet")
    data = json.loads(out)
    assert code == 0 and data["value"] == "pure cotton oxford shirt"
    assert data["candidates"][0]["run"]["calls"][0]["question"] == "Is it in North America?"
    code, out, _ = run(capsys, "ask", str(shirts_path), QUESTION, "--lm", lm, "--neural", oracle_spec,
                       "--n", "1", "--explain", "--quiet")
    assert code == 0 and "Winning program:" in out
    # both: the JSON alone on stdout (for a pipe), the explanation on stderr (it was dropped without a word)
    code, out, err = run(capsys, "ask", str(shirts_path), QUESTION, "--lm", lm, "--neural", oracle_spec,
                         "--n", "1", "--json", "--explain", "--quiet")
    assert code == 0 and json.loads(out)["value"] == "pure cotton oxford shirt" and "Winning program:" in err


@pytest.mark.parametrize("make_table, message", [
    (None, "no such file"),
    (lambda p: p.write_text(""), "empty"),
    (lambda p: p.write_text("a,b\n"), "no data rows"),
    (lambda p: p.write_text("a,a\n1,2\n"), "uplicate"),
])
def test_bad_tables_exit_2_with_a_message(capsys, tmp_path, make_table, message):
    path = tmp_path / "t.csv"
    if make_table is not None:
        make_table(path)
    code, out, err = run(capsys, "ask", str(path), "how many?", "--lm", "openai:m@http://127.0.0.1:9/v1")
    assert code == 2 and out == ""
    assert message in err and "Traceback" not in err


def test_unknown_extension(capsys, tmp_path):
    path = tmp_path / "t.json"
    path.write_text("{}")
    code, _, err = run(capsys, "ask", str(path), "how many?")
    assert code == 2 and ".csv" in err


def test_unknown_lm_spec(capsys, shirts_path):
    code, _, err = run(capsys, "ask", str(shirts_path), QUESTION, "--lm", "gpt5:turbo", "--quiet")
    assert code == 2 and "openai:MODEL" in err and "Traceback" not in err


def test_empty_question(capsys, shirts_path):
    code, _, err = run(capsys, "ask", str(shirts_path), "   ")
    assert code == 2 and "question is empty" in err


def test_model_with_no_usable_program(capsys, shirts_path, tmp_path, monkeypatch):
    monkeypatch.setenv("BINDER_CACHE_DIR", str(tmp_path))
    with LoopbackServer(responder=lambda body, api: "") as srv:
        code, _, err = run(capsys, "ask", str(shirts_path), QUESTION, "--lm", f"openai:m@{srv.base_url}",
                           "--n", "2", "--quiet")
    assert code == 2 and "no usable program" in err


def test_bad_key_is_reported_immediately(capsys, shirts_path, tmp_path, monkeypatch):
    from binder_py.lm.testserver import Fault

    monkeypatch.setenv("BINDER_CACHE_DIR", str(tmp_path))
    with LoopbackServer(responder=lambda body, api: Fault.bad_key()) as srv:
        code, _, err = run(capsys, "ask", str(shirts_path), QUESTION, "--lm", f"openai:m@{srv.base_url}",
                           "--quiet")
    assert code == 2 and "key" in err.lower() and "Traceback" not in err


def test_no_model_configured_says_how_to_configure_one(capsys, shirts_path, monkeypatch):
    import binder_py.lm.local as local

    monkeypatch.delenv("BINDER_LM", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setattr(local, "local_extra_installed", lambda: False)
    code, _, err = run(capsys, "ask", str(shirts_path), QUESTION, "--quiet")
    assert code == 2 and 'pip install -e ".[local]"' in err and "OPENAI_API_KEY" in err


def test_an_abstention_is_not_reported_as_programs_that_gave_no_answer(capsys, shirts_path, tmp_path, monkeypatch):
    """With --abstain-below, programs that answered but not confidently enough printed "no answer:
    no program gave one (...; 2 voted)", which contradicts itself: say it abstained, and why."""
    monkeypatch.setenv("BINDER_CACHE_DIR", str(tmp_path))
    programs = ['df["sales"].max()', 'df["sales"].min()']  # two answers, 50% each
    with LoopbackServer(responder=lambda body, api: programs[: int(body.get("n") or 1)]) as srv:
        argv = ["ask", str(shirts_path), "which sales figure?", "--lm", f"openai:m@{srv.base_url}", "--n", "2",
                "--mode", "python", "--calibrator", "none", "--abstain-below", "0.9", "--quiet"]
        code, out, err = run(capsys, *argv)
        assert code == 1 and out == ""
        assert "no program gave one" not in err
        assert "abstained" in err and "below 90%" in err
        code, out, _ = run(capsys, *argv, "--explain")
        assert "Answer: no answer (abstained" in out and "Answer: None" not in out


def test_a_bad_neural_spec_fails_before_the_model_runs(capsys, shirts_path, tmp_path, monkeypatch):
    """--neural oracle:missing.json was only read when a program made a neural call: with programs
    that made none, the flag was accepted silently; with some, it failed after sampling."""
    monkeypatch.setenv("BINDER_CACHE_DIR", str(tmp_path))
    with LoopbackServer(responder=lambda body, api: 'df["sales"].max()') as srv:
        code, out, err = run(capsys, "ask", str(shirts_path), "top sales?", "--lm", f"openai:m@{srv.base_url}",
                             "--neural", f"oracle:{tmp_path / 'missing.json'}", "--n", "1", "--quiet")
        assert srv.request_count == 0
    assert code == 2 and out == ""
    assert "cannot read oracle answers" in err


def test_the_mode_help_describes_every_mode():
    import argparse

    from binder_py.cli.options import add_sampling_options
    from binder_py.pipeline.settings import MODES

    parser = argparse.ArgumentParser()
    add_sampling_options(parser)
    text = next(a.help for a in parser._actions if a.dest == "mode")
    assert all(f"{mode}: " in text for mode in MODES)  # discriminate was a choice the help did not describe


def test_ask_says_when_only_the_first_column_of_a_wide_answer_was_kept(capsys, shirts_path, tmp_path, monkeypatch):
    monkeypatch.setenv("BINDER_CACHE_DIR", str(tmp_path))
    program = 'df[df["price"] > 40][["shirt", "price"]]'
    with LoopbackServer(responder=lambda body, api: program) as srv:
        code, out, err = run(capsys, "ask", str(shirts_path), "which shirts cost over 40?", "--lm",
                             f"openai:m@{srv.base_url}", "--n", "1", "--quiet")
    assert code == 0 and "pure cotton oxford shirt" in out
    # the price column was dropped without a word
    assert "binder-py ask: answer is the first column of a 2×2 DataFrame; the other columns were ignored" in err


@pytest.mark.parametrize("command", [["ask", "examples/shirts.csv", "which shirt?"],
                                     ["eval", "wikitq", "--split", "dev"]])
@pytest.mark.parametrize("option, value, message", [
    ("--n", "100000", "argument --n: a whole number from 1 to 10,000, got 100,000"),
    ("--n", "0", "argument --n: a whole number from 1 to 10,000, got 0"),
    ("--n", "five", "argument --n: a whole number from 1 to 10,000, got 'five'"),
    ("--shots", "-1", "argument --shots: a whole number of 0 or more, got -1"),
    ("--core-shots", "-2", "argument --core-shots: a whole number of 0 or more, got -2"),
    ("--table-rows", "-3", "argument --table-rows: a whole number of 0 or more, got -3"),
    ("--abstain-below", "2", "argument --abstain-below: a number from 0 to 1, got 2"),
    ("--neural-weight", "nan", "argument --neural-weight: a number of 0 or more, got nan"),
])
def test_bad_sampling_options_are_refused_in_the_options_own_words(command, option, value, message, capsys):
    """Settings are checked again by AskSettings, whose errors name Python parameters (num_shots);
    on the command line the option's own name is what the user typed."""
    with pytest.raises(SystemExit) as exit_info:
        main([*command, option, value])
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err


def test_ask_prints_a_long_list_answer_whole_and_its_json_says_it_was_cut(capsys, shirts_path, tmp_path,
                                                                           monkeypatch):
    """The answer to a question whose program lists 25,000 values was printed as its first 10,000,
    ending in `]` as if that were all; `--json` cut it the same way without a word."""
    monkeypatch.setenv("BINDER_CACHE_DIR", str(tmp_path))
    with LoopbackServer(responder=lambda body, api: "list(range(25000))") as srv:
        spec = f"openai:m@{srv.base_url}"
        code, out, err = run(capsys, "ask", str(shirts_path), "list the numbers", "--lm", spec, "--n", "1", "--quiet")
        assert code == 0, err
        assert json.loads(out) == list(range(25000))
        code, out, err = run(capsys, "ask", str(shirts_path), "list the numbers", "--lm", spec, "--n", "1", "--json")
        answer = json.loads(out)
        assert answer["value"] == list(range(10000))
        assert "the value has 25,000 items; the JSON shows the first 10,000" in answer["warnings"]


@pytest.mark.parametrize("command", ["ask", "eval"])
@pytest.mark.parametrize("mode", ["python", "e2e"])
def test_neural_with_a_mode_that_makes_no_neural_calls_is_refused(command, mode, capsys, shirts_path, oracle_spec,
                                                                  tmp_path):
    """`ask --mode python --neural oracle:F` answered as if --neural were not there: only the
    answer's warnings (printed with --explain or --json) said it was not used."""
    argv = (["ask", str(shirts_path), "top sales?"] if command == "ask"
            else ["eval", "wikitq", "--out", str(tmp_path / "run")])
    code, out, err = run(capsys, *argv, "--mode", mode, "--neural", oracle_spec, "--lm", "openai:m@http://127.0.0.1:9/v1")
    assert code == 2 and out == ""
    assert f"--neural is not used with --mode {mode}" in err


def test_a_grouped_answer_is_printed_with_its_labels(capsys, shirts_path, tmp_path, monkeypatch):
    """`ask "total sales per country?"` printed [4500, 3400, ...]: the vote keeps a Series' values, so the
    countries were lost. The winning program's own Series is printed (and --json has its labels)."""
    from binder_py.lm.testserver import LoopbackServer

    monkeypatch.setenv("BINDER_CACHE_DIR", str(tmp_path))
    with LoopbackServer(responder=lambda body, api: 'df.groupby("made in")["sales"].sum()') as srv:
        code, out, _ = run(capsys, "ask", str(shirts_path), "total sales per country?", "--lm",
                           f"openai:m@{srv.base_url}", "--n", "1", "--quiet", "--mode", "python")
    assert code == 0
    assert "United States    5000" in out and "Canada           4500" in out
