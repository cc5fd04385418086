"""Yes/no columns: original-Binder-style programs (compare with 'yes') and binder-py style (masks) both work."""

from __future__ import annotations

import operator

import numpy as np
import pandas as pd
import pytest

from binder_py.neural.yesno import YesNoArray, YesNoDtype, yes_no_array, yes_no_series


@pytest.fixture()
def table() -> pd.DataFrame:
    table = pd.DataFrame({"opponent": ["ajax", "psv", "twente", "az", "vitesse"],
                          "score": ["0-2", "3-1", "1-1", "0-1", "2-0"],
                          "attendance": [1200, 3400, 2100, 800, 4100]})
    # what f_col("is it a loss?", ["score"]) answers, the last row unknown
    table["is it a loss?"] = yes_no_series(["yes", "no", "no", "yes", None], index=table.index)
    return table


def run(program: str, table: pd.DataFrame):
    """Run a program the way the original Binder's exemplars are written: statements, then an answer."""
    scope = {"table": table, "df": table, "pd": pd, "np": np}
    *body, last = program.strip().split("\n")
    exec("\n".join(body), scope)  # noqa: S102 - test programs written here
    return eval(last, scope)  # noqa: S307


def test_original_binder_style_compares_with_yes(table):
    assert run("len(table[table['is it a loss?'] == 'yes'])", table) == 2
    assert run("table[table['is it a loss?'] == 'yes']['opponent'].tolist()", table) == ["ajax", "az"]
    assert run("len(table[table['is it a loss?'] == 'no'])", table) == 2
    assert run("(table['is it a loss?'] == 'yes').sum()", table) == 2


def test_case_spaces_and_synonyms(table):
    col = table["is it a loss?"]
    for word in ("YES", " Yes ", "yes.", "true", "True"):
        assert (col == word).sum() == 2, word
    for word in ("No", "NO", "false"):
        assert (col == word).sum() == 2, word
    assert (col != "yes").sum() == 2  # the unknown row is neither
    assert (col == "maybe").sum() == 0 and (col != "maybe").sum() == 4


def test_binder_py_style_masks(table):
    assert run("df[df['is it a loss?']]['opponent'].tolist()", table) == ["ajax", "az"]
    assert run("df[~df['is it a loss?']]['opponent'].tolist()", table) == ["psv", "twente"]
    assert run("df[df['is it a loss?'] & (df['attendance'] > 1000)]['opponent'].tolist()", table) == ["ajax"]
    assert run("df[df['is it a loss?'] | (df['attendance'] > 4000)]['opponent'].tolist()", table) == \
        ["ajax", "az", "vitesse"]
    assert run("df['is it a loss?'].sum()", table) == 2
    assert run("df['is it a loss?'].any()", table)
    assert run("(df['is it a loss?'] == True).sum()", table) == 2
    assert run("(df['is it a loss?'] == False).sum()", table) == 2
    assert run("df.loc[df['is it a loss?'], 'attendance'].mean()", table) == 1000


def test_combinations_stay_yes_no_and_compare_with_text(table):
    col = table["is it a loss?"]
    both = col & (table["attendance"] > 1000)
    assert isinstance(both.dtype, YesNoDtype)
    assert (both == "yes").sum() == 1
    assert isinstance((~col).dtype, YesNoDtype)
    assert ((~col) == "yes").sum() == 2
    assert str((col == "yes").dtype) == "boolean"


def test_missing_answers_are_never_selected(table):
    col = table["is it a loss?"]
    assert col.isna().tolist() == [False, False, False, False, True]
    assert "vitesse" not in run("table[table['is it a loss?'] == 'yes']['opponent'].tolist()", table)
    assert "vitesse" not in run("table[table['is it a loss?'] == 'no']['opponent'].tolist()", table)
    assert "vitesse" not in run("table[~table['is it a loss?']]['opponent'].tolist()", table)


def test_isin_and_elementwise_text(table):
    col = table["is it a loss?"]
    assert col.isin(["Yes"]).tolist() == [True, False, False, True, False]
    assert col.isin(["no", "yes"]).sum() == 4
    other = pd.Series(["yes", "yes", "no", "no", "yes"], index=table.index)
    assert (col == other).tolist()[:4] == [True, False, True, False]
    assert (col == other).isna().tolist()[4]


def test_map_reads_yes_and_no_keys(table):
    """The original's "yes"/"no" columns were mapped by text: every row mapped to NaN, and a sum gave 0."""
    col = table["is it a loss?"]
    assert col.map({"yes": 1, "no": 0}).tolist()[:4] == [1, 0, 0, 1]
    assert col.map({"Yes": 1, "No": 0}).sum() == 2
    assert col.map(pd.Series({"yes": "L", "no": "W"})).tolist()[:4] == ["L", "W", "W", "L"]
    assert col.map({True: 1, False: 0}).tolist()[:4] == [1, 0, 0, 1]
    assert col.map({"maybe": 1}).isna().all()
    # a mapping with a default keeps it for the keys it lacks
    from collections import defaultdict
    assert col.map(defaultdict(lambda: -1, {"yes": 1})).tolist()[:4] == [1, -1, -1, 1]


def test_ordering_against_text_is_an_error(table):
    with pytest.raises(TypeError, match="cannot be ordered"):
        _ = table["is it a loss?"] < "yes"


def test_construction():
    assert yes_no_array([True, "no", "YES", None, np.nan, pd.NA]).tolist() == [True, False, True, pd.NA, pd.NA, pd.NA]
    assert pd.Series(["yes", "no"], dtype="yesno").tolist() == [True, False]
    assert isinstance(pd.array([True, None], dtype="yesno"), YesNoArray)
    with pytest.raises(ValueError, match="'maybe' is not a yes/no answer"):
        yes_no_array(["yes", "maybe"])
    boolean = pd.Series([True, None], dtype="boolean", name="q?", index=[5, 7])
    converted = yes_no_series(boolean)
    assert converted.index.tolist() == [5, 7] and converted.name == "q?" and str(converted.dtype) == "yesno"


