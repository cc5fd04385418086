"""A fast smoke test of the bench code paths: tiny sizes, zero latency, no timing asserts."""

import json

import pytest

from binder_py.bench import macro, scale
from binder_py.bench.questions import QUESTIONS
from binder_py.cli import main
from binder_py.errors import BinderError


def test_scripted_questions_sample_twenty_programs():
    for q in QUESTIONS:
        samples = q.samples(20)
        assert len(samples) == 20 and len(set(samples)) == len(q.variants)


def test_neural_answers_are_deterministic_and_well_formed():
    assert macro.neural_answer("Is the nation Sweden?", ["sweden"]) == "yes"
    assert macro.neural_answer("What year was the person born?", ["b. 1962"]) == "1962"
    r = macro.Responder({})
    prompt = ("Give a database as shown below:\nTable: t\n/*\nrow_id\tcity\n0\tparis\n1\trome\n*/\n"
              'Q: Answer question "Is it big?" row by row.\nQA map@ output:\n/*\n')
    reply = r({"messages": [{"role": "user", "content": prompt}]}, "chat")
    assert reply.splitlines()[1].startswith("0\tparis\t") and r.log[0].rows == 2


def test_the_server_answers_a_typed_question_alike_in_every_layout():
    """A multi-table prompt lists typed questions ("... (yes/no)"): the answer per (question,
    row) is the one the single-question layout gets."""
    r = macro.Responder({})
    single = ("Give a database as shown below:\nTable: t\n/*\nrow_id\tnation\n0\tfrance\n1\titaly\n*/\n"
              'Q: Answer question "Is the nation Sweden? (yes/no)" row by row.\nQA map@ output:\n/*\n')
    tables = ("Give a database as shown below:\nTable A: t\n/*\nrow_id\tnation\n0\tfrance\n1\titaly\n*/\n"
              "Questions about table A, one column each, in this order:\n1. Is the nation Sweden? (yes/no)\n"
              "Q: Answer the questions of every table row by row, one output table per table, each after a line "
              "with its label.\nQA map@ output:\n/*\n")
    one = r({"prompt": single}, "completions").splitlines()[1:3]
    both = r({"prompt": tables}, "completions").splitlines()[2:4]
    assert [x.split("\t")[-1] for x in one] == [x.split("\t")[-1] for x in both]


def test_macro_all_strategies_on_one_question():
    try:
        from binder_py.datasets import resolve_data_dir

        resolve_data_dir(None, "wikitq")
    except BinderError:
        pytest.skip("shared benchmark data not found (../shared/data): the macro benchmark uses WikiTQ dev tables")
    results = macro.run(latency=0.0, limit=1, warm=False)
    ours, orig, upper = results["binder-py"][0], results["original"][0], results["original-no-cache"][0]
    assert upper.executed == 20 and orig.executed == ours.executed < 20  # the program-text cache
    assert upper.requests > orig.requests > ours.requests >= 2
    assert orig.neural_rows_sent > ours.neural_rows_sent
    assert ours.answer == orig.answer == upper.answer
    assert "| nt-305 |" in macro.markdown(results, 0.0)
    json.dumps(macro.as_json(results, 0.0))


def test_eval_run_part_shares_plan_prompts_with_the_same_answers():
    try:
        from binder_py.datasets import resolve_data_dir

        resolve_data_dir(None, "wikitq")
    except BinderError:
        pytest.skip("shared benchmark data not found (../shared/data): the macro benchmark uses WikiTQ dev tables")
    small = ("nt-46", "nt-4175", "nt-69")  # plans of 38, 36 and 18 rows: one prompt could hold them all
    examples = [e for e in macro.load_examples() if e.id in small]
    ours, orig = (macro.run_eval_strategy(s, examples, latency=0.0, n=20) for s in ("binder-py", "original"))
    assert ours.answers == orig.answers and len(ours.answers) == 3
    assert ours.parse_requests == orig.parse_requests == 3
    # the three questions are one wave (4 at a time): their plans share ONE prompt
    assert ours.neural_requests == 1 < orig.neural_requests
    assert "| binder-py (defaults) |" in macro.eval_markdown([ours, orig])


