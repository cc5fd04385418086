"""The answer's views without a browser: the tie rule, the counts, lm_columns without a winner,
the same sentences in explain() and the HTML, and model output escaped."""

from __future__ import annotations

import warnings

import pandas as pd
import pytest

from binder_py.vote import NEAR_TIE_MARGIN, vote_closeness
from binder_py.notebook import answer_html
from binder_py.views.examples import ask, no_answer_view, tie_view
from binder_py.vote import VoteShare


@pytest.fixture(scope="module")
def no_answer():
    return no_answer_view()


@pytest.fixture(scope="module")
def tie():
    return tie_view()


def shares(*weights: float) -> list[VoteShare]:
    total = sum(weights)
    return [VoteShare(key=(str(i),), display=str(i), weight=w, count=1, share=w / total, candidate_orders=[i])
            for i, w in enumerate(weights)]


def test_tie_and_near_tie_rule():
    assert vote_closeness(shares(1, 1, 1)) == "tie"
    assert vote_closeness(shares(2, 2, 1)) == "tie"
    assert vote_closeness(shares(0.1 + 0.2, 0.3)) == "tie"  # equal to 9 significant digits
    assert vote_closeness(shares(6, 5)) == "near_tie"  # 55% against 45%
    assert vote_closeness(shares(3, 1)) is None
    assert vote_closeness(shares(5)) is None and vote_closeness([]) is None
    first, second = shares(6, 5)
    assert first.share - second.share <= NEAR_TIE_MARGIN


def test_a_tie_is_said_in_every_view(tie):
    answer = tie
    assert answer.tie and not answer.near_tie and len(answer.tied) == 3
    assert "Tie: 3 answers got the same vote weight" in answer.explain()
    assert "Tie: 3 answers got the same vote weight" in answer_html(answer)
    assert answer.to_json()["closeness"] == "tie"


def test_counts_separate_samples_from_repairs_and_read_the_same_everywhere(no_answer):
    answer = no_answer
    counts = answer.counts
    assert (counts.sampled, counts.distinct, counts.repairs, counts.failed, counts.voted) == (4, 2, 2, 6, 0)
    sentence = counts.sentence(answer.mode)
    assert sentence == "4 program(s) sampled (2 distinct) + 2 written by repair; 6 failed; 0 voted"
    assert sentence in answer.explain() and sentence in answer_html(answer)
    assert answer.to_json()["counts"] == {"sampled": 4, "distinct": 2, "repairs": 2, "failed": 6, "voted": 0,
                                         "rescopes": 0, "links": 0, "choices": 0, "empty": 0, "set_aside": 0,
                                         "replaced": 0}


def test_counts_add_up_when_programs_answer_nothing_or_are_set_aside():
    """"8 program(s) sampled ...; 6 failed; 1 voted" left one program unaccounted for: one that ran
    and answered nothing (or was set aside) was in neither count."""
    import pandas as pd

    from binder_py.ask import Binder
    from binder_py.lm import ScriptedLM

    programs = ['df[df.year > 3000]["title"].tolist()', "len(df)", "df.nope", 'df["title"].tolist()', "x = 1"]
    answer = Binder(lm=ScriptedLM(lambda request, purpose: programs), n=5, progress=False, cache=False,
                    repair_attempts=0).ask(pd.DataFrame({"title": ["a", "b"], "year": [2001, 2002]}), "how many films?")
    assert answer.counts.sentence() == ("5 program(s) sampled (5 distinct); 1 failed; 2 answered nothing; "
                                        "1 set aside; 1 voted")


def test_lm_columns_without_a_winner_returns_none_and_says_why(no_answer):
    answer = no_answer
    with pytest.warns(UserWarning, match="no program gave an answer"):
        assert answer.lm_columns() is None
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert answer.winner_columns() is None
        answer_html(answer)  # the view shows the failure itself, without the warning


