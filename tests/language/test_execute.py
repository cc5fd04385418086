"""The semantics of Binder-Python, each with an oracle backend, on the real sandbox and in-process."""

import json
import threading

import pandas as pd
import pytest

from binder_py.neural import CallableBackend, NeuralCache, OracleBackend
from binder_py.language import execute
from binder_py.neural.requests import NeuralRequest


def run(runner, program, table, backend, **kw):
    result = execute(program, table, neural=backend, sandbox=runner, **kw)
    return result


def test_f_col_boolean_filter_and_count(runner, shirts, shirt_oracle_data):
    oracle = OracleBackend(shirt_oracle_data)
    r = run(runner, 'df[f_col("Made in North America?", ["made in"])].shape[0]', shirts, oracle)
    assert r.ok, r.error
    assert r.value == 4


def test_new_column_and_typed_results(runner, shirts, shirt_oracle_data):
    oracle = OracleBackend(shirt_oracle_data)
    program = ('df["na"] = f_col("Made in North America?", ["made in"])\n'
               'df["cents"] = f_col("Price in cents?", "price")\n'
               'df["kg"] = f_col("Weight in kg?", "made in")\n'
               'df["code"] = f_col("Country code?", "made in")\n'
               '[str(df["na"].dtype), str(df["cents"].dtype), str(df["kg"].dtype), str(df["code"].dtype),'
               ' int(df["cents"].sum()), df["code"].tolist()]')
    r = run(runner, program, shirts, oracle)
    assert r.ok, r.error
    assert r.value[:4] == ["yesno", "Int64", "Float64", "string"]
    assert r.value[4] == 8000 + 1000 + 2500 + 3000 + 8500
    assert r.value[5] == ["US", "CN", "MX", "CA", "US"]


def test_na_answers_in_a_filter_select_nothing(runner, shirts, shirt_oracle_data):
    oracle = OracleBackend(shirt_oracle_data)
    # Polo is "unknown", Flannel has no key: both NA; a filter treats NA as not selected
    program = ('m = f_col("No chemicals?", "shirt")\n'
               '[df[m]["shirt"].tolist(), df[~m]["shirt"].tolist(), int(m.isna().sum())]')
    r = run(runner, program, shirts, oracle)
    assert r.ok, r.error
    assert r.value == [["Tuxedo shirt", "Tuxedo shirt"], ["T-shirt"], 2]


def test_series_is_indexed_like_the_context_rows(runner, shirts, shirt_oracle_data):
    oracle = OracleBackend(shirt_oracle_data)
    program = ('sub = df[df.price > 20]\n'
               's = f_col("Made in North America?", sub[["made in"]])\n'
               '[s.index.tolist(), s.tolist()]')
    r = run(runner, program, shirts, oracle)
    assert r.ok, r.error
    assert r.value == [[0, 2, 3, 4], [True, True, True, True]]


def test_series_context(runner, shirts, shirt_oracle_data):
    oracle = OracleBackend(shirt_oracle_data)
    r = run(runner, 'f_col("Made in North America?", df["made in"]).sum()', shirts, oracle)
    assert r.ok and r.value == 4


def test_a_context_whose_index_holds_labels_sends_them_first(runner, shirts):
    """`f_val("Which country ...?", df.groupby("made in")["price"].sum())` asked the model about the
    sums alone: the countries, in the index, were not sent. An index that holds labels (named, or
    not whole numbers) now goes first, the rows still indexed as before; row numbers (an unnamed
    integer index, as a filter keeps) are not sent."""
    seen = []

    def backend(request):
        seen.append((request.columns, request.keys))
        if request.kind == "val":
            return "China"
        return {key: "yes" if key.startswith("china") else "no" for key in request.keys}
    r = run(runner, 'f_val("Which country is in Asia?", df.groupby("made in")["price"].sum())', shirts, backend)
    assert r.ok and r.value == "China", r.error
    assert seen[-1] == (["made in", "price"], ["canada | 30", "china | 10", "mexico | 25", "usa | 165"])
    program = ('s = df.groupby("made in")["price"].sum()\n'
               'asia = f_col("Is it in Asia?", s)\n'
               '[asia.index.tolist(), asia.tolist(), s[asia].index.tolist()]')
    r = run(runner, program, shirts, backend)
    assert r.ok, r.error
    assert r.value == [["Canada", "China", "Mexico", "USA"], [False, True, False, False], ["China"]]
    r = run(runner, 'f_col("Is it in Asia?", df["made in"].value_counts()).sum()', shirts, backend)
    assert r.ok and r.value == 1 and seen[-1][0] == ["made in", "count"]
    r = run(runner, 'f_val("Which is cheapest?", df.set_index("shirt")[["made in", "price"]])', shirts, backend)
    assert r.ok and seen[-1][0] == ["shirt", "made in", "price"]
    r = run(runner, 'f_col("Is it in Asia?", df[df.price > 20]["made in"]).tolist()', shirts, backend)
    assert r.ok and seen[-1] == (["made in"], ["usa", "mexico", "canada"])
    # an index named like the column beside it: its own values are sent (the years beside their counts) ...
    r = run(runner, 'f_val("Which is it?", df.groupby("price")["price"].count())', shirts, backend)
    assert r.ok and seen[-1][0] == ["price (index)", "price"] and seen[-1][1][0] == "10 | 1"
    # ... and the column itself is not sent twice
    r = run(runner, 'f_val("Which is it?", df.set_index("made in", drop=False)[["made in", "price"]])', shirts,
            backend)
    assert r.ok and seen[-1][0] == ["made in", "price"]


