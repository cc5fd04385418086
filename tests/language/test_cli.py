"""``binder-py exec`` end to end (in a subprocess-free way: through cli.main)."""

import io
import json
import sys

import pandas as pd
import pytest

from binder_py.cli import main
from language_fakes import requires_sandbox

pytestmark = requires_sandbox


@pytest.fixture
def files(tmp_path):
    table = tmp_path / "shirts.csv"
    table.write_text("shirt,made in,price\nTuxedo shirt,USA,80\nT-shirt,China,10\nPolo,Mexico,25\n")
    oracle = tmp_path / "oracle.json"
    oracle.write_text(json.dumps({"f_col": {"Made in North America?": {"usa": "yes", "china": "no",
                                                                         "mexico": "yes"}},
                                  "f_val": {"Which is the most formal?": "Tuxedo shirt"}}))
    program = tmp_path / "p.py"
    program.write_text('df[f_col("Made in North America?", "made in")]["price"].sum()\n')
    return table, oracle, program


def test_exec_prints_the_answer(files, capsys):
    table, oracle, program = files
    assert main(["exec", str(table), str(program), "--neural", f"oracle:{oracle}"]) == 0
    assert capsys.readouterr().out.strip() == "105"


def test_exec_with_the_program_first_says_it_comes_last(files, capsys):
    """`exec p.py shirts.csv` said "p.py: unknown table format '.py'", after reading the CSV as the program."""
    table, oracle, program = files
    assert main(["exec", str(program), str(table)]) == 2
    err = capsys.readouterr().err
    assert "the program file comes last, after the table file(s): binder-py exec TABLE... PROGRAM_FILE" in err


def test_exec_json_trace_from_stdin(files, capsys, monkeypatch):
    table, oracle, _ = files
    monkeypatch.setattr(sys, "stdin", io.StringIO('f_val("Which is the most formal?", ["shirt"])\n'))
    assert main(["exec", str(table), "-", "--neural", f"oracle:{oracle}", "--json"]) == 0
    trace = json.loads(capsys.readouterr().out)
    assert trace["value"] == "Tuxedo shirt" and trace["title"] == "shirts"
    assert trace["calls"][0]["kind"] == "val" and trace["calls"][0]["rows"][1] == ["T-shirt"]


def test_exec_failure_exits_non_zero_with_position(files, capsys, tmp_path):
    table, oracle, _ = files
    bad = tmp_path / "bad.py"
    bad.write_text("x = 1\nf_col()\n")
    assert main(["exec", str(table), str(bad), "--neural", f"oracle:{oracle}"]) == 1
    err = capsys.readouterr().err
    assert "syntax error at line 2" in err and "f_col" in err


def test_exec_bad_oracle_file_is_input_error(files, capsys, tmp_path):
    table, _, program = files
    assert main(["exec", str(table), str(program), "--neural", f"oracle:{tmp_path / 'missing.json'}"]) == 2
    assert "cannot read oracle answers" in capsys.readouterr().err


@pytest.mark.parametrize("timeout", ["0", "-1", "nan", "inf"])
def test_exec_timeout_must_be_a_positive_finite_number(files, capsys, timeout):
    """--timeout nan / inf ended in a ValueError / OverflowError traceback from the sandbox's socket."""
    table, oracle, program = files
    assert main(["exec", str(table), str(program), "--neural", f"oracle:{oracle}", "--timeout", timeout]) == 2
    err = capsys.readouterr().err
    assert "--timeout must be a positive number of seconds" in err and "Traceback" not in err


def test_exec_program_that_is_not_utf8_is_input_error(files, capsys, tmp_path, monkeypatch):
    """A Latin-1 (or binary) program file ended in a UnicodeDecodeError traceback."""
    table, oracle, _ = files
    latin1 = tmp_path / "latin1.py"
    latin1.write_bytes("df[df['shirt'] == 'Café'].shape[0]\n".encode("latin-1"))
    assert main(["exec", str(table), str(latin1), "--neural", f"oracle:{oracle}"]) == 2
    assert "is not UTF-8 text" in capsys.readouterr().err
    # read as bytes: under a C locale the text stream lets bad bytes through as surrogates
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"\xff\xfe1\n"), errors="surrogateescape"))
    assert main(["exec", str(table), "-", "--neural", f"oracle:{oracle}"]) == 2
    assert "standard input is not UTF-8 text" in capsys.readouterr().err


def test_exec_program_with_a_utf8_bom_runs(files, capsys, tmp_path):
    table, oracle, _ = files
    program = tmp_path / "bom.py"
    program.write_bytes("df.shape[0]\n".encode("utf-8-sig"))
    assert main(["exec", str(table), str(program), "--neural", f"oracle:{oracle}"]) == 0
    assert capsys.readouterr().out.strip() == "3"


