"""Binder's eval_ex_match (semantic mode): generated cases per rule, and its normaliser."""

import pytest

import wikitq_cases as cases
from binder_py.evaluate.binder import binder_match, str_normalize

BINDER_RULES = [rule.name for rule in cases.RULES if "binder" in rule.expected]


@pytest.mark.parametrize("rule", BINDER_RULES)
def test_generated_cases(generated, rule):
    found = generated(rule, 4)  # the recogniser takes ~20 ms a value
    wrong = [(c.question, c.gold, c.prediction) for c in found
             if binder_match(c.question, c.gold, c.prediction) != c.expected["binder"]]
    assert not wrong, f"{len(wrong)}/{len(found)} judged against Binder's rules, e.g. {wrong[:3]}"


@pytest.mark.parametrize("text, normalized", [
    ("two", "2"), ("12,467", "12467"), ("14.0%", "14%"), ("june 5, 2017", "2017-6-5"),
    ("4 years", "P4Y"), ("1991/92", "1991/92"), ("a\\nb", "a; b"), ("wolfe tones", "wolfe tones"),
])
def test_str_normalize(text, normalized):
    assert str_normalize(text) == normalized


def test_choice_rule_reads_single_tokens():
    assert binder_match("Is it red or blue?", ["red"], ["1"]) and binder_match("Is it red or blue?", ["Blue?"], ["0"])
    assert not binder_match("Is it red or blue?", ["blue"], ["0"])      # the token keeps its "?"
    assert binder_match("or red", ["red"], ["0"]) and binder_match("or red", ["red"], ["1"])  # "before" wraps round
    assert not binder_match("Is it red or", ["red"], ["1"])             # no token after "or"


def test_subset_rules():
    assert binder_match("q", ["56 m"], ["56"]) and binder_match("q", ["4 years"], ["4 months"])
    assert binder_match("q", ["December 11, 1960"], ["1960-12-12"])     # the wrong day equal to the month
    assert not binder_match("q", ["December 11, 1960"], ["1960-12-13"])


def test_prediction_is_the_target():
    # Binder calls check_denotation(pred, gold): every predicted value must match some gold value
    assert binder_match("q", ["a", "b"], ["b", "a"]) and not binder_match("q", ["a", "b"], ["a", "c"])


# --- crafted text: bounded time ----------------------------------------------------------

def test_the_midnight_step_is_the_original_pattern():
    import random
    import re

    from binder_py.evaluate.binder import _ends_with_midnight

    rng = random.Random(3)
    alphabet = ["-", " 00:00:00", "a", "\n", " ", "0", ":"]
    for _ in range(20000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 8)))
        assert _ends_with_midnight(text) == bool(re.match(r"(.*)-(.*)-(.*) 00:00:00", text)), text


@pytest.mark.parametrize("text", [
    "-" * 20000,  # the midnight pattern (.*)-(.*)-(.*): cubic, 800 dashes took 0.5 s
    "12-" * 3000,  # the recogniser: 1,000 characters of this took 9 s, 4,000 minutes
    "1 " * 5000,
])
def test_str_normalize_takes_bounded_time_on_crafted_text(text):
    import time

    from binder_py.evaluate.binder import str_normalize

    str_normalize("warm up 1 january 2001")
    start = time.perf_counter()
    str_normalize.__wrapped__(text)
    assert time.perf_counter() - start < 5
