"""A program's answer is never compiled into a regular expression in the parent (red team 7).

For a question that offers options ("which year had more venues, 2007 or 2012?") the vote asks
whether each answer is one of the question's options (``names_option``), and did so by compiling
the answer's text, escaped, into a pattern: an answer of 9 million characters (the sandbox returns up
to 100 million) took 21 s and 1 GB of the parent per candidate, and ``re`` kept the compiled
pattern in its cache (512 of them) after the vote.
"""
import re
import time

import pytest

from binder_py.normalize import whole_phrase_in, names_option


@pytest.mark.parametrize("question, value, named", [
    ("which is bigger, kansas or kansas state?", "kansas", True),
    ("which is bigger, kansas or kansas state?", "Kansas State", True),
    ("which is bigger, kansas or kansas state?", "kans", False),
    ("which year had more venues, 2007 or 2012?", 2012, True),
    ("which year had more venues, 2007 or 2012?", 201, False),
    ("was it a_b or c?", "a", False),
    ("was it (a) or [b]?", "(a)", True),
    ("was it é or b?", "é", True),
    ("was it éa or b?", "a", False),
])
def test_options_are_found_as_before(question, value, named):
    assert names_option(question, value) is named


def test_whole_phrase_agrees_with_the_pattern_it_replaces():
    texts = ["a", "a b", "_", "é", "1", "a.", ".a", "-", "ab"]
    questions = ["", "a", "ab", "b a c", "_a_", "a_b a", "xé é", "1a 1", "a. .a", "ba-ab", "a b a b", "-a-"]
    for q in questions:
        for t in texts:
            expected = re.search(r"(?<!\w)" + re.escape(t) + r"(?!\w)", q) is not None
            assert whole_phrase_in(t, q) is expected, (t, q)


def test_a_long_answer_is_not_compiled_into_a_pattern():
    re.purge()
    answer = "a b " * 2_000_000
    start = time.monotonic()
    assert names_option("which is more, a or b?", answer) is False
    assert not [key for key in re._cache if len(str(key[1])) > 10_000], "the answer was compiled into a pattern"
    assert time.monotonic() - start < 30
