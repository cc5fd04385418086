"""Question-level planning: the predictable f_col calls of all candidates answered before they run,
several questions per prompt, into the shared cache."""

import re

import pandas as pd
import pytest

from binder_py.neural import CallableBackend, NeuralCache, OracleBackend
from binder_py.language import execute
from binder_py.neural.lm_backend import LMNeuralBackend, default_max_output_tokens, parse_multi_output
from binder_py.neural.plan import collect_requests, plan_neural_calls, supports_planning
from binder_py.neural.requests import NeuralRequest, row_key
from binder_py.lm import ScriptedLM
from binder_py.neural.answer_types import META_KEY, YES_NO, question_of
from binder_py.lm.types import Capabilities

ANSWERS = {
    "Made in North America?": {"usa": "yes", "china": "no", "mexico": "yes", "canada": "yes"},
    "Country code?": {"usa": "US", "china": "CN", "mexico": "MX", "canada": "CA"},
    "No chemicals?": {"tuxedo shirt": "yes", "t-shirt": "no", "polo": "yes", "flannel": "no"},
}


def _text(request) -> str:
    return request.prompt if request.prompt is not None else "\n".join(t for _, t in request.messages)


def _question(listed: str) -> str:
    """A numbered question line back to the question (the list shows a typed call's kind of
    answer after it: ``1. Made in North America? (yes/no)``)."""
    return question_of(re.sub(r"^\d+\. ", "", listed))


def target(request):
    """(questions, [(row_id, cells)]) of the prompt's target table."""
    text = _text(request)
    block = text.rsplit("Give a database as shown below:", 1)[1]
    lines = block.split("/*", 1)[1].split("*/", 1)[0].strip().splitlines()[1:]
    rows = [(int(line.split("\t")[0]), line.split("\t")[1:]) for line in lines]
    m = re.search(r"Q: Answer these questions row by row[^\n]*\n((?:\d+\. [^\n]*\n)+)", block)
    if m:
        questions = [_question(q) for q in m.group(1).splitlines()]
    else:
        questions = [_question(re.search(r'Q: Answer question "(.*)" row by row\.', block).group(1))]
    return questions, rows


def sections(request):
    """[(label, questions, [(row_id, cells)])] of a multi-table prompt's target; None for other prompts."""
    block = _text(request).rsplit("Give a database as shown below:", 1)[1]
    if "Answer the questions of every table" not in block:
        return None
    found = []
    for m in re.finditer(r"Table ([A-Z]): [^\n]*\n/\*\n(.*?)\n\*/\nQuestions about table \1[^\n]*\n((?:\d+\. [^\n]*\n)+)",
                         block, re.S):
        rows = [(int(line.split("\t")[0]), line.split("\t")[1:]) for line in m.group(2).splitlines()[1:]]
        found.append((m.group(1), [_question(q) for q in m.group(3).splitlines()], rows))
    return found


def tables_output(found, skip=(), drop=()):
    """A multi-table output from ANSWERS: sections in reverse order and rows reversed (so they
    must be read by label and row_id); rows whose first cell is in ``skip`` and sections whose
    label is in ``drop`` are left out."""
    out = []
    for label, questions, rows in reversed(found):
        if label in drop:
            continue
        out.append(f"Table {label}")
        for rid, cells in reversed(rows):
            if cells[0].lower() not in skip:
                out.append("\t".join([str(rid)] + cells + [ANSWERS[q].get(cells[0].lower(), "unknown")
                                                            for q in questions]))
    return "\n".join(out) + "\n*/"


