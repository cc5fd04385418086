"""A program class never derives from a library class (red team 8).

pandas and numpy call the public methods of their own classes and trust what they return.
``df.reindex`` takes the positions the index's ``get_indexer`` gives and copies ``values[pos]``
with Cython's unchecked ``take``: a program subclass of ``pd.RangeIndex`` whose ``get_indexer``
returned ``[0, 10**8]`` read 800 MB past the end of the column (the worker died with SIGSEGV;
with an object column the read pointer becomes an object, the start of a forged one). The
``class`` statement (``__build_class__``) now refuses every base but builtin classes (and the
guarded ``list``/``dict``...), exceptions, ``collections``' classes and the program's own classes;
and a metaclass other than ``type``, which could build such a class without the statement.
"""
import pytest

ATTACKS = [
    ("range_index_get_indexer",
     "class R(pd.RangeIndex):\n"
     "    def get_indexer(self, target, method=None, limit=None, tolerance=None):\n"
     "        return np.array([0, 100000000], dtype='i8')\n"
     "s = pd.Series(['a', 'b', 'c'], dtype='O', index=R(0, 3))\n"
     "s.reindex([1, 5])"),
    ("index", "class I(pd.Index):\n    pass\nI([1, 2])"),
    ("series", "class S(pd.Series):\n    def argsort(self):\n        return 1\nS([1])"),
    ("frame", "class F(pd.DataFrame):\n    pass\nF({'a': [1]})"),
    ("categorical", "class C(pd.Categorical):\n    pass\nC(['a'])"),
    ("ndarray", "class A(np.ndarray):\n    pass\nnp.arange(3).view(A)"),
    ("type_of_frame", "class F(type(df)):\n    pass\nF({'a': [1]})"),
    ("datetime", "import datetime\nclass D(datetime.datetime):\n    pass\nD(2020, 1, 1)"),
    ("timestamp", "class T(pd.Timestamp):\n    pass\nT('2020')"),
    ("metaclass", "class M(type):\n    pass\nM"),
    ("explicit_metaclass", "class X(metaclass=type(pd.RangeIndex)):\n    pass\nX"),
    ("via_program_base", "class P:\n    pass\nclass Q(P, pd.Index):\n    pass\nQ"),
]


@pytest.mark.parametrize("name,program", ATTACKS, ids=[a[0] for a in ATTACKS])
def test_a_program_class_may_not_derive_from_a_library_class(sb, df, name, program):
    outcome = sb.run(program, variables={"df": df})
    assert outcome.error is not None and outcome.error.kind == "policy", outcome.error or outcome.value


def test_ordinary_program_classes_still_work(sb):
    program = (
        "import collections\n"
        "class NotFound(Exception):\n"
        "    pass\n"
        "class Tally(collections.Counter):\n"
        "    def top(self):\n"
        "        return self.most_common(1)[0][0]\n"
        "class Row:\n"
        "    def __init__(self, name, n):\n"
        "        self.name = name\n"
        "        self.n = n\n"
        "class Big(Row):\n"
        "    def big(self):\n"
        "        return self.n > 1\n"
        "class Names(dict):\n"
        "    pass\n"
        "try:\n"
        "    raise NotFound('x')\n"
        "except NotFound as e:\n"
        "    caught = str(e)\n"
        "t = Tally(['a', 'b', 'a'])\n"
        "[caught, t.top(), Big('r', 2).big(), isinstance(Names(), dict)]"
    )
    outcome = sb.run(program)
    assert outcome.ok, outcome.error
    assert outcome.value == ["x", "a", True, True]
