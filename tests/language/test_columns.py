"""Misspelt column literals are read as the table's columns, and reported."""

from __future__ import annotations

import ast

import pandas as pd
import pytest

from binder_py.neural import OracleBackend
from binder_py.language import execute
from binder_py.language.columns import resolve_columns

COLUMNS = ["made in", "Units Sold", "shirt", "team", "Team Name"]


def fixed(source: str) -> tuple[str, list[str]]:
    module = ast.parse(source)
    fixes = resolve_columns(module, COLUMNS)
    return ast.unparse(module), [f.column for f in fixes]


@pytest.mark.parametrize("source, expected", [
    ('df["Made In"]', "df['made in']"),
    ('df[["SHIRT", "units_sold"]]', "df[['shirt', 'Units Sold']]"),
    ('df.loc[:, "units  sold"]', "df.loc[:, 'Units Sold']"),
    ('df.sort_values("units sold", ascending=False)', "df.sort_values('Units Sold', ascending=False)"),
    ('df.sort_values(by=["Units_Sold"])', "df.sort_values(by=['Units Sold'])"),
    ('df.groupby("Made_In")["units sold"].sum()', "df.groupby('made in')['Units Sold'].sum()"),
    ('df.nlargest(3, "UNITS SOLD")', "df.nlargest(3, 'Units Sold')"),
    ('df.apply(lambda r: r["Shirt"], axis=1)', "df.apply(lambda r: r['shirt'], axis=1)"),
])
def test_column_positions_are_resolved(source, expected):
    assert fixed(source)[0] == expected


@pytest.mark.parametrize("source", [
    'df[df["team"] == "Team"]',  # a value, not a column position
    'df["team"]',  # exact already
    'df["nonexistent"]',  # nothing matches: the program fails with its own KeyError
    'x = "Made In"',  # not a column position
    'df.replace("Shirt", "x")',
])
def test_everything_else_is_left_alone(source):
    code, fixes = fixed(source)
    assert fixes == [] and ast.dump(ast.parse(code)) == ast.dump(ast.parse(source))


def test_ambiguous_spellings_are_left_alone():
    module = ast.parse('df["a b"]')
    assert resolve_columns(module, ["A B", "a_b"]) == []


def test_execute_reports_the_resolution():
    table = pd.DataFrame({"shirt": ["a", "b"], "Units Sold": [3, 5]})
    run = execute('df.sort_values("units sold", ascending=False)["Shirt"].iloc[0]', table, neural=None)
    assert run.ok and run.value == "b"
    assert [f.column for f in run.column_fixes] == ["Units Sold", "shirt"]
    assert "column 'units sold' read as 'Units Sold'" in run.warnings[0]
    assert run.to_json()["warnings"] == run.warnings


def test_neural_contexts_keep_working_with_resolved_columns():
    table = pd.DataFrame({"made in": ["Canada", "China"], "sales": [1, 2]})
    oracle = OracleBackend({"f_col": {"Is it in North America?": {"canada": "yes", "china": "no"}}})
    run = execute('df[f_col("Is it in North America?", ["Made In"])]["Sales"].sum()', table, neural=oracle)
    assert run.ok and run.value == 1


@pytest.mark.parametrize("context", ['["made_in"]', '"MADE_IN"', '["made  in"]'])
def test_a_neural_context_names_columns_spelt_as_pandas_positions_do(context):
    """`df["made_in"]` was read as the table's 'made in' but `f_col(q, ["made_in"])` failed with
    "no column 'made_in'": a call's context matched case and surrounding spaces only."""
    table = pd.DataFrame({"made in": ["Canada", "China"], "sales": [1, 2]})
    oracle = OracleBackend({"f_col": {"Is it in North America?": {"canada": "yes", "china": "no"}}})
    run = execute(f'df[f_col("Is it in North America?", {context})]["sales"].sum()', table, neural=oracle)
    assert run.ok and run.value == 1, run.error


