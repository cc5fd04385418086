"""Programs over several tables in the real sandbox: joins, and neural calls whose context comes
from any table (Series and sub-table contexts; column names still refer to ``df``)."""

from __future__ import annotations

import pandas as pd
import pytest

from binder_py.errors import BinderError
from binder_py.language import execute
from binder_py.neural import CallableBackend, OracleBackend
from tests.multitable.helpers import in_eu


def run(program, orders, customers, **kwargs):
    return execute(program, orders, tables={"orders": orders, "customers": customers}, **kwargs)


def test_every_table_is_a_variable_and_df_is_the_first(orders, customers):
    result = run("(df is orders, table is orders, len(customers), orders['amount'].sum())", orders, customers,
                 neural=None)
    assert result.ok, result.error
    assert result.value == (True, True, 3, 925)


def test_a_join_program_runs(orders, customers):
    program = ('merged = orders.merge(customers, on="customer_id")\n'
               'merged.groupby("country")["amount"].sum().idxmax()')
    result = run(program, orders, customers, neural=None)
    assert result.ok, result.error
    assert result.value == "Sweden"  # 400 + 15, against Germany 250 + 80 and United Kingdom 120 + 60


def test_f_col_on_another_tables_column(orders, customers):
    program = ('eu = customers[f_col("Is this country in the EU?", customers["country"])]["customer_id"]\n'
               'orders[orders["customer_id"].isin(eu)]["amount"].sum()')
    result = run(program, orders, customers, neural=CallableBackend(in_eu))
    assert result.ok, result.error
    assert result.value == 250 + 80 + 400 + 15
    [call] = result.calls
    assert call.columns == ["country"] and sorted(call.keys) == ["germany", "sweden", "united kingdom"]


def test_f_val_on_a_sub_table_of_another_table(orders, customers):
    program = ('best = f_val("Which company is Scandinavian?", customers[["name", "country"]])\n'
               'cid = customers.loc[customers["name"] == best, "customer_id"].iloc[0]\n'
               'orders[orders["customer_id"] == cid]["amount"].sum()')
    result = run(program, orders, customers, neural=CallableBackend(in_eu))
    assert result.ok, result.error
    assert result.value == 415
    [call] = result.calls
    assert call.kind == "val" and call.columns == ["name", "country"] and len(call.rows) == 3


def test_column_names_refer_to_df_even_on_a_merged_df(orders, customers):
    oracle = OracleBackend({"f_col": {"Is this country in the EU?": EU_ORACLE}, "f_val": {}})
    program = ('df = orders.merge(customers, on="customer_id")\n'
               'df[f_col("Is this country in the EU?", ["country"])]["amount"].sum()')
    result = run(program, orders, customers, neural=oracle)
    assert result.ok, result.error
    assert result.value == 745
    # on the original df (orders) the column does not exist: the call says which columns it has
    result = run('f_col("Is this country in the EU?", ["country"])', orders, customers, neural=oracle)
    assert not result.ok and "no column 'country'" in result.error.message


EU_ORACLE = {"germany": "yes", "united kingdom": "no", "sweden": "yes"}


def test_a_column_of_another_table_is_not_respelt_as_a_column_of_df():
    first = pd.DataFrame({"Country": ["x"], "n": [1]})
    second = pd.DataFrame({"country": ["Germany", "Sweden"]})
    result = execute('(first["Country"].tolist(), second["country"].tolist(), df["COUNTRY"].tolist())', first,
                     tables={"first": first, "second": second}, neural=None)
    # "country" is second's own column; "COUNTRY" matches two tables' columns and is left alone
    assert not result.ok and "COUNTRY" in result.error.message
    assert not result.column_fixes


def test_a_misspelt_column_of_one_table_is_still_read_as_that_column():
    first = pd.DataFrame({"label": ["x"]})
    second = pd.DataFrame({"Home Country": ["Germany", "Sweden"]})
    result = execute('second["home_country"].tolist()', first, tables={"first": first, "second": second},
                     neural=None)
    assert result.ok and result.value == ["Germany", "Sweden"]
    assert [str(f) for f in result.column_fixes] == ["line 1: column 'home_country' read as 'Home Country'"]


def test_one_table_runs_as_before(orders):
    result = execute('df["amount"].sum()', orders, neural=None)
    assert result.ok and result.value == 925


def test_prefetch_plans_only_calls_on_df(orders, customers):
    asked = []

    def record(request):
        asked.append(request.question)
        return in_eu(request)

    program = ('a = f_col("Is this country in the EU?", customers["country"])\n'
               'b = f_col("Is the amount large?", ["amount"])\n'
               'int(a.sum()) + len(b)')
    backend = CallableBackend(record)
    result = run(program, orders, customers, neural=backend, prefetch=True)
    assert result.ok, result.error
    assert result.value == 2 + 6
    prefetched = {c.question for c in result.calls if c.prefetched}
    assert "Is the amount large?" in prefetched  # a call on df: asked before the program reached it
    assert "Is this country in the EU?" not in prefetched  # another table's column: asked when reached


