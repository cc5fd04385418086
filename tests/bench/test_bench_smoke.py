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


def test_macro_both_strategies_on_one_question():
    try:
        from binder_py.datasets import resolve_data_dir

        resolve_data_dir(None, "wikitq")
    except BinderError:
        pytest.skip("shared benchmark data not found (../shared/data): the macro benchmark uses WikiTQ dev tables")
    results = macro.run(latency=0.0, limit=1, warm=False)
    ours, orig = results["binder-py"][0], results["original"][0]
    assert orig.executed == 20 and ours.executed < 20
    assert orig.requests > ours.requests >= 2
    assert orig.neural_rows_sent > ours.neural_rows_sent
    assert ours.answer == orig.answer
    assert "| nt-305 |" in macro.markdown(results, 0.0)
    json.dumps(macro.as_json(results, 0.0))


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
