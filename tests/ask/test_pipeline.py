"""The whole pipeline with a scripted model and an oracle for neural calls."""

from __future__ import annotations

import asyncio
import json

import pandas as pd
import pytest

from binder_py import Binder, BinderError
from binder_py.lm import ScriptedLM
from binder_py.lm.types import Capabilities
from tests.ask.shirts_case import BROKEN_PROGRAM, NEURAL_PROGRAM, PLAIN_PROGRAM, QUESTION


def scripted(programs, repair=None, e2e=None):
    def respond(request, purpose):
        if purpose == "repair":
            return repair if repair is not None else BROKEN_PROGRAM
        if purpose == "e2e":
            return e2e
        return programs
    return ScriptedLM(respond)


def test_answers_the_motivating_example_with_provenance(shirts, oracle_spec):
    lm = scripted([NEURAL_PROGRAM] * 3 + [PLAIN_PROGRAM])
    answer = Binder(lm=lm, neural=oracle_spec, task="analyst", n=4).ask(shirts, QUESTION)
    assert answer.value == "pure cotton oxford shirt"
    assert answer.confidence == pytest.approx(0.75)
    winner = answer.winner
    assert winner.program == NEURAL_PROGRAM and winner.count == 3
    assert [c.question for c in winner.neural_calls] == ["Is it in North America?", "No chemicals?"]
    made = answer.lm_columns()
    assert list(made.columns[-2:]) == ["Is it in North America?", "No chemicals?"]
    assert made.loc[made["made in"] == "Canada", "Is it in North America?"].tolist() == ["yes", "yes"]
    json.dumps(answer.to_json())  # everything serialises


def test_identical_programs_run_once_and_keep_their_count(shirts, oracle_spec):
    same_but_reformatted = NEURAL_PROGRAM.replace(", [", ",[") + "  # comment"
    lm = scripted([NEURAL_PROGRAM, same_but_reformatted, PLAIN_PROGRAM, NEURAL_PROGRAM])
    answer = Binder(lm=lm, neural=oracle_spec, task="analyst", n=4).ask(shirts, QUESTION)
    assert sorted(c.count for c in answer.candidates) == [1, 3]
    assert sorted(answer.candidates[0].sample_orders) == [0, 1, 3]


def test_program_biased_vote_weighs_neural_programs(shirts, oracle_spec):
    lm = scripted([PLAIN_PROGRAM] * 5 + [NEURAL_PROGRAM])
    binder = Binder(lm=lm, neural=oracle_spec, task="analyst", n=6)
    assert binder.ask(shirts, QUESTION).value == "polyester performance tee"  # plain majority
    biased = binder.ask(shirts, QUESTION, vote="program_biased")
    assert biased.value == "pure cotton oxford shirt"  # 10 votes against 5
    assert biased.confidence == pytest.approx(10 / 15)


def test_failed_and_empty_programs_do_not_vote(shirts, oracle_spec):
    empty = 'df[df["price"] > 1000]["shirt"].tolist()'
    lm = scripted([BROKEN_PROGRAM, BROKEN_PROGRAM, empty, PLAIN_PROGRAM], repair="")
    answer = Binder(lm=lm, neural=oracle_spec, task="analyst", n=4, repair_below=0).ask(shirts, QUESTION)
    assert answer.value == "polyester performance tee" and answer.confidence == 1.0
    failed = [c for c in answer.candidates if not c.ok]
    assert failed and failed[0].error.kind == "runtime" and not failed[0].voted


def test_repair_round_reprompts_with_the_error(shirts, oracle_spec):
    lm = scripted([BROKEN_PROGRAM] * 4, repair=NEURAL_PROGRAM)
    answer = Binder(lm=lm, neural=oracle_spec, task="analyst", n=4).ask(shirts, QUESTION)
    assert answer.value == "pure cotton oxford shirt"
    repaired = [c for c in answer.candidates if c.origin == "repair"]
    assert len(repaired) == 1 and repaired[0].repaired_from == 0
    repair_prompts = [r.prompt or r.messages[-1][1] for r, purpose, _ in lm.calls if purpose == "repair"]
    assert len(repair_prompts) == 1
    assert BROKEN_PROGRAM in repair_prompts[0] and "no_such_column" in repair_prompts[0]


