"""The plan at the floor: f_val requests (over literal columns and over sub-tables built by plain
pandas) ride in the plan's one multi-table prompt, and the candidates start while it is out."""

import threading
import time

import pandas as pd
import pytest

from binder_py import Binder
from binder_py.ask import shared_sandbox
from binder_py.bench.macro import Responder
from binder_py.bench.questions import ScriptedQuestion
from binder_py.language import execute, parse_program
from binder_py.lm import ScriptedLM
from binder_py.neural import NeuralCache
from binder_py.neural.lm_backend import LMNeuralBackend, split_value_lines
from binder_py.neural.plan import start_plan
from binder_py.neural.prefetch import subtable_value_calls
from binder_py.neural.requests import NeuralRequest, row_key
from binder_py.pipeline.subtables import subtable_requests


@pytest.fixture
def table():
    return pd.DataFrame({"name": ["ann", "bob", "cyd", "dee"], "nation": ["sweden", "norway", "sweden", "italy"],
                         "year": [1990, 1991, 1992, 1993]})


def _text(request) -> str:
    return request.prompt if request.prompt is not None else "\n".join(t for _, t in request.messages)


def _bench_lm(delay: float = 0.0, seen: list | None = None) -> ScriptedLM:
    """The bench server's answers (deterministic, row_id keyed, value lines) in process."""
    responder = Responder({})

    def reply(request, purpose):
        if seen is not None:
            seen.append(_text(request))
        time.sleep(delay)
        return responder({"prompt": _text(request)}, "completions")
    return ScriptedLM(reply)


def test_subtable_value_calls_are_pure_pandas_over_the_original_table(table):
    def calls(program):
        return [(c.question, c.context) for c in subtable_value_calls(parse_program(program), table)]

    assert calls('f_val("How many?", df.head(2)[["name", "nation"]])') == [
        ("How many?", "df.head(2)[['name', 'nation']]")]
    assert calls('f_val("Q?", df[df["year"] > 1990][["name"]])') == [("Q?", "df[df['year'] > 1990][['name']]")]
    assert calls('f_val("Q?", df[["name", "nation"]])') == []  # literal columns: already predictable
    assert calls('df["x"] = 1\nf_val("Q?", df.head(2))') == []  # a column written first
    assert calls('top = df.head(2)\nf_val("Q?", top[["name"]])') == []  # another variable
    assert calls('f_val("Q?", df[f_col("Big?", "name")])') == []  # depends on a neural answer
    assert calls('f_val("Q?", df[df["name"].map(lambda v: v)])') == []


def test_subtable_requests_run_in_the_sandbox_and_match_the_programs_own_call(table):
    program = 'f_val("How many are from Sweden?", df.head(3)[["name", "nation"]])'
    requests = subtable_requests([program, program, 'f_val("Q?", df[df["nope"] > 1][["name"]])'], table,
                                 shared_sandbox(), title="skiers")
    assert len(requests) == 1  # de-duplicated; the failing expression is left to its program
    request = requests[0]
    assert request.columns == ["name", "nation"] and request.keys == ["ann | sweden", "bob | norway", "cyd | sweden"]
    assert request.title == "skiers" and request.meta  # the site's answer type (a quantity)
    seen = []

    class Recorder:
        name = cache_id = "recorder"
        prefetch, dedup = False, True

        def answer(self, r):
            seen.append(r)
            from binder_py.neural.backends import NeuralAnswer
            return NeuralAnswer(value="2")

    execute(program, table, neural=Recorder(), sandbox=shared_sandbox(), cache=NeuralCache(), title="skiers")
    assert (seen[0].question, seen[0].columns, list(map(list, seen[0].rows)), seen[0].keys) == (
        request.question, request.columns, list(map(list, request.rows)), request.keys)


def test_answer_tables_reads_value_lines_and_tables():
    rows = [["sweden"], ["italy"]]
    col = NeuralRequest("col", "Is it Nordic?", ["nation"], rows, [row_key(r) for r in rows])
    val = NeuralRequest("val", "How many?", ["name"], [["ann"], ["bob"]], ["ann", "bob"])
    lm = _bench_lm()
    backend = LMNeuralBackend(lm, pool=[])
    assert backend.pack_values([[col]], [val]) == [0]
    answer = backend.answer_tables([[col]], vals=[val])
    assert len(lm.calls) == 1 and answer.values == ["ann"]  # the bench server: first cell of the first row
    assert set(answer.sections[0]["Is it Nordic?"]) == {"sweden", "italy"}
    assert "Question about the whole of table B" in _text(lm.calls[0][0])
    assert split_value_lines("Table C answer: 7\nTable A\n0\tx\tyes") == ({"C": "7"}, "Table A\n0\tx\tyes")
    assert LMNeuralBackend(lm, pool=[], combine_tables=False).pack_values([[col]], [val]) == []


