"""Each layer on its own: policy compile, guards, builtins, codec, audit hook."""
import pickle
import resource

import numpy as np
import pandas as pd
import pytest

from sandbox import PolicyError, codec, guards, policy, worker
from sandbox.facades import FACADES
from sandbox.outcome import Limits, SandboxPermissionError
from sandbox.safe_builtins import SAFE_BUILTINS


# ------------------------------------------------------------------ policy
@pytest.mark.parametrize("src,kind", [
    ("x = (", "syntax"),
    ("import os", "policy"),
    ("from pandas import read_csv", "policy"),
    ("from .x import y", "policy"),
    ("x.__class__", "policy"),
    ("_x = 1", "policy"),
    ("def f(_getattr_, /): pass", "policy"),
    ("try:\n    pass\nexcept* E:\n    pass", "policy"),
    ("exec('1')", "policy"),
])
def test_compile_failures(src, kind):
    result = policy.compile_program(src)
    assert isinstance(result, policy.CompileFailure) and result.kind == kind


def test_compile_rewrites_pow_and_result():
    code = policy.compile_program("x = 2 ** 3\nx")
    assert policy.POW_NAME in code.co_names and policy.RESULT_NAME in code.co_names


# ------------------------------------------------------------------ guards
def test_getattr_refuses_dunder_private_and_denylist():
    df = pd.DataFrame({"a": [1]})
    for name in ("__class__", "_mgr", "eval", "query", "to_csv", "read_csv", "style", "io", "plot"):
        with pytest.raises(PolicyError):
            guards.guarded_getattr(df, name)
    with pytest.raises(PolicyError):
        guards.guarded_getattr("{0}", "format")
    assert guards.guarded_getattr(df, "shape") == (1, 1)


def test_getattr_refuses_modules_classes_and_foreign_functions():
    import os

    class Holder:
        pass

    h = Holder()
    h.mod, h.fn, h.cls = os, os.getcwd, Holder
    for name in ("mod", "fn", "cls"):
        with pytest.raises(PolicyError):
            guards.guarded_getattr(h, name)


def test_agg_wrapper_allowlist():
    df = pd.DataFrame({"a": [1, 2], "b": ["x", "x"]})
    agg = guards.guarded_getattr(df, "agg")
    assert agg("sum")["a"] == 3
    with pytest.raises(PolicyError):
        agg("eval", expr="a")
    gb = guards.guarded_getattr(df.groupby("b"), "agg")
    assert gb(total=("a", "sum"))["total"].iloc[0] == 3
    with pytest.raises(PolicyError):
        gb(total=("a", "pipe"))


def test_write_guard():
    df = pd.DataFrame({"a": [1]})
    for ob in (df, df["a"], df.loc, df.iloc, df.at, df.iat, [], {}):
        assert guards.guarded_write(ob) is ob
    array = np.zeros(2)
    writes = guards.guarded_write(array)  # a forwarder: items and contents, never the layout
    writes[0] = 3.0
    writes.flat = [3.0, 4.0]
    assert array.tolist() == [3.0, 4.0]
    for name, value in (("strides", (0,)), ("shape", (2, 1)), ("dtype", np.int64)):
        with pytest.raises(PolicyError):
            setattr(writes, name, value)
    assert array.shape == (2,) and array.dtype == np.float64
    for ob in (FACADES["pandas"], "s", (1,), pd.Index([1])):
        with pytest.raises(PolicyError):
            guards.guarded_write(ob)


def test_pow_guard():
    assert guards.guarded_pow(2, 10) == 1024
    with pytest.raises(MemoryError):
        guards.guarded_pow(10, 10**10)


def test_import_guard():
    assert guards.guarded_import("pandas") is FACADES["pandas"]
    with pytest.raises(PolicyError):
        guards.guarded_import("os")


# ---------------------------------------------------------------- builtins
def test_builtins_guarded_types_behave_like_types():
    b = SAFE_BUILTINS
    assert b["isinstance"]([1], b["list"]) and b["type"]({}) is b["dict"]
    assert b["list"]((1, 2)) == [1, 2] and b["tuple"]([1]) == (1,)
    assert b["sorted"]([3, 1, 2]) == [1, 2, 3] and list(b["zip"]([1], [2])) == [(1, 2)]
    assert b["sum"]([1, 2]) == 3 and b["max"]([1, 5]) == 5 and b["min"](3, 2) == 2
    for name in ("open", "eval", "exec", "globals", "vars", "locals", "compile"):
        with pytest.raises(PolicyError):
            b[name]()
    with pytest.raises(PolicyError):
        b["type"]("X", (), {})


# ------------------------------------------------------------------- codec
def test_codec_roundtrip():
    value = {"df": pd.DataFrame({"a": [1, None], "t": pd.to_datetime(["2020-01-01", None])}),
             "s": pd.Series([1, 2], name="x"), "n": np.int64(3), "l": [1.5, "x", None]}
    back = codec.decode(codec.safe_loads(codec.dumps(codec.encode(value))))
    pd.testing.assert_frame_equal(back["df"], value["df"])
    pd.testing.assert_series_equal(back["s"], value["s"])
    assert back["n"] == 3 and back["l"] == [1.5, "x", None]


def test_codec_refuses_crafted_pickle():
    class Evil:
        def __reduce__(self):
            import os
            return (os.system, ("echo pwned",))

    with pytest.raises(codec.CodecError):
        codec.safe_loads(pickle.dumps(Evil()))
    with pytest.raises(codec.CodecError):
        codec.decode(("nonsense", 1))


def test_encode_never_raises():
    class Hostile:
        def __repr__(self):
            raise RuntimeError("no")

    assert codec.encode(Hostile())[0] == "repr"


# --------------------------------------------------------------- audit hook
@pytest.mark.parametrize("event,args", [
    ("open", ("/etc/passwd", "r", 0)),
    ("open", ("/tmp/x", "w", 0)),
    ("open", ("/usr/share/zoneinfo/UTC", None, 0o1101)),
    ("os.system", (b"true",)),
    ("subprocess.Popen", ("touch", [], None, None)),
    ("os.fork", ()),
    ("socket.__new__", (None, 1, 1, 0)),
    ("ctypes.string_at", (0, 1)),
    ("os.exec", ("/bin/sh", [], None)),
])
def test_audit_hook_refuses(event, args):
    worker.READ_ROOTS = worker._read_roots()
    with pytest.raises(SandboxPermissionError):
        worker._audit(event, args)


def test_audit_hook_allows_python_installation_reads():
    worker.READ_ROOTS = worker._read_roots()
    worker._audit("open", (pd.__file__, "r", 0))
    worker._audit("import", ("json", None, None, None, None))


def test_limits_applied_in_a_child():
    import os

    pid = os.fork()
    if pid == 0:  # pragma: no cover - child
        try:
            worker.apply_limits(Limits(cpu_seconds=2, memory_bytes=64 * 1024**2, open_files=16))
            ok = (resource.getrlimit(resource.RLIMIT_FSIZE) == (0, 0)
                  and resource.getrlimit(resource.RLIMIT_CPU) == (2, 3)
                  and resource.getrlimit(resource.RLIMIT_NOFILE) == (16, 16))
            os._exit(0 if ok else 1)
        except BaseException:
            os._exit(2)
    _, status = os.waitpid(pid, 0)
    assert os.WEXITSTATUS(status) == 0
