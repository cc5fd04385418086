"""No program code runs inside a library comparison or a pandas deep copy (red team 9, sandbox/reentry.py).

numpy's loops over object arrays hold the array's objects without a reference while they compare them
(the pivot of ``a.sort()``, the running maximum of ``argmax``). Red team 4 closed comparisons a program
class defines; these programs run program code inside comparisons pandas writes in Python instead, and
before the fix each killed the worker with SIGSEGV (a use after free): the program code replaced the
array's items, freeing the object the sort then wrote back into the array.
"""
import pytest

#: turns the program's code on, sorts the object array a (a comparison raising ValueError, as a frame's truth
#: value does), then makes new objects and reads a (a freed pointer written back into it is then garbage)
SORT_THEN_READ = ('state["on"] = True\ntry:\n    a.sort()\nexcept ValueError:\n    pass\n'
                  'junk = [str(i) * 3 for i in range(100000)]\nrepr(a)\n')

# Series < Series builds its result with __finalize__, which deep-copies the left table's attrs, and
# copy.deepcopy rebuilds an exception (or a collections class) by calling the class: the program's __init__
ATTRS_COPY_IN_SORT = '''
state = {"n": 0, "on": False}
class E(Exception):
    def __init__(self, *args):
        if state["on"]:
            state["n"] = state["n"] + 1
            if state["n"] == 1:
                for i in range(len(a)):
                    a[i] = None
a = np.empty(12, dtype="O")
for i in range(12):
    s = pd.Series([i, i + 1])
    s.attrs["x"] = E(i)
    a[i] = s
s = None
''' + SORT_THEN_READ

# DataFrame > d, with d a program's OrderedDict subclass (the reflected K < DataFrame), calls d.keys()
MAPPING_METHOD_IN_SORT = '''
import collections
state = {"n": 0, "on": False}
class K(collections.OrderedDict):
    def keys(self):
        if state["on"]:
            state["n"] = state["n"] + 1
            if state["n"] == 1:
                for i in range(len(a)):
                    a[i] = None
        return collections.OrderedDict.keys(self)
a = np.empty(12, dtype="O")
for i in range(12):
    if i % 2 == 0:
        a[i] = pd.DataFrame({"v": [i]})
    else:
        k = K()
        k["v"] = i
        a[i] = k
k = None
''' + SORT_THEN_READ


# s.isin(v) keeps v's objects in a hash table without a reference while it hashes the others; a
# CategoricalDtype hashes its categories' texts, and a Counter's text calls its most_common()
HASH_IN_ISIN = '''
import collections
state = {"on": False, "n": 0}
class K(collections.Counter):
    def most_common(self, n=None):
        if state["on"]:
            state["n"] = state["n"] + 1
            if state["n"] == 1:
                for i in range(len(v)):
                    v[i] = None
        return []
v = np.empty(8, dtype="O")
c = np.empty(8, dtype="O")
for i in range(8):
    v[i] = pd.CategoricalDtype([K(x=i)])
    c[i] = pd.CategoricalDtype([K(y=i)])
state["on"] = True
r = pd.Series(c).isin(v)
junk = [str(i) * 3 for i in range(100000)]
[state["n"], len(r)]
'''


def test_no_program_code_inside_library_hashes(sb):
    outcome = sb.run(HASH_IN_ISIN)
    assert outcome.error is None or outcome.error.kind == "policy", outcome.error
    assert outcome.error is not None or outcome.value[0] == 0  # most_common never ran inside the hash


@pytest.mark.parametrize("program,reason", [
    (ATTRS_COPY_IN_SORT, "pandas copies a table's attrs"),
    (MAPPING_METHOD_IN_SORT, "a comparison or hash of library objects"),
], ids=["attrs_copy_in_sort", "mapping_method_in_sort"])
def test_no_program_code_inside_library_comparisons(sb, program, reason):
    outcome = sb.run(program)
    assert not outcome.ok and outcome.error.kind == "policy", outcome.error
    assert reason in outcome.error.message


def test_program_code_around_library_comparisons_still_runs(sb):
    program = (
        'import collections\n'
        's = pd.Series([3, 1, 2])\n'
        's.attrs["source"] = {"file": "t.csv", "rows": [1, 2]}\n'
        'm = (s > 1).apply(lambda v: int(v) + 1)\n'
        'c = collections.Counter("aab") < collections.Counter("aabb")\n'
        'k = sorted([pd.Timestamp("2021-01-01"), pd.Timestamp("2020-01-01")])\n'
        '[m.tolist(), (s.sort_values() + 1).attrs, c, k[0].year, s[s.map(lambda v: v % 2 == 1)].tolist()]'
    )
    outcome = sb.run(program)
    assert outcome.ok, outcome.error
    assert outcome.value == [[2, 1, 2], {"source": {"file": "t.csv", "rows": [1, 2]}}, True, 2020, [3, 1]]


def test_functions_without_parameters_and_augmented_writes_check_that_program_code_may_run():
    """Review of red team 9's fix: only functions with parameters began with the check, and ``x *= y``
    did not look at it; a zero-parameter function (a ``default_factory``) or lambda could run inside a
    library comparison."""
    import dis
    import types

    from sandbox import guards, reentry
    from sandbox.policy import ARGS_NAME, compile_program

    code = compile_program("def f():\n    return 1\ng = lambda: 2\n[f(), g()]")
    functions = [c for c in code.co_consts if isinstance(c, types.CodeType)]
    assert len(functions) == 2
    for function in functions:  # each begins by calling the check
        assert ARGS_NAME in {i.argval for i in dis.get_instructions(function)}
    token = reentry.REFUSED.set("a library comparison is running")
    try:
        with pytest.raises(guards.PolicyError, match="a library comparison is running"):
            guards.guarded_args()
        with pytest.raises(guards.PolicyError, match="a library comparison is running"):
            guards.guarded_inplacevar("*=", 2, 3)
    finally:
        reentry.REFUSED.reset(token)
    assert guards.guarded_inplacevar("*=", 2, 3) == 6