def test_a_missing_value_line_is_asked_alone(table):
    program = 'f_val("How many?", df[["name", "nation"]])'
    second = 'df[f_col("Is it Nordic?", "nation")]["name"].tolist()'
    responder = Responder({})

    def reply(request, purpose):  # drops the value lines of multi-table prompts
        out = responder({"prompt": _text(request)}, "completions")
        return "\n".join(line for line in out.splitlines() if " answer: " not in line)
    lm = ScriptedLM(reply)
    cache = NeuralCache()
    plan = start_plan([program, second], table, LMNeuralBackend(lm, pool=[]), cache).result()
    assert len(lm.calls) == 2 and plan.requests == 2  # the multi-table prompt, then the value alone
    run = execute(program, table, neural=LMNeuralBackend(lm, pool=[]), sandbox=shared_sandbox(), cache=cache)
    assert run.ok and run.calls[0].from_cache and len(lm.calls) == 2


def test_start_plan_returns_while_the_request_is_out_and_calls_wait_for_it(table):
    release = threading.Event()
    responder = Responder({})

    def reply(request, purpose):
        release.wait(5)
        return responder({"prompt": _text(request)}, "completions")
    lm = ScriptedLM(reply)
    backend = LMNeuralBackend(lm, pool=[])
    cache = NeuralCache()
    programs = ['df[f_col("Is it Nordic?", "nation")]["name"].tolist()', 'f_val("How many?", df[["name"]])']
    in_flight = start_plan(programs, table, backend, cache)
    results = {}
    runner = threading.Thread(target=lambda: results.update(
        run=execute(programs[0], table, neural=backend, sandbox=shared_sandbox(), cache=cache)))
    runner.start()
    time.sleep(0.3)
    assert runner.is_alive() and len(lm.calls) == 1  # the program waits for the plan; nothing asked twice
    release.set()
    runner.join(10)
    plan = in_flight.result()
    assert results["run"].ok and results["run"].calls[0].from_cache
    assert len(lm.calls) == 1 and plan.requests == 1 and [s.kind for s in plan.steps] == ["tables", "val"]


QUESTION = ScriptedQuestion("t-1", (
    (3, 'df["nordic"] = f_col("Is the nation in Scandinavia?", "nation")\nint(df["nordic"].sum())'),
    (2, 'f_val("How many skiers are from Sweden?", df.head(3)[["name", "nation"]])'),
    (2, 'f_val("Which skier came first?", df[["name", "year"]])'),
    (1, 'int((df["nation"] == "sweden").sum())'),
))


def test_a_question_makes_one_parse_and_one_neural_request_with_the_same_answer(table):
    def ask(plan_neural: bool):
        responder = Responder({"how many skiers are nordic?": QUESTION}, n=8)

        def reply(request, purpose):
            return responder({"prompt": _text(request), "n": request.n}, "completions")
        lm = ScriptedLM(reply)
        binder = Binder(lm=lm, neural=LMNeuralBackend(lm, pool=[]), n=8, progress=False, plan_neural=plan_neural,
                        task="wikitq")
        answer = binder.ask(table, "How many skiers are nordic?")
        return len(lm.calls), answer

    planned, answer = ask(True)
    unplanned, reference = ask(False)
    assert planned == 2  # parse + ONE plan prompt (an f_col, two f_val, one over a sub-table)
    assert unplanned == 4  # parse + the f_col + each f_val alone
    assert answer.value == reference.value
    assert [c.value for c in answer.candidates] == [c.value for c in reference.candidates]


def _wave_requests():
    first = [NeuralRequest("col", "Is it Nordic?", ["nation"], [["sweden"], ["italy"]], ["sweden", "italy"],
                           title="skiers")]
    second = [NeuralRequest("col", "Is it a capital?", ["city"], [["rome"], ["lund"]], ["rome", "lund"],
                            title="cities")]
    value = NeuralRequest("val", "How many?", ["name"], [["ann"], ["bob"]], ["ann", "bob"], title="skiers")
    return first, second, value


def _in_wave(waves, key, groups, vals=(), before=None):
    """One question's thread: (after ``before`` is set) hand one plan prompt to its wave."""
    with waves.question(key):
        if before is not None:
            before.wait(5)
        tickets = waves.tickets(1)
        assert tickets is not None and waves.tickets(1) is None  # one plan per question joins the wave
        return tickets[0].answer_tables(groups, vals)