def responder(skip=(), reverse=True, drop=()):
    """Answers single-, multi-question and multi-table QA-map prompts from ANSWERS (rows in
    reverse order, so answers must be matched by row_id); rows whose first cell is in ``skip``
    are left out of multi-question and multi-table outputs, tables labelled in ``drop`` out
    of multi-table outputs."""
    def respond(request, purpose):
        assert purpose == "neural"
        found = sections(request)
        if found is not None:
            return tables_output(found, skip, drop)
        questions, rows = target(request)
        out = []
        for rid, cells in (reversed(rows) if reverse else rows):
            if len(questions) > 1 and cells[0].lower() in skip:
                continue
            answers = [ANSWERS[q].get(cells[0].lower(), "unknown") for q in questions]
            out.append("\t".join([str(rid)] + cells + answers))
        return "\n".join(out) + "\n*/"
    return respond


@pytest.fixture
def table():
    return pd.DataFrame({
        "shirt": ["Tuxedo shirt", "T-shirt", "Polo", "Flannel", "Tuxedo shirt"],
        "made in": ["USA", "China", "Mexico", "Canada", "USA"],
        "price": [80, 10, 25, 30, 85],
    })


PROGRAMS = [
    'df[f_col("Made in North America?", "made in")]["shirt"].tolist()',
    'df["code"] = f_col("Country code?", "made in")\ndf["code"].tolist()',
    'int(f_col("No chemicals?", "shirt").sum())',
    'int(f_col("Made in North America?", ["made in"]).sum())',  # the same request as the first
]


def test_groups_by_columns_and_asks_several_questions_in_one_request(table):
    lm = ScriptedLM(responder())
    backend = LMNeuralBackend(lm, pool=[], combine_tables=False)
    cache = NeuralCache()
    plan = plan_neural_calls(PROGRAMS, table, backend, cache, title="shirts")
    assert plan.predicted == 4 and len(lm.requests) == 2  # "made in": 2 questions in 1 prompt; "shirt": 1
    kinds = {tuple(s.columns): s for s in plan.steps}
    multi = kinds[("made in",)]
    assert multi.kind == "multi" and multi.questions == ["Made in North America?", "Country code?"]
    assert multi.answered == {"Made in North America?": 4, "Country code?": 4} and not multi.error
    assert kinds[("shirt",)].kind == "col"
    multi_prompt = next(r for r in lm.requests if "Answer these questions" in r.prompt).prompt
    assert multi_prompt.endswith("row_id\tmade in\tMade in North America?\tCountry code?\n")
    assert plan.usage.requests == 2 and plan.requests == 2 and len(multi.prompts) == 1
    assert sum(s.usage.requests for s in plan.steps) == 2  # each prompt counted once
    assert plan.to_json()["requests"] == 2

    # the programs' calls are cache hits: no more model requests, answers keyed by row
    values = []
    for program in PROGRAMS:
        run = execute(program, table, neural=backend, sandbox=_sandbox(), cache=cache, title="shirts")
        assert run.ok, run.error
        values.append(run.value)
        for call in run.calls:
            assert call.from_cache and sorted(call.cached_keys) == sorted(call.keys) and call.usage.requests == 0
    assert len(lm.requests) == 2
    assert values == [["Tuxedo shirt", "Polo", "Flannel", "Tuxedo shirt"], ["US", "CN", "MX", "CA", "US"], 3, 4]


def _sandbox():
    from language_fakes import InProcessSandbox

    return InProcessSandbox()


def test_rows_missing_from_the_multi_output_are_not_cached_and_asked_again(table):
    lm = ScriptedLM(responder(skip={"china"}))
    backend = LMNeuralBackend(lm, pool=[])
    cache = NeuralCache()
    plan = plan_neural_calls(PROGRAMS[:2], table, backend, cache)
    step = plan.steps[0]
    assert step.kind == "multi" and step.answered == {"Made in North America?": 3, "Country code?": 3}
    assert any("not cached" in w for w in step.warnings)
    assert len(lm.requests) == 1
    run = execute(PROGRAMS[0], table, neural=backend, sandbox=_sandbox(), cache=cache, prefetch=False)
    assert run.ok and run.value == ["Tuxedo shirt", "Polo", "Flannel", "Tuxedo shirt"]
    call = run.calls[0]
    assert sorted(call.cached_keys) == ["canada", "mexico", "usa"] and not call.from_cache
    assert len(lm.requests) == 2 and call.usage.requests == 1
    questions, rows = target(lm.requests[-1])
    assert questions == ["Made in North America?"] and [cells for _, cells in rows] == [["China"]]