def test_a_recorded_eval_run_shares_plan_prompts_and_its_replay_sends_the_same_ones(tmp_path, monkeypatch):
    """Waves depend on the question order only: a run recorded through ``--lm SPEC`` batches its
    plan prompts, and its replay (which must find every prompt in the recording) gives the same answers."""
    try:
        from binder_py.datasets import resolve_data_dir

        resolve_data_dir(None, "wikitq")
    except BinderError:
        pytest.skip("shared benchmark data not found (../shared/data): the macro benchmark uses WikiTQ dev tables")
    from binder_py.lm.testserver import LoopbackServer
    from binder_py.runs import read_results, run_eval

    monkeypatch.setenv("BINDER_CACHE_DIR", str(tmp_path / "cache"))
    small = ("nt-46", "nt-4175", "nt-69", "nt-670")
    examples = [e for e in macro.load_examples() if e.id in small]
    scripted = {q.id: q for q in QUESTIONS}
    responder = macro.Responder({e.question.strip().lower(): scripted[e.id] for e in examples}, n=20)
    with LoopbackServer(responder=responder) as server:
        run_eval("wikitq", "dev", out=tmp_path / "live", lm=f"openai:gpt-4o-mini@{server.base_url}",
                 examples=examples, concurrency=2, n=20, progress=False)
        live_kinds = [x.kind for x in responder.log]
    assert live_kinds.count("parse") == 4
    # two waves of two questions: at most one plan request per wave (fewer than one per question)
    assert sum(k in ("col", "val") for k in live_kinds) <= 2
    config = json.loads((tmp_path / "live" / "config.json").read_text())
    assert config["plan_wave"] == 2 and config["plan_packing"] == 3  # first fit, packed by kind of answer, settled at the plan
    before = len(responder.log)
    with LoopbackServer(responder=responder) as server:  # nothing may reach a model now
        run_eval("wikitq", "dev", out=tmp_path / "replay", lm=f"replay:{tmp_path / 'live'}", examples=examples,
                 progress=False)
    assert len(responder.log) == before
    live, replay = ({r["id"]: r for r in read_results(tmp_path / d / "results.jsonl").records}
                    for d in ("live", "replay"))
    assert {k: r["prediction"] for k, r in live.items()} == {k: r["prediction"] for k, r in replay.items()}
    assert all(not r["error"] for r in replay.values())
    assert sum(r["usage"]["requests"] for r in replay.values()) == 0


def test_original_asks_once_per_context_column():
    """The original's qa_map loops over the columns: a two-column f_col is two calls (the first
    over the first column only), each in 50-row chunks; the answer is the last call's."""
    from binder_py.lm.scripted import ScriptedLM
    from binder_py.neural import LMNeuralBackend
    from binder_py.neural.requests import NeuralRequest, row_key

    rows = [[f"n{i}", f"c{i}"] for i in range(120)]
    request = NeuralRequest("col", "Is it big?", ["name", "city"], rows, [row_key(r) for r in rows])
    seen: list[str] = []
    responder = macro.Responder({})

    def reply(lm_request, purpose):
        prompt = lm_request.prompt or "\n".join(m["content"] if isinstance(m, dict) else m[1]
                                                for m in lm_request.messages)
        seen.append(prompt)
        return responder({"prompt": prompt}, "completions")

    backend = LMNeuralBackend(ScriptedLM(reply), chunk_rows=50, dedup=False, max_workers=1, per_column=True)
    answer = backend.answer(request)
    assert len(seen) == 6  # 3 chunks of the first column, then 3 of both
    assert "\tname\tcity\n" not in seen[0] and "\tname\tcity\n" in seen[3]
    assert len(answer.prompts) == 6 and set(answer.answers) == {row_key(r) for r in rows}


def test_scale_tiny_tables():
    results = scale.run(sizes=(300,), distincts=(20,), backends=("counting", "lm"))
    assert [r.ok and r.correct for r in results] == [True, True]
    counting, lm = results
    assert counting.rows_sent == 20 and counting.requests == 1
    assert lm.rows_sent == 20 and lm.requests >= 1
    assert "| 300 |" in scale.markdown(results)


def test_cli_bench_scale_part(tmp_path, capsys):
    out = tmp_path / "bench.json"
    code = main(["bench", "--parts", "scale", "--rows", "200", "--distinct", "10", "--scale-backends", "counting",
                 "--json", str(out)])
    assert code == 0
    data = json.loads(out.read_text())
    assert data["scale"][0]["rows_sent"] == 10
    assert "Scale: one f_col" in capsys.readouterr().out


@pytest.mark.parametrize("argv, message", [
    (["--rows", "-5"], "--rows: comma-separated numbers of at least 1"),  # a numpy traceback
    (["--rows", "0"], "--rows: comma-separated numbers of at least 1"),  # a meaningless table of 0 rows
    (["--distinct", "0"], "--distinct: comma-separated numbers of at least 1"),
    (["--rows", "ten"], "--rows: comma-separated numbers"),
])
def test_bad_scale_sizes_are_a_clear_error(argv, message, capsys):
    assert main(["bench", "--parts", "scale", *argv]) == 2
    assert message in capsys.readouterr().err


def test_bad_macro_settings_are_refused_before_anything_runs(capsys):
    assert main(["bench", "--parts", "macro", "--n", "0"]) == 2
    assert "--n must be at least 1" in capsys.readouterr().err
    assert main(["bench", "--parts", "macro", "--latency", "-1"]) == 2
    assert "--latency is a finite number" in capsys.readouterr().err


def test_sandbox_overhead_back_to_back_phase_reports_wall_and_machine_cpu():
    from binder_py.bench import sandbox_overhead
    from sandbox import Sandbox

    before = sandbox_overhead.busy_cpu_seconds()
    assert before is None or before > 0
    with Sandbox(pool_size=1) as sb:
        wall, cpu = sandbox_overhead.cpu_per_program(sb, sandbox_overhead.make_table(20), 3)
    assert wall > 0
    assert cpu is None or cpu >= 0
    after = sandbox_overhead.busy_cpu_seconds()
    assert before is None or after >= before