def test_a_repair_names_the_closest_values_of_a_string_no_row_holds(shirts, oracle_spec):
    guessed = 'df[df["made in"] == "USA"]["shirt"].tolist()'
    lm = scripted([guessed] * 4, repair='df[df["made in"] == "United States"]["shirt"].tolist()')
    answer = Binder(lm=lm, neural=oracle_spec, task="analyst", n=4).ask(shirts, QUESTION)
    repair_prompts = [r.prompt or r.messages[-1][1] for r, purpose, _ in lm.calls if purpose == "repair"]
    assert len(repair_prompts) == 1 and "empty result" in repair_prompts[0]
    assert "no row of column 'made in' equals 'USA'; its closest values are:" in repair_prompts[0]
    assert "'United States'" in repair_prompts[0].split("closest values are:")[1]
    assert answer.value == ["pure cotton oxford shirt", "acrylic knit shirt"]


def test_a_long_table_whose_prompt_filled_the_context_is_still_repaired():
    """An API model's prompt shows as many rows as fit: the failed program and its error then did not fit
    after it, and every repair was skipped ("repair skipped: the repair prompt needs ..."). The prompt is
    fitted again with room for them."""
    table = pd.DataFrame({"city": [f"town number {i}" for i in range(3000)], "sales": list(range(3000))})
    lm = ScriptedLM(lambda request, purpose: 'df["sales"].max()' if purpose == "repair" else 'df["nope"].max()',
                    context_window=3000)
    answer = Binder(lm=lm, task="analyst", n=2, progress=False).ask(table, "what are the most sales?")
    assert answer.value == 2999, answer.warnings
    assert not [w for w in answer.warnings if "repair skipped" in w]
    repairs = [request for request, purpose, _ in lm.calls if purpose == "repair"]
    assert len(repairs) == 1 and 'df["nope"].max()' in repairs[0].prompt
    assert lm.count_tokens(repairs[0].prompt) <= 3000


def test_the_failed_programs_of_a_long_table_share_one_refitted_prompt(monkeypatch):
    """Each failed program fitted the question's prompt again (retrieval and token counting each time)."""
    import importlib

    repair_stage = importlib.import_module("binder_py.pipeline.repair")

    built = []
    real = repair_stage.parse_prompt
    monkeypatch.setattr(repair_stage, "parse_prompt", lambda state, room: built.append(room) or real(state, room))
    table = pd.DataFrame({"city": [f"town number {i}" for i in range(3000)], "sales": list(range(3000))})
    broken = ['df["nope1"].max()', 'df["nope2"].max()', 'df["nope3"].max()']
    lm = ScriptedLM(lambda request, purpose: 'df["sales"].max()' if purpose == "repair" else broken,
                    context_window=3000)
    answer = Binder(lm=lm, task="analyst", n=3, temperature=0.0, progress=False).ask(table, "what are the most sales?")
    assert answer.value == 2999, answer.warnings
    assert len([p for _, p, _ in lm.calls if p == "repair"]) >= 2
    assert len(built) == 1


def test_no_repair_when_enough_programs_succeed(shirts, oracle_spec):
    lm = scripted([PLAIN_PROGRAM] * 3 + [BROKEN_PROGRAM])
    Binder(lm=lm, neural=oracle_spec, task="analyst", n=4).ask(shirts, QUESTION)
    assert [purpose for _, purpose, _ in lm.calls] == ["parse"]


def test_python_mode_refuses_neural_calls_and_uses_plain_exemplars(shirts, oracle_spec):
    lm = scripted([NEURAL_PROGRAM, PLAIN_PROGRAM], repair="")
    answer = Binder(lm=lm, neural=oracle_spec, task="wikitq", mode="python", n=2).ask(shirts, QUESTION)
    assert answer.value == "polyester performance tee"
    refused = [c for c in answer.candidates if c.program == NEURAL_PROGRAM][0]
    assert refused.error.kind == "policy"
    prompt = lm.calls[0][0].prompt or lm.calls[0][0].messages[-1][1]
    assert "f_col(" not in prompt.split("Q: " + QUESTION)[0].split("\n", 10)[-1] or "Pandas:" in prompt