def test_exec_says_when_the_oracle_has_no_answer(files, capsys, tmp_path):
    """A misspelt question in an oracle file answered every row unknown and printed 0 with no warning."""
    table, _, program = files

    def run_with(name: str, question: str) -> tuple[str, str]:
        oracle = tmp_path / name
        oracle.write_text(json.dumps({"f_col": {question: {"usa": "yes"}}}))
        assert main(["exec", str(table), str(program), "--neural", f"oracle:{oracle}"]) == 0
        return capsys.readouterr()

    out, err = run_with("typo.json", "Made in North-America?")
    assert out.strip() == "0"
    assert "has no f_col answers for 'Made in North America?'" in err and "'Made in North-America?'" in err
    out, err = run_with("partial.json", "Made in North America?")  # one row key of three
    assert out.strip() == "80"
    assert "no answer for 2 of 3 row key(s)" in err and "'china'; 'mexico'" in err
    assert main(["exec", str(table), str(program), "--neural", f"oracle:{files[1]}"]) == 0
    assert "warning" not in capsys.readouterr().err  # a complete oracle: nothing to say


def test_exec_oracle_warning_shortens_long_row_keys(capsys, tmp_path):
    table = tmp_path / "long.csv"
    table.write_text("a,b\n1," + "x" * 50_000 + "\n2,y\n")
    oracle = tmp_path / "o.json"
    oracle.write_text(json.dumps({"f_col": {"Long?": {"y": "yes"}}}))
    program = tmp_path / "p.py"
    program.write_text('f_col("Long?", ["b"]).isna().sum()\n')
    assert main(["exec", str(table), str(program), "--neural", f"oracle:{oracle}"]) == 0
    err = capsys.readouterr().err
    assert "no answer for 1 of 2 row key(s)" in err and len(err) < 500


