"""Yes/no row questions that only ask whether a cell mentions a word are computed, not asked: the
question reader, its order among the readers, and the row-by-row backend asking the model nothing."""

import pandas as pd
import pytest

from binder_py.language import execute
from binder_py.lm import ScriptedLM
from binder_py.lm.types import Capabilities, Choice
from binder_py.neural.computed import computed_answers
from binder_py.neural.mentions import mention_reader, mentioned_words
from binder_py.neural.requests import NeuralRequest, row_key
from binder_py.neural.rowwise import RowwiseNeuralBackend

EMBEDDED = Capabilities(api="chat", logprobs=True, grammar=True, embedded=True)
COMMENTS = ["produced copper and arsenic", "gold mine", "silver; produced lead", "arsenic and tin were produced",
            "copper", "zinc", "lead", "coal"]
OPPONENTS = ["Seattle Seahawks", "at Denver Broncos", "Oakland Raiders", "at Seattle Seahawks", "Kansas City Chiefs"]


def yes_lm() -> ScriptedLM:
    return ScriptedLM(lambda request, purpose: [Choice(text="yes", mean_logprob=-0.1, token_logprobs=(("yes", -0.1),),
                                                       top_logprobs=((("yes", -0.1), ("no", -2.5)),))],
                      capabilities=EMBEDDED)


@pytest.mark.parametrize("question, column, cells, expected", [
    # (questions the embedded 1.5B model wrote in recorded WikiTQ runs)
    ("Was arsenic produced?", "Comments", COMMENTS, ("arsenic",)),    # produced: a verb of relation
    ("Has arsenic been produced?", "Comments", COMMENTS, ("arsenic",)),
    ("Did they play Seattle?", "Opponent", OPPONENTS, ("seattle",)),      # they, play: words of relation
    ("Is the city of license in IL?", "City of license", ["st. louis, mo", "quincy, il", "columbia, mo"], ("il",)),
    ("Is the surface grass?", "Surface", ["grass", "clay", "hard", "clay"], ("grass",)),
    ("Are the winners Giants?", "Winner", ["new york giants", "chicago bears", "green bay packers"], ("giants",)),
    ("Is the coach from Spain?", "Coach", ["pep guardiola (spain)", "jose mourinho", "zinedine zidane"], ("spain",)),
    ("Is it a gold mine?", "Comments", COMMENTS, ("gold", "mine")),                 # every word, in one cell
])
def test_a_question_that_only_asks_for_a_word_the_cells_mention_is_read(question, column, cells, expected) -> None:
    assert mentioned_words(question, column, cells) == expected


@pytest.mark.parametrize("question, column, cells", [
    ("Is it in Europe?", "City", ["paris", "lagos", "milan"]),              # no cell says it: knowledge
    ("Was he disqualified?", "Notes", ["dq", "1:23.47", "dnf"]),            # an abbreviation: the model's
    ("Is it a loss?", "Result", ["l 1-3", "w 2-0"]),
    ("Was no arsenic produced?", "Comments", COMMENTS),                     # negation
    ("Wasn't arsenic produced?", "Comments", COMMENTS),
    ("Is it scrapped or destroyed?", "Location", ["scrapped", "destroyed", "museum", "museum"]),  # two words
    ("Is the last of whiteness 12 months?", "Last", ["12 months", "18 months"]),  # a number
    ("Is the last of whiteness long months?", "Last", ["long months", "months", "months"]),  # most cells hold it
    ("Did the mine produce arsenic before 1900?", "Comments", COMMENTS),   # more than a mention
    ("Did the mine also produce arsenic?", "Comments", COMMENTS),           # no cell holds mine and arsenic
    ("Is it a mine?", "Comments", ["gold mine", "copper"]),                 # one cell of two: at most half...
])
def test_any_other_question_is_left_to_the_model(question, column, cells) -> None:
    if question == "Is it a mine?":  # ...is read: one of two cells holds it (exactly half)
        assert mentioned_words(question, column, cells) == ("mine",)
        return
    assert mentioned_words(question, column, cells) is None


def test_the_reader_says_yes_for_a_cell_that_mentions_the_word_and_no_for_the_others() -> None:
    decide = mention_reader("Was arsenic produced?", "Comments", COMMENTS)
    assert decide is not None
    assert decide("Arsenic, produced 1890") == (True, "the cell mentions 'arsenic'")
    assert decide("produced arsenical ores") == (False, "the cell does not mention 'arsenic'")  # whole words only
    assert decide(None) is None and decide(float("nan")) is None


def test_an_equality_is_read_before_a_mention() -> None:
    answers, lines = computed_answers("Is the surface grass?", ["Surface"], [["grass"], ["artificial grass"], ["clay"]],
                                      ["grass", "artificial grass", "clay"])
    # the equality reader's: a cell holding the value within more is left to the model
    assert answers == {"grass": "yes", "clay": "no"}
    assert lines[0] == "grass: yes (computed, not asked: the cell is 'grass')"


def test_a_program_counts_the_rows_that_mention_the_word_and_the_model_is_not_asked() -> None:
    lm = yes_lm()  # says yes to every row, as the 1.5B model did for 8 or 9 of 14 mines
    df = pd.DataFrame({"Mine": [f"m{i}" for i in range(len(COMMENTS))], "Comments": COMMENTS})
    run = execute('df[f_col("Was arsenic produced?", "Comments")].shape[0]', df, neural=RowwiseNeuralBackend(lm))
    assert run.ok and run.value == 2 and lm.calls == []
    raw = run.calls[0].raw_outputs
    assert any("yes (computed, not asked: the cell mentions 'arsenic')" in line for line in raw)


def test_a_row_the_reader_cannot_read_is_asked() -> None:
    lm = yes_lm()
    rows = [["seattle seahawks"], ["denver broncos"], ["oakland raiders"]]
    answer = RowwiseNeuralBackend(lm).answer(NeuralRequest("col", "Did they play Seattle?", ["Opponent"], rows,
                                                           [row_key(r) for r in rows]))
    assert answer.answers == {"seattle seahawks": "yes", "denver broncos": "no", "oakland raiders": "no"}
    assert lm.calls == []


def test_a_cell_that_mentions_the_word_with_a_negation_is_asked() -> None:
    decide = mention_reader("Is it vegan?", "Notes", ["vegan", "not vegan", "contains meat", "beef", "fish"])
    assert decide is not None
    assert decide("vegan") == (True, "the cell mentions 'vegan'")
    assert decide("not vegan") is None and decide("no arsenic, vegan") is None and decide("isn't vegan") is None
    assert decide("contains meat") == (False, "the cell does not mention 'vegan'")