def test_a_neural_context_spelling_two_columns_alike_is_still_an_error():
    table = pd.DataFrame({"made in": ["Canada"], "made_in": ["x"], "sales": [1]})
    oracle = OracleBackend({"f_col": {"Is it in North America?": {"canada": "yes"}}})
    run = execute('f_col("Is it in North America?", ["Made In"]).tolist()', table, neural=oracle)
    assert run.ok and run.value == [True]  # equal but for case to one column only: that one
    run = execute('f_col("Is it in North America?", ["MADE  IN"])', table, neural=oracle)
    assert not run.ok and "no column 'MADE  IN'" in run.error.message


@pytest.mark.parametrize("header, written", [("Ann\u00e9e", "Anne\u0301e"), ("Anne\u0301e", "Ann\u00e9e")])
def test_an_accent_encoded_otherwise_names_the_same_column(header, written):
    """A header saved decomposed (e + a combining accent, as macOS and some PDFs write it) and a program
    that writes it composed look the same: the program failed with "KeyError: 'Année'; the table's
    columns are ..., 'Année'", which it could not act on."""
    table = pd.DataFrame({header: [1979, 1995], "title": ["Alien", "Heat"]})
    oracle = OracleBackend({"f_col": {"Is it old?": {"1979": "yes", "1995": "no"}}})
    run = execute(f'df[f_col("Is it old?", [{written!r}])].sort_values({written!r})["title"].tolist() + '
                  f'[int(df[{written!r}].max())]', table, neural=oracle)
    assert run.ok and run.value == ["Alien", 1995], run.error


@pytest.mark.parametrize("program", ['df["nope"].max()', "df.nope.max()", 'df[["shirt", "nope"]]',
                                     'df[["nope", "other"]]', 'df.loc[df["price"] > 1, "nope"]'])
def test_a_column_no_table_has_is_an_error_that_lists_the_columns(program):
    table = pd.DataFrame({"shirt": ["a", "b"], "price": [1, 2]})
    error = execute(program, table, neural=None).outcome.error
    # was a bare "KeyError: 'nope'", which neither the user nor the repair prompt could act on
    assert error.kind == "runtime" and error.message.endswith("; the table's columns are 'shirt', 'price'")


@pytest.mark.parametrize("program", ['df.columns = df.columns.str.upper()\ndf["SHIRTS"].max()',
                                     'df = df.rename(columns={"shirt": "name"})\ndf["nope"].max()'])
def test_after_a_rename_the_listed_columns_are_said_to_be_the_tables_as_given(program):
    """After `df.columns = df.columns.str.upper()`, "the table's columns are 'shirt', 'price'" listed
    names the program's table no longer had, as if they were its columns."""
    table = pd.DataFrame({"shirt": ["a", "b"], "price": [1, 2]})
    error = execute(program, table, neural=None).outcome.error
    assert error.kind == "runtime"
    assert error.message.endswith("; the table's columns as given (the program renames columns) are 'shirt', 'price'")
    # a rename written in a string or a comment is no rename
    other = execute('s = "a.columns = b"  # df.rename(x)\ndf["SHIRTS"].max()', table, neural=None).outcome.error
    assert other.message.endswith("; the table's columns are 'shirt', 'price'")


@pytest.mark.parametrize("program, missing", [
    ('df.groupby("shirt").apply(lambda g: g[["shirt", "price"]].iloc[0])', "'shirt' is a column"),
    ('df[["shirt"]][["price"]]', "'price' is a column"),
    ('df[["shirt"]][["shirt", "price"]]', "'price' is a column"),
    ('df[["price"]][["shirt", "price"]]', "'shirt' is a column"),
])
def test_a_column_of_the_table_that_a_selection_lacks_is_not_said_missing_from_the_table(program, missing):
    """In pandas 3 a group of groupby(...).apply(...) holds no grouping column, so `g[["Director", ...]]`
    failed with "['Director'] not in index; the table's columns are ..., 'Director', ...", which
    contradicted itself (and the repair prompt quoted it)."""
    table = pd.DataFrame({"shirt": ["a", "b"], "price": [1, 2]})
    error = execute(program, table, neural=None).outcome.error
    assert error.kind == "runtime" and "columns are" not in error.message, error.message
    assert error.message.endswith(f"; {missing} of the table, but not of the DataFrame this line reads from, which "
                                  "no longer has it: a selection of other columns, or a group of "
                                  "groupby(...).apply(...), which holds no grouping column")