def test_multi_column_context_keys(runner, shirts, shirt_oracle_data):
    oracle = OracleBackend(shirt_oracle_data)
    r = run(runner, 'df[f_col("Is it pure cotton?", ["shirt", "material"])]["price"].tolist()', shirts, oracle)
    assert r.ok, r.error
    assert r.value == [80, 85]
    assert oracle.requests[0].keys == ["tuxedo shirt | cotton", "t-shirt | polyester", "polo | cotton blend",
                                       "flannel | wool"]


def test_nested_calls_answer_inner_first(runner, shirts, shirt_oracle_data):
    oracle = OracleBackend(shirt_oracle_data)
    program = 'f_val("Which is the most formal?", df[f_col("Made in North America?", "made in")][["shirt"]])'
    r = run(runner, program, shirts, oracle)
    assert r.ok, r.error
    assert r.value == "Tuxedo shirt"
    assert [c.name for c in r.calls] == ["f_col", "f_val"]
    inner, outer = r.calls
    assert inner.site == 1 and outer.site == 0 and r.sites[1].parent_site == 0
    # China filtered out; rows are sequences of text (tuples as they come from the sandbox)
    assert list(map(list, outer.rows)) == [["Tuxedo shirt"], ["Polo"], ["Flannel"], ["Tuxedo shirt"]]


def test_f_val_types_and_lists(runner, shirts, shirt_oracle_data):
    oracle = OracleBackend(shirt_oracle_data)
    program = ('[f_val("How many countries?", ["made in"]) + 1, f_val("Which are from Asia?", ["made in"]),'
               ' f_val("Is any made in Europe?", df), f_val("Never written?", df)]')
    r = run(runner, program, shirts, oracle)
    assert r.ok, r.error
    assert r.value == [5, ["China"], False, None]


def test_solve_and_qa_map_compatibility(runner, shirts, shirt_oracle_data):
    oracle = OracleBackend(shirt_oracle_data)
    program = ('def solve(table):\n'
               '    table = qa_map(table, "Made in North America?", ["made in"])\n'
               '    sub = table[table["Made in North America?"]]\n'
               '    flags = f_col("No chemicals?", "shirt")\n'  # resolves against solve's local `table`
               '    best = qa_ans(sub, "Which is the most formal?", ["shirt"])\n'
               '    return [best, int(flags.sum()), list(table.columns)]\n')
    r = run(runner, program, shirts, oracle)
    assert r.ok, r.error
    assert r.value == ["Tuxedo shirt", 2, ["shirt", "made in", "price", "material", "Made in North America?"]]


def test_bare_f_resolution_at_run_time(runner, shirts, shirt_oracle_data):
    oracle = OracleBackend(shirt_oracle_data)
    program = ('df["na"] = f("Made in North America?", "made in")\n'
               'f("Which is the most formal?", df[df["na"]][["shirt"]])')
    r = run(runner, program, shirts, oracle)
    assert r.ok, r.error
    assert r.value == "Tuxedo shirt"


def test_dedup_sends_each_distinct_row_once(runner, shirts, shirt_oracle_data):
    calls = []

    def fn(request: NeuralRequest):
        calls.append(request)
        return {k: "yes" for k in request.keys}

    backend = CallableBackend(fn, name="counting")
    r = run(runner, 'f_col("Made in North America?", "made in").tolist()', shirts, backend)
    assert r.ok, r.error
    assert r.value == [True] * 5
    assert len(calls) == 1 and calls[0].keys == ["usa", "china", "mexico", "canada"]
    assert r.calls[0].n_rows == 5 and len(r.calls[0].rows) == 4


def test_cache_across_programs_and_within(runner, shirts):
    calls = []

    def fn(request: NeuralRequest):
        calls.append((request.kind, list(request.keys)))
        if request.kind == "val":
            return "Polo"
        return {k: "yes" for k in request.keys}

    backend = CallableBackend(fn, name="counting")
    cache = NeuralCache()
    p1 = 'df[f_col("Is it made in North America?", "made in")].shape[0]'
    p2 = ('a = f_col("Is it made in North America?", "made in")\n'
          'b = f_col("Is it made in North America?", df[df.price > 20][["made in"]])\n'
          'f_val("Which is the most formal?", df[["shirt"]])')
    r1 = run(runner, p1, shirts, backend, cache=cache)
    r2 = run(runner, p2, shirts, backend, cache=cache)
    r3 = run(runner, 'f_val("Which is the most formal?", df[["shirt"]])', shirts, backend, cache=cache)
    assert r1.ok and r2.ok and r3.ok, (r1.error, r2.error, r3.error)
    assert calls == [("col", ["usa", "china", "mexico", "canada"]), ("val", ["tuxedo shirt", "t-shirt", "polo",
                                                                            "flannel", "tuxedo shirt"])]
    assert [c.from_cache for c in r2.calls] == [True, True, False]
    assert r3.calls[0].from_cache and r3.value == "Polo"
    assert cache.stats.backend_calls == 2


def test_the_cache_keeps_answers_of_one_kind_from_a_call_that_wants_another(runner, shirts):
    """A question used as yes/no by one program and as a number by another is asked once per kind (its
    prompt says the kind): the second program is not handed the first's yes/no answers to refuse."""
    kinds = []

    def fn(request: NeuralRequest):
        kind = request.meta.get("answer_type")
        kinds.append(kind.kind.value if kind is not None else None)
        return {k: ("yes" if kind is not None and kind.kind.value == "yes_no" else "3") for k in request.keys}

    backend = CallableBackend(fn, name="kinds")
    cache = NeuralCache()
    as_mask = run(runner, 'df[f_col("Stock in the shop", ["made in"])].shape[0]', shirts, backend, cache=cache)
    as_number = run(runner, 'f_col("Stock in the shop", ["made in"]).mean()', shirts, backend, cache=cache)
    again = run(runner, 'df[f_col("Stock in the shop", ["made in"])]["shirt"].tolist()', shirts, backend, cache=cache)
    assert as_mask.ok and as_number.ok and again.ok, (as_mask.error, as_number.error, again.error)
    assert kinds == ["yes_no", "number"]
    assert as_mask.value == 5 and as_number.value == 3
    assert not as_number.calls[0].warnings and again.calls[0].from_cache


