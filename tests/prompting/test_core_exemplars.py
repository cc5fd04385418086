"""Core exemplars (the same first exemplars for every question, so a model server keeps them
evaluated from one question to the next) and the embedded model's row cap."""

import pandas as pd
import pytest

from binder_py.errors import BinderError
from binder_py.lm import ScriptedLM
from binder_py.lm.types import Capabilities
from binder_py.pipeline import AskSettings
from binder_py.prompting import build_parse_prompt
from binder_py.prompting.builder import choose_exemplars
from binder_py.prompting.exemplars import load_exemplars
from binder_py.tasks import PROFILES, WIKITQ

EMBEDDED = Capabilities(api="chat", logprobs=True, grammar=True, embedded=True)


def words(text: str) -> int:
    return len(text.split())


def big_table(rows: int = 60) -> pd.DataFrame:
    return pd.DataFrame({"city": [f"city {i}" for i in range(rows)], "year": list(range(1950, 1950 + rows))})


def test_core_exemplars_come_first_in_their_order_and_the_rest_are_retrieved():
    pool = load_exemplars("wikitq")
    table = big_table(5)
    for question in ("which bridge has the longest main span?", "how many games were played in california?"):
        chosen = choose_exemplars(pool, question, table, None, k=4, strategy="bm25", mode="binder",
                                  core=("wtq-01", "wtq-12", "wtq-14"))
        assert [e.id for e in chosen[:3]] == ["wtq-01", "wtq-12", "wtq-14"]
        assert chosen[3].id not in ("wtq-01", "wtq-12", "wtq-14")
    # the rest: the ordinary retrieval over the pool without the core
    rest = choose_exemplars([e for e in pool if e.id not in ("wtq-01", "wtq-12", "wtq-14")],
                            "which bridge has the longest main span?", table, None, k=1, strategy="bm25", mode="binder")
    first = choose_exemplars(pool, "which bridge has the longest main span?", table, None, k=4, strategy="bm25",
                             mode="binder", core=("wtq-01", "wtq-12", "wtq-14"))
    assert first[3].id == rest[0].id
    # python mode never shows an exemplar with neural calls, core or not; k caps the core
    python = choose_exemplars(pool, "q", table, None, k=2, strategy="bm25", mode="python",
                              core=("wtq-12", "wtq-02", "wtq-01", "wtq-09"))
    assert [e.id for e in python] == ["wtq-02", "wtq-01"]
    assert [e.id for e in choose_exemplars(pool, "q", table, None, k=3, strategy="bm25", mode="binder",
                                           core=("no-such-id", "wtq-02"))][:1] == ["wtq-02"]


def test_every_profile_names_core_exemplars_its_pool_holds_and_its_mode_may_show():
    for profile in PROFILES.values():
        pool = {e.id: e for e in load_exemplars(profile.prompts)}
        for mode, ids in profile.core_exemplars.items():
            assert len(ids) >= profile.embedded_core_shots and len(set(ids)) == len(ids)
            for i in ids:
                assert i in pool and not pool[i].several_tables, (profile.name, i)
                assert not (mode == "python" and pool[i].uses_neural), (profile.name, i)


def test_the_parse_prompts_of_two_questions_share_their_instruction_and_core_exemplars():
    table = big_table(60)
    prompts = [build_parse_prompt("wikitq", table, q, mode="binder", num_shots=4, count_tokens=words,
                                  context_window=100_000, core=WIKITQ.core_exemplars["binder"][:3], max_table_rows=20)
               for q in ("which city came first?", "how many cities are in europe?")]
    a, b = (p.messages for p in prompts)
    assert a[:7] == b[:7]  # system turn + three core exemplars (user and assistant turns each)
    assert prompts[0].exemplar_ids[:3] == ["wtq-01", "wtq-12", "wtq-14"]
    assert prompts[0].table_rows_shown == 20 and prompts[0].table_rows_total == 60
    assert "city 19" in a[-1][1] and "city 20" not in a[-1][1]


def test_the_embedded_model_gets_core_exemplars_and_twenty_rows_and_others_get_neither():
    embedded = ScriptedLM(["x"], capabilities=EMBEDDED)
    api = ScriptedLM(["x"])
    assert WIKITQ.effective_core(embedded, None, mode="binder") == ("wtq-01", "wtq-12", "wtq-14")
    assert WIKITQ.effective_core(api, None, mode="binder") == ()
    assert WIKITQ.effective_core(api, 2, mode="python") == ("wtq-02", "wtq-01")
    assert WIKITQ.effective_core(embedded, 0, mode="binder") == ()
    assert WIKITQ.effective_table_rows(embedded, None) == 20 and WIKITQ.effective_table_rows(api, None) is None
    assert WIKITQ.effective_table_rows(embedded, 0) is None and WIKITQ.effective_table_rows(api, 5) == 5


