"""An Index hands out its labels read-only by every route (red team 7; ``sandbox/indexdata.py``).

``a = np.asarray(df.index); a[0] = 99`` changed a frame's labels after pandas had cached their hash
table: ``df.loc[99]`` then found nothing and ``df.loc[10]`` the row now labelled 99. pandas 3's own
route (``Index.values``, ``Index.array``) is read-only; ``Index.__array__``, ``MultiIndex.__array__``,
the ``asi8`` of datetime-like indexes and the ``view()`` of a read-only extension array were not.
"""
import pytest

PROGRAMS = {
    "asarray": "a = np.asarray(df.index)\na[0] = 99",
    "asarray of integer columns": "t = pd.DataFrame([[1, 2]], columns=[5, 6])\na = np.asarray(t.columns)\na[0] = 7",
    "np.array copy=False": "a = np.array(df.index, copy=False)\na[0] = 99",
    "asarray of unique": "a = np.asarray(df.index.unique())\na[0] = 99",
    "asarray of a view": "a = np.asarray(df.index.view())\na[0] = 99",
    "array view": "a = np.asarray(df.index.array.view())\na[0] = 99",
    "array view of a dtype": "a = df.index.array.view('i8')\na[0] = 99",
    "interval left": "ii = pd.interval_range(0, 30, periods=3)\na = np.asarray(ii.left)\na[0] = 5",
    "string[python] index": "i = pd.Index(['a', 'b'], dtype='string[python]')\na = np.asarray(i)\na[0] = 'z'",
    "datetime asi8": "i = pd.date_range('2020-01-01', periods=3)\na = i.asi8\na[0] = 0",
    "datetime asarray": "i = pd.date_range('2020-01-01', periods=3)\na = np.asarray(i)\na[0] = a[1]",
    "multiindex": "mi = pd.MultiIndex.from_tuples([(1, 2), (3, 4)])\na = np.asarray(mi)\na[0] = (9, 9)",
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_index_labels_cannot_be_written(sb, name):
    program = "df = pd.DataFrame({'v': [1, 2, 3]}, index=[10, 20, 30])\n" + PROGRAMS[name]
    outcome = sb.run(program + "\n[df.loc[10, 'v'], 99 in df.index]")
    assert not outcome.ok, outcome.value
    assert "read-only" in outcome.error.message, outcome.error


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
}


def test_ordinary_programs_with_index_arrays_still_run(sb):
    for program, expected in ORDINARY.items():
        outcome = sb.run(program)
        assert outcome.ok and outcome.value == expected, (program, outcome)
