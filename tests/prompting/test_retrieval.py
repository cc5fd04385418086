import pytest

from binder_py.errors import BinderError
from binder_py.prompting.retrieval import select_exemplars, sentence_bleu, tokenize


def test_fixed_is_file_order(exemplars, table):
    chosen = select_exemplars(exemplars, "anything", table, k=3, strategy="fixed")
    assert [e.id for e in chosen] == ["ex-squad", "ex-mountains", "ex-elections"]


@pytest.mark.parametrize("strategy", ["bm25", "bleu"])
def test_most_similar_last(exemplars, table, strategy):
    chosen = select_exemplars(exemplars, "which peak is the highest mountain?", table, k=4, strategy=strategy)
    assert chosen[-1].id == "ex-mountains"
    assert len(chosen) == 4
    chosen = select_exemplars(exemplars, "how many players came from clubs in spain?", table, k=2,
                              strategy=strategy)
    assert [e.id for e in chosen][-1] == "ex-squad" and len(chosen) == 2


def test_bm25_uses_column_names(exemplars):
    import pandas as pd

    peaks_like = pd.DataFrame({"peak": ["a"], "height": [1], "country": ["x"]})
    chosen = select_exemplars(exemplars, "list them", peaks_like, k=2, strategy="bm25")
    assert chosen[-1].id == "ex-mountains"


def test_python_mode_excludes_neural(exemplars, table):
    chosen = select_exemplars(exemplars, "how many players came from clubs based in italy?", table, k=4,
                              strategy="bm25", mode="python")
    assert {e.id for e in chosen} == {"ex-mountains", "ex-cities"}
    assert all(not e.uses_neural for e in chosen)


def test_no_overlap_keeps_file_order(exemplars, table):
    chosen = select_exemplars(exemplars, "zzz qqq", None, k=2, strategy="bleu")
    assert [e.id for e in chosen] == ["ex-squad", "ex-mountains"]


def test_callable_strategy_and_errors(exemplars, table):
    chosen = select_exemplars(exemplars, "q", table, k=2, strategy=lambda q, t, e: len(e.question))
    assert [e.id for e in chosen] == ["ex-squad", "ex-cities"]  # longest question last
    with pytest.raises(BinderError, match="unknown exemplar selection"):
        select_exemplars(exemplars, "q", table, k=2, strategy="embeddings")
    with pytest.raises(BinderError, match="unknown mode"):
        select_exemplars(exemplars, "q", table, k=2, mode="sql")
    assert select_exemplars([], "q", table, k=3) == []


def test_sentence_bleu():
    a = tokenize("which peak is the highest?")
    assert sentence_bleu(a, a) == pytest.approx(1.0)
    assert sentence_bleu(a, tokenize("nothing shared here")) == 0.0
    assert 0 < sentence_bleu(a, tokenize("which river is the longest?")) < sentence_bleu(a, tokenize("which peak is highest"))