def test_the_no_answer_view_shows_programs_errors_and_next_steps(no_answer):
    html = answer_html(no_answer)
    assert "no answer" in html and "KeyError: &#x27;origin&#x27;" in html
    assert 'df[df[&quot;origin&quot;] == &quot;north america&quot;]' in html
    assert "What to try next" in html and "shirt, made in, price, sales" in html


@pytest.mark.parametrize("task, compared", [("analyst", "text is compared as written, in the same case"),
                                             ("wikitq", "text cells are compared lower-cased")])
def test_the_empty_results_tip_says_how_the_task_compares_text(task, compared):
    """With the default analyst task, whose cells keep their case, the tip said "text cells are compared
    lower-cased", so a user who wrote 'ridley scott' for 'Ridley Scott' was told case did not matter."""
    from binder_py.ask import Binder
    from binder_py.lm import ScriptedLM
    from binder_py.notebook import next_steps

    answer = Binder(lm=ScriptedLM(lambda request, purpose: 'df[df["name"] == "zed"]["n"].tolist()'), n=1,
                    progress=False, cache=False, task=task).ask(pd.DataFrame({"name": ["Ann"], "n": [1]}), "n of zed?")
    assert answer.value is None
    assert [tip for tip in next_steps(answer) if tip.startswith("Every program returned an empty result")] == [
        f"Every program returned an empty result: check that the question's values are spelt as in the table "
        f"({compared})."]


def test_the_time_or_memory_tip_says_how_to_raise_the_limits():
    """The tip said "raise the sandbox limits", with no word of how: ask has no option for them."""
    from sandbox import Limits, Sandbox

    from binder_py.ask import Binder
    from binder_py.lm import ScriptedLM
    from binder_py.notebook import next_steps

    with Sandbox(Limits(wall_seconds=1.0, cpu_seconds=1.0)) as sandbox:
        answer = Binder(lm=ScriptedLM(lambda request, purpose: "while True:\n    pass"), n=1, progress=False,
                        cache=False, repair_attempts=0, sandbox=sandbox).ask(pd.DataFrame({"n": [1]}), "n?")
    tip = [tip for tip in next_steps(answer) if tip.startswith("A program ran out of time or memory")]
    assert tip and "Binder(..., sandbox=Sandbox(Limits(wall_seconds=60" in tip[0]
    exec(tip[0].split(": ", 2)[2].split("; ")[0], {})  # the import it names works


def test_model_output_is_escaped():
    answer = ask(['"<script>alert(1)</script>"', 'df["shirt"].iloc[0] + "<img src=x onerror=alert(1)>"'])
    page = answer_html(answer)
    assert "<script>alert" not in page and "<img src=x" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page


def test_a_near_tie_is_said_in_every_view():
    from binder_py.views.examples import NEURAL_PROGRAM, PLAIN_PROGRAM

    answer = ask([NEURAL_PROGRAM] * 6 + [PLAIN_PROGRAM] * 5)  # 55% against 45%
    assert answer.near_tie and not answer.tie
    sentence = answer.closeness_sentence()
    assert sentence.startswith("Near tie: the runner-up polyester performance tee got 45% of the vote against 55%")
    assert sentence in answer.explain()
    assert 'class="banner near-tie"' in answer_html(answer)


def test_a_call_on_a_column_two_tables_share_goes_beside_the_table_whose_rows_it_asked_about():
    from binder_py.language.trace import NeuralCallTrace
    from binder_py.neural.requests import cell_text, row_key
    from binder_py.notebook import place_calls

    tables = {"a": pd.DataFrame({"k": [1, 2]}), "b": pd.DataFrame({"k": [3, 4, 5]}), "c": pd.DataFrame({"x": [3]})}

    def call_on(*values: int) -> NeuralCallTrace:
        keys = [row_key([cell_text(v)]) for v in values]
        return NeuralCallTrace(order=0, site=0, name="f_col", kind="col", span=(0, 1), line=1, col=0, text="",
                               question="q", columns=["k"], rows=[[str(v)] for v in values], keys=keys,
                               n_rows=len(values), backend="test", answers=dict.fromkeys(keys, "yes"))

    on_b, on_both, nowhere = call_on(3, 4), call_on(1, 3), call_on(9)
    assert place_calls(tables, [on_b, on_both, nowhere]) == {id(on_b): "b", id(on_both): "a", id(nowhere): "a"}
    on_joined = call_on(3)
    on_joined.columns = ["k", "x"]
    assert place_calls(tables, [on_joined]) == {}


