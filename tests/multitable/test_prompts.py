"""Prompts for several tables: each table under its name, rows cut fairly, several-table exemplars."""

from __future__ import annotations

import pandas as pd
import pytest

from binder_py.errors import BinderError
from binder_py.prompting import build_e2e_prompt, build_parse_prompt, load_exemplars
from binder_py.prompting.exemplars import parse_exemplar_lines
from binder_py.prompting.table_format import TablesText


def chars(text: str) -> int:
    return len(text) // 4 + 1


def big_orders(n: int) -> pd.DataFrame:
    return pd.DataFrame({"order_id": range(n), "customer_id": [10 + i % 3 * 10 for i in range(n)],
                         "amount": [100 + i for i in range(n)]})


def test_two_tables_are_shown_by_name_with_the_note_and_several_table_exemplars(orders, customers):
    prompt = build_parse_prompt("analyst", orders, "Which EU customers spent the most?",
                                tables={"orders": orders, "customers": customers},
                                count_tokens=chars, context_window=16000)
    text = prompt.text
    target = text[text.rindex("\n\n") + 2:]
    assert target.index("CREATE TABLE orders(") < target.index("CREATE TABLE customers(")
    assert "SELECT * FROM orders;" in target and "SELECT * FROM customers;" in target
    assert target.endswith("Q: Which EU customers spent the most?\nNeuralPandas:\n")
    assert "There are several tables: orders, customers." in text and "`df` is the first one, orders" in text
    assert 'e.g. f_col(question, customers["name"])' in text  # a text column of the second table
    several = {e.id for e in load_exemplars("analyst") if e.several_tables}
    assert several <= set(prompt.exemplar_ids)
    assert prompt.exemplar_ids[-len(several):] == [i for i in prompt.exemplar_ids if i in several]  # shown last
    assert (prompt.table_rows_shown, prompt.table_rows_total) == (9, 9)
    # chat turns carry the same tables
    assert "CREATE TABLE customers(" in prompt.messages[-1][1]


def test_one_table_prompts_are_as_before(orders):
    plain = build_parse_prompt("analyst", orders, "Which order is largest?", count_tokens=chars,
                               context_window=16000)
    named = build_parse_prompt("analyst", orders, "Which order is largest?", tables={"orders": orders},
                               count_tokens=chars, context_window=16000)
    assert plain.text == named.text
    several = {e.id for e in load_exemplars("analyst") if e.several_tables}
    assert not several & set(plain.exemplar_ids) and "several tables" not in plain.text
    assert "CREATE TABLE table(" in plain.text and "SELECT * FROM w;" in plain.text


def test_rows_are_cut_fairly_across_tables(customers):
    orders = big_orders(400)
    prompt = build_parse_prompt("analyst", orders, "Which EU customers spent the most?",
                                tables={"orders": orders, "customers": customers, "returns": big_orders(300)},
                                count_tokens=chars, context_window=2500, num_shots=1, max_output_tokens=256)
    target = prompt.text[prompt.text.rindex("\n\n") + 2:]
    assert prompt.prompt_tokens <= 2500 - 256
    shown = prompt.table_rows_shown - 3  # the small table is shown whole ...
    assert "All rows of customers:" in target
    assert shown % 2 == 0 and shown >= 2  # ... and the two big ones the same number of rows
    k = shown // 2
    assert f"SELECT * FROM orders LIMIT {k};" in target and f"SELECT * FROM returns LIMIT {k};" in target
    assert prompt.table_rows_total == 703 and prompt.rows_truncated


def test_too_many_columns_for_the_context_is_a_clear_error(customers):
    wide = pd.DataFrame({f"column number {i}": [i] for i in range(300)})
    with pytest.raises(BinderError, match="too long for the model's context"):
        build_parse_prompt("analyst", wide, "q?", tables={"wide": wide, "customers": customers},
                           count_tokens=chars, context_window=1000, num_shots=0, min_shots=0)


def test_tables_text_in_pandas_style_names_each_table(orders, customers):
    text = TablesText({"orders": orders, "customers": customers}, style="pandas").render(2)
    assert "# orders: 6 rows × 3 columns" in text and "# orders.head(2):" in text
    assert "# customers: 3 rows × 3 columns" in text and "# customers.head(2):" in text


def test_e2e_prompt_shows_every_table(orders, customers):
    prompt = build_e2e_prompt("analyst", orders, "Which EU customer spent the most?",
                              tables={"orders": orders, "customers": customers},
                              count_tokens=chars, context_window=16000)
    target = prompt.text[prompt.text.rindex("\n\n") + 2:]
    assert "CREATE TABLE orders(" in target and "CREATE TABLE customers(" in target and target.endswith("A:")
    assert "There are several tables (orders, customers)" in prompt.text
    plain = build_e2e_prompt("analyst", orders, "Which order is largest?", count_tokens=chars,
                             context_window=16000)
    assert "CREATE TABLE invoices(" not in plain.text and "several tables" not in plain.text


ONE = ('{"id": "x-1", "name": "orders", "columns": ["id", "cid"], "rows": [["1", "2"]], '
       '"tables": [{"name": "customers", "columns": ["cid"], "rows": [["2"]]}], '
       '"question": "q?", "program": "orders.merge(customers, on=\\"cid\\").shape[0]", "answer": 1}')


def test_several_table_exemplars_parse():
    [exemplar] = parse_exemplar_lines([ONE])
    assert exemplar.several_tables and list(exemplar.tables) == ["orders", "customers"]
    assert exemplar.tables["orders"] is exemplar.table


@pytest.mark.parametrize("change, message", [
    (lambda l: l.replace('"name": "orders", ', ""), "the first table's name"),
    (lambda l: l.replace('"name": "customers"', '"name": "orders"'), "taken by another table"),
    (lambda l: l.replace('"name": "customers"', '"name": "df"'), "other than df"),
    (lambda l: l.replace('"rows": [["2"]]', '"rows": [["2", "3"]]'), r"tables\[0\]: row 0"),
    (lambda l: l.replace(', "tables": [{"name": "customers", "columns": ["cid"], "rows": [["2"]]}]', ""),
     "add the others in 'tables'"),
])
def test_malformed_several_table_exemplars_name_the_problem(change, message):
    with pytest.raises(BinderError, match=message):
        parse_exemplar_lines([change(ONE)])