def test_the_plan_claims_rows_and_skips_what_is_cached(table):
    lm = ScriptedLM(responder())
    backend = LMNeuralBackend(lm, pool=[])
    cache = NeuralCache()
    as_mask = NeuralRequest("col", "Made in North America?", ["made in"], [], [], meta={META_KEY: YES_NO})
    cache.store_col(backend.cache_id, as_mask, {"usa": "yes", "china": "no"})
    plan = plan_neural_calls(PROGRAMS[:2], table, backend, cache)
    step = plan.steps[0]
    assert step.asked == {"Made in North America?": 2, "Country code?": 4}
    questions, rows = target(lm.requests[0])
    assert len(rows) == 4  # the union of the rows still needed
    plan2 = plan_neural_calls(PROGRAMS[:2], table, backend, cache)
    assert plan2.steps == [] and len(lm.requests) == 1  # everything is cached now
    assert cache.stats.prefilled_rows == 2 + 2 + 4


def test_a_question_used_as_two_kinds_is_planned_as_the_first_and_asked_as_the_other(table):
    """The plan pairs answers with questions by their text, so a question that two programs use as two
    kinds of answer is planned once (the first kind); the other program's call asks with its own kind,
    and is not handed answers of the wrong kind."""
    yes_no = responder()

    def respond(request, purpose):
        if "(a number)" not in _text(request):
            return yes_no(request, purpose)
        _, rows = target(request)
        return "\n".join("\t".join([str(rid), *cells, "7"]) for rid, cells in rows) + "\n*/"

    lm = ScriptedLM(respond)
    backend = LMNeuralBackend(lm, pool=[], combine_tables=False)
    cache = NeuralCache()
    programs = ['df[f_col("Made in North America?", "made in")]["shirt"].tolist()',
                'float(f_col("Made in North America?", "made in").mean())']
    plan = plan_neural_calls(programs, table, backend, cache)
    assert plan.predicted == 2 and len(lm.requests) == 1 and "(a number)" not in _text(lm.requests[0])
    as_mask, as_number = (execute(p, table, neural=backend, sandbox=_sandbox(), cache=cache) for p in programs)
    assert as_mask.ok and as_mask.calls[0].from_cache and as_mask.value == ["Tuxedo shirt", "Polo", "Flannel",
                                                                            "Tuxedo shirt"]
    assert as_number.ok, as_number.error
    assert not as_number.calls[0].from_cache and not as_number.calls[0].warnings and as_number.value == 7.0
    assert len(lm.requests) == 2


def test_unpredictable_calls_still_work(table):
    lm = ScriptedLM(responder())
    backend = LMNeuralBackend(lm, pool=[])
    cache = NeuralCache()
    program = 'df = df[df["price"] > 20]\nint(f_col("Made in North America?", "made in").sum())'
    plan = plan_neural_calls([program], table, backend, cache)
    assert plan.predicted == 0 and plan.steps == [] and not lm.requests
    run = execute(program, table, neural=backend, sandbox=_sandbox(), cache=cache)
    assert run.ok and run.value == 4 and len(lm.requests) == 1 and not run.calls[0].from_cache


def test_predictable_f_val_is_asked_in_the_same_wave(table):
    lm = ScriptedLM(lambda request, purpose: "Tuxedo shirt")
    backend = LMNeuralBackend(lm, pool=[])
    cache = NeuralCache()
    program = 'f_val("Which is the most formal?", "shirt")'
    plan = plan_neural_calls([program, program], table, backend, cache)
    assert [s.kind for s in plan.steps] == ["val"] and plan.usage.requests == 1
    run = execute(program, table, neural=backend, sandbox=_sandbox(), cache=cache)
    assert run.value == "Tuxedo shirt" and run.calls[0].from_cache and len(lm.requests) == 1