def test_several_tables_a_call_on_a_joined_table_and_a_failure_name_every_table():
    from binder_py.views.examples import orders_and_customers

    joined = ('m = orders.merge(customers, on="customer_id")\n'
              'm[f_col("Is it perishable food?", m[["product", "country"]])]["order_id"].tolist()')
    page = answer_html(ask([joined], tables=orders_and_customers(), question="which orders were food?"))
    assert "[101, 104, 106, 108]" in page
    assert "f_col #1 ran on a table the program built from several tables" in page
    assert '<th class="lm">' not in page  # no table of the user's holds both columns
    assert page.count('<div class="table" data-table=') == 2
    failed = answer_html(ask(['orders["origin"].max()'], tables=orders_and_customers(), question="origin?"))
    assert "orders: order_id, customer_id, product, amount; customers: customer_id, name, country" in failed


def test_a_near_tie_between_shares_of_the_same_whole_percent_shows_them_apart():
    """--mode discriminate's likelihood vote printed "the runner-up Canada got 20% of the vote against
    20%" (19.6% against 19.7%), which reads as a tie, not the near tie it reports."""
    from dataclasses import replace

    from binder_py.views.examples import NEURAL_PROGRAM, PLAIN_PROGRAM

    answer = ask([NEURAL_PROGRAM] * 6 + [PLAIN_PROGRAM] * 5)
    first, second = answer.distribution[:2]
    close = replace(answer, distribution=[replace(first, share=0.197, weight=1.53158),
                                          replace(second, share=0.196, weight=1.52456)])
    assert close.near_tie and not close.tie
    assert "got 19.6% of the vote against 19.7%" in close.closeness_sentence()


def test_an_abstention_is_said_in_every_view():
    """With abstain_below, the notebook showed '—' as the answer and the reason only among the
    warnings at the bottom; explain() said 'Answer: None'."""
    from binder_py import Binder
    from binder_py.lm import ScriptedLM

    lm = ScriptedLM(lambda request, purpose: ['df["a"].sum()', 'df["a"].sum()', 'df["a"].max()'])
    answer = Binder(lm=lm, progress=False, n=3, abstain_below=0.9).ask(pd.DataFrame({"a": [1, 2]}), "total?")
    assert answer.value is None and answer.abstention.startswith("the answer 3 has confidence 67%, below 90%")
    assert "Answer: no answer (abstained" in answer.explain()
    html = answer_html(answer)
    assert "Abstained: the answer 3 has confidence 67%" in html and "no answer" in html
    assert Binder(lm=lm, progress=False, n=3).ask(pd.DataFrame({"a": [1, 2]}), "total?").abstention is None
    # a tie it abstained on said "None was picked by the tie-break"
    tied = ScriptedLM(lambda request, purpose: ['df["a"].sum()', 'df["a"].max()'])
    answer = Binder(lm=tied, progress=False, n=2, abstain_below=0.9).ask(pd.DataFrame({"a": [1, 2]}), "total?")
    assert answer.tie and "3 was picked by the tie-break" in answer.closeness_sentence()
    assert "None was picked" not in answer.explain() + answer_html(answer)


def test_printing_an_answer_without_a_value_says_no_answer(no_answer, tie):
    assert str(no_answer) == "no answer"  # print(answer) printed "None"
    assert str(tie) == str(tie.value)
    from dataclasses import replace

    abstained = replace(tie, value=None,
                        warnings=[*tie.warnings, "abstained: the answer has confidence 33%, below 90%"])
    assert abstained.abstention is not None and str(abstained) == "no answer (abstained)"


