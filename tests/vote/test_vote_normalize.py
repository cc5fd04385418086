"""Answer normalisation rules (binder_py.normalize)."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

from binder_py.normalize import NormalizedAnswer, is_yes_no_question, key_text, normalize_answer


def key(value, **kw):
    return normalize_answer(value, **kw).key


# ---------------------------------------------------------------- numbers

@pytest.mark.parametrize("value", [3, 3.0, "3", " 3 ", "3.0", " 3.0 ", "3.", np.int64(3), np.int32(3),
                                   np.float64(3.0), np.float32(3.0), Decimal("3"), Decimal("3.00"),
                                   Fraction(6, 2), "+3", "\u00a03\u2003"])
def test_three_is_one_answer(value):
    ans = normalize_answer(value)
    assert ans.key == ("3",)
    assert not ans.is_empty


def test_number_display_is_simplified_plain_python():
    assert normalize_answer(3.0).display == 3 and type(normalize_answer(3.0).display) is int
    assert type(normalize_answer(np.int64(3)).display) is int
    assert type(normalize_answer(np.float64(2.5)).display) is float
    assert normalize_answer(Decimal("3.10")).display == 3.1
    # strings keep their original (cleaned) form
    assert normalize_answer("  3.0 ").display == "3.0"


def test_thousands_separator():
    assert key("1,234") == key(1234) == ("1234",)
    assert key("1,234,567.5") == key(1234567.5)
    assert key("-1,234") == ("-1234",)
    # malformed groups are not numbers
    assert key("1,23") == ("1,23",)
    assert key("12,34") == ("12,34",)


def test_float_noise_rounded():
    assert key(7.449999999999989) == key(7.45) == key("7.45") == ("7.45",)
    assert key(0.1 + 0.2) == key(0.3)
    assert key(2.9999999999999996) == ("3",)
    assert normalize_answer(7.449999999999989).display == 7.45


def test_float32_read_at_its_precision():
    assert key(np.float32(7.45)) == ("7.45",)
    assert key(np.float16(0.1)) == ("0.1",)


def test_big_and_special_numbers():
    assert key(12345678901.0) == key(12345678901) == ("12345678901",)
    assert key(1e20) == key(10**20)
    assert key(float("inf")) == ("inf",)
    assert key(float("-inf")) == ("-inf",)
    assert key(-0.0) == key(0) == ("0",)
    assert key("1e3") == key(1000)
    assert key("\u22123") == key(-3)  # Unicode minus sign


@pytest.mark.parametrize("text", ["007", "02134", "50%", "$5", "nan", "inf", "1 2", "3 years", "e5"])
def test_not_numbers_stay_strings(text):
    assert key(text) == (text.casefold(),)


# ---------------------------------------------------------------- booleans and yes/no

def test_bools_are_yes_no_always():
    assert key(True) == key(np.bool_(True)) == key("yes") == ("yes",)
    assert key(False) == key(np.False_) == key("No") == ("no",)
    assert normalize_answer(np.bool_(True)).display is True
    # without yes_no, numbers and "true" do not become yes/no
    assert key(1) == ("1",)
    assert key("true") == ("true",)


@pytest.mark.parametrize("value", [True, np.bool_(True), 1, 1.0, np.int64(1), "1", "yes", "Yes.", "YES", "true",
                                   "True", "y", " Y "])
def test_yes_forms(value):
    ans = normalize_answer(value, yes_no=True)
    assert ans.key == ("yes",)
    assert ans.display == "yes"


@pytest.mark.parametrize("value", [False, np.bool_(False), 0, 0.0, "0", "no", "No", "false", "FALSE", "n"])
def test_no_forms(value):
    ans = normalize_answer(value, yes_no=True)
    assert ans.key == ("no",)
    assert ans.display == "no"


def test_yes_no_leaves_other_answers():
    assert key(2, yes_no=True) == ("2",)
    assert key("paris", yes_no=True) == ("paris",)
    assert key(pd.Series([True, True, 1]), yes_no=True) == ("yes",)


# ---------------------------------------------------------------- strings

def test_case_whitespace_trailing_period():
    assert key("  New   York ") == key("new york.") == key("NEW\tYORK") == ("new york",)
    assert normalize_answer("  New   York ").display == "New York"


def test_nfkc():
    assert key("ｆｕｌｌｗｉｄｔｈ") == ("fullwidth",)
    assert key("ﬁsh") == ("fish",)


# ---------------------------------------------------------------- dates

@pytest.mark.parametrize("value", [pd.Timestamp("1998-03-03"), dt.date(1998, 3, 3), dt.datetime(1998, 3, 3),
                                   np.datetime64("1998-03-03"), "1998-03-03", "1998-03-03 00:00:00",
                                   "1998-03-03T00:00:00", " 1998-03-03 00:00 "])
def test_dates(value):
    ans = normalize_answer(value)
    assert ans.key == ("1998-03-03",)


def test_dates_with_time_and_display():
    assert key(pd.Timestamp("1998-03-03 12:30")) == key("1998-03-03T12:30") == key(dt.datetime(1998, 3, 3, 12, 30))
    assert key("1998-03-03 12:30") == ("1998-03-03 12:30:00",)
    assert normalize_answer(pd.Timestamp("1998-03-03")).display == "1998-03-03"
    assert key(dt.datetime(1, 1, 1)) == ("0001-01-01",)  # outside the pandas range: no crash


def test_dates_not_over_parsed():
    assert key("March 3, 1998") == ("march 3, 1998",)
    assert key("3/3/1998") == ("3/3/1998",)
    assert key("1998-02-30") == ("1998-02-30",)  # not a valid date
    assert key("1998") == ("1998",)


def test_timedelta():
    assert key(pd.Timedelta(days=4)) == key(dt.timedelta(days=4))


@pytest.mark.parametrize("value, text", [(dt.time(13, 45), "13:45:00"), (pd.Period("2020-01", "M"), "2020-01"),
                                         (pd.Interval(0, 5), "(0, 5]")])
def test_times_periods_and_intervals_read_as_their_text_not_their_repr(value, text):
    """`df["start"].dt.time.iloc[0]` answered "datetime.time(13, 45)" (a Period "Period('2020-01',
    'M')"), with the note "unrecognised time value: compared by its repr"."""
    answer = normalize_answer(value)
    assert answer.display == text and answer.key == (text,) and answer.note is None


