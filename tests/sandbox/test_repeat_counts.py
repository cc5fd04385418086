"""numpy's repeat adds up its counts in a C integer without an overflow check (red team 6).

``np.repeat(np.arange(4), 2**62)`` allocated the wrapped total ``4 * 2**62 = 2**64 -> 0`` elements
and copied past its end (a heap overflow: the worker died with SIGSEGV); so did every pandas
``repeat`` (they end in numpy's). ``sandbox.repeats`` adds the counts up in Python first, in front of
the numpy routes a program holds and of every pandas class's ``repeat``.
"""
import pytest

from sandbox import PolicyError, repeats

A = "a = np.arange(4)\n"


@pytest.mark.parametrize("call", [
    "np.repeat(a, 2 ** 62)",
    "np.repeat(a, [2 ** 62, 2 ** 62, 2 ** 62, 2 ** 62 + 5])",  # a total of 5 after wrapping
    "a.repeat(2 ** 62)",
    "getattr(a, 'repeat')(2 ** 62)",
    "np.ndarray.repeat(a, 2 ** 62)",
    "type(a).repeat(a, 2 ** 62)",
    "np.repeat(a.reshape(2, 2), 2 ** 62, axis=1)",
    "pd.Series(a).repeat(2 ** 62)",
    "pd.Series(a).values.repeat(2 ** 62)",
    "pd.Index(a).repeat(2 ** 62)",
    "pd.Index(['w', 'x', 'y', 'z']).repeat(2 ** 62)",
    "pd.Categorical(['w', 'x', 'y', 'z']).repeat(2 ** 62)",
    "pd.MultiIndex.from_arrays([a, a]).repeat(2 ** 62)",
    "pd.date_range('2020', periods=4).repeat(2 ** 62)",
    "pd.array([1, 2, 3, 4], dtype='Int64').repeat(2 ** 62)",
    "pd.Series(['w', 'x']).array.repeat(2 ** 62)",
    "pd.interval_range(0, 4).repeat(2 ** 62)",
    "pd.Series([2 ** 62]).map(a.repeat)",
    "list(map(np.repeat, [a], [2 ** 62]))",
])
def test_repeat_counts_that_overflow_are_refused(sb, call):
    outcome = sb.run(A + call)
    assert outcome.error is not None, outcome.value
    assert outcome.error.kind == "policy" and "numpy's count of them overflows" in outcome.error.message, \
        outcome.error  # not killed


@pytest.mark.parametrize("call, expected", [
    ("np.repeat(a, 2).tolist()", [0, 0, 1, 1, 2, 2, 3, 3]),
    ("a.repeat([1, 0, 2, 0]).tolist()", [0, 2, 2]),
    ("pd.Series(['x', 'y']).repeat(2).tolist()", ["x", "x", "y", "y"]),
    ("pd.Index([1, 2]).repeat([2, 1]).tolist()", [1, 1, 2]),
    ("pd.Categorical(['x']).repeat(3).tolist()", ["x", "x", "x"]),
    ("np.repeat(a.reshape(2, 2), 2, axis=1).tolist()", [[0, 0, 1, 1], [2, 2, 3, 3]]),
])
def test_ordinary_repeats_still_work(sb, call, expected):
    outcome = sb.run(A + call)
    assert outcome.ok, outcome.error
    assert outcome.value == expected


def test_installed_process_wide():
    assert repeats.installed()
    import pandas as pd
    with pytest.raises(PolicyError):
        pd.Series([1, 2, 3, 4]).repeat(2 ** 62)