def test_e2e_mode_votes_direct_answers(shirts):
    lm = scripted(None, e2e=["Pure Cotton Oxford Shirt", "pure cotton oxford shirt", "linen summer shirt"])
    answer = Binder(lm=lm, task="analyst", mode="e2e", n=3).ask(shirts, QUESTION)
    assert str(answer.value).lower() == "pure cotton oxford shirt"
    assert answer.confidence == pytest.approx(2 / 3)
    assert [purpose for _, purpose, _ in lm.calls] == ["e2e"]


def test_tabfact_answers_are_booleans_with_answer_biased_vote(shirts):
    lm = scripted(["df['sales'].max() == 3400", "df['sales'].max() > 5000", "df['sales'].max() > 5000"])
    answer = Binder(lm=lm, task="tabfact", n=3).ask(shirts, "the best seller sold 3400 shirts")
    assert answer.value is True  # 4 votes for entailed against 2


def test_wikitq_task_lowercases_the_executed_table(shirts):
    lm = scripted(['df[df["made in"] == "canada"]["shirt"].tolist()'])
    answer = Binder(lm=lm, task="wikitq", n=1).ask(shirts, "which shirts are made in canada?")
    assert sorted(answer.value) == ["100% cotton flannel shirt",
                                    "wrinkle-free dress shirt (formaldehyde resin finish)"]
    prompt = lm.calls[0][0].prompt or lm.calls[0][0].messages[-1][1]
    assert "canada" in prompt and "Canada" not in prompt


def test_prompt_is_fitted_to_a_small_context_and_the_drop_is_recorded(shirts):
    lm = ScriptedLM(lambda r, p: PLAIN_PROGRAM, context_window=1400)
    answer = Binder(lm=lm, task="wikitq", n=1, num_shots=14).ask(shirts, QUESTION)
    assert answer.prompt["dropped_exemplars"]
    assert any("fitted" in w for w in answer.warnings)
    assert lm.calls[0][0].max_tokens == 512


def test_no_usable_program_is_a_clear_error(shirts):
    with pytest.raises(BinderError, match="no usable program"):
        Binder(lm=scripted(["", "  "]), task="analyst", n=2).ask(shirts, QUESTION)


def test_empty_question_and_bad_settings_are_clear_errors(shirts):
    with pytest.raises(BinderError, match="question is empty"):
        Binder(lm=scripted([PLAIN_PROGRAM])).ask(shirts, "  ")
    with pytest.raises(BinderError, match="the question must be text, got int: 42"):  # was "the question is empty"
        Binder(lm=scripted([PLAIN_PROGRAM])).ask(shirts, 42)
    with pytest.raises(BinderError, match="the title must be text .or None., got int"):  # was an AttributeError
        Binder(lm=scripted([PLAIN_PROGRAM])).ask(shirts, QUESTION, 42)
    with pytest.raises(BinderError, match="unknown mode"):
        Binder(lm=scripted([PLAIN_PROGRAM]), mode="sql")
    with pytest.raises(BinderError, match="unknown task"):
        Binder(lm=scripted([PLAIN_PROGRAM]), task="spider")


@pytest.mark.parametrize("setting, message", [
    ({"temperature": -1}, "temperature is a finite number of 0 or more"),
    ({"temperature": float("nan")}, "temperature is a finite number"),
    ({"temperature": "hot"}, "temperature is a finite number"),
    ({"max_tokens": 0}, "max_tokens must be a whole number of at least 1"),
    ({"repair_attempts": -1}, "repair_attempts is a count of 0 or more"),
    ({"repair_below": -1}, "repair_below is a count of 0 or more"),
    ({"n": 10**9}, "n must be a whole number from 1 to 10,000"),
    ({"n": 2.5}, "n must be a whole number"),
    # were accepted (a seed of 'a' went to the model with every request) or a bare TypeError
    ({"seed": "a"}, "seed is a whole number"),
    ({"seed": 1.5}, "seed is a whole number"),
    ({"calibrator": 5}, "calibrator is 'auto', 'none' or a calibrator file's path, got 5"),
    ({"neural_weight": "10"}, "neural_weight is a finite weight"),
    ({"abstain_below": "0.5"}, "abstain_below is a confidence between 0 and 1, got '0.5'"),
])
def test_out_of_range_settings_are_refused_before_any_model_call(shirts, setting, message):
    lm = scripted([PLAIN_PROGRAM])
    with pytest.raises(BinderError, match=message):
        Binder(lm=lm, **setting)
    with pytest.raises(BinderError, match=message):
        Binder(lm=lm).ask(shirts, QUESTION, **setting)
    assert lm.calls == []