def test_oracle_and_callable_backends_are_not_planned(table):
    oracle = OracleBackend({"f_col": ANSWERS})
    callable_backend = CallableBackend(lambda r: {k: "yes" for k in r.keys})
    assert not supports_planning(oracle) and not supports_planning(callable_backend)
    assert supports_planning(LMNeuralBackend(ScriptedLM(["x"]), pool=[]))
    assert not supports_planning(LMNeuralBackend(ScriptedLM(["x"]), pool=[], dedup=False))
    cache = NeuralCache()
    plan = plan_neural_calls(PROGRAMS, table, oracle, cache)
    assert plan.steps == [] and not oracle.requests and len(cache) == 0


def test_a_failing_plan_step_is_recorded_and_releases_its_rows(table):
    def fail(request, purpose):
        raise RuntimeError("model down")

    backend = LMNeuralBackend(ScriptedLM(fail), pool=[])
    cache = NeuralCache()
    plan = plan_neural_calls(PROGRAMS[:2], table, backend, cache)
    assert plan.steps[0].error and "model down" in plan.steps[0].error
    ok = LMNeuralBackend(ScriptedLM(responder()), pool=[])
    ok.cache_id = backend.cache_id
    run = execute(PROGRAMS[0], table, neural=ok, sandbox=_sandbox(), cache=cache)
    assert run.ok and len(run.value) == 4  # nothing left in flight: the call asks itself


def test_collect_requests_deduplicates():
    table = pd.DataFrame({"a": ["x", "y", "x"]})
    found, requests = collect_requests(['f_col("Q?", "a")', 'f_col("Q?", ["a"]).sum()', "broken(("], table)
    assert found == 2 and len(requests) == 1 and requests[0].keys == ["x", "y"]


def test_parse_multi_output_reads_only_unambiguous_lines():
    rows = {0: ["paris"], 1: ["tokyo"], 2: ["rome"], 3: ["oslo"]}
    text = ("row_id\tcity\tq1\tq2\n1\ttokyo\tno\t13\n0\tyes\t2\n"
            "2\trome\tyes\n"  # one answer missing: ambiguous, not read
            "3\toslo\n9\tx\tyes\tno\n1\ttokyo\tyes\t1\n*/")
    parsed = parse_multi_output(text, rows, 2)
    assert parsed.answers == {1: ["no", "13"], 0: ["yes", "2"]}
    assert parsed.duplicate == [1] and len(parsed.extra) == 1 and len(parsed.unparsed) == 2


def test_answer_many_counts_each_prompt_once_and_keys_by_row():
    lm = ScriptedLM(responder())
    backend = LMNeuralBackend(lm, pool=[])
    rows = [["USA"], ["China"]]
    reqs = [NeuralRequest("col", q, ["made in"], rows, [row_key(r) for r in rows])
            for q in ("Made in North America?", "Country code?")]
    many = backend.answer_many(reqs)
    assert many.answers == {"Made in North America?": {"usa": "yes", "china": "no"},
                            "Country code?": {"usa": "US", "china": "CN"}}
    assert many.usage.requests == 1 and len(many.prompts) == 1
    with pytest.raises(Exception, match="same context columns"):
        backend.answer_many([reqs[0], NeuralRequest("col", "x", ["other"], rows, ["usa", "china"])])


def test_answer_many_asks_at_most_max_questions_per_prompt():
    questions = [f"Question {i}?" for i in range(5)]
    for q in questions:
        ANSWERS.setdefault(q, {"usa": "yes"})
    lm = ScriptedLM(responder())
    backend = LMNeuralBackend(lm, pool=[], max_questions=2)
    reqs = [NeuralRequest("col", q, ["made in"], [["USA"]], ["usa"]) for q in questions]
    many = backend.answer_many(reqs)
    assert len(lm.requests) == 3 and all(many.answers[q] == {"usa": "yes"} for q in questions)


