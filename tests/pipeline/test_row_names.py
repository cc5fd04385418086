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
