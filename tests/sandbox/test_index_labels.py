"""An Index never hands out a writable alias of its labels (red team 7; ``sandbox/indexdata.py``).

``a = np.asarray(df.index); a[0] = 99`` changed a frame's labels after pandas had cached their hash
table: ``df.loc[99]`` then found nothing and ``df.loc[10]`` the row now labelled 99. pandas 3's own
route (``Index.values``, ``Index.array``) is read-only; ``Index.__array__``, ``MultiIndex.__array__``,
the ``asi8`` of datetime-like indexes and the ``view()`` of a read-only extension array were not. Now
each is read-only or a copy: a write either fails or leaves the labels as they were.
"""
import pytest

FRAME = "df = pd.DataFrame({'v': [1, 2, 3]}, index=[10, 20, 30])\n"
#: route -> (program that writes through it, the index it wrote to, that index's labels)
ROUTES = {
    "asarray": (FRAME + "a = np.asarray(df.index)\na[0] = 99", "df.index", [10, 20, 30]),
    "asarray of integer columns": ("df = pd.DataFrame([[1, 2]], columns=[5, 6])\na = np.asarray(df.columns)\n"
                                   "a[0] = 7", "df.columns", [5, 6]),
    "np.array copy=False": (FRAME + "a = np.array(df.index, copy=False)\na[0] = 99", "df.index", [10, 20, 30]),
    "asarray of unique": (FRAME + "a = np.asarray(df.index.unique())\na[0] = 99", "df.index", [10, 20, 30]),
    "asarray of a view": (FRAME + "a = np.asarray(df.index.view())\na[0] = 99", "df.index", [10, 20, 30]),
    "array view": (FRAME + "a = np.asarray(df.index.array.view())\na[0] = 99", "df.index", [10, 20, 30]),
    "array view of a dtype": (FRAME + "a = df.index.array.view('i8')\na[0] = 99", "df.index", [10, 20, 30]),
    "interval left": ("i = pd.interval_range(0, 30, periods=3)\na = np.asarray(i.left)\na[0] = 5",
                      "i.left", [0, 10, 20]),
    "string[python] index": ("i = pd.Index(['a', 'b'], dtype='string[python]')\na = np.asarray(i)\na[0] = 'z'",
                             "i", ["a", "b"]),
    "datetime asi8": ("i = pd.date_range('2020-01-01', periods=3)\na = i.asi8\na[0] = 0", "i.day", [1, 2, 3]),
    "datetime asarray": ("i = pd.date_range('2020-01-01', periods=3)\na = np.asarray(i)\na[0] = a[2]",
                         "i.day", [1, 2, 3]),
    "multiindex": ("mi = pd.MultiIndex.from_tuples([(1, 2), (3, 4)])\na = np.asarray(mi)\na[0] = (9, 9)\n"
                   "x = mi.get_loc((3, 4))", "mi", [(1, 2), (3, 4)]),
    # found by the review of red team 7's fix
    "view of a dtype": (FRAME + "a = df.index.view('i8')\na[0] = 99", "df.index", [10, 20, 30]),
    "datetime view of a dtype": ("i = pd.date_range('2020-01-01', periods=3)\na = i.view('i8')\na[0] = 0",
                                 "i.year", [2020, 2020, 2020]),
    "multiindex values": ("mi = pd.MultiIndex.from_tuples([(1, 2), (3, 4)])\na = mi.values\na[0] = (9, 9)",
                          "mi", [(1, 2), (3, 4)]),
    # red team 8: the asi8 of the index's (read-only) extension array was its labels
    "datetime array asi8": ("i = pd.date_range('2020-01-01', periods=3)\na = i.array.asi8\na[0] = a[2]",
                            "i.day", [1, 2, 3]),
    "timedelta array asi8": ("i = pd.timedelta_range('1D', periods=3)\na = i.array.asi8\na[0] = a[2]",
                             "i.days", [1, 2, 3]),
    "period array asi8": ("i = pd.period_range('2020-01', periods=3, freq='M')\na = i.array.asi8\na[0] = a[2]",
                          "i.month", [1, 2, 3]),
    "datetime array T": ("i = pd.date_range('2020-01-01', periods=3)\na = i.array.T.view('i8')\na[0] = a[2]",
                         "i.day", [1, 2, 3]),
    "datetime array ravel asi8": ("i = pd.date_range('2020-01-01', periods=3)\na = i.array.ravel().asi8\na[0] = a[2]",
                                  "i.day", [1, 2, 3]),
    "datetime array reshape": ("i = pd.date_range('2020-01-01', periods=3)\na = i.array.reshape(-1).view('i8')\n"
                               "a[0] = a[2]", "i.day", [1, 2, 3]),
    "frame index array asi8": ("df = pd.DataFrame({'v': [1, 2]}, index=pd.to_datetime(['2020-01-01', '2021-01-01']))\n"
                               "a = df.index.array.asi8\na[0] = a[1]\nx = df.loc['2020']", "df.index.year",
                               [2020, 2021]),
}


