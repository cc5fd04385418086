"""Reading a question: words, numbers, mentioned cells, condition phrases, cue words."""

from __future__ import annotations

import pandas as pd
import pytest

from binder_py.discriminate.question import (Phrase, condition_phrases, cues, mentioned_values, neural_question,
                                             numbers_in)
from binder_py.tables import load_table

SHIRTS_Q = "which is the best-selling shirt made in North America and with no chemicals?"


@pytest.fixture
def shirts() -> pd.DataFrame:
    return load_table("examples/shirts.csv")


def test_numbers_with_thousands_decimals_and_years():
    assert numbers_in("peaks over 10,000 ft after 2010, or 2.5 times, not 10,000 again") == [10000, 2010, 2.5]
    assert numbers_in("no numbers here, except in words like b2b") == []


def test_mentioned_values_whole_cells_first(shirts):
    found = mentioned_values(shirts, "how many shirts from united states or canada cost more than 30?")
    assert [(m.column, m.value) for m in found] == [("made in", "United States"), ("made in", "Canada")]
    assert all(m.strength == 1.0 for m in found)
    # most of a long cell's words count, with a lower strength
    partial = mentioned_values(shirts, "what is the price of the oxford cotton shirt?")
    assert partial[0].value == "pure cotton oxford shirt" and partial[0].strength < 1.0


def test_condition_phrases_of_the_shirts_question(shirts):
    phrases = condition_phrases(SHIRTS_Q, shirts)
    assert [neural_question(p) for p in phrases] == ["Is it made in north america?", "Does it have no chemicals?"]


@pytest.mark.parametrize("question, expected", [
    ("which shirt made in Canada has a price over 36?", []),              # a cell and a number: value filters say it
    ("which shirt has the most sales?", []),                              # superlative + columns only
    ("how many shirts are made in Asia?", ["Is it made in asia?"]),
    ("what is the cheapest shirt that is sold in europe?", ["Is it sold in europe?"]),
])
def test_condition_phrases_leave_out_what_the_table_says(shirts, question, expected):
    assert [neural_question(p) for p in condition_phrases(question, shirts)] == expected


def test_neural_question_forms():
    assert neural_question(Phrase("no chemicals", "with")) == "Does it have no chemicals?"
    assert neural_question(Phrase("were built before the war")) == "Was it built before the war?"
    assert neural_question(Phrase("located in europe")) == "Is it located in europe?"


@pytest.mark.parametrize("question, expected", [
    ("how many districts are there in virginia?", {"count"}),
    ("what is the total population?", {"sum"}),
    ("which team had the most wins?", {"max"}),
    ("who received the least amount of votes?", {"min"}),
    ("who was the first to take office?", {"first"}),
    ("what is the average height?", {"mean"}),
    (SHIRTS_Q, {"max"}),
])
def test_cues(question, expected):
    assert cues(question) == expected