def test_a_free_text_call_reads_another_kind_s_answers_but_stores_its_own_under_its_own_kind(runner, shirts):
    """A call of no particular kind reads yes/no answers that cover its rows; rows it must ask itself
    (with its own prompt) are kept under its own kind, never handed to a later yes/no call to refuse."""
    asked = []

    def fn(request: NeuralRequest):
        kind = request.meta.get("answer_type")
        kind = kind.kind.value if kind is not None else None
        asked.append((kind, sorted(request.keys)))
        return {k: ("yes" if kind == "yes_no" else "3") for k in request.keys}

    backend = CallableBackend(fn, name="kinds")
    cache = NeuralCache()
    some = run(runner, 'sub = df[df.price > 20]\nsub[f_col("Stock in the shop", sub[["made in"]])].shape[0]', shirts,
               backend, cache=cache)
    covered = run(runner, 'df[df.price > 20]["made in"].tolist()\nf_col("Stock in the shop", df[df.price > 20][["made in"]]).tolist()',
                  shirts, backend, cache=cache)
    free = run(runner, 'f_col("Stock in the shop", ["made in"]).tolist()', shirts, backend, cache=cache)
    every = run(runner, 'df[f_col("Stock in the shop", ["made in"])].shape[0]', shirts, backend, cache=cache)
    assert all(r.ok for r in (some, covered, free, every)), [r.error for r in (some, covered, free, every)]
    assert covered.calls[0].from_cache and covered.value == [True, True, True, True]  # the yes/no answers, read
    assert asked == [("yes_no", ["canada", "mexico", "usa"]), ("text", ["canada", "china", "mexico", "usa"]),
                     ("yes_no", ["china"])]
    assert every.value == 5 and not every.calls[0].warnings


def test_cache_is_per_backend(runner, shirts):
    cache = NeuralCache()
    yes = OracleBackend({"f_col": {"Q?": {"usa": "yes"}}})
    no = OracleBackend({"f_col": {"Q?": {"usa": "no"}}})
    a = run(runner, 'f_col("Q?", "made in").iloc[0]', shirts, yes, cache=cache)
    b = run(runner, 'f_col("Q?", "made in").iloc[0]', shirts, no, cache=cache)
    assert (a.value, b.value) == (True, False)


def test_unknown_column_is_a_runtime_error_with_line(runner, shirts, shirt_oracle_data):
    r = run(runner, 'x = 1\ny = f_col("Made in North America?", ["country"])\ny', shirts,
            OracleBackend(shirt_oracle_data))
    assert not r.ok
    assert r.error.kind == "runtime" and r.error.line == 2
    assert "country" in r.error.message and "'made in'" in r.error.message


def test_f_val_over_no_rows_is_not_asked_and_answers_missing(runner, shirts):
    """`f_val(q, df[df["shirt"].str.contains("zzz")][["shirt"]])` asked the model about an empty
    table, and the embedded model answered it anyway ("no-english-language film"), an answer that
    then won the vote. An f_val over no rows is now missing, without a request."""
    asked = []

    def backend(request):
        asked.append(request)
        return "Tuxedo shirt"
    r = run(runner, 'f_val("Which is the most formal?", df[df["shirt"].str.contains("zzz")][["shirt"]])',
            shirts, backend)
    assert r.ok and r.value is None and asked == []
    assert r.calls[0].warnings == ["its sub-table has no rows, so it was not asked: the answer is missing"]


def test_a_context_with_no_columns_is_an_error_not_a_question_about_nothing(runner, shirts):
    """`f_col(q, df[[]])` asked the backend about rows with no cells (every key ""), and a model
    answered anyway."""
    asked = []

    def backend(request):
        asked.append(request)
        return {key: "yes" for key in request.keys} if request.kind == "col" else "x"
    for program in ('f_col("Is it formal?", df[[]]).sum()', 'f_val("Which is formal?", df.iloc[:, :0])',
                    'qa_map(df, "Is it formal?", [])'):
        r = run(runner, program, shirts, backend)
        assert not r.ok and "has no columns" in r.error.message, (program, r.error)
    assert asked == []


def test_a_list_of_columns_as_context_says_to_give_names(runner, shirts, shirt_oracle_data):
    """`f_col(q, [df["shirt"], df["price"]])` failed with "TypeError: unhashable type: 'Series'"."""
    r = run(runner, 'f_col("Is it formal?", [df["shirt"], df["price"]]).sum()', shirts,
            OracleBackend(shirt_oracle_data))
    assert not r.ok and r.error.line == 1
    assert "a list context of f_col holds column names, not a Series" in r.error.message