def test_the_columns_of_every_named_table_are_listed():
    orders = pd.DataFrame({"id": [1], "customer": ["x"]})
    customers = pd.DataFrame({"name": ["x"], "country": ["y"]})
    error = execute('customers["nation"]', orders, neural=None,
                    tables={"orders": orders, "customers": customers}).outcome.error
    assert error.message == ("KeyError: 'nation'; the tables' columns are orders (df): 'id', 'customer'; "
                             "customers: 'name', 'country'")


@pytest.mark.parametrize("program", ['df.loc[5, "price"]', 'df.set_index("price").loc["shirt"]'])
def test_a_key_error_about_a_row_is_left_alone(program):
    table = pd.DataFrame({"shirt": ["a", "b"], "price": [1, 2]})
    error = execute(program, table, neural=None).outcome.error
    assert error.exception_type == "KeyError" and "columns are" not in error.message


def test_a_number_read_as_a_column_named_by_its_digits_lists_the_columns():
    table = pd.DataFrame({"0": [1, 2], "1": [3, 4]})  # a DataFrame with int column names, as binder-py keeps it
    error = execute("df[0].sum()", table, neural=None).outcome.error
    assert error.message == "KeyError: 0; the table's columns are '0', '1'"


@pytest.mark.parametrize("program, expected", [
    # lower-cased, snake-cased headers: 'product_name' was read as the table's 'Product Name', renamed away
    ('df.columns = df.columns.str.lower().str.replace(" ", "_")\ndf[df["units_sold"] > 4]["shirt"].tolist()',
     ["b"]),
    ('df = df.rename(columns=str.lower)\ndf["units sold"].sum()', 8),
    ('df = df.rename(columns={"shirt": "Shirt"})\ndf["Shirt"].tolist()', ["a", "b"]),
    ('df.columns = ["Shirt", "units"]\ndf["Shirt"].tolist()', ["a", "b"]),
    ('df.assign(SHIRT=df["shirt"].str.upper())["SHIRT"].tolist()', ["A", "B"]),
    ('df.groupby("shirt").size().reset_index(name="Shirt")["Shirt"].sum()', 2),
    # a name the program does not give itself is still fixed
    ('df = df.rename(columns={"shirt": "kind"})\ndf["Units_Sold"].sum()', 8),
])
def test_a_name_the_program_gives_a_column_is_not_read_as_a_misspelling(program, expected):
    table = pd.DataFrame({"shirt": ["a", "b"], "Units Sold": [3, 5]})
    run = execute(program, table, neural=None)
    assert run.ok, run.error
    assert run.value == expected


def test_a_series_method_called_on_a_table_says_to_select_a_column():
    """`df[["shirt"]].tolist()` got "the table's columns are 'shirt', 'price'" appended, as if a
    column were missing; the repair prompt quoted it."""
    table = pd.DataFrame({"shirt": ["a", "b"], "price": [1, 2]})
    error = execute('df[df["price"] > 1][["shirt"]].tolist()', table, neural=None).outcome.error
    assert error.message == ("AttributeError: 'DataFrame' object has no attribute 'tolist'; tolist() is a method "
                             "of one column (a Series): select one column first, as in df['column'].tolist()")
    error = execute("df.name", table, neural=None).outcome.error  # an attribute, not a method: the columns
    assert error.message.endswith("; the table's columns are 'shirt', 'price'")