def test_a_long_list_answer_is_printed_whole_and_its_json_says_it_was_cut(files, capsys):
    """`binder-py exec` (and `ask`) printed the first 10,000 items of a longer list answer, ending in
    `]` as if that were all of it; the JSON trace cut it the same way without a word. The printed
    answer is now whole, and the JSON's warnings say how much of the value it shows."""
    table, _, program = files
    program.write_text("list(range(25000))\n")
    assert main(["exec", str(table), str(program)]) == 0
    assert json.loads(capsys.readouterr().out) == list(range(25000))
    assert main(["exec", str(table), str(program), "--json"]) == 0
    trace = json.loads(capsys.readouterr().out)
    assert trace["value"] == list(range(10000))
    assert "the value has 25,000 items; the JSON shows the first 10,000" in trace["warnings"]
    program.write_text("list(range(3))\n")
    assert main(["exec", str(table), str(program), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["warnings"] == []


@pytest.mark.parametrize("text, says", [("", "the program is empty"),
                                        ('x = df["price"].max()\n', "the program ends with no expression")])
def test_a_program_with_no_answer_statement_says_why_it_answers_none(files, capsys, text, says):
    """`x = df["price"].max()` (the final `x` forgotten) and an empty program file printed `None`
    with exit status 0 and no word of why."""
    table, _, program = files
    program.write_text(text)
    assert main(["exec", str(table), str(program)]) == 0
    out, err = capsys.readouterr()
    assert out.strip() == "None" and says in err
    program.write_text('x = df["price"].max()\nx\n')
    assert main(["exec", str(table), str(program)]) == 0
    out, err = capsys.readouterr()
    assert out.strip() == "80" and err == ""


def test_a_program_in_a_markdown_fence_says_to_keep_only_the_code(files, capsys):
    """A program pasted from a chat answer, fence and all, failed with "syntax error at line 1:
    invalid syntax (line 1, column 0)"."""
    table, _, program = files
    program.write_text('```python\ndf["price"].max()\n```\n')
    assert main(["exec", str(table), str(program)]) == 2
    assert "the program is wrapped in a markdown fence" in capsys.readouterr().err


def test_an_oracle_file_that_answers_one_row_twice_differently_is_refused(files, capsys):
    """{"USA": "yes", "usa ": "no"} name one row (keys match ignoring case and surrounding spaces);
    the later answer was kept without a word."""
    table, oracle, program = files
    oracle.write_text(json.dumps({"f_col": {"Made in North America?": {"USA": "yes", "usa ": "no", "china": "no",
                                                                         "mexico": "yes"}}}))
    assert main(["exec", str(table), str(program), "--neural", f"oracle:{oracle}"]) == 2
    err = capsys.readouterr().err
    assert "answers the row key 'usa' twice, differently: 'USA': 'yes' and 'usa ': 'no'" in err
    oracle.write_text(json.dumps({"f_col": {"Made in North America?": {"USA": "yes", "usa": "yes", "china": "no",
                                                                         "mexico": "yes"}}}))
    assert main(["exec", str(table), str(program), "--neural", f"oracle:{oracle}"]) == 0  # agreeing: one answer
    assert capsys.readouterr().out.strip() == "105"


def test_exec_task_reads_a_benchmark_table_as_eval_does(capsys, tmp_path):
    """A recorded WikiTQ program rerun with exec saw the file's own case (the run had lower-cased
    cells), a repeated WikiTQ header was refused, and a #-separated TabFact table read as one column."""
    wikitq = tmp_path / "1.tsv"
    wikitq.write_text("Film\tFilm\tDirector\nMajor League\tx\tDavid S. Ward\nSkin Deep\ty\tBlake\\nEdwards\n",
                      encoding="utf-8")
    tabfact = tmp_path / "1-2.html.csv"
    tabfact.write_text("team#wins\nLakers#52\nCeltics#57\n", encoding="utf-8")
    program = tmp_path / "p.py"
    program.write_text('[df.columns.tolist(), df[df["Director"] == "david s. ward"]["Film"].tolist(), df.iloc[1, 2]]')
    assert main(["exec", "--task", "wikitq", str(wikitq), str(program)]) == 0
    assert json.loads(capsys.readouterr().out) == [["Film", "Film_2", "Director"], ["major league"],
                                                   "blake\nedwards"]
    assert main(["exec", str(wikitq), str(program)]) == 2  # the repeated header, as a plain file
    program.write_text('df[df["team"] == "lakers"]["wins"].iloc[0]')
    assert main(["exec", "--task", "tabfact", str(tabfact), str(program)]) == 0
    assert capsys.readouterr().out.strip() == "52"
    assert main(["exec", "--task", "tabfact", str(tabfact), str(tabfact), str(program)]) == 2
    assert "reads one benchmark table" in capsys.readouterr().err


@pytest.mark.parametrize("extra, message", [
    (["--neural", "ORACLE", "--no-neural"], "--no-neural runs the program without neural calls, so --neural oracle:"),
    (["--lm", "openai:m@http://127.0.0.1:9/v1", "--no-neural"], "so --lm openai:m@http://127.0.0.1:9/v1 would answer none"),
    (["--neural", "ORACLE", "--lm", "openai:m@http://127.0.0.1:9/v1"], "is not used: the oracle answers every neural call"),
    (["--neural", "lm:openai:a@http://127.0.0.1:9/v1", "--lm", "openai:m@http://127.0.0.1:9/v1"],
     "--lm openai:m@http://127.0.0.1:9/v1 is not used: --neural lm:openai:a@http://127.0.0.1:9/v1 names the model too"),
])
def test_exec_refuses_options_that_would_go_unused(files, capsys, extra, message):
    """--no-neural beside --neural/--lm, and --lm beside an oracle or an lm:SPEC, were accepted and
    one of them silently did nothing (--lm even won over --neural lm:SPEC)."""
    table, oracle, program = files
    argv = [a.replace("ORACLE", f"oracle:{oracle}") for a in extra]
    assert main(["exec", str(table), str(program), *argv]) == 2
    assert message in capsys.readouterr().err


def test_an_infinite_answer_is_inf_in_json_not_null(files, capsys, tmp_path):
    """A division by zero answered `inf`, but `--json` said `"value": null` beside `"ok": true`
    (and a run's records kept null, which reads as "no answer"): JSON has no infinity, so an
    answer's ±inf is now the text "inf"/"-inf"; NaN stays null."""
    table, _, _ = files
    program = tmp_path / "inf.py"
    program.write_text('[df["price"].sum() / 0, -df["price"].sum() / 0, float("nan")]\n')
    assert main(["exec", str(table), str(program)]) == 0
    assert json.loads(capsys.readouterr().out) == ["inf", "-inf", None]
    assert main(["exec", str(table), str(program), "--json"]) == 0
    trace = json.loads(capsys.readouterr().out)
    assert trace["ok"] and trace["value"] == ["inf", "-inf", None]


def test_infinity_as_text_is_only_for_answers():
    from binder_py.jsonable import to_jsonable

    inf = float("inf")
    assert to_jsonable({"score": -inf, "x": [inf]}) == {"score": None, "x": [None]}
    assert to_jsonable(pd.Series([inf, 1.5, -inf]), infinity_as_text=True) == ["inf", 1.5, "-inf"]


def test_a_grouped_answers_labels_are_in_its_json(files, capsys, tmp_path):
    """`exec --json` of `df.groupby("made in")["price"].sum()` gave the sums without their countries (a Series
    is its values in JSON); its labels are now "value_index" (null for a list or the default 0, 1, 2 labels)."""
    from binder_py import Binder
    from binder_py.lm import ScriptedLM

    table, _, _ = files
    program = tmp_path / "grouped.py"
    program.write_text('df.groupby("made in")["price"].sum()\n')
    assert main(["exec", str(table), str(program), "--json"]) == 0
    trace = json.loads(capsys.readouterr().out)
    assert trace["value"] == [10, 25, 80] and trace["value_index"] == ["China", "Mexico", "USA"]
    frame = pd.read_csv(table)
    lm = ScriptedLM(lambda request, purpose: ['df.groupby("made in")["price"].sum()'])
    data = Binder(lm=lm, task="analyst", n=1, mode="python").ask(frame, "total price per country?").to_json()
    assert data["value_index"] == ["China", "Mexico", "USA"]
    lm = ScriptedLM(lambda request, purpose: ['df["price"].tolist()'])
    assert Binder(lm=lm, task="analyst", n=1, mode="python").ask(frame, "prices?").to_json()["value_index"] is None