@pytest.mark.parametrize("program, says", [
    ("df.price.sum", "the function or method Series.sum itself, not its result: call it"),
    ('df.groupby("made in")["price"]', "a pandas GroupBy: aggregate it"),
    ("df.price.rolling(2)", "a pandas rolling/expanding window: aggregate it"),
    ("df.shirt.str", "the .str accessor"),
    ("df.loc", "an indexer (.loc/.iloc)"),
    ("df.iterrows()", "an iterator or generator, not a value"),
    ("def solve(table):\n    yield 1", "an iterator or generator, not a value"),
    ("type(1)", "the class int itself, not a value"),          # was "the function or method int itself"
    ("pd.DataFrame", "the class DataFrame itself, not a value"),
])
def test_an_answer_that_is_no_value_fails_saying_what_to_finish(real_sandbox, shirts, program, says):
    """`df.price.sum` (the call forgotten) answered "<bound method Series.sum of ...>", and such
    programs could win the vote with that text; a GroupBy, window, accessor, indexer or generator
    likewise. The program now fails with what to do, which the repair prompt quotes (the sandbox's
    check, so the real sandbox only)."""
    r = run(real_sandbox, program, shirts, None)
    assert not r.ok and r.error.kind == "runtime"
    assert "the program's answer is " + says in r.error.message, r.error.message


def test_an_answer_that_joins_a_text_columns_cells_fails_saying_to_convert_them(runner):
    """`df["Amount"].sum()` over "$1,234.50"-like text answered the cells joined ("$1,234.50$987.00..."),
    and the embedded model's programs voted it in; it now fails with what to write, for the repair prompt."""
    table = pd.DataFrame({"customer": ["Acme", "Beta", "Acme"], "amount": ["$1,234.50", "$987.00", "$2,500"]})
    for program in ('df["amount"].sum()', 'df[df["customer"] == "Acme"]["amount"].sum()',
                    'df.groupby("customer")["amount"].sum().loc["Acme"]'):
        r = run(runner, program, table, None)
        assert not r.ok and r.error.kind == "runtime", program
        assert "is the text cells of column 'amount' of df joined together" in r.error.message
        assert "pd.to_numeric(df['amount'].str.replace(" in r.error.message
    for program, value in (('df[df["customer"] == "Beta"]["amount"].sum()', "$987.00"),  # one cell is a value
                           ('df["customer"].iloc[0] + " and " + df["customer"].iloc[1]', "Acme and Beta"),
                           ('", ".join(df["customer"])', "Acme, Beta, Acme")):
        r = run(runner, program, table, None)
        assert r.ok and r.value == value, (program, r.error)

    # a count written as text beside a column of one-character cells, a value that is a cell of another
    # column, and a table with two columns of one name: answers, not joined cells (nor a crash)
    goals = pd.DataFrame({"goals": ["1", "2", "-", "0", "1"], "result": ["W", "L", "W", "WL", "L"]})
    for program, value in (('str(len(df) * 2)', "10"), ('df["result"].iloc[3]', "WL"),
                           ('df["result"].iloc[0] + df["result"].iloc[1]', "WL")):
        r = run(runner, program, goals, None)
        assert r.ok and r.value == value, (program, r.error)
    twice = pd.DataFrame([["$1.00", "$2.00"], ["$3.00", "$4.00"]], columns=["amount", "amount"])
    r = run(runner, 'df.iloc[:, 0].sum()', twice, None)
    assert not r.ok and "joined together" in r.error.message


def test_an_answer_that_joins_an_f_col_columns_text_answers_fails_saying_to_read_them_as_numbers(runner):
    """`df["bo"] = f_col("What is the box office?", ...)` then `df["bo"].sum()` answered the answers joined
    ("$1.2 billion850 million$45 million...") without a word: only the table's own columns were checked."""
    films = pd.DataFrame({"film": ["a", "b", "c", "d"]})
    oracle = OracleBackend({"f_col": {"What is the box office?": {
        "a": "$1.2 billion", "b": "850 million", "c": "$45 million", "d": "850 million"}}})
    for program in ('df["bo"] = f_col("What is the box office?", ["film"])\ndf["bo"].sum()',
                    'f_col("What is the box office?", ["film"]).iloc[::-1].sum()'):  # any order, repeated
        r = run(runner, program, films, oracle)
        assert not r.ok and r.error.kind == "runtime", (program, r.value)
        assert "is the text answers of f_col('What is the box office?', ...) joined" in r.error.message
        assert "pd.to_numeric(f_col(...), errors='coerce')" in r.error.message
    for program, value in (('import pandas as pd\n'
                             'pd.to_numeric(f_col("What is the box office?", ["film"]), errors="coerce").sum()',
                            2_945_000_000),  # the advice: read as numbers
                           ('f_col("What is the box office?", ["film"]).iloc[0]', "$1.2 billion"),
                           ('", ".join(f_col("What is the box office?", ["film"]).iloc[:2])',
                            "$1.2 billion, 850 million")):
        r = run(runner, program, films, oracle)
        assert r.ok and r.value == value, (program, r.error)

    # an answer that is a cell of the table is one, whatever the call's answers could make joined
    kits = pd.DataFrame({"g": ["a", "b", "c"], "year": ["1999", "2010", "2020"]})
    codes = OracleBackend({"f_col": {"Kit code?": {"a": "19", "b": "99", "c": "X1"}}})
    r = run(runner, 'df["k"] = f_col("Kit code?", ["g"])\ndf.loc[df["k"] == "19", "year"].iloc[0]', kits, codes)
    assert r.ok and r.value == "1999", r.error


def test_values_that_are_answers_still_are(real_sandbox, shirts):
    for program in ("df.price.sum()", 'df.groupby("made in")["price"].sum()', "df", "df.index", "df.dtypes",
                    'df.shirt.astype("category")', "df.price.describe()"):
        r = run(real_sandbox, program, shirts, None)
        assert r.ok, (program, r.error)


def test_column_names_match_ignoring_case(runner, shirts, shirt_oracle_data):
    r = run(runner, 'f_col("Made in North America?", "Made In").sum()', shirts, OracleBackend(shirt_oracle_data))
    assert r.ok and r.value == 4


