"""The official evaluator's port: generated cases per rule, and the Python 2 quirks it keeps."""

import pytest

import wikitq_cases as cases
from binder_py.evaluate.official import normalize, official_match, parse_date, parse_number, to_value, to_value_list

OFFICIAL_RULES = [rule.name for rule in cases.RULES if "official" in rule.expected]


@pytest.mark.parametrize("rule", OFFICIAL_RULES)
def test_generated_cases(generated, rule):
    found = generated(rule, 40)
    wrong = [(c.gold, c.prediction, c.canon) for c in found
             if official_match(c.gold, c.prediction, c.canon) != c.expected["official"]]
    assert not wrong, f"{len(wrong)}/{len(found)} judged against the original's rules, e.g. {wrong[:3]}"


@pytest.mark.parametrize("raw, expected", [
    ("Café", "cafe"),                                  # NFKD, combining marks dropped
    ("\u2018quoted\u2019", "'quoted'"),                # curly single quotes, backtick
    ("a`b", "a'b"),
    ("a\u00b4b", "a b"),                               # NFKD runs first: the acute accent becomes a space
    ("a\u2014b\u2212c\u2010d\u2011e\u2012f", "a-b-c-d-e-f"),
    ("Paris[1]", "paris"), ("Paris[citation needed]", "paris"), ("Paris†", "paris"), ("Paris♦•+*#", "paris"),
    ("[1]", ""),                                       # [digits] goes even at the start
    ("[note]", "[note]"),                              # [text] only when not at the start
    ("[\u0661]", "[\u0661]"),                         # Python 2's \d is ASCII only
    ("oil pressure (56 laps)", "oil pressure"),        # trailing parenthetical ...
    ("a (b) (c)", "a"),                                # ... all of them
    ("a (b (c)", "a"),                                 # [^)]* may hold an opening parenthesis
    ("(56 laps)", "(56 laps)"),                        # not at the start
    ('"Hello"', "hello"), ('\u201cHello\u201d', "hello"),
    ('"Say "hi""', '"say "hi""'),                      # outer quotes stay when a quote is inside
    ('"Song (remix)"[2]', "song"),                     # repeated until nothing changes
    ("Jr.", "jr"), ("a..", "a."),
    ("  New \n  York  ", "new york"),
    ("\u039f\u0394\u039f\u03a3", "\u03bf\u03b4\u03bf\u03c3"),  # Python 2 lowercases without the final-sigma rule
])
def test_normalize(raw, expected):
    assert normalize(raw) == expected


def test_python3_dialect_is_binders_copy():
    assert normalize("\u039f\u0394\u039f\u03a3", "python3") == "\u03bf\u03b4\u03bf\u03c2"
    assert normalize("[\u0661]", "python3") == ""
    assert parse_number("1_000") is None and parse_number("1_000", "python3") == 1000


def test_number_typing():
    assert parse_number("12") == 12 and parse_number(" 12 ") == 12 and parse_number("\u0661\u0662") == 12
    assert parse_number("1e3") == 1000.0 and parse_number("+5") == 5
    for text in ("inf", "nan", "1,000", "0x10", "12L", "\u00b2"):
        assert parse_number(text) is None
    assert to_value("9.999999999999988").key == 9        # int() truncates a near-integer
    assert to_value("10.000000000000002").key == 10
    assert to_value("-2.9999999999").key == -2            # toward zero
    assert to_value("2.5").key == 2.5


def test_dates_and_years():
    assert parse_date("2001-01-05") == (2001, 1, 5)
    assert parse_date("xx-01-05") == (-1, 1, 5) and parse_date("xxxx-01-05") == (-1, 1, 5)
    assert parse_date("XX-XX-2") == (-1, -1, 2)
    assert parse_date("xx-xx-xx") is None and parse_date("2001-13-01") is None and parse_date("1-2") is None
    assert to_value("1995", "1995-xx-xx").kind == "number"        # a date with only a year is a number
    assert official_match(["in 1995"], ["1995"], ["1995-xx-xx"])
    assert official_match(["May 5"], ["xx-05-05"], ["xx-05-05"])
    assert not official_match(["May 5"], ["2001-05-05"], ["xx-05-05"])   # xx matches only xx


def test_canonical_values():
    assert official_match(["12,467"], ["12467"], ["12467.0"]) and not official_match(["12,467"], ["12467"])
    assert official_match(["12,467"], ["12,467"], [""])      # an empty canon falls back to the raw text
    assert to_value("", "5").normalized == "5"                 # a number with no original shows its amount
    assert to_value("", "2.5").normalized == "2.5"
    assert to_value("", "2001-02-xx").normalized == "2001-2--1"  # the original's format bug kept
    with pytest.raises(ValueError, match="one per value"):
        official_match(["a", "b"], ["a", "b"], ["a"])


def test_duplicates_keep_the_first():
    assert [v.normalized for v in to_value_list(["1", "1.0"])] == ["1"]
    assert [v.normalized for v in to_value_list(["1.0", "1"])] == ["1.0"]
    assert official_match(["1 [2]"], ["1", "1.0"])             # the kept "1" matches the string "1"
    assert not official_match(["1 [2]"], ["1.0", "1"])         # the kept "1.0" does not
    assert official_match(["a", "b"], ["b", "a", "A"])


# --- the citation and parentheses patterns, in linear time ----------------------------------

_ORIGINAL_CITATIONS = {"python2": r"((?<!^)\[[^\]]*\]|\[[0-9]+\]|[•♦†‡*#+])*$",
                       "python3": r"((?<!^)\[[^\]]*\]|\[\d+\]|[•♦†‡*#+])*$"}
_ORIGINAL_PARENTHESES = r"(?<!^)( \([^)]*\))*$"


def test_the_citation_and_parentheses_steps_are_the_original_patterns():
    import random
    import re

    from binder_py.evaluate.official import _strip_citations, _strip_parentheses

    rng = random.Random(7)
    alphabet = "[]()1٣ a*#x\n"
    for _ in range(20000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12)))
        for dialect, pattern in _ORIGINAL_CITATIONS.items():
            assert _strip_citations(text, dialect) == re.sub(pattern, "", text), (text, dialect)
        assert _strip_parentheses(text) == re.sub(_ORIGINAL_PARENTHESES, "", text), text


@pytest.mark.parametrize("text", [
    "a" + "[1]" * 20000 + "x",  # the original pattern: 40 of these ran for hours (exponential backtracking)
    "a" + " (a)" * 50000 + "x",  # quadratic
    "[" * 100000, "a" + "[]" * 50000,
])
def test_normalize_takes_linear_time_on_crafted_text(text):
    import time

    from binder_py.evaluate.official import normalize

    start = time.perf_counter()
    normalize(text)
    normalize(text, "python3")
    assert time.perf_counter() - start < 5