def test_a_wide_table_answer_says_only_its_first_column_was_kept(shirts):
    program = 'df[df["price"] > 40][["shirt", "price"]]'
    answer = Binder(lm=scripted([program]), n=2, progress=False).ask(shirts, "which shirts cost over 40?")
    assert answer.value == ["pure cotton oxford shirt", "linen summer shirt"]
    # the price column was dropped without a word in explain(), the notebook view or the CLI
    note = "answer is the first column of a 2×2 DataFrame; the other columns were ignored"
    assert note in answer.warnings and note in answer.explain() and note in answer._repr_html_()


def test_a_repair_that_gives_no_new_program_is_said(shirts):
    lm = scripted([BROKEN_PROGRAM] * 2 + ['df["nope"].max()'] * 2, repair=BROKEN_PROGRAM)
    answer = Binder(lm=lm, n=4, progress=False).ask(shirts, QUESTION)
    # each failing program: a greedy request, then (the failed program again) one for two samples at 0.8
    repairs = [request for request, purpose, _ in lm.calls if purpose == "repair"]
    assert [(r.n, r.temperature) for r in repairs] == [(1, 0.0), (2, 0.8)] * 2
    assert answer.counts.repairs == 0  # every repair wrote a program already tried
    # the repair requests were sent (and paid for) but no view said a repair had been tried
    said = ("repair: 2 of 2 failing program(s) got no new program back (an empty one, or one already tried, "
            "greedily and in 2 samples)")
    assert any(w.startswith(said) for w in answer.warnings) and said in answer.explain()


def test_a_greedy_repair_that_writes_the_failed_program_again_is_sampled_once_more(shirts, oracle_spec):
    def respond(request, purpose):
        if purpose == "repair":
            return [BROKEN_PROGRAM, PLAIN_PROGRAM] if request.n == 2 else BROKEN_PROGRAM
        return [BROKEN_PROGRAM] * 4
    lm = ScriptedLM(respond)
    answer = Binder(lm=lm, neural=oracle_spec, task="analyst", n=4, progress=False).ask(shirts, QUESTION)
    assert answer.value == "polyester performance tee"
    repaired = [c for c in answer.candidates if c.origin == "repair"]
    assert [c.program for c in repaired] == [PLAIN_PROGRAM]
    assert [(r.n, r.temperature) for r, purpose, _ in lm.calls if purpose == "repair"] == [(1, 0.0), (2, 0.8)]


def test_distinct_counts_identical_answers_once_when_they_are_not_merged(shirts):
    e2e = Binder(lm=ScriptedLM(lambda request, purpose: ["52", "52", "45"]), n=3, mode="e2e",
                 progress=False).ask(shirts, "what is the highest price?")
    assert e2e.counts.sentence(e2e.mode).startswith("3 answer(s) sampled (2 distinct)")  # said 3 distinct
    one_by_one = Binder(lm=scripted([PLAIN_PROGRAM] * 3), n=3, group_identical=False,
                        progress=False).ask(shirts, QUESTION)
    assert len(one_by_one.candidates) == 3 and one_by_one.counts.distinct == 1


def test_usage_sums_parse_and_neural_requests(shirts):
    def respond(request, purpose):
        if purpose == "neural":
            text = request.prompt or request.messages[-1][1]
            return "unknown"
        return PLAIN_PROGRAM
    lm = ScriptedLM(respond)
    answer = Binder(lm=lm, task="analyst", n=2).ask(shirts, QUESTION)
    assert answer.usage.requests == 1 and answer.usage.prompt_tokens > 0


def test_ask_many_keeps_order_and_can_return_exceptions(shirts, oracle_spec):
    lm = scripted([PLAIN_PROGRAM])
    binder = Binder(lm=lm, neural=oracle_spec, task="analyst", n=1)
    results = binder.ask_many([(shirts, QUESTION), (shirts, " "), {"table": shirts, "question": "again?"}],
                              concurrency=2, progress=False, return_exceptions=True)
    assert results[0].value == "polyester performance tee"
    assert isinstance(results[1], BinderError)
    assert results[2].value == "polyester performance tee"