def test_multi_prompt_demonstrations_and_chat_turns():
    seen = []

    def respond(request, purpose):
        seen.append(request)
        return "/*\nrow_id\tcountry\tq1\tq2\n0\tfrance\tyes\tparis\n*/"

    lm = ScriptedLM(respond, capabilities=Capabilities(api="chat"))
    backend = LMNeuralBackend(lm, shots=2)
    reqs = [NeuralRequest("col", q, ["country"], [["france"]], ["france"])
            for q in ("Does it use the euro?", "What is the capital?")]
    many = backend.answer_many(reqs)
    assert many.answers == {"Does it use the euro?": {"france": "yes"}, "What is the capital?": {"france": "paris"}}
    roles = [role for role, _ in seen[0].messages]
    assert roles == ["system", "user", "assistant", "user", "assistant", "user"]
    assert "one more column per question" in seen[0].messages[0][1]
    last = seen[0].messages[-1][1]
    assert last.endswith("QA map@ output:") and "1. Does it use the euro?\n2. What is the capital?" in last
    assert seen[0].messages[2][1].startswith("/*\nrow_id")  # a demonstration's output, in the multi layout


def test_batch_limits_follow_the_model():
    local = ScriptedLM(["x"], name="local:qwen", context_window=8192)
    remote = ScriptedLM(["x"], name="openai:gpt-4o-mini", context_window=128_000)
    assert default_max_output_tokens(local) == 1024 and default_max_output_tokens(remote) == 4096
    assert LMNeuralBackend(remote, pool=[]).max_batch_rows == 200
    assert LMNeuralBackend(remote, pool=[], max_output_tokens=512).max_output_tokens == 512
    # ~180 distinct short rows fit one request of a large-output model
    lm = ScriptedLM(responder(reverse=False), context_window=128_000)
    backend = LMNeuralBackend(lm, pool=[])
    rows = [[f"player {i}"] for i in range(180)]
    ANSWERS.setdefault("Is he a goalkeeper?", {})
    result = backend.answer(NeuralRequest("col", "Is he a goalkeeper?", ["name"], rows, [row_key(r) for r in rows]))
    assert len(lm.requests) == 1 and len(result.answers) == 180


# ----------------------------------------------------------------------------- several column sets, one prompt
def test_several_column_sets_are_asked_in_one_request(table):
    lm = ScriptedLM(responder())
    backend = LMNeuralBackend(lm, pool=[])
    assert backend.combine_tables
    cache = NeuralCache()
    plan = plan_neural_calls(PROGRAMS, table, backend, cache, title="shirts")
    assert len(lm.requests) == 1 and plan.requests == 1  # "made in" (2 questions) and "shirt" together
    (step,) = plan.steps
    assert step.kind == "tables" and not step.error and not step.warnings
    assert [t["columns"] for t in step.tables] == [["made in"], ["shirt"]]
    assert step.tables[0]["answered"] == {"Made in North America?": 4, "Country code?": 4}
    assert step.tables[1]["answered"] == {"No chemicals?": 4}
    assert lm.calls[0][2]["plan"] == "tables" and lm.calls[0][2]["tables"] == "2"
    found = sections(lm.requests[0])
    assert [(label, qs) for label, qs, _ in found] == [("A", ["Made in North America?", "Country code?"]),
                                                      ("B", ["No chemicals?"])]
    assert [rid for _, _, rows in found for rid, _ in rows] == list(range(8))  # row ids unique across tables
    assert step.to_json()["tables"][1]["questions"] == ["No chemicals?"]
    values = []
    for program in PROGRAMS:
        run = execute(program, table, neural=backend, sandbox=_sandbox(), cache=cache, title="shirts")
        assert run.ok, run.error
        values.append(run.value)
        assert all(call.from_cache for call in run.calls)
    assert len(lm.requests) == 1
    assert values == [["Tuxedo shirt", "Polo", "Flannel", "Tuxedo shirt"], ["US", "CN", "MX", "CA", "US"], 3, 4]


