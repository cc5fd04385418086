"""The prompted-LM backend against a scripted LM: batching, row ids, re-asking, NA fallback."""

import pytest

from binder_py.neural import NeuralCache
from binder_py.language import execute
from binder_py.neural.lm_backend import LMNeuralBackend, parse_map_output
from binder_py.neural.requests import NeuralRequest, row_key
from binder_py.lm import ScriptedLM
from binder_py.lm.types import Capabilities

POOL = [
    {"id": "c1", "kind": "col", "title": "peaks", "question": "What is the value in feet?",
     "columns": ["prominence"], "rows": [["10080 ft; 3072 m"], ["1677 ft; 511 m"]], "answers": ["10080", "1677"]},
    {"id": "c2", "kind": "col", "title": "teams", "question": "Is it from alabama?",
     "columns": ["hometown"], "rows": [["chicago, il"], ["montgomery, al"]], "answers": ["no", "yes"]},
    {"id": "c3", "kind": "col", "title": "drivers", "question": "What is his country?",
     "columns": ["driver"], "rows": [["jim clark"], ["jack brabham"]], "answers": ["scotland", "australia"]},
    {"id": "v1", "kind": "val", "title": "shirts", "question": "Which is the most formal?",
     "columns": ["shirt"], "rows": [["t-shirt"], ["tuxedo shirt"]], "answer": "tuxedo shirt"},
]


def target_rows(prompt: str) -> list[tuple[int, list[str]]]:
    """The rows of the table the prompt asks about (its last table), as (row_id, cells)."""
    block = prompt.rsplit("Give a database as shown below:", 1)[1]
    table = block.split("/*", 1)[1].split("*/", 1)[0].strip().splitlines()[1:]
    return [(int(line.split("\t")[0]), line.split("\t")[1:]) for line in table]


def answer_by(fn):
    """A responder answering every asked row with fn(cells), echoing the table the paper's way."""
    def responder(request, purpose):
        assert purpose == "neural"
        return "\n".join(f"{rid}\t" + "\t".join(cells) + f"\t{fn(cells)}" for rid, cells in target_rows(request.prompt)) + "\n*/"
    return responder


def col_request(values, question="Is it in Europe?"):
    rows = [[v] for v in values]
    return NeuralRequest("col", question, ["city"], rows, [row_key(r) for r in rows], title="cities")


def test_prompt_layout_and_demonstrations_most_similar_last():
    lm = ScriptedLM(answer_by(lambda cells: "no"))
    backend = LMNeuralBackend(lm, pool=POOL, shots=2)
    backend.answer(col_request(["paris"], question="Is his hometown in alabama?"))
    prompt = lm.requests[0].prompt
    assert prompt.index("What is his country?") < prompt.index("Is it from alabama?")  # most similar last
    assert "What is the value in feet?" not in prompt  # only 2 shots
    assert prompt.endswith('QA map@ output:\n/*\nrow_id\tcity\tIs his hometown in alabama?\n')
    assert "Table: cities" in prompt and "0\tparis" in prompt
    req = lm.requests[0]
    assert req.temperature == 0.0 and "*/" in req.stop


def test_answers_are_matched_by_row_id_not_position():
    lm = ScriptedLM(["2\tlisbon\tyes\n0\tparis\tyes\n1\ttokyo\tno\n*/"])
    backend = LMNeuralBackend(lm, pool=[])
    result = backend.answer(col_request(["paris", "tokyo", "lisbon"]))
    assert result.answers == {"paris": "yes", "tokyo": "no", "lisbon": "yes"}
    assert result.warnings == [] and len(result.prompts) == 1 and result.raw_outputs[0].startswith("2\t")


def test_parse_map_output_tolerates_spaces_and_dots():
    parsed = parse_map_output("row_id  city  Q\n0.  paris   yes\n1 tokyo\n5\tx\tno\n1\ttokyo\tno\n",
                              {0: ["paris"], 1: ["tokyo"]})
    assert parsed.answers == {0: "yes", 1: "no"} and len(parsed.extra) == 1


def test_batches_fit_the_context_window():
    cities = [f"city number {i}" for i in range(40)]
    lm = ScriptedLM(answer_by(lambda cells: "yes"), context_window=700)
    backend = LMNeuralBackend(lm, pool=POOL, max_output_tokens=200, max_workers=2)
    result = backend.answer(col_request(cities))
    assert len(lm.requests) > 1
    assert set(result.answers) == {c for c in cities}
    asked = [rid for r in lm.requests for rid, _ in target_rows(r.prompt)]
    assert sorted(asked) == list(range(40))  # every row asked exactly once
    assert all(lm.count_tokens(r.prompt) + r.max_tokens <= 700 for r in lm.requests)