def test_an_e2e_vote_counts_answers_not_programs():
    from binder_py import Binder
    from binder_py.lm import ScriptedLM

    table = pd.DataFrame({"shirt": ["a", "b"], "price": [52, 45]})
    answer = Binder(lm=ScriptedLM(lambda request, purpose: ["52", "52", "45"]), n=3, mode="e2e",
                    progress=False).ask(table, "what is the highest price?")
    html = answer_html(answer)
    # the model answered directly: the vote said "2 program(s)" and "how much the sampled programs agree"
    assert "(2 answer(s), weight 2)" in answer.explain() and "program(s)" not in answer.explain()
    assert "2 answer(s), weight 2" in html and "program(s)" not in html and "sampled programs" not in html
    assert "All 3 candidates" in html  # "All 3 distinct candidates", beside "3 answer(s) sampled (2 distinct)"


def test_usage_read_all_from_the_cache_does_not_say_more():
    from binder_py.answer import Answer
    from binder_py.lm.types import Usage

    cached = Usage(requests=0, cached_requests=1, cached_prompt_tokens=1104, cached_completion_tokens=117)
    # was "0 model request(s) sent (0 prompt + 0 completion tokens, ~$0.0000), 1 more read from the LM cache"
    assert Answer.usage_sentence(cached) == ("no model request sent: 1 read from the LM cache "
                                             "(1104 prompt + 117 completion tokens)")
    both = Usage(requests=2, prompt_tokens=10, completion_tokens=3, cached_requests=1)
    assert Answer.usage_sentence(both).endswith(", 1 more read from the LM cache")


def test_an_abstention_reads_plainly_in_every_view():
    from binder_py import Binder
    from binder_py.lm import ScriptedLM

    table = pd.DataFrame({"shirt": ["a", "b"], "price": [52, 45]})
    lm = ScriptedLM(lambda request, purpose: ['df["price"].max()', 'df["price"].min()'])
    answer = Binder(lm=lm, n=2, progress=False, abstain_below=0.9).ask(table, "what is the highest price?")
    assert answer.abstention == "the answer 52 has confidence 50%, below 90% (abstain_below)"
    text = answer.explain() + answer_html(answer)
    # "the vote is below" beside "below abstain_below", and "its votes are in the distribution" (an attribute)
    assert "the vote is below" not in text.lower() and "distribution" not in text
    assert "the vote follows" in answer.explain() and "The vote follows." in answer_html(answer)


def test_a_nan_answer_is_named_among_the_empty_results():
    from binder_py import Binder
    from binder_py.lm import ScriptedLM

    table = pd.DataFrame({"shirt": ["a", "b"], "price": [52, 45]})
    lm = ScriptedLM(lambda request, purpose: 'df["price"].where(df["price"] > 100).max()')
    answer = Binder(lm=lm, n=1, progress=False, repair_attempts=0).ask(table, "the highest price over 100?")
    assert answer.value is None  # the program returned NaN, which the view called "None, an empty table or ..."
    assert "returned an empty result (None, NaN, an empty table or an empty list)" in answer_html(answer)


