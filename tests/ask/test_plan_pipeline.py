"""The question-level plan in the pipeline: candidates' predictable f_col calls answered before
they run, several questions per prompt; its usage is the question's; switches turn it off."""

from __future__ import annotations

import json
import re

from binder_py import Binder
from binder_py.lm import ScriptedLM
from tests.ask.shirts_case import PLAIN_PROGRAM, QUESTION
from binder_py.neural.answer_types import question_of

NORTH_AMERICA = {"mexico", "united states", "canada"}
NO_CHEMICALS = {"organic cotton tee", "pure cotton oxford shirt", "linen summer shirt", "100% cotton flannel shirt"}
NEURAL = {
    "Is it in North America?": lambda cell: "yes" if cell.lower() in NORTH_AMERICA else "no",
    "Is it in Europe?": lambda cell: "yes" if cell.lower() == "portugal" else "no",
    "No chemicals?": lambda cell: "yes" if cell.lower() in NO_CHEMICALS else "no",
}
P1 = ('df[f_col("Is it in North America?", "made in") & f_col("No chemicals?", "shirt")]'
      '.sort_values("sales", ascending=False)["shirt"].iloc[0]')
P2 = ('df["na"] = f_col("Is it in North America?", ["made in"])\n'
      'df["eu"] = f_col("Is it in Europe?", ["made in"])\n'
      'df[df["na"] & f_col("No chemicals?", "shirt")].sort_values("sales", ascending=False)["shirt"].iloc[0]')
# a sub-table built by plain pandas: planned with combine_tables (its expression runs in the sandbox first)
P3 = 'df[df["price"] > 30]\nf_val("Which is the most formal?", df[df["price"] > 30][["shirt"]])'


def model(programs):
    def respond(request, purpose):
        if purpose != "neural":
            return programs
        text = request.prompt
        block = text.rsplit("Give a database as shown below:", 1)[1]
        if "QA ans@" in block:
            return "pure cotton oxford shirt"
        if "Answer the questions of every table" in block:  # several column sets, one labelled table each
            out = [f"Table {label} answer: pure cotton oxford shirt"
                   for label in re.findall(r"Question about the whole of table ([A-Z])", block)]
            for m in re.finditer(r"Table ([A-Z]): [^\n]*\n/\*\n(.*?)\n\*/\nQuestions about table \1[^\n]*\n"
                                 r"((?:\d+\. [^\n]*\n)+)", block, re.S):
                questions = [question_of(re.sub(r"^\d+\. ", "", q)) for q in m.group(3).splitlines()]
                out.append(f"Table {m.group(1)}")
                for line in m.group(2).splitlines()[1:]:
                    cells = line.split("\t")
                    out.append("\t".join(cells + [NEURAL[q](cells[1]) for q in questions]))
            return "\n".join(out) + "\n*/"
        lines = block.split("/*", 1)[1].split("*/", 1)[0].strip().splitlines()[1:]
        listed = re.search(r"row by row[^\n]*\n((?:\d+\. [^\n]*\n)+)", block)
        questions = ([question_of(re.sub(r"^\d+\. ", "", q)) for q in listed.group(1).splitlines()] if listed
                     else [question_of(re.search(r'Q: Answer question "(.*)" row by row\.', block).group(1))])
        out = []
        for line in lines:
            cells = line.split("\t")
            out.append("\t".join(cells + [NEURAL[q](cells[1]) for q in questions]))
        return "\n".join(out) + "\n*/"
    return ScriptedLM(respond)


def ask(shirts, combine_tables=False, **settings):
    from binder_py.neural import LMNeuralBackend

    lm = model([P1, P2, P1, PLAIN_PROGRAM, P3])
    neural = None if combine_tables else LMNeuralBackend(lm, combine_tables=False)  # None: the default backend
    binder = Binder(lm=lm, neural=neural, task="analyst", n=5, **settings)
    return binder.ask(shirts, QUESTION, title="shirts"), lm


def neural_purposes(lm):
    return [tags for _, purpose, tags in lm.calls if purpose == "neural"]


def test_plan_answers_predictable_calls_in_one_wave(shirts):
    answer, lm = ask(shirts)
    assert answer.value == "pure cotton oxford shirt"
    plan = answer.plan
    assert plan is not None and plan.predicted == 5  # P1: 2, P2: 3 (P1 runs once: identical samples)
    by_columns = {tuple(s.columns): s for s in plan.steps}
    assert by_columns[("made in",)].kind == "multi"
    assert by_columns[("made in",)].questions == ["Is it in North America?", "Is it in Europe?"]
    assert by_columns[("shirt",)].kind == "col"
    assert plan.usage.requests == 2
    # parse + the plan's 2 prompts + P3's unpredictable f_val
    assert len(lm.requests) == 4 and lm.usage.requests == 4
    assert answer.usage.requests == 4  # the plan's usage is counted in the answer
    assert any(tags.get("plan") == "multi" and tags.get("questions") == "2" for tags in neural_purposes(lm))
    for candidate in answer.candidates:
        for call in candidate.neural_calls:
            if call.kind == "col":
                assert call.from_cache and sorted(call.cached_keys) == sorted(call.keys)
                assert call.answers and call.usage.requests == 0
    data = answer.to_json()
    json.dumps(data)
    assert data["plan"]["requests"] == 2 and len(data["plan"]["steps"]) == 2
    assert data["plan"]["steps"][0]["prompts"] or data["plan"]["steps"][1]["prompts"]
    assert "Planned neural calls" in answer.explain()
    assert "plan" in answer.timings


def test_plan_asks_several_column_sets_in_one_prompt_by_default(shirts):
    answer, lm = ask(shirts, combine_tables=True)
    assert answer.value == "pure cotton oxford shirt"
    step, value = answer.plan.steps  # the multi-table prompt, and P3's f_val answered by it
    assert step.kind == "tables" and sorted(t["columns"] for t in step.tables) == [["made in"], ["shirt"], ["shirt"]]
    assert [t.get("value", False) for t in step.tables] == [False, False, True]
    assert value.kind == "val" and value.usage.requests == 0 and not value.error
    assert answer.plan.usage.requests == 1
    assert len(lm.requests) == 2 and answer.usage.requests == 2  # parse + the plan's one prompt
    assert any(tags.get("plan") == "tables" and tags.get("tables") == "3" for tags in neural_purposes(lm))
    for candidate in answer.candidates:
        for call in candidate.neural_calls:
            if call.kind == "col":
                assert call.from_cache and call.usage.requests == 0


def test_plan_neural_false_disables_it(shirts):
    planned, _ = ask(shirts)
    answer, lm = ask(shirts, plan_neural=False)
    assert answer.plan is None and answer.value == planned.value
    assert len(lm.requests) == 5  # parse + 3 f_col questions asked one by one + the f_val


def test_share_neural_cache_false_disables_it(shirts):
    answer, lm = ask(shirts, share_neural_cache=False)
    assert answer.plan is None and answer.value == "pure cotton oxford shirt"
    assert len(lm.requests) == 1 + 2 + 3 + 1  # every program asks its own calls


def test_oracle_backend_is_unaffected(shirts, oracle_spec):
    lm = model([P1, PLAIN_PROGRAM])
    answer = Binder(lm=lm, neural=oracle_spec, task="analyst", n=2).ask(shirts, QUESTION)
    assert answer.plan is None and answer.value == "pure cotton oxford shirt"
    assert answer.to_json()["plan"] is None and len(lm.requests) == 1
