"""The worker's bridge sends a column context's distinct rows column by column, without a list per
row (``distinct_context_columns``): the same cells, keys and codes as ``context_rows``, and the same
message on the wire."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from binder_py.language.messages import NeuralCallMessage, wire_message
from binder_py.language.messages import rows_to_columns
from binder_py.neural.requests import context_rows, distinct_context_columns
from tests.neural.test_distinct_context_rows import COLUMNS


def _same_as_rows(ctx: pd.DataFrame) -> None:
    rows, keys, codes = context_rows(ctx, distinct=True)
    cells, keys_c, codes_c = distinct_context_columns(ctx)
    assert cells == rows_to_columns(rows, ctx.shape[1])
    assert keys_c == keys
    assert np.array_equal(codes_c, codes)


@pytest.mark.parametrize("name", list(COLUMNS))
def test_same_cells_keys_and_codes_as_context_rows(name: str) -> None:
    _same_as_rows(pd.DataFrame({"c": COLUMNS[name]}))


def test_folded_keys_several_columns_and_empty_tables() -> None:
    _same_as_rows(pd.DataFrame({"city": ["Paris", "PARIS", "Rome", "paris"]}))
    _same_as_rows(pd.DataFrame({"a": [1, 1, 2, 1], "b": ["x", "x", "y", "z"]}))
    _same_as_rows(pd.DataFrame({"a": pd.Series([], dtype="str")}))
    _same_as_rows(pd.DataFrame(index=range(3)))


def test_a_key_is_its_text_when_lower_casing_changes_nothing() -> None:
    cells, keys, _ = distinct_context_columns(pd.DataFrame({"c": ["2020-01-01", "paris", "Rome"]}))
    assert keys == ["2020-01-01", "paris", "rome"]
    assert keys[0] is cells[0][0] and keys[1] is cells[0][1]


def test_wire_message_is_the_message_on_the_wire() -> None:
    rows = (("Paris", "1"), ("Rome", "2"))
    message = NeuralCallMessage(3, "col", "q?", ("city", "n"), rows, ("paris | 1", "rome | 2"), 5)
    wire = wire_message(3, "col", "q?", ["city", "n"], [["Paris", "Rome"], ["1", "2"]], ["paris | 1", "rome | 2"], 5)
    assert wire == message.to_wire()
    assert NeuralCallMessage.from_wire(wire) == message
