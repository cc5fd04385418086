"""Single yes/no values compared with the text 'yes'/'no': the rewrite rule and its run-time reading."""

from __future__ import annotations

import ast

import numpy as np
import pandas as pd
import pytest

from binder_py.language.program import parse_program
from binder_py.language.rewrite import rewrite, rewritten_source
from binder_py.language.yes_no_text import YES_NO_COMPARE_NAME, compare_yes_no, read_yes_no_text
from binder_py.neural.yesno import yes_no_series


def rewritten(program: str) -> str:
    return rewritten_source(rewrite(parse_program(program)))


@pytest.mark.parametrize("text, expected", [("yes", True), (" YES ", True), ("Yes.", True), ("true", True),
                                            ("no", False), ("False", False), ("maybe", None), ("", None),
                                            ("yes please", None), (1, None), (None, None)])
def test_read_yes_no_text(text, expected):
    assert read_yes_no_text(text) is expected


@pytest.mark.parametrize("program", ["x == 'yes'", "x != 'No'", "'yes' == x", "row['won'] == 'TRUE'",
                                     "[a for a in s if a == 'no']"])
def test_comparisons_with_yes_no_text_are_rewritten(program):
    compares = [n for n in ast.walk(rewrite(parse_program(program))) if isinstance(n, ast.Compare)]
    assert YES_NO_COMPARE_NAME in rewritten(program) and not compares


@pytest.mark.parametrize("program", ["x == 'maybe'", "x == 1", "x < 'yes'", "x in ('yes', 'no')",
                                     "x == 'yes' == y", "'yes' == 'yes'", "x is 'yes'"])
def test_other_comparisons_are_left_as_written(program):
    assert YES_NO_COMPARE_NAME not in rewritten(program)


def test_operands_keep_their_written_order_and_lines():
    tree = rewrite(parse_program("a = 1\nb = g(x) == 'yes'"))
    call = tree.body[1].value
    assert isinstance(call, ast.Call) and call.func.id == YES_NO_COMPARE_NAME
    assert [ast.unparse(a) for a in call.args] == ["g(x)", "'=='", "'yes'"]
    assert call.lineno == 2


@pytest.mark.parametrize("value", [True, np.True_])
def test_a_single_boolean_reads_the_text(value):
    assert compare_yes_no(value, "==", "yes") is True
    assert compare_yes_no(value, "==", "No") is False
    assert compare_yes_no(value, "!=", "no") is True
    assert compare_yes_no("TRUE", "==", value) is True
    assert compare_yes_no(not value, "==", "false") is True


def test_boolean_columns_read_the_text():
    won = pd.Series([True, False, True])
    assert compare_yes_no(won, "==", "yes").tolist() == [True, False, True]
    assert compare_yes_no("no", "==", won).tolist() == [False, True, False]
    assert compare_yes_no(won, "!=", "yes").tolist() == [False, True, False]
    assert compare_yes_no(np.array([True, False]), "==", "no").tolist() == [False, True]
    assert compare_yes_no(pd.Index([True, False]), "==", "yes").tolist() == [True, False]
    objects = pd.Series([True, None, False], dtype=object)  # bools with a missing value, as objects
    assert compare_yes_no(objects, "==", "no").tolist() == [False, False, True]
    frame = pd.DataFrame({"a": [True, False], "b": [False, False]})
    assert compare_yes_no(frame, "==", "yes").values.tolist() == [[True, False], [False, False]]


def test_a_yes_no_column_keeps_its_missing_answers_unselected():
    loss = yes_no_series(["yes", None, "no"])
    assert compare_yes_no(loss, "==", "yes").tolist() == [True, pd.NA, False]
    assert compare_yes_no(pd.NA, "==", "yes") is pd.NA


def test_text_numbers_and_mixed_values_compare_as_written():
    text = pd.Series(["Yes", "no", "yes"])  # a table's own column: pandas' exact comparison
    assert compare_yes_no(text, "==", "Yes").tolist() == [True, False, False]
    assert compare_yes_no("Yes", "==", "yes") is False
    assert compare_yes_no(1, "==", "yes") is False
    assert compare_yes_no(pd.Series([1, 0]), "==", "yes").tolist() == [False, False]
    mixed = pd.Series([True, "yes"], dtype=object)
    assert compare_yes_no(mixed, "==", "yes").tolist() == [False, True]
    assert compare_yes_no(None, "!=", "no") is True


@pytest.fixture()
def games() -> pd.DataFrame:
    return pd.DataFrame({"opponent": ["ajax", "psv", "twente", "az"], "score": ["0-2", "3-1", "1-1", "0-1"],
                         "home": [True, False, True, True]})


def _loss_backend():
    from binder_py.neural import CallableBackend

    def lost(row: dict[str, str]) -> str:
        return "yes" if row["score"].startswith("0") else "no"

    return CallableBackend.per_row(lambda q, row: lost(row), lambda q, rows: lost(rows[0]))


@pytest.mark.parametrize("program, expected", [
    # a cell of an f_col column, row by row
    ('table = qa_map(df, "is it a loss?", ["score"])\n'
     '[r["opponent"] for _, r in table.iterrows() if r["is it a loss?"] == "yes"]', ["ajax", "az"]),
    ('df["loss"] = f_col("is it a loss?", ["score"])\n'
     'df[df.apply(lambda r: r["loss"] == "Yes" and r["home"] == "yes", axis=1)]["opponent"].tolist()', ["ajax", "az"]),
    ('loss = f_col("is it a loss?", ["score"])\n'
     '[o for o, l in zip(df["opponent"], loss) if l == "no"]', ["psv", "twente"]),
    ('f_col("is it a loss?", ["score"]).iloc[1] == "no"', True),
    # a yes/no f_val answer
    ('"lost" if f_val("is it a loss?", df[df["opponent"] == "ajax"][["score"]]) == "yes" else "not lost"', "lost"),
    ('f_val("is it a loss?", df[df["opponent"] == "psv"][["score"]]) != "No"', False),
    # a plain boolean column
    ('df[df["home"] == "yes"]["opponent"].tolist()', ["ajax", "twente", "az"]),
])
def test_single_yes_no_values_compare_with_text_in_the_sandbox(games, program, expected):
    from binder_py.language.execute import execute

    run = execute(program, games, neural=_loss_backend())
    assert run.ok, (program, run.error)
    assert run.value == expected, program


def test_the_helper_name_is_reserved():
    from binder_py.errors import ProgramError

    for program in (f"{YES_NO_COMPARE_NAME} = lambda a, op, b: True\nx == 'yes'", f"{YES_NO_COMPARE_NAME}(1, '==', 2)"):
        with pytest.raises(ProgramError, match="reserved|may not define"):
            parse_program(program)
