"""A callback's arguments are bounded as written out, like an answer (red team 7).

pickle sends a repeated object once, and the parent decodes it shared, but a callback writes every
occurrence out: the neural backend puts ``f_val``'s rows (every row of the context, repeats
included, by design) into its prompt, and ``binder-py exec --json`` / ``ask --json`` into the trace.
``s = "x" * 10000; f_val("q", pd.DataFrame({"c": pd.Series([s] * 20000, dtype="O")}))`` was a
message of a few hundred kilobytes, 400 MB of ``--json`` output and 0.9 GB of the parent's memory;
the worker held one text (``[s] * 2_000_000``: 20 GB written, the parent out of memory). The parent
now checks a callback request as it checks an answer (``codec.check_answer_size``) before decoding it,
and all the requests of a run against one budget: the trace keeps every call, so ten such calls of
80 MB each wrote 800 MB (1.8 GB of the parent's memory), and the worker could make thousands.
"""
import time

import pandas as pd
import pytest

from sandbox import Sandbox, codec
from sandbox_testutil import SMALL

from binder_py.language import execute


@pytest.mark.parametrize("program", [
    's = "x" * 1000000\ncb([s] * 200)',
    's = "x" * 10000\ncb(rows=[(s,)] * 20000)',
    'v = [None] * 1000\ncb([v] * 10000)',
])
@pytest.mark.parametrize("mode", ["strict", "unsafe-inprocess"])
def test_shared_callback_arguments_are_refused(sb, program, mode):
    calls = []
    start = time.monotonic()
    if mode == "strict":
        outcome = sb.run(program, callbacks={"cb": lambda *a, **k: calls.append(1)})
    else:
        with Sandbox(SMALL, mode="unsafe-inprocess") as box:
            outcome = box.run(program, callbacks={"cb": lambda *a, **k: calls.append(1)})
    assert not calls, "the callback ran with the amplified arguments"
    assert outcome.error is not None and "CallbackError" in outcome.error.message, outcome.error
    assert "too large" in outcome.error.message
    assert time.monotonic() - start < 5


@pytest.mark.parametrize("mode", ["strict", "unsafe-inprocess"])
def test_callback_requests_of_a_run_share_one_budget(sb, mode):
    calls = []
    program = 's = "x" * 1000000\nfor i in range(200):\n    cb([s] * 10)\n1'
    if mode == "strict":
        outcome = sb.run(program, callbacks={"cb": lambda v: calls.append(1)})
    else:
        with Sandbox(SMALL, mode="unsafe-inprocess") as box:
            outcome = box.run(program, callbacks={"cb": lambda v: calls.append(1)})
    assert outcome.error is not None and "with the calls before it" in outcome.error.message, outcome.error
    assert 0 < len(calls) <= codec.MAX_ANSWER_TEXT // 10_000_000  # calls ran until the run's budget was spent
    # the budget is the run's: the next run starts afresh
    assert sb.run('cb(["x" * 1000000] * 10)\n1', callbacks={"cb": lambda v: None}).ok


def test_callback_arguments_below_the_bound_still_cross(sb):
    got = []
    outcome = sb.run('s = "x" * 100000\ncb([s] * 20)\n1', callbacks={"cb": lambda v: got.append(len(v))})
    assert outcome.ok, outcome.error
    assert got == [20]


def test_f_val_over_a_shared_cell_does_not_reach_the_backend():
    asked = []

    def neural(request):
        asked.append(len(request.rows))
        return "ok"

    program = 's = "x" * 10000\nctx = pd.DataFrame({"c": pd.Series([s] * 20000, dtype="O")})\nf_val("q", ctx)'
    run = execute(program, pd.DataFrame({"a": [1, 2, 3]}), neural=neural)
    assert not asked
    assert not run.ok and "too large" in run.error.message
    # an ordinary f_val over repeated cells still reaches it
    run = execute('f_val("q", pd.DataFrame({"c": ["yes"] * 1000}))', pd.DataFrame({"a": [1]}), neural=neural)
    assert run.ok, run.error
    assert asked == [1000]


def test_parent_check_names_the_callback():
    tree = codec.safe_loads(codec.dumps([["x" * 1000000] * 200, {}]))
    with pytest.raises(codec.CodecError, match="a call of cb"):
        codec.check_answer_size(tree, "a call of cb()")