# ---------------------------------------------------------------- empties

@pytest.mark.parametrize("value", [None, float("nan"), np.nan, np.float32("nan"), pd.NA, pd.NaT,
                                   np.datetime64("NaT"), "", "   ", [], (), set(), np.array([]),
                                   pd.Series([], dtype=object), pd.DataFrame(), pd.DataFrame({"a": []}),
                                   [None, float("nan")], Decimal("NaN")])
def test_empty(value):
    ans = normalize_answer(value)
    assert ans.is_empty and ans.key == () and ans.display is None


# ---------------------------------------------------------------- multi-value

def test_list_order_and_duplicates_do_not_matter():
    a = normalize_answer(["b", "a"])
    assert a.key == ("a", "b")
    assert a == normalize_answer(["a", "b", "a"]) == normalize_answer({"b", "a"}) == normalize_answer(("A ", "B"))
    assert a.display == ["b", "a"]  # original order, first occurrence


def test_list_elements_normalised():
    assert key([3.0, "1,234"]) == key(["1234", 3])
    assert key(np.array([1, 2])) == key([2.0, "1"])
    assert key([1, None, 2]) == key([1, 2])


def test_single_element_containers_are_scalars():
    for value in ([3], (3,), {3}, np.array([3]), np.array([[3]]), pd.Series([3]), pd.Index([3]), [[3.0]],
                  pd.DataFrame({"x": [3]}), [3, 3]):
        ans = normalize_answer(value)
        assert ans.key == ("3",), value
        assert ans.display == 3


def test_nested_lists_flattened():
    assert key([[1], [2]]) == key([1, 2]) == key(np.array([[1], [2]]))


def test_series_and_dataframe_shapes():
    assert key(pd.Series(["x", "y"], index=[10, 20])) == ("x", "y")
    one_col = normalize_answer(pd.DataFrame({"a": ["x", "y"]}))
    assert one_col.key == ("x", "y") and one_col.note is None
    wide = normalize_answer(pd.DataFrame({"a": ["x", "y"], "b": [1, 2]}))
    assert wide.key == ("x", "y")
    assert wide.note and "first column" in wide.note
    one_row_wide = normalize_answer(pd.DataFrame({"a": ["x"], "b": [1]}))
    assert one_row_wide.key == ("x",) and one_row_wide.note
    assert key(pd.Series(pd.Categorical(["a", "b"]))) == ("a", "b")


def test_key_text_and_equality():
    assert key_text(()) == ""
    assert key_text(("a",)) == "a"
    assert key_text(("a", "b")) == "a | b"
    assert normalize_answer(["b", "a"]).text == "a | b"
    assert normalize_answer(3) == normalize_answer("3")
    assert hash(normalize_answer(3)) == hash(normalize_answer("3.0"))
    assert normalize_answer(3) != normalize_answer(4)
    assert isinstance(normalize_answer(3), NormalizedAnswer)


# ---------------------------------------------------------------- weird values never crash

class _BadRepr:
    def __repr__(self):
        raise RuntimeError("no repr")


class _BadEverything:
    def __eq__(self, other):
        raise RuntimeError("no eq")

    def __hash__(self):
        raise RuntimeError("no hash")

    def __repr__(self):
        return "BadEverything()"


@pytest.mark.parametrize("value", [object(), {"a": 1}, 1 + 2j, _BadRepr(), _BadEverything(), b"caf\xc3\xa9",
                                   bytearray(b"x"), range(3), Ellipsis, type, lambda: 1,
                                   pd.Interval(0, 1), pd.Period("2020-01"), [object(), {"k": [1]}]])
def test_weird_values_do_not_crash(value):
    ans = normalize_answer(value)
    assert isinstance(ans.key, tuple) and all(isinstance(k, str) for k in ans.key)
    hash(ans.key)
    normalize_answer(value, yes_no=True)


def test_repr_keys_ignore_memory_addresses():
    assert key(object()) == key(object())
    assert normalize_answer(object()).note


def test_bytes_decoded():
    assert key(b"caf\xc3\xa9") == ("café",)


def test_self_referencing_list():
    a: list = [1]
    a.append(a)
    normalize_answer(a)  # no RecursionError


# ---------------------------------------------------------------- yes/no questions

@pytest.mark.parametrize("question", [
    "Is Paris the capital?", "are there at least 13 different components on the chart?",
    "Was he born before 1990?", "Were they champions?", "Do they play at home?", "Does it rain?",
    "Did the team win?", "Can it fly?", "Could it be?", "Has he won?", "Have they won?", "Had it ended?",
    "Will it open?", "Would it?", "Should it?", "  is it?", "Didn’t he win?", "Are there 3 or more teams?",
    "Is it red or not?",
])
def test_yes_no_questions(question):
    assert is_yes_no_question(question)


@pytest.mark.parametrize("question", [
    "How many teams are there?", "What is the capital?", "which is larger?", "Island with most people?",
    "Was the winner from France or Germany?", "Is the river longer or shorter than 5 km, A or B?",
    "Who did it?", "",
])
def test_not_yes_no_questions(question):
    assert not is_yes_no_question(question)
