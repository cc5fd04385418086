"""Property-based fuzzer of the guard layer (hypothesis).

Programs are generated from a grammar of pandas/numpy calls that take function specs,
attribute chains (``obj.name`` and ``getattr(obj, "name")``) over public, private,
dunder and denied names, function specs hidden in containers of every kind (list, tuple,
dict, set, Series, Index, object ndarray, generator, NamedAgg) at several depths, and
what a program then does with a result (index it, iterate it, unpack it into a call,
call it).

Every program runs twice:

* **in-process** (``unsafe-inprocess``): nothing but the compile rules, facades and
  guards stands between the program and this test process, so this is the guard layer
  alone. Invariants: no module outside the allow-list got imported (``sys.modules``),
  no file appeared outside the scratch directory, no secret in the value, stdout or error.
* **strict sandbox**: the parent stays healthy (a follow-up program answers) and every
  run answers within its wall-clock limit; no file, no secret; and the worker does not
  even *start* to import a module outside the allow-list (``fuzz_probe`` reports every
  ``import`` audit event to the parent; the worker's own hook would refuse to load it).

CI runs ``DEFAULT_EXAMPLES`` examples with a fixed seed. ``BINDER_FUZZ_EXAMPLES=N`` runs N
random examples; ``BINDER_FUZZ_REPORT=path.json`` writes counts of what happened.
"""
from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import sys
import tempfile
from collections import Counter

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fuzz_probe
from sandbox import Limits, Sandbox
from sandbox.dispatch import NAMES_CALLABLE_BY_STRING
from sandbox.vetting import VETTED_MODULE_PREFIXES

DEFAULT_EXAMPLES = 40
EXAMPLES = int(os.environ.get("BINDER_FUZZ_EXAMPLES", "0") or 0)
REPORT_PATH = os.environ.get("BINDER_FUZZ_REPORT")
LIMITS = Limits(wall_seconds=5.0, cpu_seconds=3.0, memory_bytes=512 * 1024**2, stdout_bytes=4096)
#: answered in time: the wall-clock limit plus the parent's own slack on a loaded machine
ANSWER_SECONDS = LIMITS.wall_seconds + 5.0

SECRET = "fuzz-secret-" + secrets.token_hex(12)
SCRATCH = tempfile.mkdtemp(prefix="binder-fuzz-")
SECRET_FILE = os.path.join(SCRATCH, "secret.txt")
MARKER = os.path.join(SCRATCH, "marker")
OUTSIDE = os.path.join(tempfile.gettempdir(), "binder-fuzz-outside-" + secrets.token_hex(4))

# ------------------------------------------------------------------- grammar
PUBLIC = sorted(NAMES_CALLABLE_BY_STRING) + [
    "shape", "values", "T", "dtypes", "dtype", "columns", "index", "iloc", "loc", "at", "str",
    "dt", "items", "copy", "tolist", "to_list", "to_dict", "to_numpy", "array", "agg",
    "aggregate", "apply", "transform", "map", "applymap", "pipe", "filter", "combine",
    "groupby", "rolling", "expanding", "sort_values", "astype", "get", "item", "pop", "keys",
    "upper", "strftime", "reshape", "flat", "base", "obj", "func", "pyfunc", "args",
]
DUNDER = [
    "__class__", "__dict__", "__init__", "__reduce_ex__", "__reduce__", "__getattribute__",
    "__globals__", "__subclasses__", "__builtins__", "__call__", "__module__", "__func__",
    "__self__", "__code__", "__closure__", "__mro__", "__bases__", "__getstate__",
    "__setstate__", "__sizeof__", "__dir__", "__wrapped__", "__loader__", "__spec__",
]
PRIVATE = [
    "_mgr", "_data", "_constructor", "_reduce", "_get_item_cache", "_values", "_ixs",
    "_set_item", "_obj", "_selected_obj", "_python_apply_general", "_aggregate", "_facade_members",
]
DENIED = [
    "eval", "query", "to_csv", "to_pickle", "to_clipboard", "to_json", "to_parquet", "read_csv",
    "read_pickle", "plot", "hist", "boxplot", "style", "io", "core", "tofile", "dump", "system",
    "popen", "ctypes", "lib", "options", "api", "format", "mro", "gi_frame", "f_globals",
]
ALL_NAMES = PUBLIC + DUNDER + PRIVATE + DENIED