def test_a_call_on_the_second_table_is_placed_there_even_when_the_first_shares_its_column():
    """f_col(q, products["product"]) was shown beside sales (which has the same products in more
    rows: more matched rows) in the view and in answer.lm_columns(), not beside products."""
    sales = pd.DataFrame({"product": ["fresh basil", "steel bolts", "fresh basil"], "units": [1, 2, 3]})
    products = pd.DataFrame({"product": ["fresh basil", "steel bolts"], "color": ["green", "grey"]})
    on_products = ('red = products[f_col("Is it perishable food?", products["product"])]["product"]\n'
                   'df[df["product"].isin(red)]["units"].sum()')
    answer = ask([on_products], tables={"sales": sales, "products": products}, question="how many?")
    assert answer.value == 4
    assert answer.lm_columns() is None  # no call made a column of the first table
    page = answer_html(answer)
    products_section = page.split('data-table="products"')[1]
    sales_section = page.split('data-table="sales"')[1].split('data-table="products"')[0]
    assert "Is it perishable food?" in products_section and "Is it perishable food?" not in sales_section
    on_sales = 'df[f_col("Is it perishable food?", ["product"])]["units"].sum()'
    answer = ask([on_sales], tables={"sales": sales, "products": products}, question="how many?")
    assert answer.lm_columns()["Is it perishable food?"].tolist() == ["yes", "no", "yes"]
    sales_section = answer_html(answer).split('data-table="sales"')[1].split('data-table="products"')[0]
    assert "Is it perishable food?" in sales_section


@pytest.mark.parametrize("answers, said", [
    (["unknown", "yes", "n/a"], "1 of 3 row(s) answered by callable (2 unknown)"),
    ([None, "yes", "no"], "2 of 3 row(s) answered by callable (1 unknown)"),
    (["no", "yes", "no"], "3 row answer(s) from callable"),
])
def test_rows_answered_unknown_are_counted_as_unknown(answers, said):
    """Rows a model answered "unknown" (the row-by-row backend's word for no answer) are NA, yet the call
    read "3 row answer(s) from ..." in every view; only rows without any answer were counted unknown."""
    from binder_py import Binder
    from binder_py.lm import ScriptedLM

    answer = Binder(lm=ScriptedLM(lambda request, purpose: 'df[f_col("Is it big?", ["x"])]["x"].tolist()'), n=1,
                    progress=False, cache=False, neural=lambda request: answers).ask(
        pd.DataFrame({"x": [1, 2, 3]}), "which are big?")
    assert said in answer.explain() and said in answer_html(answer)


def test_explain_counts_answered_rows_and_skips_usage_only_traces():
    """A model whose neural output could not be read: explain() said "4 row answer(s) from lm:..."
    for a call with no answer at all, that the plan's answers were read from the cache, and listed the prefetch's usage-only trace (order -1) as a
    second call, "neural call f_col (line 1) '' on []: 0 row answer(s)"."""
    from binder_py import Binder
    from binder_py.lm import ScriptedLM

    program = 'len(df[f_col("Is it red?", ["fruit"])])'  # (a count: a sum over no rows would answer nothing)
    lm = ScriptedLM(lambda request, purpose: "not a table" if purpose == "neural" else program)
    answer = Binder(lm=lm, n=1, progress=False).ask(
        pd.DataFrame({"fruit": ["apple", "kiwi", "apple"], "units": [1, 2, 3]}), "how many red units?")
    calls = [line for line in answer.explain().splitlines() if line.lstrip().startswith("neural call")]
    assert len(calls) == 1, calls
    assert "0 of 2 row(s) answered by lm:scripted (2 unknown)" in calls[0]
    assert "0 of 2 row(s) answered by lm:scripted (2 unknown)" in answer_html(answer)
    # and the plan, which got no answer either, is not said to have answered the programs' calls
    assert "0 of 2 answer(s) came back: the programs' calls read those from the cache" in answer.explain()


def test_the_lm_made_columns_of_thousands_of_calls_are_made_in_linear_time():
    """Red team 14: a loop of f_col calls (cheap through the cache: 14,000 fit in a run's CPU time) made one
    LM-made column each; the rows' keys were computed again per call and a repeated question's name found by
    adding a ' until it was free, each step a look-up among the columns: 4,000 calls of one question cost 58 s
    when the answer was shown, and names 4,000 characters long."""
    import time
    from types import SimpleNamespace

    from binder_py.made_columns import lm_made_columns

    table = pd.DataFrame({"b": ["x", "y", "x"], "is it x?": [0, 0, 0]})
    calls = [SimpleNamespace(kind="col", columns=["b"], question="is it x?", answers={"x": True, "y": False})
             for _ in range(4000)]
    start = time.perf_counter()
    made = lm_made_columns(table, calls)
    assert time.perf_counter() - start < 5
    assert made.shape == (3, 4002)
    assert list(made.columns[:7]) == ["b", "is it x?", "is it x?'", "is it x?''", "is it x?'''", "is it x? (5)",
                                      "is it x? (6)"]
    assert made.columns.is_unique and max(len(c) for c in made.columns) < 20
    assert made.iloc[:, -1].tolist() == [True, False, True]


