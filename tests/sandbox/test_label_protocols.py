"""Labels answering protocol look-ups (red-team round 8).

pandas serves a missing attribute from the labels (``df.col``, ``s.label``), and library code
looks protocols up as attributes of the instance: numpy asks ``obj.__array_interface__`` (and
``__array_struct__``) before anything else when it converts an object. A program that put a
dict under the index label ``"__array_interface__"`` of an object Series made
``np.asarray(series)`` build an array over any address it named: arbitrary memory read and
write in the worker, enough to read the API key from ``os.environ``, rewrite the audit hook's
globals, and open files. A private or dunder name is never a label look-up in the sandbox.
"""
import os

import numpy as np
import pandas as pd
import pytest

import sandbox.guards  # noqa: F401 - installs the rule, as the worker does


# reads 16 bytes at the address of a string through numpy's __array_interface__ protocol
READ_BY_INTERFACE = '''
x = "some text"
iface = {{"data": (id(x), True), "shape": (16,), "typestr": "|u1", "version": 3}}
s = pd.Series([iface], index=["{label}"], dtype="O")
a = np.asarray(s)
a.dtype.kind == "u" and len(a.tolist()) == 16
'''

# the whole escape: raw read/write -> a dict reference made from an address -> os.environ
LEAK_ENVIRON = '''
def view(addr, n, typestr, ro):
    iface = {"data": (addr, ro), "shape": (n,), "typestr": typestr, "version": 3}
    return np.asarray(pd.Series([iface], index=["__array_interface__"], dtype="O"))

def read8(addr):
    return int(view(addr, 1, "<u8", True)[0])

def write8(addr, value):
    a = view(addr, 1, "<u8", False)
    a[0] = value

def byte(addr):
    return int(view(addr, 1, "|u1", True)[0])

def lookup(d, key):
    keys = read8(id(d) + 32)
    kind = byte(keys + 10)
    n = read8(keys + 24)
    start = keys + 32 + (1 << byte(keys + 9))
    size = 16 if kind != 0 else 24
    off = 0 if kind != 0 else 8
    for k in d.keys():
        if k == key:
            want = id(k)
    for i in range(n):
        e = start + i * size + off
        if read8(e) == want:
            return read8(e + 8)

def fabricate(addr):
    o = np.array([None], dtype="O")
    write8(addr, read8(addr) + 1)
    write8(read8(id(o) + 16), addr)
    return o[0]

G = fabricate(read8(id(getattr) + 16))
S = fabricate(read8(lookup(G, "sys") + 16))
OSD = fabricate(read8(lookup(S["modules"], "os") + 16))
OSD["environ"]["BINDER_RED_CANARY"]
'''


@pytest.mark.parametrize("label", ["__array_interface__", "__array_struct__"])
def test_label_cannot_answer_array_protocol(sb, label):
    outcome = sb.run(READ_BY_INTERFACE.format(label=label))
    assert not (outcome.ok and outcome.value is True), "numpy read raw memory through a label"


def test_environment_does_not_leak_through_labels(sb, monkeypatch):
    # the worker inherits the parent's environment (as it would an API key): the zygote is
    # started fresh, so set the canary before a sandbox of our own starts
    from sandbox import Sandbox
    from sandbox_testutil import SMALL

    monkeypatch.setenv("BINDER_RED_CANARY", "sk-canary-123")
    with Sandbox(SMALL, pool_size=1) as box:
        outcome = box.run(LEAK_ENVIRON)
    assert "sk-canary-123" not in repr(outcome.value)
    assert not outcome.ok


@pytest.mark.parametrize("name", ["__array_interface__", "__array_struct__", "__arrow_array__",
                                  "__dlpack__", "_ipython_display_", "_private"])
def test_private_names_are_not_label_lookups(name):
    s = pd.Series([{"data": (0, True), "shape": (1,), "typestr": "|u1", "version": 3}], index=[name], dtype=object)
    df = pd.DataFrame({name: [1], "a": [2]})
    for obj in (s, df, df.groupby("a"), df.rolling(1)):
        with pytest.raises(AttributeError):
            getattr(obj, name)
    assert np.asarray(s).dtype == object  # numpy falls back to the Series' own __array__
    # public labels still read as attributes, private labels by item
    assert pd.Series([5], index=["x"]).x == 5
    assert df[name].tolist() == [1] and df.a.tolist() == [2]
    from sandbox import labels
    assert labels.installed()


def test_label_attributes_still_work_in_programs(sb):
    outcome = sb.run('df = pd.DataFrame({"city": ["a", "b"], "_n": [1, 2]})\n'
                     'int(df.groupby("city")["_n"].sum().a) + int(df["_n"].sum()) + len(df.city)')
    assert outcome.ok and outcome.value == 6, outcome.error


# red team 4: numpy's record types answer a missing attribute from their fields, so a column "_typ"
# made a row of df.to_records() pass pandas' isinstance(x, ABCDataFrame) (pandas reads x._typ) and its
# other fields answer _mgr/_values: pd.concat([rec]) treated the record as a frame
RECORD_AS_PANDAS = [
    ("concat_frame", 'd = pd.DataFrame({"_typ": ["dataframe"], "_mgr": [1]})\nrec = d.to_records(index=False)[0]\n'
     'pd.concat([rec])', "cannot concatenate object of type"),
    ("add_series", 'd = pd.DataFrame({"_typ": ["series"], "_values": [1]})\nrec = d.to_records(index=False)[0]\n'
     'pd.Series([1, 2]) + rec', "ufunc"),
]


@pytest.mark.parametrize("name,program,message", RECORD_AS_PANDAS, ids=[r[0] for r in RECORD_AS_PANDAS])
def test_record_fields_do_not_answer_private_names(sb, name, program, message):
    outcome = sb.run(program)
    assert not outcome.ok and message in outcome.error.message, outcome


def test_record_fields_still_work():
    from sandbox import labels

    records = pd.DataFrame({"a": [1], "_b": ["x"]}).to_records(index=False)
    assert records.a.tolist() == [1] and records[0].a == 1 and records[0]["_b"] == "x"
    assert getattr(records[0], "_typ", None) is None and getattr(records, "_typ", None) is None
    assert isinstance(records, np.recarray) and labels.installed()
