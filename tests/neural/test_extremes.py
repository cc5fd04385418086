"""Yes/no rows about a column's largest or smallest value, or a count above none: computed, not asked."""

import pytest

from binder_py.neural.computed import computed_answers
from binder_py.neural.extremes import any_count_reader, extreme_reader, first_number


def answers(question, column, cells):
    return computed_answers(question, [column], [[c] for c in cells], [str(c) for c in cells])[0]


def test_the_extreme_of_the_calls_rows() -> None:
    weights = ["73\xa0kg (161\xa0lb)", "76\xa0kg (168\xa0lb)", "70\xa0kg (150\xa0lb)"]  # (the 1.5B model's call)
    assert answers("Is it the heaviest?", "Weight", weights) == {weights[0]: "no", weights[1]: "yes", weights[2]: "no"}
    assert answers("Is the weight the lightest?", "Weight", weights)[weights[2]] == "yes"
    assert answers("Is it the heaviest?", "Weight", ["73 kg", "n/a", "76 kg"]) == {"73 kg": "no", "76 kg": "yes"}


@pytest.mark.parametrize("question, column", [
    ("Is it the best?", "Score"),                  # best is lower for a rank or a time
    ("Is it the fastest?", "Time"),
    ("Is it the most populous city?", "City"),     # "populous" asks what the cells do not say
    ("Is it the highest and the longest?", "Length"),
    ("Is it the highest in 2005?", "Points"),
])
def test_other_superlatives_are_left_to_the_model(question, column) -> None:
    assert extreme_reader(question, column, ["1", "2", "3"]) is None


def test_a_count_above_none() -> None:
    assert answers("Did the nation win gold?", "Gold", ["4", "2", "0"]) == {"4": "yes", "2": "yes", "0": "no"}
    assert answers("Did they win silver?", "Silver", [1, 0, 2.0]) == {"1": "yes", "0": "no", "2.0": "yes"}


@pytest.mark.parametrize("question, column, cells", [
    ("Did they not win bronze?", "Bronze", ["0", "1"]),  # a negation
    ("Is it silver?", "Silver", ["3", "0"]),             # no win/have/get
    ("Did they win?", "Record", ["0–1–0", "1–2–0"]),     # the column is no count
    ("Did he score?", "Goals", ["0", "2"]),              # the question does not name the column
    ("Did the nation win 2 gold?", "Gold", ["4", "2"]),  # a number
])
def test_anything_else_is_left_to_the_model(question, column, cells) -> None:
    assert any_count_reader(question, column, cells) is None


def test_first_number() -> None:
    assert [first_number(c) for c in ["73 kg (161 lb)", "£250,000", "-3.5", "none", 12, float("nan"), True]] == \
        [73.0, 250000.0, -3.5, None, 12.0, None, None]