def test_syntax_and_form_errors_are_failed_outcomes(runner, shirts):
    r = run(runner, "x = (1 +", shirts, None)
    assert not r.ok and r.error.kind == "syntax" and r.error.line == 1
    r = run(runner, "y = 2\nf_col()", shirts, None)
    assert not r.ok and r.error.kind == "syntax" and r.error.line == 2 and "f_col" in r.error.message


def test_python_mode_rejects_neural_calls(runner, shirts):
    r = run(runner, 'x = 1\ndf[f_col("Is it?", "shirt")]', shirts, None, allow_neural=False)
    assert not r.ok and r.error.kind == "policy" and r.error.line == 2 and "f_col" in r.error.message
    r = run(runner, 'df["price"].max()', shirts, None, allow_neural=False)
    assert r.ok and r.value == 85


def test_no_backend_is_a_clear_runtime_error(runner, shirts):
    r = run(runner, 'f_col("Is it?", "shirt")', shirts, None)
    assert not r.ok and r.error.line == 1 and "neural backend" in r.error.message


def test_backend_failure_is_recorded(runner, shirts):
    def fn(request):
        raise RuntimeError("model exploded")

    r = run(runner, 'x = 0\nf_col("Is it?", "shirt")', shirts, CallableBackend(fn))
    assert not r.ok and r.error.line == 2 and "model exploded" in r.error.message
    assert "model exploded" in r.calls[0].error


def test_callable_per_row_backend(runner, shirts):
    backend = CallableBackend.per_row(lambda q, row: len(row["shirt"]), lambda q, rows: rows[0]["shirt"])
    r = run(runner, '[f_col("Length?", "shirt").tolist(), f_val("First?", "shirt")]', shirts, backend)
    assert r.ok, r.error
    assert r.value == [[12, 7, 4, 7, 12], "Tuxedo shirt"]


def test_an_answer_read_as_the_calls_type_reaches_the_program_as_that_type(runner, shirts):
    """A typed call accepted "Yes, it is." as yes and "80 cm" as 80, then handed the program the
    texts: the mask column was text (a KeyError listing the answers) and .mean() a TypeError."""
    def row_fn(question, row):
        if question.startswith("Is"):
            return "Yes, it is." if row["made in"] in ("USA", "Mexico") else "No."
        return f"{row['price']} cm" if row["price"] != 10 else "10."

    backend = CallableBackend.per_row(row_fn, lambda q, rows: None)
    program = ('df["len"] = f_col("Length of the label?", ["price"])\n'
               '[df[f_col("Is it made in the south?", ["made in"])]["shirt"].tolist(), float(df["len"].mean()),'
               ' str(df["len"].dtype)]')
    r = run(runner, program, shirts, backend)
    assert r.ok, r.error
    assert r.value == [["Tuxedo shirt", "Polo", "Tuxedo shirt"], 46.0, "Int64"]
    first = r.calls[0] if r.calls[0].question.startswith("Length") else r.calls[1]
    assert first.answers["80"] == 80 and first.answers["10"] == 10


def test_an_f_val_answer_read_as_its_type_reaches_the_program_as_that_type(runner, shirts):
    """f_col read "2 shirts" as 2 for a number site, f_val handed the text on: `+ 1` was a TypeError."""
    backend = CallableBackend.per_row(lambda q, row: None,
                                      lambda q, rows: "2 shirts" if q.startswith("How") else "Yes, it is.")
    program = ('[f_val("How many shirts are from the USA?", df[["shirt", "made in"]]) + 1,'
               ' f_val("Is the polo cheap?", df[["shirt", "price"]]) & True, f_val("Which is formal?", df[["shirt"]])]')
    r = run(runner, program, shirts, backend)
    assert r.ok, r.error
    assert r.value == [3, True, "Yes, it is."]  # a text site keeps the answer as written


def test_a_yes_no_column_read_as_text_says_what_to_write(runner, shirts, shirt_oracle_data):
    """`qa_map(...)[q].str.contains('yes')`, right for the original Binder's "yes"/"no" text columns, failed
    with pandas' bare "Can only use .str accessor with string values, not boolean"."""
    program = ('t = qa_map(df, "Made in North America?", ["made in"])\n'
               't[t["Made in North America?"].str.contains("yes")].shape[0]')
    r = run(runner, program, shirts, OracleBackend(shirt_oracle_data))
    assert not r.ok and r.error.line == 2
    assert r.error.message.endswith("use it as a mask (df[mask], mask.sum()) or compare it with 'yes' "
                                    "(column == 'yes') instead of .str")
    plain = run(runner, 'df[df["price"] > 20].astype(bool)["shirt"].str.len().sum()', shirts, None)
    assert "yes/no column" not in (plain.error.message if plain.error else "")  # no neural call: no hint


def test_trace_json_is_complete(runner, shirts, shirt_oracle_data):
    program = 'df[f_col("Made in North America?", "made in")]["shirt"].tolist()'
    r = run(runner, program, shirts, OracleBackend(shirt_oracle_data), title="shirts")
    data = json.loads(json.dumps(r.to_json()))
    assert data["ok"] and data["title"] == "shirts" and "binder_neural_call(0, 'f_col'" in data["rewritten_code"]
    site = data["sites"][0]
    assert program[site["span"][0]:site["span"][1]] == site["text"]
    call = data["calls"][0]
    assert call["question"] == "Made in North America?" and call["answers"]["mexico"] == "Yes"
    assert call["from_cache"] is False and "usage" in call and call["seconds"] >= 0


def test_table_is_not_modified(runner, shirts, shirt_oracle_data):
    before = shirts.copy()
    run(runner, 'df["na"] = f_col("Made in North America?", "made in")\ndf', shirts, OracleBackend(shirt_oracle_data))
    pd.testing.assert_frame_equal(shirts, before)


