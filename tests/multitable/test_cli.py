"""``binder-py ask TABLE... QUESTION``: several table files, named after their file names."""

from __future__ import annotations

import json

import pytest

from binder_py.cli import main
from binder_py.lm.testserver import LoopbackServer

NEURAL = ('eu = customers[f_col("Is this country in the EU?", customers["country"])]["customer_id"]\n'
          'orders[orders["customer_id"].isin(eu)]["amount"].sum()')


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture()
def files(tmp_path, orders, customers, monkeypatch):
    monkeypatch.setenv("BINDER_CACHE_DIR", str(tmp_path / "cache"))
    orders.to_csv(tmp_path / "orders.csv", index=False)
    customers.to_csv(tmp_path / "customers.csv", index=False)
    oracle = tmp_path / "oracle.json"
    oracle.write_text(json.dumps({"f_col": {"Is this country in the EU?": {
        "germany": "yes", "united kingdom": "no", "sweden": "yes"}}, "f_val": {}}))
    return tmp_path


def serve(program, prompts):
    def respond(body, api):
        prompts.append(json.dumps(body))
        return program
    return LoopbackServer(responder=respond)


def test_ask_answers_over_two_table_files(capsys, files):
    prompts: list[str] = []
    with serve(NEURAL, prompts) as server:
        code, out, err = run(capsys, "ask", str(files / "orders.csv"), str(files / "customers.csv"),
                             "How much did EU customers spend?", "--lm", f"openai:m@{server.base_url}",
                             "--neural", f"oracle:{files / 'oracle.json'}", "--n", "1", "--quiet",
                             "--task", "analyst")
    assert code == 0, err
    assert out.strip() == "745"
    assert "CREATE TABLE orders(" in prompts[0] and "CREATE TABLE customers(" in prompts[0]


def test_duplicate_and_reserved_stems_get_suffixed_names(capsys, files, orders, customers):
    (files / "a").mkdir()
    (files / "b").mkdir()
    orders.to_csv(files / "a" / "orders.csv", index=False)
    customers.to_csv(files / "b" / "orders.csv", index=False)
    customers.to_csv(files / "list.csv", index=False)
    prompts: list[str] = []
    program = "(df is orders, len(orders), len(orders_2), 10 * len(list_))"
    with serve(program, prompts) as server:
        code, out, err = run(capsys, "ask", str(files / "a" / "orders.csv"), str(files / "b" / "orders.csv"),
                             str(files / "list.csv"), "How many rows?", "--lm", f"openai:m@{server.base_url}",
                             "--n", "1", "--quiet", "--json", "--task", "analyst")
    assert code == 0, err
    assert json.loads(out)["value"] == [True, 6, 3, 30]
    assert "There are several tables: orders, orders_2, list_." in prompts[0]


def test_one_table_file_works_as_before(capsys, files):
    prompts: list[str] = []
    with serve('df["amount"].sum()', prompts) as server:
        code, out, err = run(capsys, "ask", str(files / "orders.csv"), "Total amount?",
                             "--lm", f"openai:m@{server.base_url}", "--n", "1", "--quiet", "--task", "analyst")
    assert code == 0, err
    assert out.strip() == "925"
    assert "CREATE TABLE orders(" in prompts[0] and "several tables" not in prompts[0]  # titled by its file


def test_a_missing_table_file_is_named(capsys, files):
    code, out, err = run(capsys, "ask", str(files / "orders.csv"), str(files / "nope.csv"), "q?",
                         "--lm", "openai:m@http://127.0.0.1:9/v1")
    assert code == 2 and out == "" and "nope.csv" in err and "Traceback" not in err


def test_exec_runs_a_program_over_two_table_files(capsys, files):
    """binder-py exec took one table: a program written for two could not be run by hand
    ("binder-py: error: unrecognized arguments: program.py")."""
    program = files / "program.py"
    program.write_text(NEURAL + "\n")
    code, out, err = run(capsys, "exec", str(files / "orders.csv"), str(files / "customers.csv"), str(program),
                         "--neural", f"oracle:{files / 'oracle.json'}")
    assert code == 0, err
    assert out.strip() == "745"
    program.write_text("(df is orders, len(customers))\n")
    code, out, err = run(capsys, "exec", str(files / "orders.csv"), str(files / "customers.csv"), str(program))
    assert (code, out.strip()) == (0, "[true, 3]")
    code, out, err = run(capsys, "exec", str(files / "orders.csv"), str(program))  # one table: df only
    assert code == 1 and "NameError: name 'orders' is not defined" in err


def test_ask_json_names_the_tables_it_was_asked_of(capsys, files, orders, customers):
    with serve(NEURAL, []) as server:
        code, out, err = run(capsys, "ask", str(files / "orders.csv"), str(files / "customers.csv"),
                             "How much did EU customers spend?", "--lm", f"openai:m@{server.base_url}",
                             "--neural", f"oracle:{files / 'oracle.json'}", "--n", "1", "--quiet",
                             "--task", "analyst", "--json")
    assert code == 0, err
    tables = json.loads(out)["tables"]
    assert list(tables) == ["orders", "customers"]
    assert tables["orders"] == {"rows": len(orders), "columns": list(orders.columns)}
    with serve("len(df)", []) as server:
        code, out, err = run(capsys, "ask", str(files / "orders.csv"), "How many orders?", "--lm",
                             f"openai:m@{server.base_url}", "--n", "1", "--quiet", "--json")
    assert code == 0, err
    assert json.loads(out)["tables"] == {"df": {"rows": len(orders), "columns": list(orders.columns)}}
