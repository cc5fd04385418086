"""Integer codes pandas trusts (red team 4).

pandas checks the codes of a ``Categorical`` or ``MultiIndex`` when they are made and then
indexes with them unchecked in Cython: ``groupby(k, observed=False).sum()`` adds each value at
``out[code]`` (a heap write at a chosen distance, of a chosen value), ``MultiIndex.tolist()``
reads ``levels[code]``. A program could change the codes after the check (it kept the array it
passed to ``from_codes``/``MultiIndex``/``set_codes``, made a read-only view writable with
``setflags`` or took its ``base``, viewed a Categorical as integers) or skip the check
(``validate=False``, ``verify_integrity=False``). Before the fix each program below wrote or read
out of bounds (several ended in SIGSEGV) or ran with invalid codes.
"""
import numpy as np
import pandas as pd
import pytest

from sandbox import PolicyError, guards

GROUPBY = '\nd = pd.DataFrame({"k": c, "v": np.arange(2000.0)})\nd.groupby("k", observed=False)["v"].sum().tolist()[:3]'
CATEGORIES = 'cats = ["c%d" % i for i in range(200)]\n'
SERIES = 's = pd.Series(["c%d" % i for i in range(200)] * 10, dtype="category")\n'

# (name, program, expected value or None for "refused or failed without touching memory")
ROUTES = [
    ("from_codes_alias", CATEGORIES + 'codes = np.array([0, 1] * 1000, dtype="i2")\n'
     'c = pd.Categorical.from_codes(codes, cats)\ncodes[::2] = 3000' + GROUPBY, [999000.0, 1000000.0, 0.0]),
    ("from_codes_view_alias", CATEGORIES + 'codes = np.array([0, 1] * 1000, dtype="i2")\nv = codes[:]\n'
     'c = pd.Categorical.from_codes(codes, cats)\nv[::2] = 3000' + GROUPBY, [999000.0, 1000000.0, 0.0]),
    ("from_codes_unvalidated", CATEGORIES + 'codes = np.array([3000, 1] * 1000, dtype="i2")\n'
     'c = pd.Categorical.from_codes(codes, cats, validate=False)' + GROUPBY, None),
    ("from_codes_via_type", CATEGORIES + 'codes = np.array([0, 1] * 1000, dtype="i2")\n'
     'c = type(pd.Categorical(["a"])).from_codes(codes, cats)\ncodes[::2] = 3000' + GROUPBY,
     [999000.0, 1000000.0, 0.0]),
    ("codes_base", SERIES + 'b = s.array.codes.base\nb[::2] = 3000\nc = s' + GROUPBY, None),
    ("codes_setflags", SERIES + 'b = s.array.codes\nb.setflags(write=True)\nb[::2] = 3000\nc = s' + GROUPBY, None),
    ("codes_setflags_positional", SERIES + 'b = s.array.codes\nb.setflags(True)\nb[::2] = 3000\nc = s' + GROUPBY, None),
    ("codes_setflags_unbound", SERIES + 'b = s.array.codes\nnp.ndarray.setflags(b, True)\nb[::2] = 3000\nc = s' + GROUPBY,
     None),
    ("codes_setflags_getattr", SERIES + 'b = s.array.codes\ngetattr(b, "setflags")(write=1)\nb[::2] = 3000\nc = s'
     + GROUPBY, None),
    ("categorical_view", SERIES + 'b = s.array.view("i2")\nb[::2] = 3000\nc = s' + GROUPBY, None),
    ("categorical_index_view", SERIES + 'b = pd.CategoricalIndex(s).view("i2")\nb[::2] = 3000\nc = s' + GROUPBY, None),
    ("categorical_index_view_type", SERIES + 'b = pd.Index(s).view(np.ndarray)\nb[::2] = 3000\nc = s' + GROUPBY, None),
    ("multiindex_unverified", 'pd.MultiIndex(levels=[["a", "b"]], codes=[[0, 100]], verify_integrity=False).tolist()',
     None),
    ("multiindex_alias", 'c = np.array([0, 1], dtype="i1")\nv = c[:]\nmi = pd.MultiIndex(levels=[["a", "b"]], codes=[c])\n'
     'v[0] = 100\nmi.tolist()', [("a",), ("b",)]),
    ("multiindex_subclass", 'class M(pd.MultiIndex):\n    pass\n'
     'M(levels=[["a", "b"]], codes=[[0, 100]], verify_integrity=False).tolist()', None),
    ("multiindex_apply", 'pd.Series([[["a", "b"]]]).apply(pd.MultiIndex, codes=[[0, 100]], verify_integrity=False)',
     None),
    ("set_codes_unverified", 'mi = pd.MultiIndex.from_tuples([("a", 1)]).set_codes([[100], [0]], verify_integrity=False)\n'
     'mi.tolist()', None),
    ("set_codes_unbound", 'mi = pd.MultiIndex.set_codes(pd.MultiIndex.from_tuples([("a", 1)]), [[100], [0]], '
     'verify_integrity=False)\nmi.tolist()', None),
    ("set_codes_alias", 'c = np.array([0, 1], dtype="i1")\nv = c[:]\n'
     'mi = pd.MultiIndex.from_tuples([("a", 1), ("b", 2)]).set_codes([c, [0, 0]])\nv[0] = 100\nmi.tolist()',
     [("a", 1), ("b", 1)]),
    ("set_levels_unverified", 'mi = pd.MultiIndex.from_tuples([("a", 1), ("b", 2)]).set_levels(["a"], level=0, '
     'verify_integrity=False)\nmi.tolist()', None),
    ("multiindex_codes_base", 'mi = pd.MultiIndex.from_tuples([("a", 1), ("b", 2)])\nb = mi.codes[0].base\nb[0] = 100\n'
     'mi.tolist()', None),
]