def test_single_flight_across_threads():
    cache = NeuralCache()
    started = threading.Event()
    release = threading.Event()
    calls = []

    def compute(request):
        calls.append(list(request.keys))
        started.set()
        release.wait(5)
        from binder_py.neural.backends import NeuralAnswer

        return NeuralAnswer(answers={k: "yes" for k in request.keys})

    req = NeuralRequest("col", "Q?", ["a"], [["x"], ["y"]], ["x", "y"])
    results = []

    def worker():
        results.append(cache.resolve_col("b", req, compute))

    t1 = threading.Thread(target=worker)
    t1.start()
    started.wait(5)
    t2 = threading.Thread(target=worker)
    t2.start()
    release.set()
    t1.join(5)
    t2.join(5)
    assert calls == [["x", "y"]]
    assert all(r.answers == {"x": "yes", "y": "yes"} for r in results)
    assert sorted(r.from_cache for r in results) == [False, True]


def test_column_names_resolve_in_the_calling_function_and_comprehensions(runner, shirts, shirt_oracle_data):
    oracle = OracleBackend(shirt_oracle_data)
    program = ('def solve(table):\n'
               '    table = table[table.price < 50]\n'
               '    return [int(f_col(q, "made in").sum()) for q in ["Made in North America?"]]\n')
    r = run(runner, program, shirts, oracle)
    assert r.ok, r.error
    assert r.value == [2]  # the filtered local `table` (China, Mexico, Canada), not the global df
    assert r.calls[0].n_rows == 3


def test_a_plain_function_answers_neural_calls_as_in_binder(runner, shirts):
    """execute(..., neural=fn) raised "AttributeError: 'function' object has no attribute 'name'",
    though Binder(neural=fn) takes any function of a NeuralRequest."""
    def answer(request: NeuralRequest):
        return {key: "yes" if key in ("usa", "canada", "mexico") else "no" for key in request.keys}

    r = run(runner, 'df[f_col("Made in North America?", ["made in"])].shape[0]', shirts, answer)
    assert r.ok, r.error
    assert r.value == 4
    with pytest.raises(TypeError, match="neural= takes a NeuralBackend"):
        run(runner, "1", shirts, "oracle:answers.json")


def test_warnings_shorten_long_row_keys(runner):
    """A row the backend left unanswered was named in full: a 100 KB cell made a 100 KB warning."""
    table = pd.DataFrame({"b": ["x" * 50_000, "y"]})
    r = run(runner, 'f_col("Long?", ["b"]).isna().sum()', table, CallableBackend(lambda request: {}))
    assert r.ok and r.value == 2
    assert r.warnings and all(len(w) < 300 for w in r.warnings), r.warnings
    typed = run(runner, 'df[f_col("Long?", ["b"])].shape[0]', table,
                CallableBackend(lambda request: {k: "maybe" for k in request.keys}))
    assert typed.ok and typed.warnings and all(len(w) < 300 for w in typed.warnings), typed.warnings


def test_output_cut_by_the_sandbox_is_said(real_sandbox, shirts):
    """print() of more than the sandbox keeps was cut at 64 KB without a word (exec's stderr ended
    mid-line, --json had no warning)."""
    r = run(real_sandbox, 'print("a" * 200_000)\n1', shirts, None)
    assert r.ok and r.value == 1 and r.outcome.stdout_truncated
    assert any("output was cut" in w for w in r.warnings)
    small = run(real_sandbox, 'print("a")\n1', shirts, None)
    assert not any("output was cut" in w for w in small.warnings)


# .unique() of a text column is an ArrowStringArray: it crossed the sandbox as its repr text
def test_unique_of_a_text_column_is_a_list_answer(real_sandbox):
    table = pd.DataFrame({"region": ["North", "South", "North"], "units": [1, 2, 3]}).astype({"region": "str"})
    result = run(real_sandbox, 'df["region"].unique()', table, None)
    assert result.ok, result.error
    assert result.value == ["North", "South"]


def test_a_list_of_cells_as_f_col_context_says_they_are_cells_not_column_names(runner, shirts):
    """`f_col(q, df["made in"].tolist())` failed with "no column 'USA' in the table", which did not say
    that the list had been read as column names, nor what to pass."""
    r = run(runner, 'df[f_col("Is it far?", df["made in"].tolist())]', shirts, lambda request: "yes")
    assert not r.ok and "no column 'USA' in the table" in r.error.message
    assert "'USA' is a value in column 'made in', not a column name" in r.error.message
    assert "df['made in']" in r.error.message
    r = run(runner, 'f_col("Is it formal?", ["style"])', shirts, lambda request: "x")
    assert not r.ok and "not a column name" not in r.error.message  # no cell holds it: the columns are listed


def _seen_by(runner, program, table, answer="x"):
    seen = []

    def backend(request):
        seen.append(request)
        return answer
    return run(runner, program, table, backend), seen


def test_f_val_asks_about_the_values_a_program_computed(runner, shirts):
    """The embedded model writes `f_val(q, df["Make"].value_counts().idxmin())` or
    `f_val(q, df[...]["Year"].tolist())`: the values it computed are what it asks about, one column
    named after the table column holding the texts (else `value`), not column names that fail."""
    r, seen = _seen_by(runner, 'f_val("Which country makes the most?", df["made in"].value_counts().idxmax())',
                       shirts, "USA")
    assert r.ok, r.error
    assert r.value == "USA"
    assert seen[0].columns == ["made in"] and [list(row) for row in seen[0].rows] == [["USA"]]
    r, seen = _seen_by(runner, 'f_val("Which one?", df[df["price"] > 0]["made in"].tolist())', shirts)
    assert r.ok, r.error
    assert seen[0].columns == ["made in"] and [row[0] for row in seen[0].rows] == shirts["made in"].tolist()
    r, seen = _seen_by(runner, 'f_val("Are there at least two countries?", df["made in"].nunique() > 1)', shirts,
                       "yes")
    assert r.ok, r.error
    assert seen[0].columns == ["value"] and len(seen[0].rows) == 1
    r, seen = _seen_by(runner, 'f_val("How many?", [int(df["price"].max()), 3])', shirts, "2")
    assert r.ok, r.error
    assert seen[0].columns == ["value"] and len(seen[0].rows) == 2