def test_plan_prompts_of_a_wave_share_one_request_whatever_order_they_arrive_in():
    import threading
    from concurrent.futures import ThreadPoolExecutor

    from binder_py.neural.batching import PlanWaves, current_wave, waves_can_batch

    first, second, value = _wave_requests()
    prompts = []
    for second_first in (False, True):
        seen: list[str] = []
        backend = LMNeuralBackend(_bench_lm(seen=seen), pool=[])
        assert waves_can_batch(backend)
        waves = PlanWaves(backend, ["q1", "q2"], size=2)
        gate = threading.Event()
        with ThreadPoolExecutor(2) as pool:
            a = pool.submit(_in_wave, waves, "q1", [first], [value], None if not second_first else gate)
            b = pool.submit(_in_wave, waves, "q2", [second], (), gate if not second_first else None)
            time.sleep(0.2)
            gate.set()
            a, b = a.result(10), b.result(10)
        assert len(seen) == 1  # both questions' plans in one prompt
        assert set(a.sections[0]["Is it Nordic?"]) == {"sweden", "italy"} and a.values == ["ann"]
        assert set(b.sections[0]["Is it a capital?"]) == {"rome", "lund"} and b.values == []
        assert sorted([a.usage.requests, b.usage.requests]) == [0, 1]  # the shared request is counted once
        prompts.append(seen[0])
    assert prompts[0] == prompts[1]  # the same prompt, in question order, whoever handed in first
    assert current_wave() is None  # outside a question's work nothing joins a wave
    assert waves.tickets(1) is None


def test_a_wave_goes_out_when_its_other_questions_finish_without_a_plan_and_what_does_not_fit_goes_apart():
    from concurrent.futures import ThreadPoolExecutor

    from binder_py.neural.batching import PlanWaves

    first, second, value = _wave_requests()
    seen: list[str] = []
    backend = LMNeuralBackend(_bench_lm(seen=seen), pool=[])
    waves = PlanWaves(backend, ["q1", "q2", "q3"], size=2)

    def no_plan(key):
        with waves.question(key):
            time.sleep(0.3)
    with ThreadPoolExecutor(2) as pool:
        answered = pool.submit(_in_wave, waves, "q1", [first])
        pool.submit(no_plan, "q2").result(5)
        assert answered.result(5).usage.requests == 1 and len(seen) == 1  # q2 settled: q1's wave went out
    backend.max_table_rows = 3  # the two no longer fit one prompt: one request each, in the same wave
    waves = PlanWaves(backend, ["q1", "q2"], size=2)
    with ThreadPoolExecutor(2) as pool:
        results = [f.result(10) for f in [pool.submit(_in_wave, waves, "q1", [first]),
                                          pool.submit(_in_wave, waves, "q2", [second])]]
    assert len(seen) == 3 and [r.usage.requests for r in results] == [1, 1]


def test_an_incomplete_wave_is_sent_after_max_wait_with_a_warning():
    import threading
    from concurrent.futures import ThreadPoolExecutor

    from binder_py.neural.batching import PlanWaves

    first, _, _ = _wave_requests()
    seen: list[str] = []
    backend = LMNeuralBackend(_bench_lm(seen=seen), pool=[])
    waves = PlanWaves(backend, ["q1", "q2"], size=2, max_wait=0.3)
    release = threading.Event()

    def stuck():
        with waves.question("q2"):
            release.wait(5)
    with ThreadPoolExecutor(2) as pool:
        other = pool.submit(stuck)
        answer = pool.submit(_in_wave, waves, "q1", [first]).result(5)
        release.set()
        other.result(5)
    assert answer.usage.requests == 1 and any("had not planned yet" in w for w in answer.warnings)


def test_multi_table_output_is_row_ids_and_answers_only():
    """The multi-table prompt asks for row_ids and answers (its demonstrations show it), and an
    answer equal to the row's cell is read (a year asked of a column of years)."""
    from binder_py.neural.parse import parse_tables_output

    rows = [["1955"], ["1960"]]
    request = NeuralRequest("col", "What is the first year elected?", ["first elected"], rows,
                            [row_key(r) for r in rows])
    other = NeuralRequest("col", "Is it a capital?", ["city"], [["rome"]], ["rome"])
    seen = []

    def reply(lm_request, purpose):
        seen.append(_text(lm_request))
        return "Table B\nrow_id\tIs it a capital?\n2\tyes\nTable A\nrow_id\tWhat is the first year elected?\n1\t1960\n0\t1955\n*/"
    backend = LMNeuralBackend(ScriptedLM(reply), shots=2)
    answer = backend.answer_tables([[request], [other]])
    assert answer.sections == [{"What is the first year elected?": {"1955": "1955", "1960": "1960"}},
                               {"Is it a capital?": {"rome": "yes"}}]
    assert "do not copy the row's cells" in seen[0]
    demo = seen[0].split("QA map@ output:\n/*\n", 1)[1].split("*/", 1)[0]
    assert demo.startswith("Table A\nrow_id\t") and all(len(line.split("\t")) == 2 for line in demo.splitlines()[2:4])
    strict = parse_tables_output("Table A\n0\t1955\n", {"A": ({0: ["1955"]}, 1)})
    assert strict.sections["A"].answers == {}  # without answers_only: a copied row, not an answer