@pytest.mark.parametrize("name,program,expected", ROUTES, ids=[r[0] for r in ROUTES])
def test_codes_stay_valid(sb, name, program, expected):
    outcome = sb.run(program)
    if expected is None:
        assert not outcome.ok, f"{name} ran: {outcome.value!r}"
        assert outcome.error.kind in ("policy", "runtime"), outcome.error
    else:
        assert outcome.ok, outcome.error
        assert outcome.value == expected


def test_ordinary_categorical_and_multiindex_programs_still_work(sb):
    program = (
        'c = pd.Categorical.from_codes([0, 1, 1], ["a", "b"])\n'
        'mi = pd.MultiIndex.from_tuples([("a", 1), ("b", 2)], names=["x", "y"])\n'
        'mp = pd.MultiIndex.from_product([["a", "b"], [1, 2]])\n'
        'm2 = pd.MultiIndex(levels=[["a", "b"], [1, 2]], codes=[[0, 1], [1, 0]])\n'
        's = pd.Series(["x", "y", "x"], dtype="category")\n'
        's2 = s.cat.set_categories(["x", "y", "z"])\n'
        'd = pd.DataFrame({"k": s, "v": [1, 2, 3]}).groupby("k", observed=False)["v"].sum()\n'
        'f = pd.DataFrame({"a": [1, 2], "b": [3, 4]}).set_index(["a", "b"])\n'
        '[c.tolist(), mi.tolist(), len(mp), m2.tolist(), isinstance(mi, pd.MultiIndex), type(mi) is pd.MultiIndex,\n'
        ' s.cat.codes.tolist(), d.tolist(), isinstance(f.index, pd.MultiIndex), mi.set_codes([[1, 0], [0, 1]]).tolist(),\n'
        ' mi.set_levels(["p", "q"], level=0).tolist(), s2.cat.categories.tolist(), s.array.codes.copy().flags.writeable,\n'
        ' np.zeros(2).flags.writeable]'
    )
    outcome = sb.run(program)
    assert outcome.ok, outcome.error
    assert outcome.value == [
        ["a", "b", "b"], [("a", 1), ("b", 2)], 4, [("a", 2), ("b", 1)], True, True, [0, 1, 0], [4, 2],
        True, [("b", 1), ("a", 2)], [("p", 1), ("q", 2)], ["x", "y", "z"], True, True,
    ]


def test_value_check_guards_the_members():
    codes = np.array([0, 1], dtype="i1")
    from_codes = guards.check_value(pd.Categorical.from_codes, "from_codes", name_checked=True)
    cat = from_codes(codes, ["a", "b"], validate=False)
    codes[0] = 100
    assert cat.tolist() == ["a", "b"]
    with pytest.raises(PolicyError):
        guards.check_value(np.zeros(2).setflags, "setflags", name_checked=True)(write=True)
    with pytest.raises(PolicyError):
        guards.guarded_getattr(np.zeros(2)[:1], "base")
    stand_in = guards.check_value(pd.MultiIndex, "MultiIndex")
    assert stand_in is not pd.MultiIndex and isinstance(pd.MultiIndex.from_tuples([("a", 1)]), stand_in)
    with pytest.raises(ValueError):
        stand_in(levels=[["a"]], codes=[[3]], verify_integrity=False)


@pytest.mark.parametrize("program", [
    's = pd.Series([0, 0, 1, 0, 2]).astype("Sparse[int]")\ns.array.sp_index.indices',
    's = pd.Series([0, 0, 1, 0, 2]).astype("Sparse[int]")\ngetattr(s.array, "sp_index")',
    's = pd.Series([0, 0, 1, 0, 2]).astype("Sparse[int]")\ns.values.sp_index',
])
def test_a_sparse_arrays_index_is_out_of_reach(sb, program):
    """red team 4: ``SparseArray.sp_index.indices`` is a writable alias of the positions pandas
    indexes with unchecked (the same class as Categorical codes)."""
    outcome = sb.run(program)
    assert not outcome.ok and outcome.error.kind == "policy", outcome
    assert "sp_index" in outcome.error.message


def test_sparse_columns_still_work(sb):
    outcome = sb.run('s = pd.Series([0, 0, 1, 0, 2]).astype("Sparse[int]")\n[int(s.sum()), s.sparse.density]')
    assert outcome.ok, outcome.error
    assert outcome.value == [3, 0.4]