def test_f_val_over_the_values_of_no_rows_is_not_asked(runner, shirts):
    """`f_val(q, df[df.country == "United States"]["year"].tolist())` over a filter that matched no row:
    no values, not asked (as a sub-table of no rows), the answer missing and said so."""
    r, seen = _seen_by(runner, 'f_val("How many?", df[df["made in"] == "nowhere"]["price"].tolist())', shirts)
    assert r.ok, r.error
    assert r.value is None and not seen
    assert r.calls[0].warnings == ["its sub-table has no rows, so it was not asked: the answer is missing"]


def test_f_val_still_refuses_a_context_that_is_neither_columns_nor_values(runner, shirts):
    """A text that is no column and no cell is a misspelt column (the columns are listed), and a list
    mixing a column name with values is read as names; None or NaN is no value to ask about."""
    for program, said in (('f_val("Which?", "shrit")', "no column 'shrit'"),
                          ('f_val("Which?", ["shirt", "USA"])', "'USA' is a value in column 'made in'"),
                          ('f_val("Which?", None)', "or (f_val) values the program computed"),
                          ('f_col("Which?", [])', "got list"),
                          ('f_val("Which?", float("nan"))', "got float")):
        r, seen = _seen_by(runner, program, shirts)
        assert not r.ok and said in r.error.message, (program, r.error)
        assert not seen


def test_a_free_text_call_waits_for_another_kind_s_rows_in_flight_instead_of_asking_again():
    """Two programs at once: the yes/no call is being answered when the free-text call over the same rows
    comes; it waits and reads those answers (one backend call), as it would from the cache."""
    from binder_py.neural.answer_types import META_KEY, TEXT, YES_NO
    from binder_py.neural.backends import NeuralAnswer

    started, release = threading.Event(), threading.Event()
    asked = []

    def compute(request):
        asked.append(request.meta[META_KEY].kind.value)
        started.set()
        release.wait(5)
        return NeuralAnswer(answers={k: "yes" for k in request.keys})

    cache = NeuralCache()

    def req(kind):
        return NeuralRequest("col", "Is it big?", ["c"], [["a"], ["b"]], ["a", "b"], meta={META_KEY: kind})

    typed = threading.Thread(target=lambda: cache.resolve_col("b", req(YES_NO), compute))
    typed.start()
    started.wait(5)
    results = []
    free = threading.Thread(target=lambda: results.append(cache.resolve_col("b", req(TEXT), compute)))
    free.start()
    free.join(0.3)
    assert free.is_alive()  # waiting for the yes/no rows, not asking
    release.set()
    typed.join(5)
    free.join(5)
    assert asked == ["yes_no"] and results[0].answers == {"a": "yes", "b": "yes"} and results[0].from_cache


def test_the_joined_text_check_reads_no_table_once_per_joined_column(monkeypatch):
    """Red team 13: whether a cell is the answer was asked again for every column whose cells the answer
    joins, each time over every column of every table: a 3 MB table of 1,000 columns of "ab"/"cd" with
    "abcd" in its last column made `df.iloc[0, 0] + df.iloc[1, 0]` cost the parent 3 minutes (300 columns:
    21 s), growing with the square of the columns. It is asked once per answer."""
    from binder_py.language import joined_text
    from sandbox.outcome import Outcome

    columns = {f"c{i}": ["ab", "cd"] * 5 for i in range(40)}
    columns["last"] = ["zz"] * 9 + ["abcd"]
    table = pd.DataFrame(columns, dtype=str)
    asked = []
    real = joined_text._a_cell
    monkeypatch.setattr(joined_text, "_a_cell", lambda *a: asked.append(1) or real(*a))
    outcome = joined_text.refuse_joined_text(Outcome(ok=True, value="abcd"), table, {})
    assert outcome.ok and outcome.value == "abcd"  # a cell of the last column: an answer
    assert len(asked) == 1


def test_a_text_answer_beside_an_object_column_of_dates_is_an_answer(runner):
    """Red team 13: a table a caller passes may keep an object column of dates or numbers
    (`prepare_table` types text columns only); the joined-text check read every text-typed column with
    `.str`, which raises for such a column, so every text answer was a traceback out of `execute` (and
    `ask`) in the parent."""
    import datetime

    table = pd.DataFrame({"day": pd.Series([datetime.date(2020, 1, 1), datetime.date(2021, 1, 1)], dtype=object),
                          "n": pd.Series([1, 2], dtype=object), "name": ["ab", "cd"]})
    r = run(runner, '"hello world"', table, None)
    assert r.ok and r.value == "hello world", r.error
    r = run(runner, 'df["name"].sum()', table, None)
    assert not r.ok and "joined together" in r.error.message


