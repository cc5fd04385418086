"""WikiTQ loader on the real shared data (skipped when the data is absent)."""

import pytest

from binder_py.datasets import DATASETS, load_dataset, load_wikitq, resolve_data_dir
from binder_py.datasets.wikitq import load_wikitq_table, read_wikitq_table, split_answer, unescape
from binder_py.errors import BinderError


def test_unescape_and_split():
    assert unescape(r"a\nb") == "a\nb"
    assert unescape(r"a\pb") == "a|b"
    assert unescape(r"a\\b") == "a\\b"
    assert unescape(r"a\\pb") == "a\\pb"      # escaped backslash followed by a plain p
    assert unescape(r"a\\\nb") == "a\\\nb"
    assert unescape(r"C:\x") == r"C:\x"       # unknown escapes stay
    assert split_answer(r"Siim|Andri") == ["Siim", "Andri"]
    assert split_answer(r"a\pb|c\nd|e\\f") == ["a|b", "c\nd", "e\\f"]   # split on | first, then unescape


@pytest.mark.parametrize("split, count", [
    ("dev", 2831), ("test", 4344), ("unsolvable-squall", 625), ("unsolvable-binder", 1251),
    ("solvable-squall", 2206), ("solvable-binder", 1580),
])
def test_split_counts(data_dir, split, count):
    examples = load_wikitq(split, data_dir)
    assert len(examples) == count
    assert len({e.id for e in examples}) == count


def test_subsets_partition_dev(data_dir):
    dev = load_wikitq("dev", data_dir)
    has_squall = set((data_dir / "wikitq/squall/random-split-1-dev.has-squall.ids").read_text().split())
    assert {e.id for e in dev if "solvable-squall" in e.subsets} == has_squall
    for e in dev:
        assert "dev" in e.subsets
        assert ("solvable-squall" in e.subsets) != ("unsolvable-squall" in e.subsets)
        assert ("solvable-binder" in e.subsets) != ("unsolvable-binder" in e.subsets)
        if "unsolvable-squall" in e.subsets:   # all 625 SQUALL-missing ids are Binder-unsolvable
            assert "unsolvable-binder" in e.subsets
        assert e.gold_canon is None
    assert all(e.subsets == {"test"} for e in load_wikitq("test", data_dir))


def test_dev_examples(data_dir):
    dev = {e.id: e for e in load_wikitq("dev", data_dir)}
    e = dev["nt-2"]
    assert e.question == "which team won previous to crettyard?"
    assert e.gold == ["Wolfe Tones"]
    assert e.title == "Leinster Intermediate Club Football Championship"
    assert e.table_path.endswith("csv/204-csv/772.tsv")
    assert dev["nt-9"].gold == ["Siim Ennemuist", "Andri Aganits"]        # multi-value answer
    assert dev["nt-195"].gold == ["Julie Covington", "Pussyfoot", "Andy Gibb"]
    assert sum(len(x.gold) > 1 for x in dev.values()) == 89                # README: 89 multi-value dev answers
    assert dev["nt-3"].gold == ["12,467"]


def test_test_split_canonical_values(data_dir):
    test = {e.id: e for e in load_wikitq("test", data_dir)}
    assert test["nu-1"].gold == ["100,000"] and test["nu-1"].gold_canon == ["100000.0"]
    assert test["nu-10"].gold == ["2004", "2005", "2006"]
    assert test["nu-10"].gold_canon == ["2004.0", "2005.0", "2006.0"]
    assert sum(len(x.gold) > 1 for x in test.values()) == 115
    assert all(x.gold_canon is not None for x in test.values())


def test_table_escapes_in_dev_table(data_dir):
    # csv/204-csv/281 (dev) has \n and \p inside cells
    table = load_wikitq_table(data_dir / "wikitq/csv/204-csv/281.tsv")
    row = table[table["Creator"] == "Hu Lan (斛蘭)"].iloc[0]
    assert row["Map or catalog"] == "Northern Wei Period Iron Armillary Sphere\n(鐵渾儀)"
    assert row["Time created"] == "Bei Wei|level being used in this kind of device"
    assert any("Zhang Sui|683–727 AD" in str(v) for v in table["Creator"])


def test_table_backslash_escape(data_dir):
    table = load_wikitq_table(data_dir / "wikitq/csv/203-csv/128.tsv")   # test split table of C escapes
    assert table["C string"].tolist()[:3] == ["\\0", "\\a", "\\b"]


def test_duplicate_and_multiline_headers(data_dir):
    medals = load_wikitq_table(data_dir / "wikitq/csv/202-csv/277.tsv")
    assert list(medals.columns) == ["Event", "Gold", "Gold_2", "Silver", "Silver_2", "Bronze", "Bronze_2"]
    lines = load_wikitq_table(data_dir / "wikitq/csv/202-csv/176.tsv")
    assert list(lines.columns) == ["Line", "Year opened", "Termini", "Termini_2"]
    blank = load_wikitq_table(data_dir / "wikitq/csv/202-csv/258.tsv")
    assert list(blank.columns)[:4] == ["column_1", "1980", "1975", "1975_2"]


def test_csv_and_tsv_agree(data_dir):
    for rel in ("csv/204-csv/281", "csv/202-csv/277", "csv/204-csv/772"):
        a = read_wikitq_table(data_dir / "wikitq" / (rel + ".tsv"))
        b = read_wikitq_table(data_dir / "wikitq" / (rel + ".csv"))
        assert list(a.columns) == list(b.columns)
        assert a.astype(str).map(lambda s: " ".join(s.split())).equals(b.astype(str).map(lambda s: " ".join(s.split())))


def test_table_typing_and_cache(data_dir):
    e = next(x for x in load_wikitq("dev", data_dir) if x.id == "nt-2")
    table = e.load_table()
    assert str(table["Wins"].dtype) == "int64"
    assert list(table.index[:3]) == [0, 1, 2]
    table.loc[0, "Team"] = "changed"                 # callers get a copy; the cache is not modified
    assert e.load_table().loc[0, "Team"] == "Greystones"


def test_load_dataset_and_errors(data_dir, tmp_path, monkeypatch):
    assert set(DATASETS) == {"wikitq", "tabfact"}
    assert len(load_dataset("wikitq", "unsolvable-squall", data_dir)) == 625
    with pytest.raises(BinderError, match="unknown WikiTQ split"):
        load_wikitq("train", data_dir)
    with pytest.raises(BinderError, match="unknown dataset"):
        load_dataset("spider")
    with pytest.raises(BinderError, match="does not exist.*binder-py data"):
        load_wikitq("dev", tmp_path / "nowhere")
    with pytest.raises(BinderError, match="no 'wikitq' folder"):
        load_wikitq("dev", tmp_path)
    monkeypatch.setenv("BINDER_DATA", str(data_dir))
    assert resolve_data_dir() == data_dir.resolve()
    monkeypatch.setenv("BINDER_DATA", str(tmp_path / "nowhere"))
    with pytest.raises(BinderError, match="BINDER_DATA"):
        resolve_data_dir()


def test_not_found_message(tmp_path, monkeypatch):
    monkeypatch.delenv("BINDER_DATA", raising=False)
    monkeypatch.setattr("binder_py.datasets.common.candidate_data_dirs", lambda: [tmp_path / "a", tmp_path / "b"])
    with pytest.raises(BinderError, match="cannot find the 'wikitq' data.*--data-dir.*binder-py data"):
        resolve_data_dir(None, "wikitq")