RECEIVERS = [
    "df", 'df["a"]', 'df["b"]', 'df["t"]', 'df.groupby("b")', 'df.groupby("b")["a"]',
    'df["a"].rolling(2)', 'df["a"].expanding()', 'df.set_index("t").resample("D")',
    'df.resample("D", on="t")["a"]', "df.index", 'df["a"].to_numpy()', "pd.Series([1, 2])",
    'pd.Index(["x", "y"])', 'np.array([1.0, 2.0])', 'np.array(["sum", "max"], dtype="object")',
    '(1, "x")', '{"k": 1}', "[1, 2]", '"text"', "pd", "np", "pd.DataFrame", "pd.Series",
    'df["b"].str', 'df["t"].dt', "df.loc", "df.items()", "r",
]
TABLE_RECEIVERS = ["df", "r", 'df[["a"]]', 'df["a"]', 'df.groupby("b")', 'df.groupby("b")["a"]']
ENTRY_POINTS = ["agg", "aggregate", "apply", "transform", "map", "applymap", "pipe", "filter", "combine"]
CALLABLES = [
    "len", "str", "abs", "sorted", "print", "type", "getattr", "list", "dict", "np.sqrt",
    "np.mean", "pd.to_numeric", "pd.Series", "lambda x: x", "lambda x: r", "lambda *a: a",
    "df.sum", "df.agg", "pd.DataFrame.agg", 'getattr(df, "apply")', "np.vectorize(len)",
]
EXTRA_ARGS = [
    "0", "1", '"__init__"', '"__dict__"', repr(MARKER), repr(OUTSIDE), "axis=1", 'func="eval"',
    'expr="a"', 'backend="os"', "args=(1,)", 'path=' + repr(MARKER), "raw=True", 'engine="python"',
]
POST_OPS = [
    "r", "r[0]", "r[-1]", "list(r)", "next(iter(r))", "[*r]", "r()", "r(0)", "r(df)",
    "(lambda *a: a)(*r)", "dict(r)", "sorted(r, key=str)", "[x for x in r]", "r.get(0)",
    "r.item()", "r.iloc[0]", "tuple(r)[0]", "{**r}", "str(r)", "len(r)",
]

# public names twice as often as the rest, so that programs get past their first refusal
name = st.one_of(st.sampled_from(PUBLIC), st.sampled_from(PUBLIC), st.sampled_from(DUNDER + PRIVATE + DENIED))
#: names whose look-up hands back internals (where the planted secret is): tried often in specs
EXPOSING = ["__dict__", "__getstate__", "__reduce_ex__", "__reduce__", "_mgr", "__getattribute__"]
quoted_name = name.map(repr)
callable_expr = st.sampled_from(CALLABLES)


