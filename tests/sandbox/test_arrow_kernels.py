"""Integers a program hands Arrow's compute kernels through pandas are bounded (red team 6).

pandas 3 runs the ``.str`` methods of text columns (``str`` is Arrow-backed) and ``round`` of
``int64[pyarrow]`` columns as Arrow kernels, passing the program's integers as options; Arrow does
its size and position arithmetic on them unchecked near the int64 limits. ``s.str.center(2**62)``
and ``s.str.repeat(6148914691236517206)`` computed an output size that wrapped to a few bytes and
wrote past it (heap overflow, the worker died with SIGSEGV), ``s.str.slice(2**63 - 1, 1, -1)``
died with SIGFPE (and with ``stop=0`` returned texts never written), ``round(2**31 - 1)`` with
SIGSEGV. ``sandbox.arrowargs`` checks every integer option of every kernel of ``pyarrow.compute``.
"""
import pytest

from sandbox import PolicyError, arrowargs

TEXT = ('s = pd.Series(["abc", "hello world", "x y z", "\u00ff\u00fc\u20ac"], dtype="str")\n'
        'l = pd.Series(["a b c", "d e", "f"] * 3, dtype="large_string[pyarrow]").str.split()\n')


@pytest.mark.parametrize("call", [
    "s.str.center(2 ** 62)",
    "s.str.center(2 ** 62 + 1, '*')",
    "s.str.pad(2 ** 63 - 1)",
    "s.str.ljust(2 ** 62)",
    "s.str.rjust(2 ** 62)",
    "s.str.zfill(2 ** 63 - 1)",
    "s.str.repeat(6148914691236517206)",  # 3 * n just above 2 ** 64
    "s.str.slice(2 ** 63 - 1, 1, -1)",
    "s.str.slice(2 ** 63 - 1, 0, -1)",
    "s.str[2 ** 63 - 1:0:-1]",
    "s.str.slice(0, None, -2 ** 63)",
    "s.str.slice_replace(2 ** 63 - 1, 0, 'Z')",
    "s.str.get(2 ** 63 - 1)",
    "pd.Series([1, 22], dtype='int64[pyarrow]').round(2 ** 31 - 1)",
    "pd.Series([1, 22], dtype='int64[pyarrow]').round(6000000)",
])
def test_extreme_kernel_integers_are_refused(sb, call):
    outcome = sb.run(TEXT + call + ".tolist()")
    assert outcome.error is not None, outcome.value
    assert outcome.error.kind == "policy", outcome.error
    assert "Arrow's integer arithmetic overflows" in outcome.error.message


@pytest.mark.parametrize("call, expected", [
    ("s.str.center(7, '*')", ["**abc**", "hello world", "*x y z*", "**\u00ff\u00fc\u20ac**"]),
    ("s.str.repeat(2)", ["abcabc", "hello worldhello world", "x y zx y z", "\u00ff\u00fc\u20ac" * 2]),
    ("s.str.slice(10 ** 6, None, -1)", ["cba", "dlrow olleh", "z y x", "\u20ac\u00fc\u00ff"]),
    ("s.str[1:-1]", ["b", "ello worl", " y ", "\u00fc"]),
    ("s.str.get(-1)", ["c", "d", "z", "\u20ac"]),
    ("pd.Series([15, 22], dtype='int64[pyarrow]').round(-1)", [20, 20]),
    ("(pd.Series([1, 22], dtype='int64[pyarrow]') * 10 ** 15)", [10 ** 15, 22 * 10 ** 15]),
    # red team 10: list_slice appends each list's child values from offset + start unchecked, so a start within
    # the 2**30 bound but past the lists read the child's offsets that far past their end (s.list[2**20:] killed
    # the worker with SIGSEGV, from about 300,000 on); a start past every list is fitted to the longest list
    ("l.list[2 ** 20:]", [[]] * 9),
    ("l.list[2 ** 20:2 ** 20 + 1]", [[]] * 9),
    ("l.list[400000:400001]", [[]] * 9),
    ("l.list[2 ** 29 - 1:2 ** 29]", [[]] * 9),
    ("l.list[1:]", [["b", "c"], ["e"], []] * 3),
    ("l.list[2:10 ** 6]", [["c"], [], []] * 3),
])
def test_ordinary_kernel_integers_still_work(sb, call, expected):
    outcome = sb.run(TEXT + call + ".tolist()")
    assert outcome.ok, outcome.error
    assert outcome.value == expected


def test_kernels_are_bounded_by_position_and_by_name():
    pa = pytest.importorskip("pyarrow")
    pc = pytest.importorskip("pyarrow.compute")
    assert arrowargs.installed()
    strings = pa.array(["a b", "c"])
    for call in (lambda: pc.utf8_center(strings, 2 ** 62), lambda: pc.utf8_center(strings, width=2 ** 62),
                 lambda: pc.utf8_slice_codeunits(strings, 0, None, -2 ** 63),
                 lambda: pc.split_pattern(strings, " ", max_splits=2 ** 28, reverse=True),
                 lambda: pc.utf8_split_whitespace(strings, max_splits=2 ** 31, reverse=True),
                 lambda: pc.binary_repeat(strings, pa.array([1, 2 ** 62])),
                 lambda: pc.list_element(pa.array([[1]]), 2 ** 63 - 1)):
        with pytest.raises(PolicyError, match="overflows"):
            call()
    assert pc.add(pa.array([1]), 2 ** 62).to_pylist() == [2 ** 62 + 1]  # a value, not an option
    assert pc.binary_repeat(strings, pa.array([2, 1])).to_pylist() == ["a ba b", "c"]



def test_a_fixed_size_list_slice_past_every_list_is_refused():
    pa = pytest.importorskip("pyarrow")
    pc = pytest.importorskip("pyarrow.compute")
    lists = pa.chunked_array([pa.array([["a", "b"], ["c"]], type=pa.list_(pa.large_string()))])
    with pytest.raises(PolicyError, match="every list is shorter"):
        pc.list_slice(lists, 10 ** 6, 10 ** 6 + 2, 1, True)
    assert pc.list_slice(lists, 10 ** 6).to_pylist() == [[], []]
    assert pc.list_slice(lists, start=10 ** 6, stop=10 ** 6 + 1).to_pylist() == [[], []]
    assert pc.list_slice(lists, 1, 3, 1, True).to_pylist() == [["b", None], [None, None]]
