import math

import numpy as np
import pytest
import pandas as pd

from binder_py.neural.requests import (cell_text, classify, normalize_key, parse_number, row_key, type_column,
                                         type_value)


def test_cell_text_formats_numbers_and_missing():
    assert cell_text(12.0) == "12"
    assert cell_text(np.int64(7)) == "7"
    assert cell_text(12.5) == "12.5"
    assert cell_text(float("nan")) == ""
    assert cell_text(None) == ""
    assert cell_text(pd.NA) == ""
    assert cell_text(pd.Timestamp("2020-01-02")) == "2020-01-02"
    assert cell_text(" a\tb ") == "a b"


def test_row_key_joins_lowercases_strips():
    assert row_key(["Tuxedo Shirt ", " Cotton"]) == "tuxedo shirt | cotton"
    assert normalize_key("Tuxedo Shirt|COTTON ") == "tuxedo shirt | cotton"


def test_parse_number_forms():
    assert parse_number("1,234") == 1234
    assert parse_number("$12") == 12
    assert parse_number("12.5%") == 12.5
    assert parse_number("-3") == -3
    assert parse_number("1,23") is None
    assert parse_number("12 kg") is None


def test_classify_missing_and_bool():
    for text in ["unknown", "N/A", "none", "-", "", "  ", "Unknown."]:
        assert classify(text)[0] == "na", text
    assert classify("Yes") == ("bool", True)
    assert classify("false") == ("bool", False)
    assert classify("no.") == ("bool", False)


def test_type_column_boolean_with_na():
    s = type_column(["yes", "No", "unknown", None])
    assert str(s.dtype) == "yesno"
    assert s.tolist()[:2] == [True, False] and s.isna().tolist() == [False, False, True, True]


def test_type_column_numeric():
    s = type_column(["1,000", "$5", "n/a"])
    assert str(s.dtype) == "Int64" and s.tolist()[:2] == [1000, 5] and s.isna().iloc[2]
    f = type_column(["0.5", "2", None])
    assert str(f.dtype) == "Float64" and f.iloc[0] == 0.5


def test_type_column_strings_keep_text():
    s = type_column(["France", "yes", "12", "unknown"])
    assert str(s.dtype) == "string"
    assert s.tolist()[:3] == ["France", "yes", "12"] and s.isna().iloc[3]


def test_type_column_all_missing_is_boolean_na():
    s = type_column(["unknown", None])
    assert str(s.dtype) == "yesno" and s.isna().all()


def test_type_value():
    assert type_value("Yes") is True
    assert type_value("12") == 12 and isinstance(type_value("12"), int)
    assert type_value("12.5") == 12.5
    assert type_value("unknown") is None
    assert type_value(" Paris ") == "Paris"
    assert type_value("a | b") == ["a", "b"]
    assert type_value(["1", "2"]) == [1, 2]
    assert type_value("unknown | none") is None
    assert type_value(3.0) == 3.0 and not math.isnan(type_value(3.0))


@pytest.mark.parametrize("answers", [
    ["yes", None, "no", "yes"], ["1", "2", None], [], ["x", "Yes ", None], [None, None],
    [1, True, "yes", None, 1.0], [["a"], "b"],
])
def test_typing_distinct_answers_equals_typing_every_answer(answers):
    from binder_py.language.worker.bridge import _type_distinct

    codes, typed = _type_distinct(answers)
    expected = type_column(answers)
    assert str(typed.dtype) == str(expected.dtype)
    assert [str(v) for v in typed.array.take(codes)] == [str(v) for v in expected.array]
