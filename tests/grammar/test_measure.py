"""The column check the grammar measurement uses: which column literals of a program are not columns."""

from __future__ import annotations

import pytest

from binder_py.bench.grammar_validity import unknown_column_literals

COLUMNS = ["team", "lost", "units sold"]


@pytest.mark.parametrize("program, unknown", [
    ('df["team"]', []),
    ('df["Team"]', ["Team"]),
    ('df[["team", "wins"]]', ["wins"]),
    ('df[df["lost"] > 2]["points"]', ["points"]),
    ('df.loc[df["lost"].idxmax(), "name"]', ["name"]),
    ('df.sort_values("wins")', ["wins"]),
    ('table.groupby(["team", "x"]).size()', ["x"]),
    ('f_col("is it?", ["made in"])', ["made in"]),
    ('f_val("how many?", "units sold")', []),
    ('qa_map(table, "q?", ["nope"])', ["nope"]),
    ('df["team"].value_counts()["fc nordby"]', []),  # values of a column
    ('df["new"] = 1', []),  # assigning a new column
    ('df.iloc[0, 1]', []),
    ('d = df[df["lost"] > 1]\nd["anything"]', []),  # other names are not followed
])
def test_unknown_column_literals(program, unknown):
    assert sorted(unknown_column_literals(program, COLUMNS)) == sorted(unknown)


def test_a_program_that_does_not_parse_is_a_syntax_error():
    with pytest.raises(SyntaxError):
        unknown_column_literals("df[", COLUMNS)