def test_parse_tables_output_reads_sections_by_label_and_row_id():
    from binder_py.neural.lm_backend import parse_tables_output

    wanted = {"A": ({0: ["paris"], 1: ["tokyo"]}, 2), "B": ({2: ["red", "big"], 3: ["blue", "small"]}, 1)}
    text = ("/*\n0\tparis\tyes\t1\n"  # before any label: not read
            "**Table B**\nrow_id\tcolour\tsize\tq\n3\tblue\tsmall\tno\n"
            "1\ttokyo\tno\t2\n"  # table A's row under label B: not read
            "2\tred\tbig\n"  # the answer missing: ambiguous, not read
            "Table C\n2\tred\tbig\tyes\n"  # a label not asked for
            "Table A:\n1\ttokyo\tno\t13\n0\tparis\tyes\n"  # one answer for two questions: not read
            "Table B\n3\tblue\tsmall\tyes\n*/")
    parsed = parse_tables_output(text, wanted)
    assert parsed.sections["A"].answers == {1: ["no", "13"]}
    assert parsed.sections["B"].answers == {3: ["no"]}
    assert parsed.sections["B"].duplicate == [3] and len(parsed.sections["B"].extra) == 1
    assert len(parsed.unlabelled) == 1 and parsed.unknown_labels == ["C"] and parsed.repeated_labels == ["B"]


def test_a_missing_section_or_row_is_not_cached_and_asked_again(table):
    lm = ScriptedLM(responder(skip={"china"}, drop={"B"}))
    backend = LMNeuralBackend(lm, pool=[])
    cache = NeuralCache()
    plan = plan_neural_calls(PROGRAMS, table, backend, cache)
    (step,) = plan.steps
    assert step.kind == "tables" and len(lm.requests) == 1
    assert step.answered == {"Made in North America?": 3, "Country code?": 3, "No chemicals?": 0}
    assert any("not cached" in w for w in step.warnings)
    # the row left out of table A: asked again by the program's own call, alone
    run = execute(PROGRAMS[0], table, neural=backend, sandbox=_sandbox(), cache=cache, prefetch=False)
    assert run.ok and run.value == ["Tuxedo shirt", "Polo", "Flannel", "Tuxedo shirt"]
    assert sorted(run.calls[0].cached_keys) == ["canada", "mexico", "usa"]
    questions, rows = target(lm.requests[-1])
    assert questions == ["Made in North America?"] and [cells for _, cells in rows] == [["China"]]
    # the table left out: its question is asked by the normal path, every row
    run = execute(PROGRAMS[2], table, neural=backend, sandbox=_sandbox(), cache=cache, prefetch=False)
    assert run.ok and run.value == 3 and not run.calls[0].from_cache and not run.calls[0].cached_keys
    questions, rows = target(lm.requests[-1])
    assert questions == ["No chemicals?"] and len(rows) == 4 and len(lm.requests) == 3


def test_falls_back_to_one_prompt_per_column_set_when_they_do_not_fit(table):
    lm = ScriptedLM(responder())
    backend = LMNeuralBackend(lm, pool=[], max_table_rows=5)  # 4 + 4 rows do not fit one prompt
    plan = plan_neural_calls(PROGRAMS, table, backend, NeuralCache())
    assert sorted(s.kind for s in plan.steps) == ["col", "multi"] and len(lm.requests) == 2
    assert not any(sections(r) for r in lm.requests)
    lm = ScriptedLM(responder())
    backend = LMNeuralBackend(lm, pool=[], max_output_tokens=64)  # the outputs together exceed the budget
    plan = plan_neural_calls(PROGRAMS, table, backend, NeuralCache())
    assert sorted(s.kind for s in plan.steps) == ["col", "multi"]


