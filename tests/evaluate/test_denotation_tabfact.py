"""answer_to_strings and TabFact scoring."""

import datetime as dt

import numpy as np
import pandas as pd
import pytest

from binder_py.evaluate import answer_to_strings, normalize_tabfact_prediction, tabfact_accuracy, tabfact_match


@pytest.mark.parametrize("value, expected", [
    (None, []),
    (float("nan"), []),
    (pd.NA, []),
    (3, ["3"]),
    (3.0, ["3"]),
    (np.float64(3.0), ["3"]),
    (np.int64(12), ["12"]),
    (7.449999999999989, ["7.449999999999989"]),
    (-0.5, ["-0.5"]),
    (True, ["True"]),
    (np.bool_(False), ["False"]),
    ("  Wolfe Tones ", ["Wolfe Tones"]),
    (pd.Timestamp("2001-01-05"), ["2001-01-05"]),
    (pd.Timestamp("2001-01-05 13:30"), ["2001-01-05 13:30:00"]),
    (dt.date(2001, 1, 5), ["2001-01-05"]),
    (["a", 2.0, None, ["b"]], ["a", "2", "b"]),
    (("x", 1), ["x", "1"]),
    ({"b", "a"}, ["a", "b"]),
    (np.array([1.0, 2.5]), ["1", "2.5"]),
    (pd.Series(["a", "b"], index=[5, 7]), ["a", "b"]),
    (pd.DataFrame({"name": ["a", "b"]}), ["a", "b"]),
    (pd.DataFrame({"n": [3.0]}), ["3"]),
    (pd.DataFrame({"name": ["a"], "year": [1990]}), ["a", "1990"]),
    (pd.DataFrame({"name": ["a", "b"], "year": [1, 2]}), ["a", "1", "b", "2"]),
    ({"answer": 4}, ["4"]),
])
def test_answer_to_strings(value, expected):
    assert answer_to_strings(value) == expected


@pytest.mark.parametrize("value, expected", [
    (True, True), (False, False), (1, True), (0, False), (np.bool_(True), True), (1.0, True),
    ("True", True), ("false", False), ("yes", True), ("No", False), ("entailed", True), ("Refuted", False),
    (" 1 ", True), ("0", False), (["True"], True), (pd.Series([False]), False), (pd.DataFrame({"x": [1]}), True),
    (None, None), ("maybe", None), ([True, False], None), (2, None), ([], None),
])
def test_tabfact_prediction_normalisation(value, expected):
    assert normalize_tabfact_prediction(value) is expected


def test_tabfact_accuracy():
    golds = [["True"], ["False"], True, 0]
    preds = [1, "refuted", "maybe", False]
    assert tabfact_match(["True"], 1)
    assert tabfact_accuracy(golds, preds) == 0.75
    with pytest.raises(ValueError):
        tabfact_accuracy(golds, preds[:2])
    with pytest.raises(ValueError):
        tabfact_match("perhaps", True)
