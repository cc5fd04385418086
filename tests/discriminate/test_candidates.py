"""Enumerating valid steps: answer expressions and conditions over real columns and cells."""

from __future__ import annotations

import pandas as pd
import pytest

from binder_py.discriminate.candidates import filter_candidates, final_candidates
from binder_py.discriminate.ops import (Aggregate, Count, NeuralFilter, ProposedCode, Select, Superlative,
                                        ValueFilter)
from binder_py.language.program import parse_program
from binder_py.tables import load_table, prepare_table

SHIRTS_Q = "which is the best-selling shirt made in North America and with no chemicals?"


@pytest.fixture
def shirts() -> pd.DataFrame:
    return load_table("examples/shirts.csv")


def test_final_candidates_are_bounded_valid_and_cue_ordered(shirts):
    finals = final_candidates(shirts, SHIRTS_Q, limit=6)
    assert len(finals) == 6
    assert Superlative("sales", "shirt", True) in [c.step for c in finals[:4]]
    assert all(isinstance(c.step, Superlative) and c.step.largest for c in finals[:4])
    for c in finals:
        parse_program(c.step.code)
    everything = final_candidates(shirts, SHIRTS_Q, limit=1000)
    # count + 4 aggregates x 2 numeric columns + 2 x 3 answer columns x 2 directions + 3 positions x 4 columns
    assert len(everything) == 1 + 8 + 12 + 12
    assert final_candidates(shirts, "how many shirts are there?", limit=1)[0].step == Count()
    assert final_candidates(shirts, "what is the total of sales?", limit=1)[0].step == Aggregate("sales", "sum")


def test_final_candidates_keep_to_the_shape_of_answer_the_question_wants(shirts):
    from binder_py.discriminate.ops import Count, Neighbour
    from binder_py.tasks import task_profile

    profile = task_profile("analyst")
    count_question = "how many shirts sold more than 100?"
    steps = [c.step for c in final_candidates(shirts, count_question, limit=1000,
                                              shape=profile.answer_shape(count_question))]
    numeric = {"sales", "price"} & set(shirts.columns)
    assert Count() in steps and all(s.answer in numeric for s in steps
                                    if isinstance(s, (Select, Superlative, Neighbour)))
    assert not any(isinstance(s, Select) and s.position == "all" for s in steps)
    assert len(steps) < len(final_candidates(shirts, count_question, limit=1000))
    steps = [c.step for c in final_candidates(shirts, SHIRTS_Q, limit=1000, shape=profile.answer_shape(SHIRTS_Q))]
    assert not any(isinstance(s, (Count, Aggregate)) for s in steps)  # "which …?": no count, no sum
    assert Superlative("sales", "shirt", True) in steps


def test_final_candidates_skip_expressions_without_an_answer():
    table = prepare_table(pd.DataFrame({"name": ["a", "b"], "score": [float("nan"), float("nan")]}))
    steps = [c.step for c in final_candidates(table, "who has the highest score?", limit=100)]
    assert not any(isinstance(s, (Superlative, Aggregate)) for s in steps)
    assert Select("name", "all") in steps


def test_filter_candidates_value_number_and_neural(shirts):
    program = ProposedCode(Superlative("sales", "shirt", True))
    found = [c.step for c in filter_candidates(shirts, "which shirt made in Canada has a price over 36?", program,
                                               limit=20)]
    assert found[0] == ValueFilter("price", ">", 36)
    assert ValueFilter("made in", "==", "Canada") in found
    assert not any(isinstance(s, NeuralFilter) for s in found)
    neural = [c.step for c in filter_candidates(shirts, SHIRTS_Q, program, limit=20)]
    assert {s.question for s in neural} == {"Is it made in north america?", "Does it have no chemicals?"}
    assert {s.column for s in neural} == {"made in", "shirt"}
    assert filter_candidates(shirts, SHIRTS_Q, program, neural=False) == []


def test_filters_must_keep_some_rows_and_drop_some(shirts):
    program = ProposedCode(Count())
    found = [c.step for c in filter_candidates(shirts, "how many shirts cost more than 5 or less than 100?",
                                               program, limit=50, neural=False)]
    assert found == []  # every price is between: each comparison keeps all rows or none
    applied = program.with_filter(ValueFilter("made in", "==", "Canada"))
    again = [c.step for c in filter_candidates(shirts, "how many shirts are made in Canada?", applied, limit=50)]
    assert ValueFilter("made in", "==", "Canada") not in again


def test_one_question_is_asked_over_one_column_only(shirts):
    program = ProposedCode(Superlative("sales", "shirt", True)).with_filter(
        NeuralFilter("Is it made in north america?", "made in"))
    found = [c.step for c in filter_candidates(shirts, SHIRTS_Q, program, limit=20)]
    assert {s.question for s in found} == {"Does it have no chemicals?"}


def test_awkward_column_names_and_cells_render_as_valid_python():
    table = prepare_table(pd.DataFrame({"class": ["it's \"x\"", "naïve\\path", "b"], "2010": [1, 2, 3],
                                        "lambda value": [3.5, 1.0, 2.0]}))
    question = "which class has the most lambda value where class is it's \"x\" or naïve\\path and 2010 over 1?"
    program = ProposedCode(final_candidates(table, question, limit=1)[0].step)
    for c in filter_candidates(table, question, program, limit=30):
        code = program.with_filter(c.step).code
        parsed = parse_program(code)
        assert parsed is not None
    assert ValueFilter("class", "==", "it's \"x\"").code == "df = df[df['class'] == 'it\\'s \"x\"']"
    assert ValueFilter("2010", ">", 1.0).code == "df = df[df['2010'] > 1]"


def test_neighbour_rows_of_a_mentioned_cell():
    from binder_py.discriminate.ops import Neighbour
    table = prepare_table(pd.DataFrame({"team": ["a", "crettyard", "c"], "year": [2006, 2005, 2004]}))
    finals = [c.step for c in final_candidates(table, "which team won previous to crettyard?", limit=100)]
    before, after = Neighbour("team", "crettyard", "team", -1), Neighbour("team", "crettyard", "team", 1)
    assert before in finals and after in finals
    assert finals.index(before) < finals.index(after)  # "previous" cue
    assert before.apply(table) == "a" and after.apply(table) == "c"
    assert before.code == "df[df['team'].shift(-1) == 'crettyard']['team'].iloc[0]"
    parse_program(before.code)
    # no mentioned cell, no neighbour
    assert not any(isinstance(c.step, Neighbour) for c in final_candidates(table, "which team won?", limit=100))