def test_missing_rows_are_asked_again_once():
    lm = ScriptedLM(["0\tparis\tyes\n*/", "1\ttokyo\tno\n*/"])
    backend = LMNeuralBackend(lm, pool=[])
    result = backend.answer(col_request(["paris", "tokyo"]))
    assert result.answers == {"paris": "yes", "tokyo": "no"}
    assert [rid for rid, _ in target_rows(lm.requests[1].prompt)] == [1]
    assert any("asking again" in w for w in result.warnings)


def test_rows_still_missing_are_left_na_with_a_warning():
    lm = ScriptedLM(["0\tparis\tyes\n7\tmadrid\tyes\n*/", "1\ttokyo\n*/"])  # extra id 7; row 1 copied w/o answer
    backend = LMNeuralBackend(lm, pool=[])
    result = backend.answer(col_request(["paris", "tokyo"]))
    assert result.answers == {"paris": "yes"}
    assert any("ignored 1 output line" in w for w in result.warnings)
    assert any("left NA" in w and "tokyo" in w for w in result.warnings)
    assert len(lm.requests) == 2


def test_na_fallback_through_execute_is_traced(shirts):
    def responder(request, purpose):
        rows = target_rows(request.prompt)
        return "\n".join(f"{rid}\t{cells[0]}\tyes" for rid, cells in rows if cells[0] != "China") + "\n*/"

    lm = ScriptedLM(responder)
    from language_fakes import InProcessSandbox

    cache = NeuralCache()
    r = execute('f_col("Made in North America?", "made in").tolist()', shirts,
                neural=LMNeuralBackend(lm, pool=POOL), sandbox=InProcessSandbox(), title="shirts", cache=cache)
    assert r.ok, r.error
    assert r.value == [True, None, True, True, True]
    call = r.calls[0]
    assert len(call.prompts) == 2 and len(call.raw_outputs) == 2  # asked, then asked again for China
    assert call.usage.requests == 2 and call.usage.prompt_tokens > 0
    assert any("left NA" in w for w in call.warnings) and r.warnings
    # the unanswered row is not cached: a later program asks for it again, the others come from the cache
    r2 = execute('f_col("Made in North America?", "made in").sum()', shirts,
                 neural=LMNeuralBackend(lm, pool=POOL), sandbox=InProcessSandbox(), cache=cache)
    assert r2.ok and r2.value == 4
    assert sorted(r2.calls[0].cached_keys) == ["canada", "mexico", "usa"]
    assert [rid for rid, _ in target_rows(lm.requests[-1].prompt)] == [0]


def test_val_prompt_and_answer():
    lm = ScriptedLM([" Tuxedo shirt\n"])
    backend = LMNeuralBackend(lm, pool=POOL)
    req = NeuralRequest("val", "Which is the most formal?", ["shirt"], [["Polo"], ["Tuxedo shirt"]],
                        ["polo", "tuxedo shirt"], title="shirts")
    result = backend.answer(req)
    assert result.value == "Tuxedo shirt"
    prompt = lm.requests[0].prompt
    assert prompt.endswith('Q: Answer question "Which is the most formal?" for the table.\nQA ans@ output: ')
    assert "QA ans@ output: tuxedo shirt" in prompt  # the val demonstration
    assert lm.requests[0].stop == ("\n",)


def test_real_pool_is_loaded_by_default():
    backend = LMNeuralBackend(ScriptedLM(["x"]), shots=8)
    assert len(backend.pool) >= 50
    demos = backend.demonstrations(col_request(["paris"]))
    assert len(demos) == 8 and all(d["kind"] == "col" for d in demos)


def test_chat_models_get_demonstrations_as_turns():
    from binder_py.neural.lm_backend import LMNeuralBackend
    from binder_py.neural.requests import NeuralRequest
    from binder_py.lm import ScriptedLM

    seen = []

    def respond(request, purpose):
        seen.append(request)
        if "QA ans@" in request.messages[-1][1]:
            return "china"
        return "/*\nrow_id\tmade in\tq\n0\tmexico\tyes\n1\tchina\tno\n*/"

    lm = ScriptedLM(respond, capabilities=Capabilities(api="chat"))
    backend = LMNeuralBackend(lm, shots=3)
    col = backend.answer(NeuralRequest(kind="col", question="Is it in North America?", columns=["made in"],
                                       rows=[["mexico"], ["china"]], keys=["mexico", "china"]))
    assert col.answers == {"mexico": "yes", "china": "no"}
    roles = [role for role, _ in seen[0].messages]
    assert roles == ["system"] + ["user", "assistant"] * 3 + ["user"]
    assert seen[0].messages[-1][1].endswith("QA map@ output:")
    assert all(text.startswith("/*") and text.endswith("*/") for role, text in seen[0].messages
               if role == "assistant")
    val = backend.answer(NeuralRequest(kind="val", question="Which is in Asia?", columns=["made in"],
                                       rows=[["mexico"], ["china"]], keys=["mexico", "china"]))
    assert val.value == "china" and seen[1].messages[-1][1].endswith("QA ans@ output:")
