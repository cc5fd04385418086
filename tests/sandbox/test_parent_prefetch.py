"""The parent's work on a program's predictable neural calls is bounded by the table, not by the program
(red team 10).

Before a program runs, the parent reads the requests of its predictable ``f_col``/``f_val`` calls from the
table (:func:`binder_py.neural.prefetch.predictable_requests`, for ``execute``'s prefetch and for the
question-level plan), outside every limit of the sandbox. It read the table once per call: a 4 kB program
of 100 ``f_val`` calls with different questions over four columns of a 50,000-row table cost the parent
38 s and 2.4 GB before its first line (``1/0``) failed.
"""
import itertools
import sys

import pandas as pd

from binder_py.language.program import parse_program
from binder_py.neural import prefetch

TABLE = pd.DataFrame({f"c{i}": [f"value {i} {j % 50}" for j in range(200)] for i in range(6)})


def _reads(monkeypatch):
    reads = []
    for name in ("context_rows", "distinct_context_rows"):
        real = getattr(prefetch, name)
        monkeypatch.setattr(prefetch, name, lambda *a, _real=real, **k: reads.append(1) or _real(*a, **k))
    return reads


def test_calls_over_the_same_columns_share_one_read_of_the_table(monkeypatch):
    reads = _reads(monkeypatch)
    program = "1/0\n" + "\n".join(f'f_val("q{i}", ["c0", "c1", "c2", "c3"])\nf_col("p{i}", ["c0"])'
                                  for i in range(100))
    requests = prefetch.predictable_requests(parse_program(program), TABLE)
    assert len(requests) == 200  # every call is still predicted
    assert len(reads) == 2, len(reads)
    assert requests[0].rows == prefetch.build_request("val", "q0", TABLE, ["c0", "c1", "c2", "c3"], 0, None).rows
    assert requests[1].keys == prefetch.build_request("col", "p0", TABLE, ["c0"], 1, None).keys


def test_calls_over_ever_new_columns_are_not_all_predicted(monkeypatch):
    reads = _reads(monkeypatch)
    orders = list(itertools.permutations([f"c{i}" for i in range(6)], 3))[:60]
    program = "\n".join(f'f_col("q", {list(cols)!r})' for cols in orders)
    requests = prefetch.predictable_requests(parse_program(program), TABLE)
    assert len(reads) <= prefetch.PREDICTED_CONTEXTS
    assert len(requests) == prefetch.PREDICTED_CONTEXTS
    assert [r.columns for r in requests] == [list(cols) for cols in orders[:prefetch.PREDICTED_CONTEXTS]]