def _rows_request(question: str, column: str, count: int, title: str) -> list[NeuralRequest]:
    rows = [[f"{column}{i}"] for i in range(count)]
    return [NeuralRequest("col", question, [column], rows, [row_key(r) for r in rows], title=title)]


@pytest.mark.parametrize("first_fit, requests", [(True, 2), (False, 3)])
def test_a_wave_packs_each_plan_into_the_first_prompt_it_fits_in(first_fit, requests):
    """Plans of 3, 4 and 1 rows with room for 4 a prompt: first fit puts the third with the first
    (2 requests); packing only into the last prompt, as runs recorded before did, sends 3."""
    from concurrent.futures import ThreadPoolExecutor

    from binder_py.neural.batching import PlanWaves

    seen: list[str] = []
    backend = LMNeuralBackend(_bench_lm(seen=seen), pool=[])
    backend.max_table_rows = 4
    waves = PlanWaves(backend, ["q1", "q2", "q3"], size=3, first_fit=first_fit)
    plans = {"q1": _rows_request("Is it Nordic?", "nation", 3, "skiers"),
             "q2": _rows_request("Is it a capital?", "city", 4, "cities"),
             "q3": _rows_request("Is it old?", "year", 1, "years")}
    with ThreadPoolExecutor(3) as pool:
        answers = {key: pool.submit(_in_wave, waves, key, [groups]) for key, groups in plans.items()}
        answers = {key: future.result(10) for key, future in answers.items()}
    assert len(seen) == requests
    for key, groups in plans.items():  # every row answered, whatever the packing
        assert set(answers[key].sections[0][groups[0].question]) == set(groups[0].keys)
    if first_fit:
        together = next(p for p in seen if "Is it Nordic?" in p)
        assert "Is it old?" in together and "Is it a capital?" not in together


def test_multi_table_prompts_are_packed_by_the_kind_of_answer_each_question_wants():
    """A yes/no answer is a tab and a word: more rows of yes/no questions fit the output budget
    than of free-text ones; ``pack_by_answer_kind=False`` counts 6 tokens an answer as before."""
    from binder_py.neural.answer_types import META_KEY, AnswerKind, AnswerType

    def groups(question: str, typed: AnswerType | None) -> list[list[NeuralRequest]]:
        made = [_rows_request(question, column, 60, column) for column in ("nation", "city")]
        for (request,) in made:
            if typed is not None:
                request.meta[META_KEY] = typed
        return made

    backend = LMNeuralBackend(_bench_lm(), pool=[], max_output_tokens=900)
    yes_no = groups("Is it in Europe?", None)  # untyped: the wording asks yes/no
    typed_yes_no = groups("Does it qualify?", AnswerType(AnswerKind.YES_NO))
    text = groups("What is it called in French?", None)
    assert backend.fits_one_prompt(yes_no) and backend.fits_one_prompt(typed_yes_no)
    assert not backend.fits_one_prompt(text)
    before = LMNeuralBackend(_bench_lm(), pool=[], max_output_tokens=900, pack_by_answer_kind=False)
    assert not before.fits_one_prompt(yes_no)


def test_a_plan_of_more_prompts_than_its_workers_hands_all_of_them_to_its_wave():
    """Six column sets that fit no prompt together: six prompts for the wave. With four threads,
    the fifth waited for the first four, which waited for the wave, which waited for the fifth:
    the wave went out only after max_wait."""
    from binder_py.neural import NeuralCache
    from binder_py.neural.batching import PlanWaves

    seen: list[str] = []
    backend = LMNeuralBackend(_bench_lm(seen=seen), pool=[])
    backend.max_table_rows = 4
    table = pd.DataFrame({c: [f"{c}{i}" for i in range(4)] for c in "abcdef"})
    waves = PlanWaves(backend, ["q1"], size=2, max_wait=10)
    started = time.perf_counter()
    with waves.question("q1"):
        plan = start_plan([f'df[f_col("Is {c} ok?", ["{c}"])]' for c in "abcdef"], table, backend,
                          NeuralCache(), title="t", max_workers=4).result()
    assert time.perf_counter() - started < 5
    assert len(seen) == 6 and not any("had not planned yet" in w for step in plan.steps for w in step.warnings)