def test_a_combined_prompt_the_model_refuses_as_too_long_is_asked_per_column_set(table):
    from binder_py.lm.types import LMContextTooLong

    plain = responder()

    def respond(request, purpose):
        if sections(request) is not None:
            raise LMContextTooLong("too long", prompt_tokens=10**6, limit=1000)
        return plain(request, purpose)

    lm = ScriptedLM(respond)
    backend = LMNeuralBackend(lm, pool=[])
    cache = NeuralCache()
    plan = plan_neural_calls(PROGRAMS, table, backend, cache)
    kinds = [s.kind for s in plan.steps]
    assert kinds[0] == "tables" and plan.steps[0].error and sorted(kinds[1:]) == ["col", "multi"]
    assert all(s.fallback for s in plan.steps[1:]) and len(lm.requests) == 3  # the refused one + 2
    assert [sections(r) is not None for r in lm.requests].count(True) == 1
    run = execute(PROGRAMS[2], table, neural=backend, sandbox=_sandbox(), cache=cache)
    assert run.ok and run.value == 3 and run.calls[0].from_cache and len(lm.requests) == 3


def test_combining_tables_can_be_switched_off(table):
    lm = ScriptedLM(responder())
    plan = plan_neural_calls(PROGRAMS, table, LMNeuralBackend(lm, pool=[], combine_tables=False), NeuralCache())
    assert sorted(s.kind for s in plan.steps) == ["col", "multi"] and len(lm.requests) == 2
    lm = ScriptedLM(responder())
    plan = plan_neural_calls(PROGRAMS, table, LMNeuralBackend(lm, pool=[]), NeuralCache(), combine_tables=False)
    assert sorted(s.kind for s in plan.steps) == ["col", "multi"] and len(lm.requests) == 2


def test_multi_table_prompt_demonstrations_and_chat_turns(table):
    seen = []

    def respond(request, purpose):
        seen.append(request)
        return "/*\nTable B\nrow_id\tshirt\tNo chemicals?\n1\tT-shirt\tno\nTable A\n0\tUSA\tyes\n*/"

    lm = ScriptedLM(respond, capabilities=Capabilities(api="chat"))
    backend = LMNeuralBackend(lm, shots=4)
    rows_a, rows_b = [["USA"]], [["T-shirt"]]
    groups = [[NeuralRequest("col", "Made in North America?", ["made in"], rows_a, ["usa"])],
              [NeuralRequest("col", "No chemicals?", ["shirt"], rows_b, ["t-shirt"])]]
    assert backend.plan_tables(groups) == [[0, 1]]
    result = backend.answer_tables(groups)
    assert result.sections == [{"Made in North America?": {"usa": "yes"}}, {"No chemicals?": {"t-shirt": "no"}}]
    assert result.usage.requests == 1 and len(result.prompts) == 1
    roles = [role for role, _ in seen[0].messages]
    assert roles == ["system", "user", "assistant", "user", "assistant", "user"]  # 4 shots: 2 demos of 2 tables
    assert "labelled table" in seen[0].messages[0][1]
    demo_out = seen[0].messages[2][1]
    assert demo_out.startswith("/*\nTable A\nrow_id") and "\nTable B\nrow_id" in demo_out and demo_out.endswith("*/")
    last = seen[0].messages[-1][1]
    assert last.endswith("QA map@ output:") and "Table A: table" in last and "Table B: table" in last
    assert "\nrow_id\t1\n" in demo_out  # the header names the question by its number, not its text
    seen.clear()
    LMNeuralBackend(lm, shots=8).answer_tables(groups)  # 8 retrieved, the 6 most similar shown (table_shots)
    assert [role for role, _ in seen[0].messages].count("assistant") == 3
    seen.clear()
    LMNeuralBackend(lm, shots=8, table_shots=2).answer_tables(groups)
    assert [role for role, _ in seen[0].messages].count("assistant") == 1
    assert "1. Made in North America?" in last and "1. No chemicals?" in last