def _containers(children: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    items = st.lists(children, min_size=1, max_size=3).map(", ".join)
    return st.one_of(
        items.map(lambda s: f"[{s}]"),
        items.map(lambda s: f"({s},)"),
        items.map(lambda s: "{" + s + "}"),
        children.map(lambda s: f'{{"a": {s}}}'),
        children.map(lambda s: f'pd.Series({{"a": {s}}})'),
        items.map(lambda s: f"pd.Series([{s}])"),
        items.map(lambda s: f"pd.Index([{s}])"),
        items.map(lambda s: f'np.array([{s}], dtype="object")'),
        items.map(lambda s: f"(v for v in [{s}])"),
        children.map(lambda s: f'pd.NamedAgg("a", {s})'),
        children.map(lambda s: f'("a", {s})'),
    )


allowed_name = st.sampled_from(sorted(NAMES_CALLABLE_BY_STRING)).map(repr)
exposing_name = st.sampled_from(EXPOSING).map(repr)
spec = st.recursive(st.one_of(allowed_name, quoted_name, exposing_name, callable_expr), _containers, max_leaves=6)
extra = st.lists(st.sampled_from(EXTRA_ARGS), max_size=2, unique=True)


@st.composite
def entry_call(draw: st.DrawFn) -> str:
    receiver = draw(st.one_of(st.sampled_from(TABLE_RECEIVERS), st.sampled_from(RECEIVERS)))
    method = draw(st.sampled_from(ENTRY_POINTS))
    args = [draw(spec)] + draw(extra)
    if draw(st.booleans()):
        args.append(f"x={draw(spec)}")  # named aggregation / forwarded keyword
    return f"{receiver}.{method}({_arguments(args)})"


def _arguments(args: list[str]) -> str:
    """Positional arguments first, then keywords (``name=...``)."""
    keywords = [a for a in args if re.match(r"^[a-z_]+=", a)]
    return ", ".join([a for a in args if a not in keywords] + keywords)


@st.composite
def module_call(draw: st.DrawFn) -> str:
    s = draw(spec)
    return draw(st.sampled_from([
        f'pd.pivot_table(df, index="b", values="a", aggfunc={s})',
        f'df.pivot_table(index="b", values="a", aggfunc={s})',
        f'pd.crosstab(df["b"], df["b"], values=df["a"], aggfunc={s})',
        f"np.vectorize({s})(np.array([1, 2]))",
        f"np.frompyfunc({s}, 1, 1)(np.array([1, 2]))",
        f"np.piecewise(np.arange(3), [np.arange(3) > 0], [{s}])",
    ]))


@st.composite
def attribute_chain(draw: st.DrawFn) -> str:
    expr = draw(st.sampled_from(RECEIVERS))
    for n in draw(st.lists(name, min_size=1, max_size=3)):
        if draw(st.booleans()):
            expr = f"getattr({expr}, {n!r})"
        else:
            expr = f"{expr}.{n}"  # dunder/private names here are refused at compile time
        if draw(st.booleans()):
            expr = f"{expr}({_arguments(draw(extra))})"
    return expr


@st.composite
def ordinary_call(draw: st.DrawFn) -> str:
    """What analysts write: allowed names and functions, so results flow on to the post-ops."""
    receiver = draw(st.sampled_from(['df["a"]', 'df[["a"]]', 'df.groupby("b")["a"]', 'df.groupby("b")[["a"]]',
                                     'df["a"].rolling(2)', 'df["a"].expanding()']))
    leaf = st.one_of(st.sampled_from(["sum", "mean", "max", "min", "count", "first"]).map(repr),
                     st.sampled_from(["np.mean", "len", "lambda x: x.max()", "max"]))
    s = draw(st.one_of(leaf, st.lists(leaf, min_size=1, max_size=3).map(lambda xs: f"[{', '.join(xs)}]")))
    return f"{receiver}.{draw(st.sampled_from(['agg', 'aggregate', 'apply', 'transform']))}({s})"


@st.composite
def exposing_spec_call(draw: st.DrawFn) -> str:
    """The hole class the spec checks close, without noise: a spec-taking entry point of the
    table given a name that hands back internals, in a container of any kind."""
    receiver = draw(st.sampled_from(TABLE_RECEIVERS))
    method = draw(st.sampled_from(["agg", "aggregate", "apply", "transform"]))
    inner = draw(st.one_of(exposing_name, spec))
    return f"{receiver}.{method}({draw(_containers(st.just(inner)))})"


statement = st.one_of(ordinary_call(), entry_call(), module_call(), attribute_chain(), exposing_spec_call())


@st.composite
def program(draw: st.DrawFn) -> str:
    lines = ["r = df"]
    for _ in range(draw(st.integers(1, 2))):
        lines.append(f"r = {draw(statement)}")
        if draw(st.booleans()):
            lines.append(f"r = {draw(st.sampled_from(POST_OPS))}")
    lines.append(draw(st.one_of(st.just("r"), st.sampled_from(POST_OPS))))
    return "\n".join(lines)


# ------------------------------------------------------------------ harness
def _table() -> pd.DataFrame:
    return pd.DataFrame({"a": [1, 2, 3], "b": ["x", "y", "x"],
                         "t": pd.to_datetime(["2020-01-01", "2020-01-02", "2020-01-04"])})


WARM_UP = [  # load what pandas imports lazily, so that only new imports show up later
    'df.groupby("b").agg(x=("a", "sum"))', 'df.pivot_table(index="b", values="a", aggfunc="sum")',
    'df.set_index("t").resample("D")["a"].sum()', 'df["a"].rolling(2).apply(lambda x: x.max())',
    'df["a"].expanding().agg("max")', 'df.to_dict("records")', "df.to_string()", "df.to_records()",
    'df["t"].dt.strftime("%Y")', 'df.groupby(["b", "a"])["a"].sum().unstack()', "str(df)",
    'np.vectorize(len)(np.array(["ab"]))', 'np.frompyfunc(len, 1, 1)(np.array(["ab"], dtype="object"))',
    'df["b"].str.extract(r"(x)")', "df.describe()", 'df[["a"]].agg(["sum", "max"])', 'df["a"].rank()',
]


def _listing() -> set[str]:
    """Where a program could create files: the scratch directory its paths point into, the
    working directory, and the path outside (the machine's /tmp is shared, so not all of it)."""
    out = {OUTSIDE} if os.path.exists(OUTSIDE) else set()
    for directory in (os.getcwd(), SCRATCH, os.path.expanduser("~")):
        try:
            out.update(os.path.join(directory, entry) for entry in os.listdir(directory))
        except OSError:
            pass
    return out


def _allowed_module(mod: str) -> bool:
    return mod.split(".", 1)[0] in VETTED_MODULE_PREFIXES or mod in _PRELOADED


_PRELOADED: set[str] = set()
STATS: Counter[str] = Counter()


@pytest.fixture(scope="module")
def fuzz_env():
    with open(SECRET_FILE, "w") as fh:
        fh.write(SECRET)
    os.environ[fuzz_probe.SECRET_VARIABLE] = SECRET  # the worker inherits it, as it would an API key
    inproc = Sandbox(mode="unsafe-inprocess")
    strict = Sandbox(LIMITS, pool_size=2)
    for p in WARM_UP:
        for box in (inproc, strict):
            outcome = box.run(p, variables={"df": _table()})
            assert outcome.ok, (p, outcome.error)
    _PRELOADED.update(sys.modules)
    try:
        yield inproc, strict
    finally:
        strict.close()
        inproc.close()
        os.environ.pop(fuzz_probe.SECRET_VARIABLE, None)
        shutil.rmtree(SCRATCH, ignore_errors=True)
        if REPORT_PATH:
            with open(REPORT_PATH, "w") as fh:
                json.dump(dict(STATS), fh, indent=1, sort_keys=True)


def _texts(value, depth: int = 0):
    """Every string in a value, in full (a pandas repr would truncate long cells)."""
    if depth > 80:
        return
    if isinstance(value, pd.DataFrame):
        value = [list(value.columns), list(value.index), value.to_numpy().ravel().tolist()]
    elif isinstance(value, (pd.Series, pd.Index)):
        value = [value.name, list(value.index) if isinstance(value, pd.Series) else [], value.tolist()]
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _texts(k, depth + 1)
            yield from _texts(v, depth + 1)
    elif isinstance(value, (list, tuple, set, frozenset)):
        for v in value:
            yield from _texts(v, depth + 1)
    else:
        yield str(value)


def _no_secret(outcome, where: str) -> None:
    texts = [*_texts(outcome.value), outcome.stdout, outcome.error.message if outcome.error else ""]
    assert not any(SECRET in t for t in texts), f"{where}: the secret reached the output"


def _fuzz_settings():
    if EXAMPLES:
        return settings(max_examples=EXAMPLES, deadline=None, database=None,
                        suppress_health_check=list(HealthCheck))
    return settings(max_examples=DEFAULT_EXAMPLES, deadline=None, database=None, derandomize=True,
                    suppress_health_check=list(HealthCheck))


@pytest.mark.slow
@_fuzz_settings()
@given(source=program())
def test_guard_layer_invariants(fuzz_env, source):
    inproc, strict = fuzz_env
    files_before = _listing()
    modules_before = set(sys.modules)

    outcome = inproc.run(source, variables={"df": _table()}, worker_globals="fuzz_probe:plant_secret")
    new_modules = sorted(m for m in set(sys.modules) - modules_before if not _allowed_module(m))
    assert not new_modules, f"in-process run imported {new_modules}:\n{source}"
    _no_secret(outcome, "in-process")

    imported: list[str] = []
    start = pd.Timestamp.now()
    strict_outcome = strict.run(source, variables={"df": _table()}, worker_globals="fuzz_probe:install",
                                callbacks={fuzz_probe.CALLBACK: imported.append})
    seconds = (pd.Timestamp.now() - start).total_seconds()
    outside = sorted(m for m in imported if not _allowed_module(m))
    assert not outside, f"the worker started to import {outside}:\n{source}"
    assert seconds < ANSWER_SECONDS, f"the strict run took {seconds:.1f} s:\n{source}"
    _no_secret(strict_outcome, "strict")
    assert not os.path.exists(MARKER) and not os.path.exists(OUTSIDE), f"a file was created:\n{source}"
    new_files = _listing() - files_before
    assert not new_files, f"files appeared: {sorted(new_files)}:\n{source}"
    health = strict.run("1 + 1")
    assert health.ok and health.value == 2, f"the sandbox is unhealthy after:\n{source}\n{health}"

    STATS["programs"] += 1
    STATS["inprocess_" + ("ok" if outcome.ok else outcome.error.kind)] += 1
    STATS["strict_" + ("ok" if strict_outcome.ok else strict_outcome.error.kind)] += 1
    if outcome.ok != strict_outcome.ok:
        STATS["modes_disagree"] += 1