def test_ask_many_refuses_a_question_that_cannot_be_asked_before_asking_the_others(shirts):
    """An empty question at the end of the list stopped the run after every question before it had been
    asked and paid for, and their answers were lost with the error."""
    lm = ScriptedLM(lambda request, purpose: "len(df)")
    binder = Binder(lm=lm, n=1, progress=False, cache=False)
    with pytest.raises(BinderError, match=r"^ask_many items\[2\]: the question is empty"):
        binder.ask_many([(shirts, "how many shirts?"), (shirts, "how many rows?"), (shirts, " ")], concurrency=1)
    assert lm.calls == []
    with pytest.raises(BinderError, match=r"^ask_many items\[0\]: the title must be text"):
        binder.ask_many([{"table": shirts, "question": "how many?", "title": 3}])
    with pytest.raises(BinderError, match=r"^ask_many items\[1\]: nope\.csv: no such file"):
        binder.ask_many([(shirts, "how many shirts?"), ({"a": shirts, "b": "nope.csv"}, "how many rows?")],
                        concurrency=1)
    assert lm.calls == []


def test_ask_many_says_which_item_failed(shirts, oracle_spec):
    binder = Binder(lm=scripted([PLAIN_PROGRAM]), neural=oracle_spec, task="analyst", n=1)
    with pytest.raises(BinderError, match=r"^ask_many items\[1\]: ") as info:
        binder.ask_many([(shirts, QUESTION), (shirts, " ")], concurrency=1, progress=False)
    assert "question" in str(info.value)


def test_aask_and_dataframe_accessor(shirts, oracle_spec):
    binder = Binder(lm=scripted([NEURAL_PROGRAM]), neural=oracle_spec, task="analyst", n=1)
    answer = asyncio.run(binder.aask(shirts, QUESTION))
    assert answer.value == "pure cotton oxford shirt"
    via_accessor = shirts.binder.ask(QUESTION, binder=binder)
    assert via_accessor.value == "pure cotton oxford shirt"
    html = via_accessor._repr_html_()
    assert "<mark" in html and "f_col(&quot;Is it in North America?&quot;" in html
    assert "lm" in html and "pure cotton oxford shirt" in html


def test_explain_names_the_program_votes_and_calls(shirts, oracle_spec):
    lm = scripted([NEURAL_PROGRAM, BROKEN_PROGRAM])
    text = Binder(lm=lm, neural=oracle_spec, task="analyst", n=2, repair_below=0).ask(shirts, QUESTION).explain()
    assert "pure cotton oxford shirt" in text and "Votes:" in text and "Winning program:" in text
    assert "neural call f_col" in text and "1 runtime" in text


def test_table_problems_are_clear_errors(tmp_path):
    bad = pd.DataFrame([[1, 2]], columns=["a", "a"])
    with pytest.raises(BinderError, match="(?i)duplicate"):
        Binder(lm=scripted([PLAIN_PROGRAM])).ask(bad, QUESTION)
    with pytest.raises(BinderError):
        Binder(lm=scripted([PLAIN_PROGRAM])).ask(pd.DataFrame(), QUESTION)


def test_chat_models_get_exemplar_turns_and_a_repair_turn(shirts, oracle_spec):
    def respond(request, purpose):
        return NEURAL_PROGRAM if purpose == "repair" else BROKEN_PROGRAM

    lm = ScriptedLM(respond, capabilities=Capabilities(api="chat"))
    answer = Binder(lm=lm, neural=oracle_spec, task="analyst", n=2).ask(shirts, QUESTION)
    assert answer.value == "pure cotton oxford shirt"
    parse, repair = lm.calls[0][0], lm.calls[1][0]
    roles = [role for role, _ in parse.messages]
    assert roles[0] == "system" and roles[-1] == "user" and "assistant" in roles
    assert repair.messages[: len(parse.messages)] == parse.messages
    assert repair.messages[-2] == ("assistant", BROKEN_PROGRAM)
    assert "no_such_column" in repair.messages[-1][1]


def test_neural_calls_through_the_prompting_model(shirts):
    """No neural backend given: the program-writing model answers f_col itself (LM backend)."""
    program = 'df[f_col("Is it in North America?", ["made in"])]["shirt"].tolist()'

    def respond(request, purpose):
        return "no rows here" if purpose == "neural" else program

    lm = ScriptedLM(respond)
    answer = Binder(lm=lm, task="analyst", n=1).ask(shirts, "which shirts are made in north america?")
    purposes = [purpose for _, purpose, _ in lm.calls]
    assert purposes[0] == "parse" and "neural" in purposes
    assert answer.candidates[0].neural_calls and answer.candidates[0].run.warnings  # unanswered rows are NA