def test_a_row_filter_whose_question_only_names_its_column_is_a_program_error(runner, shirts):
    """The quick start's winning program was `df[f_col("Made in", ["made in"]) & ...]`: a "question"
    that is the column's name, asked as a yes/no filter, which the embedded model answered yes for
    every country. Such a filter now fails saying what to ask (the repair prompt quotes it), and it
    is not planned (no request is made for it)."""
    asked = []

    def backend(request):
        asked.append(request.question)
        return {key: "yes" for key in request.keys}

    from binder_py.neural import CallableBackend

    r = run(runner, 'df[f_col("Made in", ["made in"])]["shirt"].tolist()', shirts, CallableBackend(backend))
    assert not r.ok and r.error.line == 1
    assert "the question of f_col, 'Made in', is only the name of its column 'made in'" in r.error.message
    assert 'f_col("Is it ...?", [\'made in\'])' in r.error.message
    assert asked == []
    for program in ('df[f_col("made_in?", "made in")]', 'df[f_col("PRICE", ["shirt", "price"]) == "yes"]'):
        failed = run(runner, program, shirts, CallableBackend(backend))
        assert not failed.ok and "is only the name of its column" in failed.error.message, program
    # a question about the column, and a call of another kind that names its column, still run
    ok = run(runner, 'df[f_col("Made in North America?", ["made in"])]["shirt"].nunique()', shirts,
             CallableBackend(backend))
    assert ok.ok and ok.value == 4
    # ... and so does a name that asks something, or a flag column the model reads as yes/no
    flags = shirts.assign(**{"Is it on sale?": ["Yes", "No", "Yes", "No", "Yes"], "organic": ["Y", "N", "N", "Y", "Y"]})
    for program, count in (('df[f_col("Is it on sale?", ["Is it on sale?"])]["shirt"].nunique()', 4),
                           ('df[f_col("organic?", ["organic"])]["shirt"].nunique()', 4)):
        flagged = run(runner, program, flags, CallableBackend(backend))
        assert flagged.ok and flagged.value == count, (program, flagged.error)
    numbers = run(runner, 'f_col("price", ["price"]).sum()', shirts,
                  CallableBackend(lambda request: {key: "5" for key in request.keys}))
    assert numbers.ok and numbers.value == 25, numbers.error


def test_the_joined_text_check_of_a_call_s_answers_ends_in_bounded_time():
    """Red team 14: whether an answer is an f_col call's answers joined tried every length of answer at every
    position an answer reaches: 3,000 answers "aa", "aaa", ... (of a call over rows the program made up) and
    the answer "a" * 300001 + "b" beside a 3-row table cost the parent 47 s after a run of 0.4 s, growing with
    the answer times the number of answer lengths. The search gives up after a bounded number of characters."""
    import time

    from binder_py.language import joined_text
    from sandbox.outcome import Outcome

    table = pd.DataFrame({"x": ["1", "2", "3"]})
    answers = [("q", ["a" * (k + 2) for k in range(3000)] + ["a" * 100001])]
    start = time.perf_counter()
    outcome = joined_text.refuse_joined_text(Outcome(ok=True, value="a" * 300001 + "b"), table, {}, answers)
    assert time.perf_counter() - start < 5
    assert outcome.ok
    refused = joined_text.refuse_joined_text(Outcome(ok=True, value="aaaaabbb"), table, {}, [("q", ["aa", "aaa", "bbb"])])
    assert not refused.ok and "joined together" in refused.error.message
    # the bound is the answer's, over every call: a program makes thousands of calls (0.3 s each with a bound per call)
    many = [(f"q{i}", ["a" * (k + 2) for k in range(30)] + ["a" * 100001]) for i in range(300)]
    start = time.perf_counter()
    outcome = joined_text.refuse_joined_text(Outcome(ok=True, value="a" * 300001 + "b"), table, {}, many)
    assert time.perf_counter() - start < 5
    assert outcome.ok


def test_a_two_column_call_answers_rows_that_joined_alike_apart(runner) -> None:
    table = pd.DataFrame({"name": ["a | b", "a"], "note": ["c", "b | c"]})
    answers = {"a \\| b | c": "yes", "a | b \\| c": "no"}
    r = run(runner, 'f_col("Is it?", ["name", "note"]).tolist()', table,
            lambda request: {key: answers[key] for key in request.keys})
    assert r.ok, r.error
    assert r.value == [True, False]


def test_the_one_cell_a_program_narrowed_a_which_question_to_answers_when_the_model_cannot(runner, shirts):
    """`f_val("Which shirt …?", df[filter]["shirt"])` with one shirt left: shown the name alone, the model
    could not tell; the program did the choosing, so that cell is the answer, and the trace says so."""
    program = 'f_val("Which shirt is made in Mexico?", df[df["made in"] == "Mexico"]["shirt"])'
    r = run(runner, program, shirts, lambda request: "unknown")
    assert r.ok, r.error
    assert r.value == shirts.loc[shirts["made in"] == "Mexico", "shirt"].iloc[0]
    assert any("narrowed the rows to" in w for w in r.calls[0].warnings)
    # the model's own answer stands; other questions, several cells or no text stay missing
    assert run(runner, program, shirts, lambda request: "Other").value == "Other"
    for other in ('f_val("What colour is it?", df[df["made in"] == "Mexico"]["shirt"])',
                  'f_val("Which shirt is it?", df[df["made in"] != "Mexico"]["shirt"])',
                  'f_val("Which price?", df[df["made in"] == "Mexico"]["price"])'):
        r = run(runner, other, shirts, lambda request: "unknown")
        assert r.ok and r.value is None, (other, r.value)
    # a cell without letters is no name: the fastest time a program computed does not answer "which athlete?"
    times = pd.DataFrame({"athlete": ["wang zhen", "chen ding"], "time": ["1:20:54", "1:21:10"]})
    r = run(runner, 'f_val("Which athlete had the fastest time?", df["time"].min())', times, lambda request: "unknown")
    assert r.ok and r.value is None
