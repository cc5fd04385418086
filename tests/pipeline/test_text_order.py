"""A warning when the winning program orders numbers that the table holds as text ("$987.00" above "$2,500.00")."""

from __future__ import annotations

import pandas as pd
import pytest

from binder_py import Binder
from binder_py.lm import ScriptedLM
from binder_py.pipeline.text_order import text_ordered_numbers

ORDERS = pd.DataFrame({
    "customer": ["Ann", "Bob", "Cy", "Dee"],
    "amount": ["$1,234.50", "$987.00", "$2,500.00", ""],
    "discount": ["10%", "5%", "15%", "0%"],
    "share": ["10%", "20%", "30%", "40%"],  # text order is number order: nothing to say
    "units": [3, 1, 7, 2],
    "code": ["007", "010", "100", "200"],  # codes, not numbers written with signs
})
TABLES = {"df": ORDERS, "table": ORDERS, "orders": ORDERS, "signs": pd.DataFrame({"x": ["$5", "-$-5", "--7"]})}


@pytest.mark.parametrize("program, column", [
    ('df["amount"].max()', "amount"),
    ('df.loc[df["amount"].idxmax(), "customer"]', "amount"),
    ('df.sort_values("amount", ascending=False)["customer"].iloc[0]', "amount"),
    ('df[df.units > 1].sort_values(by=["customer", "amount"])', "amount"),
    ('orders.nlargest(1, "amount")["customer"]', "amount"),
    ('df[df["amount"] > "$500"]["customer"].tolist()', "amount"),
    ('df.discount.min()', "discount"),
    ('df["amount"].sort_values().tolist()', "amount"),
])
def test_ordering_a_column_of_numbers_held_as_text_is_said(program, column):
    lines = text_ordered_numbers(program, TABLES)
    assert len(lines) == 1 and lines[0].startswith(f"orders column {column!r} (a max, min, sort or <, >), whose "
                                                   "numbers the table holds as text, so in text order: ")


def test_the_line_shows_two_cells_out_of_order_and_the_conversion():
    assert text_ordered_numbers('df["amount"].max()', TABLES) == [
        "orders column 'amount' (a max, min, sort or <, >), whose numbers the table holds as text, so in text "
        "order: '$2,500.00' before '$987.00'; to order them as numbers convert the column first, e.g. "
        "pd.to_numeric(df['amount'].str.replace(r'[^0-9.\\-]', '', regex=True), errors='coerce')"]


@pytest.mark.parametrize("program", [
    'df["share"].max()',  # its text order is its number order
    'df["units"].max()',  # a numeric column
    'df["customer"].max()',  # text that is no number
    'df["code"].max()',  # plain digits kept as text: codes
    'df["amount"].tolist()',  # not ordered
    'df[df["amount"] == "$987.00"]',  # compared for equality
    'other["amount"].max()',  # no such table
    'df[',  # does not parse
    'signs["x"].max()',  # cells with two signs are no numbers written as text (and must not fail the vote)
    'df["amount"] = pd.to_numeric(df["amount"].str.replace(r"[$,]", "", regex=True))\ndf["amount"].max()',
    'df = df.assign(amount=df["amount"].str.len())\ndf.sort_values("amount")',  # numbers by then
])
def test_anything_else_is_left_alone(program):
    assert text_ordered_numbers(program, TABLES) == []


def test_the_answer_warns_when_its_winning_program_orders_such_a_column():
    """"Who placed the largest order?" answered Bob Jones ($987.00, the largest as text) without a word.
    The link stage now runs such a program again with the column ordered by value (test_value_order.py),
    and that answer wins; without it (``link_literals=False``) the text order's answer is warned about."""
    program = 'df.loc[df["amount"].idxmax(), "customer"]'
    binder = Binder(lm=ScriptedLM(lambda request, purpose: program), n=1, progress=False, cache=False,
                    link_literals=False)
    answer = binder.ask(ORDERS, "who placed the largest order?")
    assert answer.value == "Bob"
    assert [w for w in answer.warnings if w.startswith("the winning program orders column 'amount'")]
    linked = Binder(lm=ScriptedLM(lambda request, purpose: program), n=1, progress=False, cache=False)
    answer = linked.ask(ORDERS, "who placed the largest order?")
    assert answer.value == "Cy" and not [w for w in answer.warnings if "orders column" in w]


def test_digits_of_other_scripts_are_no_numbers_written_as_text():
    """Arabic-Indic digits matched the number pattern (\\d), were then stripped, and float("") failed the
    vote stage, so the whole question; such a column is left alone."""
    tables = {"df": pd.DataFrame({"a": ["١٢", "٣", "5"]})}
    assert text_ordered_numbers('df["a"].max()', tables) == []