def test_explain_without_an_answer_shows_the_failing_programs(shirts):
    lm = scripted([BROKEN_PROGRAM], repair="")
    text = Binder(lm=lm, task="analyst", n=2).ask(shirts, QUESTION).explain()
    assert "No answer." in text and BROKEN_PROGRAM in text and "runtime error" in text


def test_abstain_below_gives_no_answer_and_says_why(shirts_path):
    from binder_py import Binder
    from binder_py.lm import ScriptedLM

    lm = ScriptedLM(lambda request, purpose: ["df['shirt'].iloc[0]", "df['shirt'].iloc[1]"])
    answer = Binder(lm=lm, n=2, abstain_below=0.75).ask(shirts_path, "which shirt?")
    assert answer.value is None and answer.confidence == 0.5
    assert any("abstained" in w and "75%" in w for w in answer.warnings)
    assert Binder(lm=lm, n=2, abstain_below=0.5).ask(shirts_path, "which shirt?").value is not None


def test_an_unknown_setting_names_the_known_ones():
    """df.binder.ask(q, lm="local") ended in "AskSettings.__init__() got an unexpected keyword
    argument 'lm'" from dataclasses.replace: the message must say where the model goes."""
    import binder_py  # noqa: F401 - registers df.binder

    lm = ScriptedLM(lambda request, purpose: 'df["a"].sum()')
    df = pd.DataFrame({"a": [1, 2]})
    with pytest.raises(TypeError, match=r"ask\(\) got unknown setting\(s\) 'lm'.*Binder\(lm=\.\.\.\).*mode"):
        df.binder.ask("total?", binder=Binder(lm=lm, progress=False), lm="local")
    with pytest.raises(TypeError, match=r"Binder\(\) got unknown setting\(s\) 'bogus'; the settings are task, mode"):
        Binder(lm=lm, bogus=1)
    assert Binder(lm=lm, progress=False, n=2).ask(df, "total?", mode="python").value == 3


@pytest.mark.parametrize("neural, message", [
    ("nope", "unknown neural backend 'nope'"),
    ("oracle:/nonexistent/answers.json", "cannot read oracle answers"),
    ("lm:nope", "unknown --lm spec 'nope'"),
    ("lm:", "names no model: give lm:SPEC"),  # (was the default model, not the one meant)
    (42, "neural= takes"),
])
def test_a_bad_neural_spec_fails_when_the_binder_is_made(neural, message):
    """Binder(neural="nope") was accepted, and a question whose programs made no neural call was
    answered without a word; the spec was read only at the first neural call."""
    from binder_py.lm.types import LMConfigError

    with pytest.raises((BinderError, LMConfigError), match=message):
        Binder(lm=ScriptedLM(lambda request, purpose: "1"), neural=neural)


def test_a_model_of_the_wrong_type_is_a_type_error_that_says_what_lm_takes():
    """Binder(lm=123).ask(...) failed deep in the pipeline: 'int' object has no attribute 'capabilities'."""
    with pytest.raises(TypeError, match=r"lm= takes a spec string .* not int"):
        Binder(lm=123)
    with pytest.raises(TypeError, match=r"neural_lm= takes a spec string .* not dict"):
        Binder(lm="local", neural_lm={"model": "x"})


@pytest.mark.parametrize("mode, why", [("python", "its programs make no neural calls"),
                                       ("e2e", "the model answers directly")])
def test_a_neural_backend_given_to_a_mode_without_neural_calls_is_said(shirts, oracle_spec, mode, why):
    lm = scripted([PLAIN_PROGRAM], e2e="A: polyester performance tee")
    answer = Binder(lm=lm, neural=oracle_spec, n=1, mode=mode, progress=False).ask(shirts, QUESTION)
    assert answer.value == "polyester performance tee"
    assert f"neural is not used in {mode} mode: {why}" in answer.warnings  # it was dropped without a word
    plain = Binder(lm=lm, n=1, mode=mode, progress=False).ask(shirts, QUESTION)
    assert not any("is not used in" in w for w in plain.warnings)


