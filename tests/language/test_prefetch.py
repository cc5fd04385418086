"""Independent neural requests of one program are answered concurrently (prefetch)."""

import threading

import pandas as pd

from binder_py.neural import CallableBackend, NeuralCache
from binder_py.language import execute, parse_program
from binder_py.neural.prefetch import predictable_requests


def barrier_backend(parties):
    barrier = threading.Barrier(parties, timeout=5)
    calls = []

    def fn(request):
        calls.append(request.question)
        barrier.wait()  # only passes when `parties` requests are in flight at once
        if request.kind == "val":
            return "Polo"
        return {k: "yes" for k in request.keys}

    backend = CallableBackend(fn, name="barrier")
    backend.prefetch = True
    return backend, calls


def test_independent_requests_run_concurrently(runner, shirts):
    backend, calls = barrier_backend(2)
    program = ('a = f_col("Made in North America?", "made in")\n'
               'b = f_val("Which is the most formal?", ["shirt"])\n'
               '[int(a.sum()), b]')
    r = execute(program, shirts, neural=backend, sandbox=runner, cache=NeuralCache())
    assert r.ok, r.error
    assert r.value == [5, "Polo"]
    assert sorted(calls) == ["Made in North America?", "Which is the most formal?"]  # each asked once
    assert [c.prefetched for c in r.calls] == [True, True]
    assert all(not c.from_cache and c.answers or c.value for c in r.calls)


def test_prefetch_is_skipped_when_rows_are_unpredictable(shirts):
    def reqs(src):
        return predictable_requests(parse_program(src), shirts)

    assert len(reqs('f_col("A?", "shirt")\nf_val("B?", ["shirt", "price"])')) == 2
    assert reqs('df = df[df.price > 10]\nf_col("A?", "shirt")') == []
    assert reqs('df["shirt"] = df["shirt"].str.lower()\nf_col("A?", "shirt")') == []
    assert reqs('if True:\n    f_col("A?", "shirt")') == []
    assert reqs('x = df.price.max() > 3 and f_val("A?", "shirt")') == []
    assert reqs('f_col("A?", "no such column")') == []
    assert reqs('df.dropna(inplace=True)\nf_col("A?", "shirt")') == []
    # a call that filters another table reads its column names there: not a request over df's rows
    assert reqs('sub = df[df.price > 10]\nsub[f_col("A?", ["shirt"])]') == []
    assert reqs('sub = df[df.price > 10]\nsub.loc[~f_col("A?", "shirt"), "price"]') == []
    req = reqs('df["x"] = f_col(" A? ", ["made in"])')[0]
    assert req.question == "A?" and req.keys == ["usa", "china", "mexico", "canada"]


def test_unreached_prefetch_is_reported(runner, shirts):
    calls = []

    def fn(request):
        calls.append(request.question)
        return {k: "no" for k in request.keys} if request.kind == "col" else "x"

    backend = CallableBackend(fn, name="b")
    r = execute('y = 1 / 0\nf_val("Never reached?", "shirt")', shirts, neural=backend, sandbox=runner,
                prefetch=True)
    assert not r.ok and r.error.line == 1
    assert calls == ["Never reached?"]
    assert len(r.calls) == 1 and r.calls[0].order == -1 and r.calls[0].prefetched
    # (it said "the program never made this call", beside the program's own error, as if it were a second
    # problem; the answer's warnings showed it in the quick start)
    assert r.calls[0].warnings == ["prefetched; the program failed before it made this call"]


def test_calls_are_known_until_the_table_is_rebound(shirts):
    def reqs(src):
        return [(r.kind, r.question, r.columns) for r in predictable_requests(parse_program(src), shirts)]

    # the paper's program: both calls run on the original table, before df is rebound
    assert sorted(reqs('df = df[f_col("NA?", ["made in"]) & f_col("Clean?", ["shirt"])]\n'
                       'df.sort_values("price")["shirt"].iloc[0]')) == [
        ("col", "Clean?", ["shirt"]), ("col", "NA?", ["made in"])]
    # sub-tables named by subscripts of the original table
    assert reqs('f_val("Best?", df[["shirt", "price"]])\nf_col("Cheap?", df["price"])') == [
        ("val", "Best?", ["shirt", "price"]), ("col", "Cheap?", ["price"])]
    assert reqs('f_val("Best?", df)')[0][2] == [str(c) for c in shirts.columns]
    # after the rebinding (or after a column is written, for the whole table) nothing is known
    assert reqs('df = df[df.price > 10]\nf_val("Best?", df[["shirt"]])') == []
    assert reqs('df["x"] = 1\nf_val("Best?", df)') == []
    assert reqs('df["x"] = 1\nf_val("Best?", df[["shirt"]])') == [("val", "Best?", ["shirt"])]


def test_a_prefetch_that_answered_nothing_does_not_claim_the_program_never_called(runner, shirts):
    """A prefetched request whose rows the backend left unanswered is asked again by the program's
    own call; its trace said "prefetched, but the program never made this call", which is false."""
    backend = CallableBackend(lambda request: {})  # answers no row: nothing is cached
    program = 'df[f_col("Made in North America?", ["made in"])].shape[0]'
    result = execute(program, shirts, neural=backend, sandbox=runner, prefetch=True)
    assert result.ok, result.error
    early = [c for c in result.calls if c.order == -1]
    assert early and all("never made this call" not in w for c in early for w in c.warnings)
    assert any("asked again by the program's own call" in w for c in early for w in c.warnings)