@pytest.mark.parametrize("tables, message", [
    ({"df": None}, "DataFrames"),
    ({"pd": pd.DataFrame({"a": [1]})}, "would hide a name"),
    ({"orders": pd.DataFrame({"a": [1]}), "df": pd.DataFrame({"a": [1]})}, "first table"),
])
def test_bad_tables_are_refused_before_running(orders, tables, message):
    with pytest.raises((BinderError, TypeError), match=message):
        execute("1", orders, tables=tables, neural=None)


def test_a_column_of_another_table_read_on_df_says_which_table_has_it(orders, customers):
    """`df["country"]` with country a column of customers only failed with a bare "KeyError:
    'country'" (no columns listed, since some table has it), and `f_col(q, "country")` listed df's
    columns only: neither said where the column is, nor what to write instead."""
    result = run('df["country"].tolist()', orders, customers, neural=None)
    assert not result.ok
    assert "'country' is a column of customers, not of df" in result.error.message
    assert "customers['country']" in result.error.message
    result = run('f_col("Is this country in the EU?", "country")', orders, customers, neural=CallableBackend(in_eu))
    assert not result.ok and "no column 'country'" in result.error.message
    assert "'country' is a column of customers, not of df" in result.error.message
    result = run('df["nope"]', orders, customers, neural=None)  # no table has it: the columns are listed as before
    assert "the tables' columns are orders (df)" in result.error.message and "not of df" not in result.error.message


def test_a_join_on_a_column_one_table_lacks_says_which_table_lacks_it(orders):
    """`sales.merge(customers, on="Customer")` where customers spells it "customer" (the embedded model wrote
    it) failed with a bare "KeyError: 'Customer'", which told the user and the repair prompt nothing."""
    clients = pd.DataFrame({"Customer_ID": [10, 20, 30], "country": ["Germany", "United Kingdom", "Sweden"]})
    result = execute('orders.merge(clients, on="customer_id")["country"].tolist()', orders,
                     tables={"orders": orders, "clients": clients}, neural=None)
    assert not result.ok
    assert result.error.message.startswith("KeyError: 'customer_id'; 'customer_id' is a column of orders but not "
                                           "of clients (it has 'Customer_ID')")
    assert "left_on=..., right_on=..." in result.error.message
    alone = execute('df.set_index("amount").loc[5]', orders, neural=None)  # one table: a row label, as before
    assert alone.error.message == "KeyError: 5"


def test_a_column_read_from_a_table_that_lacks_it_says_where_to_read_it_not_how_to_join(orders, customers):
    """`customers["amount"].sum()` got the join advice (merge with left_on/right_on), which the repair
    prompt quotes; the column is to be read from the table that has it. A df that is none of the named
    tables is named df."""
    tables = {"orders": orders, "customers": customers}
    result = execute('customers["amount"].sum()', orders, tables=tables, neural=None)
    assert not result.ok
    message = result.error.message
    assert "'amount' is a column of orders but not of customers" in message
    assert "orders['amount']" in message and "merge" not in message
    unnamed = execute('customers["amount"].sum()', orders, tables={"customers": customers}, neural=None)
    assert "'amount' is a column of df but not of customers" in unnamed.error.message
    # a list of df's columns read from another table is not "a selection or a groupby group"
    listed = execute('customers[["amount"]].sum()', orders, tables=tables, neural=None)
    assert not listed.ok and "apply" not in listed.error.message and "orders (df):" in listed.error.message
    # a line that joins text, not tables, gets no merge advice
    text = execute('", ".join(customers["amount"])', orders, tables=tables, neural=None)
    assert "orders['amount']" in text.error.message and "merge" not in text.error.message


def test_an_f_col_filtering_a_merged_table_reads_its_column_names_there(orders, customers):
    """`merged = orders.merge(customers, ...)` then `merged[f_col(q, ["country"])]` (the embedded model
    wrote it) failed with "no column 'country' in the table": the names were read in df (orders),
    although the mask filters merged's rows and must be indexed like them."""
    oracle = OracleBackend({"f_col": {"Is this country in the EU?": EU_ORACLE}, "f_val": {}})
    merged = 'merged = orders.merge(customers, on="customer_id")\n'
    for program in (merged + 'merged[f_col("Is this country in the EU?", ["country"])]["amount"].sum()',
                    merged + 'merged.loc[f_col("Is this country in the EU?", "country") == "yes", "amount"].sum()',
                    merged + 'merged[~~f_col("Is this country in the EU?", "country") & (merged.amount > 0)].amount.sum()'):
        result = run(program, orders, customers, neural=oracle)
        assert result.ok, (program, result.error)
        assert result.value == 745
    # a filtered table without the named column, or a Series: the names are df's as before
    result = run('s = orders["amount"]\ns[f_col("Is the amount over 100?", "amount")].tolist()', orders, customers,
                 neural=CallableBackend(lambda r: {k: "yes" if int(k) > 100 else "no" for k in r.keys}))
    assert result.ok and result.value == [250, 120, 400], result.error


def test_a_name_error_with_several_tables_lists_the_tables_names(orders, customers):
    """Names made from file names (`my-data (1).csv` -> my_data_1) are not obvious, and a wrong one
    failed with a bare NameError."""
    result = run("len(customer)", orders, customers, neural=None)
    assert not result.ok
    assert result.error.message.endswith("; the tables are named orders (also df), customers")
    alone = execute("len(customer)", orders, neural=None)
    assert alone.error.message == "NameError: name 'customer' is not defined"
