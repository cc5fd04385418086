"""The vectorised context rows, and the original-Binder knobs used by ``binder-py bench``:
``dedup=False`` (every row sent) and ``chunk_rows`` (fixed chunks)."""

import itertools

import numpy as np
import pandas as pd
import pytest

from binder_py.neural import CallableBackend, NeuralAnswer
from binder_py.language import execute
from binder_py.neural.lm_backend import LMNeuralBackend
from binder_py.neural.prefetch import build_request
from binder_py.neural.requests import cell_text, context_rows, row_key
from binder_py.lm import ScriptedLM

from test_lm_backend import answer_by, col_request, target_rows


def naive_rows(ctx, distinct=True):
    rows = [[cell_text(v) for v in r] for r in ctx.itertuples(index=False, name=None)]
    keys = [row_key(r) for r in rows]
    if distinct:
        seen = {}
        for r, k in zip(rows, keys):
            seen.setdefault(k, r)
        return list(seen.values()), list(seen.keys())
    return rows, keys


@pytest.fixture
def mixed() -> pd.DataFrame:
    return pd.DataFrame({
        "s": ["A", "a", "b", None, "A ", "x\ty", np.nan, "b"],
        "o": [1, 1.0, True, "1", None, np.nan, 2.5, "z"],
        "f": [1.0, np.nan, -0.0, 0.0, 2.5, 1.0, np.nan, 3],
        "i": [1, 2, 3, 1, 2, 3, 1, 2],
        "d": pd.to_datetime(["2020-01-01", "2020-01-01 10:00", None, "2020-01-01", "2021-01-01", "2020-01-01",
                             None, "2022-02-02"], format="mixed"),
        "b": pd.array([True, False, None, True, True, False, None, True], dtype="boolean"),
        "st": pd.array(["a", "B", None, "b", "a", "c", None, "a"], dtype="string"),
        "c": pd.Categorical(["u", "v", "u", None, "v", "u", "u", "w"]),
        "I": pd.array([1, None, 3, 1, None, 3, 1, 2], dtype="Int64"),
    })


def test_context_rows_equal_row_by_row_computation(mixed):
    for width in (1, 2, 3):
        for combo in itertools.combinations(mixed.columns, width):
            ctx = mixed[list(combo)]
            for distinct in (True, False):
                rows, keys, codes = context_rows(ctx, distinct)
                assert (rows, keys) == naive_rows(ctx, distinct), (combo, distinct)
            rows, keys, codes = context_rows(ctx, True)
            assert [keys[c] for c in codes] == naive_rows(ctx, False)[1]


def test_context_rows_of_empty_contexts(mixed):
    assert context_rows(mixed.iloc[:0])[:2] == ([], [])
    rows, keys, codes = context_rows(mixed[[]])
    assert rows == [[]] and keys == [""] and list(codes) == [0] * len(mixed)


def counting_backend(seen):
    def answer(request):
        seen.append(list(request.keys))
        return NeuralAnswer(answers={k: ("yes" if k.startswith("a") else "no") for k in request.keys})
    return CallableBackend(answer)


@pytest.mark.parametrize("dedup", [True, False])
def test_dedup_knob_changes_rows_sent_not_answers(runner, dedup):
    df = pd.DataFrame({"city": ["Amsterdam", "Berlin", "amsterdam", "Athens", "Berlin", "Amsterdam"]})
    seen = []
    program = 'df["a"] = f_col("Starts with a?", "city")\n[df["a"].tolist(), str(df["a"].dtype)]'
    run = execute(program, df, neural=counting_backend(seen), sandbox=runner, dedup=dedup)
    assert run.ok, run.error
    assert run.value == [[True, False, True, True, False, True], "yesno"]
    sent = [k for call in seen for k in call]
    if dedup:
        assert sent == ["amsterdam", "berlin", "athens"]
    else:
        assert sent == ["amsterdam", "berlin", "amsterdam", "athens", "berlin", "amsterdam"]
    assert run.calls[0].n_rows == 6


def test_backend_dedup_attribute_is_the_default(runner):
    df = pd.DataFrame({"city": ["x", "x", "y"]})
    seen = []
    backend = counting_backend(seen)
    backend.dedup = False
    run = execute('f_col("q?", "city").tolist()', df, neural=backend, sandbox=runner)
    assert run.ok, run.error
    assert seen == [["x", "x", "y"]]


def test_prefetched_request_follows_dedup():
    df = pd.DataFrame({"city": ["x", "x", "y"]})
    assert build_request("col", "q?", df, ["city"], 0, None).keys == ["x", "y"]
    assert build_request("col", "q?", df, ["city"], 0, None, dedup=False).keys == ["x", "x", "y"]


def test_fixed_chunks_ignore_the_token_budget():
    cities = [f"city number {i}" for i in range(120)]
    lm = ScriptedLM(answer_by(lambda cells: "yes"))
    backend = LMNeuralBackend(lm, pool=[], chunk_rows=50, max_workers=1)
    result = backend.answer(col_request(cities))
    assert [len(target_rows(r.prompt)) for r in lm.requests] == [50, 50, 20]
    assert set(result.answers) == set(cities)
    default = LMNeuralBackend(ScriptedLM(answer_by(lambda cells: "yes")), pool=[])
    assert default.chunk_rows is None and default.dedup is True and default.prefetch is True


def test_bridge_spreads_typed_answers_to_every_row(runner):
    df = pd.DataFrame({"n": [3, 1, 3, 2, 1]}, index=[10, 11, 12, 13, 14])
    backend = CallableBackend(lambda r: NeuralAnswer(answers={k: str(int(k) * 10) for k in r.keys}))
    run = execute('s = f_col("times ten?", "n")\n[s.index.tolist(), s.tolist(), str(s.dtype)]', df,
                  neural=backend, sandbox=runner)
    assert run.ok, run.error
    assert run.value == [[10, 11, 12, 13, 14], [30, 10, 30, 20, 10], "Int64"]


def test_one_lower_case_column_is_sent_once_as_cells_and_keys():
    from binder_py.neural.requests import distinct_context_columns

    lower = pd.DataFrame({"city": ["oslo", "rome", "oslo", " lima "]})
    cells, keys, codes = distinct_context_columns(lower[["city"]])
    assert keys == ["oslo", "rome", "lima"] and cells[0] is keys and list(codes) == [0, 1, 0, 2]
    mixed_case = pd.DataFrame({"city": ["Oslo", "rome"]})
    cells, keys, _ = distinct_context_columns(mixed_case[["city"]])
    assert cells == [["Oslo", "rome"]] and keys == ["oslo", "rome"] and cells[0] is not keys