def test_the_table_view_shows_a_bounded_number_of_lm_made_columns():
    """Red team 14: every LM-made cell of the view carries its provenance, so a winning program's thousands of
    f_col calls made a view of as many columns; it shows the first ones and says how many more there are."""
    from binder_py.ask import Binder
    from binder_py.lm import ScriptedLM
    from binder_py.neural import OracleBackend
    from binder_py.notebook import MAX_MADE_COLUMNS

    program = 'for i in range(100):\n    r = f_col("is it x?", df["b"])\nint(r.sum())'
    oracle = OracleBackend({"f_col": {"is it x?": {"x": "yes", "y": "no"}}, "f_val": {}})
    answer = Binder(lm=ScriptedLM(lambda request, purpose: [program]), neural=oracle, n=1, progress=False,
                    cache=False, repair_attempts=0).ask(pd.DataFrame({"b": ["x", "y", "x"]}), "how many are x?")
    assert answer.value == 2, answer.explain()
    html = answer_html(answer)
    assert html.count('<th class="lm">') == MAX_MADE_COLUMNS < 100
    assert f"… {100 - MAX_MADE_COLUMNS} more LM-made columns, not shown" in html
    assert answer.lm_columns().shape == (3, 101)


def test_calls_on_a_join_key_are_placed_in_linear_time():
    """Red team 14: which table a call made its column of (a join key is a column of several tables) computed
    every candidate table's row keys again for every call: 35 ms per call beside two tables of 5,000 rows, so a
    program's loop of thousands of calls held the view for minutes. The keys are counted once per table."""
    import time
    from types import SimpleNamespace

    from binder_py.made_columns import place_calls

    keys = [str(i) for i in range(5000)]
    tables = {"a": pd.DataFrame({"k": keys, "v": range(5000)}), "b": pd.DataFrame({"k": keys * 2}),
              "c": pd.DataFrame({"k": ["1", "2"]})}
    calls = [SimpleNamespace(kind="col", columns=["k"], keys=["1", "2"], n_rows=2) for _ in range(1000)]
    start = time.perf_counter()
    placed = place_calls(tables, calls)
    assert time.perf_counter() - start < 5
    assert set(placed.values()) == {"c"}  # the table whose rows are the call's context
    more = SimpleNamespace(kind="col", columns=["k"], keys=["1", "2", "3"], n_rows=3)
    assert place_calls(tables, [more]) == {id(more): "b"}  # no exact table: the one with most matching rows


def test_a_numeric_table_shows_its_cells_as_numbers_not_numpy_reprs():
    """A table of numbers only was shown as np.float64(1.0) in every cell (numpy 2's repr of the
    scalars a row read across the columns holds), its int column as floats and NaN as nan."""
    from binder_py.ask import Binder
    from binder_py.lm import ScriptedLM

    table = pd.DataFrame({"units": [1, 2, 3], "price": [1.5, float("nan"), 4.25]})
    answer = Binder(lm=ScriptedLM(lambda request, purpose: 'df["price"].sum()'), n=1, progress=False,
                    cache=False).ask(table, "what is the total price?")
    html = answer_html(answer)
    assert "np.float64" not in html and "np.int64" not in html and ">nan<" not in html
    assert "<tr><td>1</td><td>1.5</td></tr>" in html and "<tr><td>2</td><td></td></tr>" in html
