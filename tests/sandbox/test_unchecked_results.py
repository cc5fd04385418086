"""What Python itself hands a program without a call of its own: a decorator's result and the
value ``with ... as name`` binds. Both go through the value check (sandbox/policy.py), so a
callable or context manager that returns a module cannot smuggle it in. The callables are the
test's own (escape_helpers.expose_leaky_callables), standing in for an allowed one that would."""
import pytest

HELPERS = "escape_helpers:expose_leaky_callables"


@pytest.mark.parametrize("program", [
    "@leak\ndef f():\n    pass\nf.getcwd()",
    "@leak\nclass A:\n    pass\nA.getcwd()",
    "@keep\n@leak\ndef f():\n    pass\nf",  # the inner decorator's result is checked before the outer sees it
])
def test_a_decorator_that_returns_a_module_is_refused(sb, program):
    outcome = sb.run(program, worker_globals=HELPERS)
    assert not outcome.ok and outcome.error.kind == "policy", outcome
    assert "module object, which programs may not hold" in outcome.error.message


@pytest.mark.parametrize("program", [
    "with cm() as x:\n    y = 1\nx.getcwd()",
    "with cm() as (x, ):\n    y = 1\ny",
])
def test_with_binding_a_module_is_refused_before_the_body_runs(sb, program):
    outcome = sb.run(program, worker_globals=HELPERS)
    assert not outcome.ok and outcome.error.kind == "policy", outcome
    assert "module object, which programs may not hold" in outcome.error.message


def test_ordinary_decorators_and_classes_still_work(sb):
    program = ("def twice(fn):\n    return lambda x: fn(fn(x))\n"
               "@twice\ndef inc(x):\n    return x + 1\n"
               "@np.vectorize\ndef sq(x):\n    return x * x\n"
               "class Box:\n    size = 3\n"
               "[inc(1), sq(np.array([2, 3])).tolist(), Box.size]")
    outcome = sb.run(program)
    assert outcome.ok, outcome.error
    assert outcome.value == [3, [4, 9], 3]
