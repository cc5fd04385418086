"""WikiTQ official evaluator rules (from the wikitq README)."""

import pytest

from binder_py.evaluate.official import normalize, official_match, parse_date, to_value


@pytest.mark.parametrize("raw, expected", [
    ("Café", "cafe"),                                  # NFKD, combining marks dropped
    ("Mötley Crüe", "motley crue"),
    ("\u2018quoted\u2019", "'quoted'"),                # curly single quotes and ´ `
    ("a`b", "a'b"),
    ("a\u00b4b", "a b"),                             # NFKD runs first: the acute accent becomes a space
    ("1990\u20131991", "1990-1991"),                   # en dash
    ("a\u2014b\u2212c\u2010d\u2011e\u2012f", "a-b-c-d-e-f"),
    ("Paris[1]", "paris"),                             # trailing citation marker
    ("Paris[citation needed]", "paris"),
    ("Paris†", "paris"), ("Paris*", "paris"), ("Paris‡#", "paris"), ("Paris♦•+", "paris"),
    ("oil pressure (56 laps)", "oil pressure"),        # trailing parenthetical
    ("(56 laps)", "(56 laps)"),                        # ...unless the string starts with it
    ('"Hello"', "hello"),                              # outer quotes
    ('\u201cHello\u201d', "hello"),                    # curly double quotes become outer quotes
    ('"Song (remix)"[2]', "song"),                     # repeated until nothing changes
    ("Jr.", "jr"),                                     # one final period
    ("a..", "a."),
    ("  New \n  York  ", "new york"),                  # whitespace collapsed, lowercase
])
def test_normalize(raw, expected):
    assert normalize(raw) == expected


def test_denotation_is_a_set():
    assert official_match(["a", "b"], ["b", "a"])
    assert official_match(["a", "b"], ["b", "a", "a"])        # duplicates removed first
    assert not official_match(["a", "b"], ["a"])               # same size needed
    assert not official_match(["a"], ["a", "b"])
    assert not official_match(["a", "b"], ["a", "c"])


def test_numbers_within_1e_6():
    assert official_match(["7.45"], ["7.449999999999989"])     # Table 9 float precision row
    assert official_match(["3"], ["3.0"])
    assert official_match(["3"], ["3.0000001"])
    assert not official_match(["3"], ["3.00001"])
    assert not official_match(["3"], ["4"])


def test_thousands_separator_needs_target_canon():
    assert not official_match(["12,467"], ["12467"])           # string without targetCanon
    assert official_match(["12,467"], ["12467"], ["12467.0"])  # number with it
    assert official_match(["12,467"], ["12,467"])              # same string still matches


def test_dates():
    assert parse_date("2001-01-05") == (2001, 1, 5)
    assert parse_date("xx-01-05") == (-1, 1, 5)
    assert parse_date("2001-xx-xx") == (2001, -1, -1)
    assert parse_date("xx-xx-xx") is None
    assert parse_date("2001-13-01") is None
    assert parse_date("January 5") is None
    # gold typed by canon: a date; prediction typed from its text
    assert official_match(["January 5, 2001"], ["2001-01-05"], ["2001-01-05"])
    assert not official_match(["January 5, 2001"], ["2001-01-05"])
    assert official_match(["May 5"], ["xx-05-05"], ["xx-05-05"])
    assert not official_match(["May 5"], ["2001-05-05"], ["xx-05-05"])   # xx must match xx


def test_year_only_date_is_a_number():
    value = to_value("1995", "1995-xx-xx")
    assert value.kind == "number" and value.amount == 1995
    assert official_match(["in 1995"], ["1995"], ["1995-xx-xx"])
    assert official_match(["in 1995"], ["1995.0"], ["1995-xx-xx"])


def test_string_values_and_types():
    assert to_value("abc").kind == "string"
    assert to_value("1e3").kind == "number"
    assert to_value("nan").kind == "string"
    assert to_value("1_000").kind == "string"                # Python 2 float() rejects underscores
    assert official_match(["Oil pressure"], ["oil pressure (56 laps)"])  # Table 9 normalisation row
    assert not official_match(["Yes"], ["1"])                 # Table 9 A-or-B row: official fails
    assert not official_match(["4 years"], ["4"])             # Table 9 units row: official fails


def test_multi_value_with_canon():
    assert official_match(["48.4%", "22.52%"], ["22.52", "48.4"], ["48.4", "22.52"])
    assert official_match(["2004", "2005"], ["2005", "2004"], ["2004.0", "2005.0"])
