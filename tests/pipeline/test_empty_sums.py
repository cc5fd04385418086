"""A program that answers 0 by summing no rows answered nothing: it does not vote, and repair hears why;
a sum over rows that add up to 0 stands."""

from __future__ import annotations

import pandas as pd
import pytest

from binder_py.ask import Binder
from binder_py.lm import ScriptedLM
from binder_py.pipeline.empty_sums import is_zero, selection_probe

TABLE = pd.DataFrame({"city": ["Oslo", "Rome", "Lima"], "people": [0, 2, 10], "area": [0, 0, 0]})


@pytest.mark.parametrize("program, probe", [
    ('df[df["city"] == "Paris"]["people"].sum()', "len(df[df['city'] == 'Paris']['people'])"),
    ('x = df[df["city"] == "Paris"]\nsum(x["people"])', "x = df[df['city'] == 'Paris']\nlen(x['people'])"),
    ('np.sum(df["people"])', "len(df['people'])"),
    ('df.loc[df["city"] == "Oslo", "people"].sum(min_count=0)', "len(df.loc[df['city'] == 'Oslo', 'people'])"),
])
def test_the_probe_counts_what_the_last_expression_sums(program, probe) -> None:
    found = selection_probe(program)
    assert found is not None and found[0] == probe


@pytest.mark.parametrize("program", ['df["people"].max()', 'len(df)', 'x = df["people"].sum()', 'df[',
                                     'df["people"].sum() + 1', 'sum()'])
def test_other_programs_have_no_probe(program) -> None:
    assert selection_probe(program) is None


def test_zero_is_a_number_not_false() -> None:
    assert is_zero(0) and is_zero(0.0) and not is_zero(False) and not is_zero("0") and not is_zero(None)


def _programs(*programs: str, repair: str = 'df["people"].sum()'):
    def respond(request, purpose):
        text = request.prompt if isinstance(request.prompt, str) else str(request.messages)
        return [repair] if "ValueError: the answer 0 is a sum over no rows" in text else list(programs)
    return ScriptedLM(respond)


def test_a_sum_over_no_rows_does_not_vote_and_repair_hears_why() -> None:
    lm = _programs('df[df["city"] == "Paris"]["people"].sum()', 'df[df["city"] == "Paris"]["people"].sum()',
                   'df[df["city"] == "Paris"]["people"].sum()')
    answer = Binder(lm=lm, n=3, progress=False, cache=False, repair_attempts=1).ask(TABLE, "what is the total population?")
    assert answer.value == 12  # the repaired program's, not the 0 of the three samples
    failed = [c for c in answer.candidates if c.origin == "sample"]
    assert failed and all(not c.ok and "selected nothing" in c.error.message for c in failed)


def test_a_sum_of_rows_that_add_up_to_zero_stands() -> None:
    lm = _programs('df[df["city"] == "Oslo"]["people"].sum()', 'df["area"].sum()', 'df["area"].sum()')
    answer = Binder(lm=lm, n=3, progress=False, cache=False).ask(TABLE, "how many people live in Oslo?")
    assert answer.value == 0 and all(c.ok for c in answer.candidates)


def test_a_count_of_nothing_stands_for_a_question_that_counts() -> None:
    lm = _programs('df[df["city"] == "Paris"]["people"].sum()')
    answer = Binder(lm=lm, n=1, progress=False, cache=False).ask(TABLE, "how many people live in Paris?")
    assert answer.value == 0 and answer.candidates[0].ok
