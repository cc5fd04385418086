"""``Binder.ask`` and ``df.binder.ask`` with several tables, through the whole pipeline."""

from __future__ import annotations

import pandas as pd
import pytest

import binder_py  # noqa: F401 - registers df.binder
from binder_py import Binder, BinderError
from binder_py.lm import ScriptedLM
from binder_py.neural import CallableBackend
from tests.multitable.helpers import in_eu, scripted

JOIN = ('merged = orders.merge(customers, on="customer_id")\n'
        'merged.groupby("country")["amount"].sum().idxmax()')
NEURAL = ('eu = customers[f_col("Is this country in the EU?", customers["country"])]["customer_id"]\n'
          'orders[orders["customer_id"].isin(eu)]["amount"].sum()')
ON_DF = 'df[f_col("Is the amount over 100?", ["amount"])]["order_id"].tolist()'


def test_ask_with_a_mapping_runs_programs_over_every_table(orders, customers):
    seen: list = []
    binder = Binder(lm=scripted([JOIN, JOIN, NEURAL], seen), neural=CallableBackend(in_eu), task="analyst", n=3)
    answer = binder.ask({"orders": orders, "customers": customers}, "Which country's customers spent the most?")
    # (745, the EU customers' sum, does not vote: the question asks which country, rule 0 of the vote)
    assert answer.value == "Sweden" and answer.confidence == 1.0
    assert sorted(str(c.value) for c in answer.candidates) == ["745", "Sweden"]
    assert any("a number where the question asks for a name" in w for w in answer.warnings)
    assert list(answer.tables) == ["orders", "customers"]
    assert answer.table is answer.tables["orders"]
    pd.testing.assert_frame_equal(answer.tables["customers"], customers)
    [(purpose, request)] = [s for s in seen if s[0] != "repair"]
    prompt = request.prompt if request.prompt is not None else request.messages[-1][1]
    assert "CREATE TABLE orders(" in prompt and "CREATE TABLE customers(" in prompt


def test_neural_calls_across_tables_and_lm_columns_of_the_first(orders, customers):
    def answer_both(request):
        if request.question.startswith("Is the amount"):
            return {key: "yes" if int(key) > 100 else "no" for key in request.keys}
        return in_eu(request)

    binder = Binder(lm=scripted([ON_DF]), neural=CallableBackend(answer_both), task="analyst", n=1)
    answer = binder.ask({"orders": orders, "customers": customers}, "Which orders are over 100?")
    assert answer.value == [1, 2, 4]
    made = answer.lm_columns()
    assert list(made.columns) == ["order_id", "customer_id", "amount", "Is the amount over 100?"]
    binder = Binder(lm=scripted([NEURAL]), neural=CallableBackend(in_eu), task="analyst", n=1)
    answer = binder.ask({"orders": orders, "customers": customers}, "How much did EU customers spend?")
    assert answer.value == 745
    [call] = answer.winner.neural_calls
    assert call.columns == ["country"]
    assert answer.lm_columns() is None  # the call made no column of the first table (orders)


def test_tables_may_be_paths_and_one_table_works_as_before(tmp_path, orders, customers):
    path = tmp_path / "customers.csv"
    customers.to_csv(path, index=False)
    binder = Binder(lm=scripted([JOIN]), task="analyst", n=1)
    assert binder.ask({"orders": orders, "customers": str(path)}, "Which country spent most?").value == "Sweden"
    one = Binder(lm=scripted(['df["amount"].sum()']), task="analyst", n=1).ask(orders, "Total?")
    assert one.value == 925 and one.tables == {} and one.table is not None


def test_bad_names_and_values_are_clear_errors(orders, customers):
    binder = Binder(lm=scripted([JOIN]), task="analyst", n=1)
    with pytest.raises(BinderError, match=r"table name 'order lines' is not a Python identifier.*'order_lines'"):
        binder.ask({"order lines": orders, "customers": customers}, "q?")
    with pytest.raises(BinderError, match="what programs call the first table"):
        binder.ask({"orders": orders, "table": customers}, "q?")
    with pytest.raises(BinderError, match="no tables given"):
        binder.ask({}, "q?")
    with pytest.raises(BinderError, match="table 'customers' must be a DataFrame or a table file's path"):
        binder.ask({"orders": orders, "customers": [1, 2]}, "q?")


def test_e2e_mode_reads_every_table(orders, customers):
    seen: list = []
    lm = ScriptedLM(lambda request, purpose: seen.append(request) or "A: Sweden")
    answer = Binder(lm=lm, task="analyst", mode="e2e", n=1).ask({"orders": orders, "customers": customers},
                                                                 "Which country's customers spent the most?")
    assert answer.value == "Sweden"
    prompt = seen[0].prompt if seen[0].prompt is not None else seen[0].messages[-1][1]
    assert "CREATE TABLE orders(" in prompt and "CREATE TABLE customers(" in prompt


def test_ask_many_takes_several_tables(orders, customers):
    binder = Binder(lm=scripted([JOIN]), task="analyst", n=1)
    answers = binder.ask_many([({"orders": orders, "customers": customers}, "Which country spent most?"),
                               {"table": {"orders": orders, "customers": customers}, "question": "Again?"}],
                              progress=False)
    assert [a.value for a in answers] == ["Sweden", "Sweden"]


def test_accessor_takes_other_tables(orders, customers):
    binder = Binder(lm=scripted([JOIN.replace("orders.merge", "df.merge")]), task="analyst", n=1)
    answer = orders.binder.ask("Which country spent most?", binder=binder, others={"customers": customers})
    assert answer.value == "Sweden" and list(answer.tables) == ["df", "customers"]
    named = Binder(lm=scripted([JOIN]), task="analyst", n=1)
    answer = orders.binder.ask("Which country spent most?", binder=named, others={"customers": customers},
                               name="orders")
    assert answer.value == "Sweden" and list(answer.tables) == ["orders", "customers"]
    with pytest.raises(BinderError, match="the name of this DataFrame"):
        orders.binder.ask("q?", binder=named, others={"df": customers})
    alone = Binder(lm=scripted(['df["amount"].max()']), task="analyst", n=1)
    assert orders.binder.ask("Largest amount?", binder=alone).value == 400


@pytest.mark.parametrize("wrap", [lambda table: table, lambda table: [table]], ids=["frame", "list"])
def test_accessor_others_that_is_not_a_mapping_says_what_others_is(orders, customers, wrap):
    """others=customers (or a list) failed inside pandas: "ValueError: The truth value of a DataFrame
    is ambiguous"."""
    binder = Binder(lm=scripted([JOIN]), task="analyst", n=1)
    with pytest.raises(BinderError, match=r"others is a mapping of names to tables, e.g. others=\{'customers'"):
        orders.binder.ask("q?", binder=binder, others=wrap(customers))


def test_every_table_is_lower_cased_when_the_task_says_so(orders, customers):
    binder = Binder(lm=scripted(['customers["country"].tolist()']), task="wikitq", n=1)
    answer = binder.ask({"orders": orders, "customers": customers}, "which countries?")
    assert answer.value == ["germany", "united kingdom", "sweden"]
    assert answer.tables["customers"]["country"].tolist() == ["Germany", "United Kingdom", "Sweden"]  # as given
