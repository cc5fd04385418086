"""Binder's semantic match (paper appendix A.5, Table 9) and its extra rules."""

import pytest

from binder_py.evaluate.semantic import choice_options, parse_date_text, parse_number_text, semantic_match

# Table 9 rows: (question, gold, prediction)
TABLE_9 = [
    ("What was the same problem that Bernard Collomb had as Innes Ireland?", ["oil pressure"], ["oil pressure (56 laps)"]),
    ("What is the difference between the qualifying time in 1967 and 1965?", ["7.45"], ["7.449999999999989"]),
    ("Are there at least 13 different components on the chart?", ["Yes"], ["1"]),
    ("What is the difference in years between constiuency 1 and 2?", ["4 years"], ["4"]),
]


@pytest.mark.parametrize("question, gold, pred", TABLE_9)
def test_table_9_rows_match(question, gold, pred):
    assert semantic_match(question, gold, pred)


def test_yes_no_against_1_0_and_booleans():
    q = "is the team based in ohio?"
    for pred in ("1", "True", "true", "yes", "1.0"):
        assert semantic_match(q, ["Yes"], [pred])
        assert not semantic_match(q, ["No"], [pred])
    for pred in ("0", "False", "no"):
        assert semantic_match(q, ["No"], [pred])
        assert not semantic_match(q, ["Yes"], [pred])


def test_a_or_b_choice():
    q = "Was the attendance higher in 1990 or 1991?"
    assert choice_options(q) == ("was the attendance higher in 1990", "1991")
    assert semantic_match(q, ["1990"], ["1"])       # 1 <-> first option
    assert semantic_match(q, ["1991"], ["0"])       # 0 <-> second option
    assert semantic_match(q, ["1990"], ["True"])
    assert not semantic_match(q, ["1990"], ["0"])
    assert not semantic_match(q, ["1991"], ["1"])
    assert not semantic_match(q, ["1990"], ["yes"])  # yes/no do not pick an option
    q2 = "who finished first, the Chicago Bears or Green Bay?"
    assert semantic_match(q2, ["Chicago Bears"], ["1"])
    assert semantic_match(q2, ["Green Bay"], ["0"])
    assert not semantic_match("who finished first?", ["Chicago Bears"], ["1"])  # no "or": no choice


def test_numbers_with_units():
    assert parse_number_text("4 years") == (4.0, 0, True)
    assert parse_number_text("12,467") == (12467.0, 0, False)
    assert parse_number_text("48.4%") == (48.4, 1, True)
    assert semantic_match("q", ["4 years"], ["4"])
    assert semantic_match("q", ["4"], ["4 years"])
    assert semantic_match("q", ["3.5 km"], ["3.5"])
    assert semantic_match("q", ["48.4%"], ["48.4"])
    assert semantic_match("q", ["$1,000"], ["1000"])
    assert semantic_match("q", ["12,467"], ["12467"])      # dev split has no targetCanon
    assert not semantic_match("q", ["4 years"], ["5"])
    assert not semantic_match("q", ["4 years"], ["4 months"])  # different units
    assert not semantic_match("q", ["5 January"], ["5"])    # a date, not a number with a unit


def test_float_precision():
    assert semantic_match("q", ["7.45"], ["7.449999999999989"])
    assert semantic_match("q", ["33.3"], ["33.333333333333336"])  # rounded to the gold's decimals
    assert semantic_match("q", ["0.5"], ["0.50"])
    assert not semantic_match("q", ["7.45"], ["7.46"])
    assert not semantic_match("q", ["7"], ["7.4"])                # integer gold: no rounding
    assert not semantic_match("q", ["33.3"], ["33.36"])


@pytest.mark.parametrize("text, ymd", [
    ("2001-01-05", (2001, 1, 5)),
    ("January 5, 2001", (2001, 1, 5)),
    ("january 5 2001", (2001, 1, 5)),
    ("Jan. 5th, 2001", (2001, 1, 5)),
    ("5 January 2001", (2001, 1, 5)),
    ("the 5th of January, 2001", (2001, 1, 5)),
    ("1/5/2001", (2001, 1, 5)),
    ("2001/01/05", (2001, 1, 5)),
    ("2001-01-05 00:00:00", (2001, 1, 5)),
    ("Sept 3, 1999", (1999, 9, 3)),
    ("January 2001", (2001, 1, -1)),
    ("May 5", (-1, 5, 5)),
    ("5 May", (-1, 5, 5)),
    ("xx-05-05", (-1, 5, 5)),
    ("2001", (2001, -1, -1)),
    ("oil pressure", None),
    ("13/40/2001", None),
])
def test_date_recogniser(text, ymd):
    assert parse_date_text(text) == ymd


def test_dates_in_several_forms():
    assert semantic_match("when?", ["January 5, 2001"], ["2001-01-05"])
    assert semantic_match("when?", ["5 January 2001"], ["January 5, 2001"])
    assert semantic_match("when?", ["May 5"], ["xx-05-05"])
    assert semantic_match("when?", ["March 1999"], ["1999-03"])
    assert not semantic_match("when?", ["January 5, 2001"], ["2001-01-06"])
    assert not semantic_match("when?", ["May 5"], ["2001-05-05"])


def test_normalization():
    assert semantic_match("q", ["oil pressure"], ["Oil Pressure (56 laps)"])
    assert semantic_match("q", ["The Beatles"], ["beatles"])       # leading article
    assert semantic_match("q", ["U.S."], ["US"])                   # punctuation
    assert not semantic_match("q", ["oil pressure"], ["gearbox"])


def test_multi_value_and_sizes():
    assert semantic_match("q", ["Siim Ennemuist", "Andri Aganits"], ["andri aganits", "siim ennemuist"])
    assert semantic_match("q", ["2 years", "3 years"], ["3", "2"])
    assert not semantic_match("q", ["a", "b"], ["a"])
    assert not semantic_match("q", ["a"], [])
    assert not semantic_match("q", ["Yes", "No"], ["1"])


def test_canon_is_used():
    assert semantic_match("q", ["100,000"], ["100000"], ["100000.0"])
    assert semantic_match("q", ["about 100k"], ["100000"], ["100000.0"])
