"""TabFact small-test loader on the real shared data."""

from binder_py.datasets import load_tabfact
from binder_py.datasets.tabfact import read_tabfact_table


def test_counts_and_labels(data_dir):
    examples = load_tabfact("test-small", data_dir)
    assert len(examples) == 1998
    assert len({e.table_path for e in examples}) == 298
    assert sum(e.label for e in examples) == 989
    assert all(e.gold == (["True"] if e.label else ["False"]) for e in examples)
    first = examples[0]
    assert first.id == "1-24560733-1.html.csv/0"
    assert first.question == "the wildcat keep the oppose team scoreless in 4 game"
    assert first.title == "1947 kentucky wildcats football team"
    assert first.dataset == "tabfact" and first.subsets == {"test-small"}


def test_table(data_dir):
    examples = load_tabfact("test-small", data_dir)
    table = examples[0].load_table()
    assert list(table.columns) == ["game", "date", "opponent", "result", "wildcats points", "opponents", "record"]
    assert str(table["game"].dtype) == "int64"
    assert table["record"].iloc[3] == "3 - 1 , 20"


def test_hash_separated(tmp_path):
    p = tmp_path / "t.csv"
    p.write_text("a#b#a\n1#x,y#\n", encoding="utf-8")
    table = read_tabfact_table(p)
    assert list(table.columns) == ["a", "b", "a_2"]
    assert table["b"].tolist() == ["x,y"] and table["a"].tolist() == [1]
