"""The parent plans a request from a column's distinct values alone (no row-sized codes):
it must give exactly the rows and keys the worker's bridge computes from every row."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from binder_py.neural.requests import context_keys, context_rows, distinct_context_rows

COLUMNS = {
    "int": [3, 1, 3, 2, 1],
    "float with NaN": [1.0, np.nan, 2.5, np.nan, 1.0],
    "integral floats": [1.0, 2.0, 1.0, 3.5, 2.0],
    "str with None and case": ["Paris", None, "paris", "Rome ", "Paris"],
    "arrow str with tab": pd.array(["a", None, "A", "b\tc", "a"], dtype="str"),
    "python str": pd.array(["a", None, "A", "b", "a"], dtype=pd.StringDtype("python")),
    "bool": [True, False, True, True, False],
    "nullable bool": pd.array([True, None, False, True, None], dtype="boolean"),
    "Int64": pd.array([1, None, 2, 1, None], dtype="Int64"),
    "datetime": pd.to_datetime(["2020-01-01", None, "2020-01-01 10:00", "2021-01-01", None], format="mixed"),
    "datetime tz": pd.to_datetime(["2020-01-01", None, "2020-01-01 10:00", "2021-01-01", None],
                                  format="mixed").tz_localize("UTC"),
    "timedelta": pd.to_timedelta([1, 2, 1, None, 3], unit="D"),
    "categorical": pd.Categorical(["x", "y", "x", None, "X"]),
    "mixed objects": [1, 1.0, "1", True, None],
    "objects with NaN": pd.Series([1.5, None, np.nan, 1.5, "x"], dtype=object),
    "all None": pd.Series([None] * 5, dtype=object),
    "periods": pd.period_range("2020-01", periods=5, freq="M").tolist(),
}


@pytest.mark.parametrize("name", list(COLUMNS))
def test_same_rows_and_keys_as_from_every_row(name: str) -> None:
    ctx = pd.DataFrame({"c": COLUMNS[name]})
    rows, keys, _codes = context_rows(ctx, distinct=True)
    assert distinct_context_rows(ctx) == (rows, keys)
    assert context_keys(ctx) == set(keys)  # the keys alone, vectorised for one column


def test_keys_that_fold_together_keep_the_first_row() -> None:
    ctx = pd.DataFrame({"city": ["Paris", "PARIS", "Rome", "paris"]})
    assert distinct_context_rows(ctx) == ([["Paris"], ["Rome"]], ["paris", "rome"])


def test_several_columns_and_empty_tables() -> None:
    two = pd.DataFrame({"a": [1, 1, 2, 1], "b": ["x", "x", "y", "z"]})
    assert distinct_context_rows(two) == context_rows(two, distinct=True)[:2]
    assert context_keys(two) == set(context_rows(two, distinct=True)[1])
    empty = pd.DataFrame({"a": pd.Series([], dtype="str")})
    assert distinct_context_rows(empty) == context_rows(empty, distinct=True)[:2]


def test_an_arrow_text_column_has_the_keys_its_rows_have() -> None:
    """context_keys reads an Arrow-backed text column with Arrow's kernels: the same keys as row by row,
    for white space Python strips (\\x1c), non-ASCII lower-casing ('İ', 'ß'), missing cells."""
    column = pd.Series(["  A\tb ", None, "ÉCOLE", "x\n", "İstanbul", "ß", "\x1cq\x1d", " Z ", "z"], dtype="str")
    ctx = pd.DataFrame({"c": column})
    assert context_keys(ctx) == set(context_rows(ctx, distinct=True)[1])


def test_the_table_keys_are_computed_once_for_the_programs_that_share_a_cache() -> None:
    from binder_py.neural import NeuralCache

    cache, table, computed = NeuralCache(), pd.DataFrame({"a": ["x", "y"]}), []

    def compute() -> frozenset[str]:
        computed.append(1)
        return frozenset(context_keys(table[["a"]]))

    assert cache.table_keys(table, ("a",), compute) == {"x", "y"}
    assert cache.table_keys(table, ("a",), compute) == {"x", "y"} and len(computed) == 1
    other = table.copy()  # another table (even an equal one) is computed for itself
    assert cache.table_keys(other, ("a",), compute) and len(computed) == 2


def test_rows_whose_cells_hold_the_separator_keep_their_own_keys() -> None:
    """Joined with " | " as they were, ("a | b", "c") and ("a", "b | c") had one key, so one answer: a
    pipe or backslash in a cell of a several-column row is escaped in its key."""
    from binder_py.neural.requests import normalize_key, row_key

    two = pd.DataFrame({"name": ["a | b", "a", "x\\", "x"], "note": ["c", "b | c", "| y", "\\| y"]})
    rows, keys, codes = context_rows(two, distinct=True)
    assert len(set(keys)) == 4 and codes.tolist() == [0, 1, 2, 3]
    assert keys[:2] == ["a \\| b | c", "a | b \\| c"]
    assert distinct_context_rows(two) == (rows, keys) and context_keys(two) == set(keys)
    assert [normalize_key(k) for k in keys] == keys  # an oracle file writes the escaped keys as they are
    assert row_key(["a | b"]) == "a | b"  # one cell: no separator, nothing escaped
    assert row_key(["Paris", "France"]) == "paris | france"  # cells without a pipe: keys as before