def test_the_asked_question_shows_the_core_first_and_the_capped_table():
    from binder_py.ask import Binder

    seen = []

    def reply(request, purpose):
        seen.append(request)
        return 'df["year"].max()'
    lm = ScriptedLM(reply, capabilities=Capabilities(api="chat", embedded=True))
    binder = Binder(lm=lm, task="wikitq", mode="python", n=1, progress=False, cache=False)
    answer = binder.ask(big_table(60), "what is the last year?")
    assert answer.value == 2009  # the program ran on all 60 rows
    turns = seen[0].messages
    assert [t for t in turns if t[0] == "assistant"][:3] == [("assistant", e.program) for e in
                                                             _by_id("wikitq", ("wtq-02", "wtq-01", "wtq-09"))]
    assert "city 19" in turns[-1][1] and "city 20" not in turns[-1][1]
    seen.clear()
    Binder(lm=lm, task="wikitq", mode="python", n=1, progress=False, cache=False, core_shots=0,
           table_rows=0).ask(big_table(60), "what is the last year?")
    assert "city 59" in seen[0].messages[-1][1]


def _by_id(task, ids):
    pool = {e.id: e for e in load_exemplars(task)}
    return [pool[i] for i in ids]


@pytest.mark.parametrize("field", ["core_shots", "table_rows", "num_shots"])
def test_negative_counts_are_refused_with_the_setting_named(field):
    with pytest.raises(BinderError, match=field):
        AskSettings(**{field: -1})


def test_the_embedded_model_writes_programs_of_at_most_256_tokens_unless_asked_otherwise():
    """A sample caught in a repetition loop runs to the cap while its request's other samples
    wait: the embedded model's cap is 256 tokens (its programs take at most ~220), others keep 512."""
    from binder_py.ask import Binder

    embedded = ScriptedLM(["x"], capabilities=EMBEDDED)
    api = ScriptedLM(["x"])
    assert WIKITQ.effective_max_tokens(embedded, None) == 256 and WIKITQ.effective_max_tokens(api, None) == 512
    assert WIKITQ.effective_max_tokens(embedded, 400) == 400
    seen = []

    def reply(request, purpose):
        seen.append(request)
        return 'df["year"].max()' if purpose == "parse" else "x"
    for capabilities, settings, expected in ((Capabilities(api="chat", embedded=True), {}, 256),
                                             (Capabilities(api="chat"), {}, 512),
                                             (Capabilities(api="chat", embedded=True), {"max_tokens": 300}, 300)):
        seen.clear()
        lm = ScriptedLM(reply, capabilities=capabilities)
        Binder(lm=lm, task="wikitq", mode="python", n=2, progress=False, cache=False, **settings).ask(
            big_table(5), "what is the last year?")
        assert seen and seen[0].n == 2 and seen[0].max_tokens == expected


def test_an_end_to_end_answer_over_capped_rows_is_not_said_to_come_from_programs():
    """In e2e mode the row cap's warning said "programs run on every row", but there is no program:
    the model answered "how many cities?" from the 20 rows it was shown."""
    from binder_py.ask import Binder

    lm = ScriptedLM(lambda request, purpose: "20", capabilities=Capabilities(api="chat", embedded=True))
    warnings = Binder(lm=lm, mode="e2e", progress=False, cache=False).ask(big_table(60), "how many cities?").warnings
    assert ("the prompt showed 20 of 60 rows: at most 20 of a table (table_rows, --table-rows); the model "
            "answered from the rows shown (table_rows=0, --table-rows 0: as many as fit)") in warnings
    assert not any("programs run on every row" in w for w in warnings)


def test_rows_left_out_by_the_row_cap_are_not_said_to_be_fitted_to_the_context():
    """With the embedded model's 20-row cap, every answer over a longer table warned "the prompt
    was fitted to MODEL's context: dropped 0 exemplar(s), showed 20 of 60 rows", though the
    context had room: the warning now says it was the cap. A context too small still says so."""
    from binder_py.ask import Binder

    lm = ScriptedLM(lambda request, purpose: 'df["year"].max()',
                    capabilities=Capabilities(api="chat", embedded=True))
    capped = Binder(lm=lm, task="wikitq", mode="python", n=1, progress=False, cache=False)
    warnings = capped.ask(big_table(60), "what is the last year?").warnings
    assert "the prompt showed 20 of 60 rows: at most 20 of a table (table_rows, --table-rows); programs run on " \
           "every row" in warnings
    assert not any("fitted to" in w for w in warnings)
    small = ScriptedLM(lambda request, purpose: 'df["year"].max()', context_window=700,
                       capabilities=Capabilities(api="chat", embedded=True))
    warnings = Binder(lm=small, task="wikitq", mode="python", n=1, progress=False, cache=False,
                      table_rows=0).ask(big_table(60), "what is the last year?").warnings
    assert any(w.startswith("the prompt was fitted to scripted's context") for w in warnings), warnings