def test_operations_that_copy_or_reorder_keep_the_type(table):
    col = table["is it a loss?"]
    for result in (col.copy(), col.iloc[[1, 0]], col.sort_values(), table.sort_values("attendance")["is it a loss?"],
                   table[table["attendance"] > 1000]["is it a loss?"], col.fillna(False)):
        assert isinstance(result.dtype, YesNoDtype)
        assert ((result == "yes") == (result == True)).all()  # noqa: E712


def test_comparison_operators_match_booleans():
    col = yes_no_series(["yes", "no", None])
    boolean = pd.Series([True, False, None], dtype="boolean")
    for op in (operator.eq, operator.ne):
        assert op(col, True).tolist() == op(boolean, True).tolist()
    assert col.astype("boolean").tolist() == boolean.tolist()


def test_a_yes_no_series_crosses_the_sandbox_codec(table):
    from sandbox.codec import decode, dumps, encode, safe_loads

    back = decode(safe_loads(dumps(encode(table["is it a loss?"]))))
    assert str(back.dtype) == "yesno"
    assert back.tolist() == [True, False, False, True, pd.NA]
    assert (back == "yes").sum() == 2


@pytest.mark.slow
def test_original_style_programs_run_in_the_sandbox_unchanged(table):
    from binder_py.language.execute import execute

    for program, expected in (("len(table[table['is it a loss?'] == 'yes'])", 2),
                              ("df[df['is it a loss?'] & (df['attendance'] > 1000)]['opponent'].tolist()", ["ajax"]),
                              ("(df['is it a loss?'] == 'No').sum()", 2)):
        run_ = execute(program, table, neural=None)
        assert run_.ok, run_.error
        assert run_.value == expected


def test_f_col_answers_compare_with_yes_in_the_sandbox():
    """The issue's case: programs in the original's style select the yes rows through f_col."""
    import pandas as pd

    from binder_py.language.execute import execute
    from binder_py.neural import CallableBackend

    shirts = pd.DataFrame({"shirt": ["a", "b", "c"], "made in": ["USA", "China", "Mexico"]})
    backend = CallableBackend.per_row(lambda q, row: "yes" if row["made in"] in ("USA", "Mexico") else "no")
    for program in ('df[f_col("Is it in North America?", ["made in"]) == "yes"]["shirt"].tolist()',
                    'table = qa_map(df, "Is it in North America?", ["made in"])\n'
                    'table[table["Is it in North America?"] == "Yes"]["shirt"].tolist()',
                    'df[f_col("Is it in North America?", ["made in"])]["shirt"].tolist()',
                    'int((f_col("Is it in North America?", ["made in"]) == "no").sum())'):
        run_ = execute(program, shirts, neural=backend)
        assert run_.ok, (program, run_.error)
        assert run_.value in (["a", "c"], 1), program
    mapped = execute('f_col("Is it in North America?", ["made in"]).map({"yes": 1, "no": 0}).sum()', shirts,
                     neural=backend)
    assert mapped.ok and mapped.value == 2, mapped.error


def test_a_yes_no_index_is_looked_up_by_true_and_false(table):
    """`f_col(...).value_counts()[True]` and `df.groupby(f_col(...))[c].sum()[True]` raised
    "Argument 'values' has incorrect type (expected numpy.ndarray, got YesNoArray)": pandas had no
    index engine for the yesno dtype."""
    loss = table["is it a loss?"]
    counts = loss.value_counts()
    assert str(counts.index.dtype) == "yesno"
    assert counts[True] == 2 and counts.loc[False] == 2
    by_loss = table.groupby(loss)["attendance"].sum()
    assert by_loss[True] == 2000 and by_loss.loc[False] == 5500
    assert pd.Index(loss.array).get_loc(False).tolist() == [False, True, True, False, False]


def test_a_yes_no_index_is_looked_up_by_yes_and_no_text(table):
    """`f_col(...).value_counts().get("yes", 0)` returned 0 (the default) although two rows said
    yes: the index holds True/False and pandas looked the text up as it was. Text keys are now
    read as comparisons read them; other keys still miss."""
    loss = table["is it a loss?"]
    counts = loss.value_counts()
    assert counts.get("yes", 0) == 2 and counts.get("No") == 2
    assert counts["YES"] == 2 and counts.loc["no"] == 2 and counts.at["yes"] == 2
    assert "yes" in counts and "no" in counts.index
    assert counts.get("maybe", -1) == -1 and "maybe" not in counts
    with pytest.raises(KeyError):
        counts["maybe"]
    by_loss = table.groupby(loss)["attendance"].sum()
    assert by_loss["yes"] == 2000 and by_loss.get("no") == 5500


def test_yes_no_counts_in_the_original_style_in_the_sandbox():
    from binder_py.language.execute import execute
    from binder_py.neural import CallableBackend

    games = pd.DataFrame({"score": ["0-2", "3-1", "1-1", "0-1"]})
    backend = CallableBackend.per_row(lambda q, row: "yes" if row["score"].startswith("0") else "no")
    for program, expected in (('f_col("is it a loss?", ["score"]).value_counts().get("yes", 0)', 2),
                              ('table = qa_map(df, "is it a loss?", ["score"])\n'
                               'table["is it a loss?"].value_counts()["no"]', 2)):
        run_ = execute(program, games, neural=backend)
        assert run_.ok, (program, run_.error)
        assert run_.value == expected, program