def test_a_runs_warnings_in_the_answer_say_which_program_they_are_about():
    """A losing program's neural-call warning ("site 0 (line 1): 4 answer(s) are not yes/no ...") was
    one of the answer's warnings as it stood, so it read as the winning program's (which has no
    neural call at all)."""
    from binder_py.neural import CallableBackend

    teams = pd.DataFrame({"team": ["Astana", "Chelsea"], "goals": [3, 7]})
    loser = 'df[f_col("is it a kazakhstan team?", "team")].goals.sum()'
    backend = CallableBackend(lambda request: {key: "maybe" for key in request.keys})
    binder = Binder(lm=scripted(["df.goals.sum()", "df.goals.sum()", loser]), neural=backend, task="analyst", n=3)
    answer = binder.ask(teams, "How many goals in total?")
    assert answer.value == 10
    [warning] = [w for w in answer.warnings if "not yes/no" in w]
    assert warning.startswith(f"in program `{loser}`: site 0 (line 1): ")
    assert answer.candidates[-1].run.warnings[0].startswith("site 0 (line 1)")  # the run's own, as it was


def test_a_warning_several_programs_gave_is_said_once_with_how_many():
    teams = pd.DataFrame({"team": ["Astana", "Chelsea"], "Goals": [3, 7]})
    binder = Binder(lm=scripted(['df["goals"].sum()', 'df["goals"].max()', 'df["goals"].min()']), task="analyst", n=3)
    fixes = [w for w in binder.ask(teams, "How many goals in total?").warnings if "read as 'Goals'" in w]
    assert fixes == ["in 3 programs: line 1: column 'goals' read as 'Goals'"]


@pytest.mark.parametrize("exact, says", [(False, "prompt tokens, estimated)"), (True, " prompt tokens)")])
def test_the_prompt_size_said_while_sampling_is_called_an_estimate_unless_it_is_the_models_count(
        shirts, capsys, exact, says):
    """For a remote model the progress said "(2826 prompt tokens)", binder-py's 3-characters-a-token
    estimate, and the usage afterwards "1369 prompt tokens", the server's count."""
    lm = ScriptedLM(lambda request, purpose: [PLAIN_PROGRAM], capabilities=Capabilities(exact_tokens=exact))
    Binder(lm=lm, task="analyst", n=1, progress=True).ask(shirts, QUESTION)
    line = next(line for line in capsys.readouterr().err.splitlines() if "writing 1 candidate" in line)
    assert line.endswith(says) and ("about " in line) is not exact


def test_programs_that_answered_only_otherwise_than_asked_are_repaired_with_what_is_wrong(shirts, oracle_spec):
    """'Which shirt is the cheapest?' answered only with a yes/no and a number (two successes, n = 4): no
    answer has the question's shape, so they go back to the model, told what is wrong with their answer."""
    programs = ['(df["price"] > 0).any()', '(df["price"] > 0).any()', 'df["price"].sum()', BROKEN_PROGRAM]
    lm = scripted(programs, repair='df.sort_values("price")["shirt"].iloc[0]')
    answer = Binder(lm=lm, neural=oracle_spec, task="analyst", n=4, progress=False).ask(shirts, "Which shirt is the cheapest?")
    repair_prompts = [r.prompt or r.messages[-1][1] for r, purpose, _ in lm.calls if purpose == "repair"]
    distinct = list(dict.fromkeys(repair_prompts))  # (a repair that writes a known program is asked again)
    assert len(distinct) == 3 and "no_such_column" in distinct[0]  # the failure first, then the misfits
    assert "does not answer the question as asked: it is a bare yes/no" in distinct[1]
    assert "it is a number, a date or an amount, and the question asks which, who or what" in distinct[2]
    assert answer.value == shirts.sort_values("price")["shirt"].iloc[0]


def test_an_answer_of_the_questions_shape_among_enough_successes_asks_no_repair(shirts, oracle_spec):
    programs = ['(df["price"] > 0).any()', 'df.sort_values("price")["shirt"].iloc[0]', 'df["price"].sum()']
    lm = scripted(programs)
    Binder(lm=lm, neural=oracle_spec, task="analyst", n=3, progress=False).ask(shirts, "Which shirt is the cheapest?")
    assert not [purpose for _, purpose, _ in lm.calls if purpose == "repair"]