@pytest.mark.parametrize("name", sorted(ROUTES))
def test_index_labels_cannot_be_written(sb, name):
    program, index, labels = ROUTES[name]
    outcome = sb.run(f"try:\n    {program.replace(chr(10), chr(10) + '    ')}\nexcept ValueError as e:\n"
                     f"    assert 'read-only' in str(e)\nlist({index})")
    assert outcome.ok, outcome.error
    assert [tuple(x) if isinstance(x, list) else x for x in outcome.value] == labels


def test_a_frame_finds_its_rows_after_a_write_to_its_index_array(sb):
    outcome = sb.run(FRAME + "a = np.asarray(df.index)\na[0] = 99\n[int(df.loc[10, 'v']), 99 in df.index]")
    assert outcome.ok, outcome.error
    assert outcome.value == [1, False]


def test_lookups_stay_right_and_copies_stay_writable(sb):
    program = (
        "df = pd.DataFrame({'v': [1, 2, 3]}, index=[10, 20, 30])\n"
        "a = np.array(df.index)\n"
        "a[0] = 99\n"
        "b = df.index.to_numpy(copy=True)\n"
        "b[1] = 98\n"
        "c = np.asarray(df.index, dtype='f8')\n"
        "c[2] = 0.5\n"
        "[df.loc[10, 'v'], 99 in df.index, a.tolist(), b.tolist(), c.tolist(), np.asarray(df.index).sum()]"
    )
    outcome = sb.run(program)
    assert outcome.ok, outcome.error
    assert outcome.value == [1, False, [99, 20, 30], [10, 98, 30], [10.0, 20.0, 0.5], 60]


ORDINARY = {  # program -> its answer: index arrays read, sorted into copies, datetime integers
    "df = pd.DataFrame({'d': pd.date_range('2020-01-01', periods=4), 'v': [1, 2, 3, 4]}).set_index('d')\n"
    "int(df.resample('2D').sum()['v'].iloc[0]) + int(df.index.asi8.min() > 0)": 4,
    "i = pd.date_range('2020-01-01', periods=3)\nint((i + pd.Timedelta('1D')).asi8[0] - i.asi8[0] > 0)": 1,
    "mi = pd.MultiIndex.from_tuples([(1, 2), (3, 4)])\nlen(np.asarray(mi)) + int(mi.get_loc((3, 4)))": 3,
    "s = pd.Series([3, 1, 2], index=['c', 'a', 'b'])\nnp.sort(np.asarray(s.index)).tolist()": ["a", "b", "c"],
    # pandas passes an index to a Cython function that refuses a read-only buffer
    "str(pd.to_datetime(['2020-01-0%d' % d for d in range(1, 6)]).inferred_freq)": "D",
    "a = np.asarray(pd.Index([3, 1, 2]))\na.sort()\na.tolist()": [1, 2, 3],
}


def test_ordinary_programs_with_index_arrays_still_run(sb):
    for program, expected in ORDINARY.items():
        outcome = sb.run(program)
        assert outcome.ok and outcome.value == expected, (program, outcome)


def test_the_callers_own_pandas_is_left_as_it_is_in_strict_mode():
    """The index patch is for processes that run programs: a strict-mode caller (a notebook) keeps
    np.asarray(index) as numpy's view of its labels, and its speed."""
    import subprocess
    import sys

    script = (
        "import sys, numpy as np, pandas as pd\n"
        "from binder_py.language import execute\n"
        "run = execute('int(np.asarray(df.index).sum())', pd.DataFrame({'v': [1, 2]}, index=[5, 6]), neural=None)\n"
        "i = pd.Index([1, 2, 3])\n"
        "print(run.value, 'sandbox.indexdata' in sys.modules, np.shares_memory(np.asarray(i), i.values))\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.split() == ["11", "False", "True"]
