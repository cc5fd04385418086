"""binder-py data (CLI)."""

from binder_py.cli import main


def test_data_check_ok(data_dir, capsys):
    assert main(["data", "--data-dir", str(data_dir)]) == 0
    out = capsys.readouterr().out
    assert "2831 rows (expected 2831)" in out and "1998 statements" in out and "767 of 767" in out
    assert "All required files present" in out


def test_data_check_missing(tmp_path, capsys):
    (tmp_path / "wikitq" / "data").mkdir(parents=True)
    (tmp_path / "wikitq" / "data" / "random-split-1-dev.tsv").write_text("id\tutterance\tcontext\ttargetValue\n")
    assert main(["data", "--data-dir", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "0 rows (expected 2831)" in out
    assert "MISSING" in out and "tabfact" in out
    assert "github.com/ppasupat/WikiTableQuestions" in out and "Table-Fact-Checking" in out


def test_data_dir_absent(tmp_path, capsys):
    assert main(["data", "--data-dir", str(tmp_path / "nope")]) == 1
    captured = capsys.readouterr()
    assert "does not exist" in captured.err
    assert "WikiTableQuestions v1.0.2" in captured.out
    assert "Looked in" not in captured.err  # it named the default folders, which were not looked at


def test_no_data_dir_found_names_where_it_looked(tmp_path, monkeypatch, capsys):
    from binder_py.datasets import common

    monkeypatch.delenv("BINDER_DATA", raising=False)
    monkeypatch.setattr(common, "candidate_data_dirs", lambda: [tmp_path / "a", tmp_path / "b"])
    assert main(["data"]) == 1
    err = capsys.readouterr().err
    assert f"looked in {tmp_path / 'a'}, {tmp_path / 'b'}" in err and err.count(str(tmp_path / "a")) == 1


def test_data_dir_that_is_a_file(tmp_path, capsys):
    """--data-dir FILE was reported as "does not exist"."""
    a_file = tmp_path / "data.csv"
    a_file.write_text("a\n1\n")
    assert main(["data", "--data-dir", str(a_file)]) == 1
    err = capsys.readouterr().err
    assert "is a file, not a directory" in err and "does not exist" not in err


def test_data_check_of_a_crafted_directory_is_lines_not_tracebacks(tmp_path, capsys):
    """Red team 12: a received data directory made `binder-py data` end in a traceback (a context of one
    part: IndexError; a byte that is not UTF-8: UnicodeDecodeError; a deeply nested TabFact file:
    RecursionError), and its contexts and table ids named files outside the folder that it looked at."""
    (tmp_path / "wikitq" / "data").mkdir(parents=True)
    (tmp_path / "wikitq" / "data" / "random-split-1-dev.tsv").write_bytes(
        b"id\tutterance\tcontext\ttargetValue\nnu-0\tq\tabc\tx\xff\nnu-1\tq\t../../../../etc/hostname.csv\tx\n")
    (tmp_path / "tabfact" / "tokenized_data").mkdir(parents=True)
    (tmp_path / "tabfact" / "tokenized_data" / "small_test_examples.json").write_text("[" * 100_000 + "]" * 100_000)
    assert main(["data", "--data-dir", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "0 of 2 referenced tables present" in out and "nested deeper" in out
    (tmp_path / "tabfact" / "tokenized_data" / "small_test_examples.json").write_text(
        '{"/etc/hostname": [["s"], [1], "c"], "x": {"a": 1}}')
    assert main(["data", "--data-dir", str(tmp_path)]) == 1
    assert "small_test_examples.json" in capsys.readouterr().out
