"""Rescope, second kind: a row label (``X.idxmax()`` on the table's row numbers) answering a question
that asks for a name gets a sibling that reads that row's name."""

from __future__ import annotations

import pandas as pd
import pytest

from binder_py import Binder
from binder_py.language.program import as_row_name
from binder_py.lm import ScriptedLM

TABLE = pd.DataFrame({"animal": ["elephant", "whale", "koi"], "max lifespan (years)": [70, 211, 226],
                      "class": ["mammal", "mammal", "fish"]})
LABEL = 'df[df["class"] == "mammal"]["max lifespan (years)"].idxmax()'


@pytest.mark.parametrize("program, expected", [
    (LABEL, "df.loc[" + LABEL + ", 'animal']"),
    ('df = df[df["x"] > 3]\n(df["a"] - df["b"]).idxmin()  # note',
     "df = df[df[\"x\"] > 3]\ndf.loc[(df[\"a\"] - df[\"b\"]).idxmin(), 'animal']  # note"),
    ('df[f_col("Is it a mammal?", ["animal"])]["max lifespan (years)"].idxmax()',
     "df.loc[df[f_col(\"Is it a mammal?\", [\"animal\"])][\"max lifespan (years)\"].idxmax(), 'animal']"),
    ('df.groupby("class")["max lifespan (years)"].sum().idxmax()', None),   # a group's label
    ('df["class"].value_counts().idxmax()', None),
    ('df.set_index("animal")["max lifespan (years)"].idxmax()', None),
    ('total = df["a"]\ntotal.idxmax()', None),                              # another variable
    ('df["a"].idxmax(skipna=False)', None),
    ('(df["leg"] == "win").idxmax()', None),                                 # a mask: row 0 when none is True
    ('df["leg"].str.contains("win").idxmax()', None),
    ('(~df["x"].isna() & (df["a"] > 3)).idxmax()', None),
    ('df["a"].idxmax() + 1', None),
    ('f_val("Which animal lives longest?", df["max lifespan (years)"].idxmax())',   # the model sees a bare number
     "df.loc[df[\"max lifespan (years)\"].idxmax(), 'animal']"),
    ('f_val("Which?", df.groupby("class")["a"].sum().idxmax())', None),
    ('f_val("Which?", df["a"].max())', None),
    ("df[", None),
])
def test_a_final_row_label_is_read_as_the_rows_name(program, expected):
    assert as_row_name(program, "animal") == expected


def test_the_pipeline_answers_with_the_rows_name_and_sets_the_label_aside():
    lm = ScriptedLM(lambda request, purpose: [LABEL] * 3)
    answer = Binder(lm=lm, task="analyst", n=3, mode="python").ask(TABLE, "Which mammal lives the longest?")
    assert answer.value == "whale"
    sibling = [c for c in answer.candidates if c.origin == "rescope"]
    assert len(sibling) == 1 and sibling[0].program == "df.loc[" + LABEL + ", 'animal']"
    assert any("a number where the question asks for a name" in w for w in answer.warnings)


def test_the_column_the_question_names_is_read_and_other_questions_get_no_sibling():
    table = TABLE.assign(keeper=["zoo a", "zoo b", "zoo c"])
    lm = ScriptedLM(lambda request, purpose: [LABEL] * 3)
    answer = Binder(lm=lm, task="analyst", n=3, mode="python").ask(table, "Which keeper has the oldest mammal?")
    assert answer.value == "zoo b"
    for question in ("Which year had the most wins?", "How many mammals are there?"):
        answer = Binder(lm=ScriptedLM(lambda request, purpose: [LABEL] * 3), task="analyst", n=3,
                        mode="python").ask(TABLE, question)
        assert not [c for c in answer.candidates if c.origin == "rescope"] and answer.value == 1
    off = Binder(lm=ScriptedLM(lambda request, purpose: [LABEL] * 3), task="analyst", n=3, mode="python",
                 rescope=False).ask(TABLE, "Which mammal lives the longest?")
    assert off.value == 1


CONCERTS = pd.DataFrame({"artist": ["Coldplay", "BTS", "Adele"], "date": ["June 14, 2025", "April 12, 2025", "July 1, 2025"],
                         "price": ["$95", "$120", "$95"], "tickets": [88000, 69000, 65000], "capacity": [90000, 70000, 65000]})


@pytest.mark.parametrize("program, expected", [
    ('df["date"].min()', "df.loc[df['date'] == (df[\"date\"].min()), 'artist']"),
    ('d = df[df["tickets"] > 1]\nd["date"].max()  # last',
     "d = df[df[\"tickets\"] > 1]\ndf.loc[df['date'] == (d[\"date\"].max()), 'artist']  # last"),
    ('def solve(table):\n    return table["date"].min()', None),   # no final expression
    ('x = df["date"].min()', None),
    ('df[df["price"] == "$95"].shape[0]', None),                 # names no date: a count, no cell picked
    ('f_val("When?", df[["date"]])', None),                     # the model's answer
    ('df.date.max()', "df.loc[df['date'] == (df.date.max()), 'artist']"),
    ("df[", None),
])
def test_a_final_cell_is_read_as_the_name_of_its_rows(program, expected):
    from binder_py.language.program import as_cell_row_name

    assert as_cell_row_name(program, "date", "artist") == expected


@pytest.mark.parametrize("program, question, expected", [
    ('df.sort_values("date")["date"].iloc[0]', "Which concert was the earliest?", "BTS"),  # a date written as text
    ('df["tickets"].max()', "Which artist sold the most tickets?", "Coldplay"),           # a number in one column
    ('df["price"].max()', "Which concert was the priciest?", "BTS"),               # an amount ("$95" is text)
])
def test_the_pipeline_answers_with_the_name_of_the_row_holding_the_cell(program, question, expected):
    lm = ScriptedLM(lambda request, purpose: [program] * 3)
    answer = Binder(lm=lm, task="analyst", n=3, mode="python").ask(CONCERTS, question)
    assert answer.value == expected
    assert [c.origin for c in answer.candidates if c.ok and c.votes] == ["rescope"]


@pytest.mark.parametrize("program, question", [
    ('df["capacity"].min()', "Which artist played the smallest venue?"),   # 65000: a cell of two columns
    ('df["date"].min()', "What was the date of the earliest concert?"),    # the question asks for a date
    ('df["artist"].min()', "Which artist comes first?"),                   # a name already
    ('df["tickets"].sum()', "Which artist sold the most tickets?"),        # no cell
])
def test_no_sibling_for_other_cells_or_questions(program, question):
    answer = Binder(lm=ScriptedLM(lambda request, purpose: [program] * 3), task="analyst", n=3,
                    mode="python").ask(CONCERTS, question)
    assert not [c for c in answer.candidates if c.origin == "rescope"]


def test_a_neural_call_handed_a_row_label_gets_the_rows_name():
    """f_val(question, X.idxmin()) hands the model a row number it cannot read ("unknown"): the sibling
    reads that row's name, whatever the model answered."""
    program = 'f_val("Which animal lives the shortest?", df["max lifespan (years)"].idxmin())'
    lm = ScriptedLM(lambda request, purpose: [program] * 3 if purpose == "parse" else ["unknown"] * request.n)
    answer = Binder(lm=lm, task="analyst", n=3, mode="binder").ask(TABLE, "Which animal lives the shortest?")
    assert answer.value == "elephant"
    assert [c.origin for c in answer.candidates if c.value == "elephant"] == ["rescope"]
