"""A fuzzer for the readers of received files: run directories (report, resume), oracles and tables.

Hypothesis mutates valid files (truncation, type changes, deep nesting, huge numbers, symlinks,
FIFOs, blank lines). Invariants: no file outside the directory changes; every command ends in
bounded time with its answer, or with one line (the CLI's exit 2). The default example count is
small so the suite stays fast; ``BINDER_FUZZ_EXAMPLES=500`` runs a longer search.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import signal
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from binder_py.cli import main
from binder_py.errors import BinderError, TableError
from binder_py.lm.types import LMError
from tests.files.conftest import finished_run, make_examples

EXAMPLES = int(os.environ.get("BINDER_FUZZ_EXAMPLES", "12"))
SECONDS = 60  # "bounded time": a report or resume of this tiny run takes about a second
FUZZ = settings(max_examples=EXAMPLES, deadline=None, derandomize="BINDER_FUZZ_EXAMPLES" not in os.environ,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])

VALUES = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-10**15, max_value=10**15), st.sampled_from([10**12, 10**9, -1]),
    st.floats(allow_nan=False), st.text(max_size=20), st.just("$x$\n<img src=x>|"), st.just([]), st.just({}),
    st.just("DEEP"), st.just("HUGE"))


def raw_value(value: Any) -> str:
    if value == "DEEP":
        return "[" * 50_000 + "]" * 50_000
    if value == "HUGE":
        return "9" * 5_000
    return json.dumps(value)


def paths_of(value: Any, prefix: tuple = ()) -> list[tuple]:
    out = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            out += paths_of(item, prefix + (key,))
    elif isinstance(value, list):
        for index, item in enumerate(value[:5]):
            out += paths_of(item, prefix + (index,))
    return out


def replaced(document: Any, path: tuple, marker: str) -> Any:
    if not path:
        return marker
    copy = json.loads(json.dumps(document))
    target = copy
    for step in path[:-1]:
        target = target[step]
    target[path[-1]] = marker
    return copy


def mutate_json_text(text: str, pick: int, value: Any) -> str:
    document = json.loads(text)
    paths = paths_of(document)
    marker = "@@MUTATION@@"
    mutated = json.dumps(replaced(document, paths[pick % len(paths)], marker))
    return mutated.replace(json.dumps(marker), raw_value(value), 1)


MUTATION = st.one_of(
    st.tuples(st.just("value"), st.sampled_from(["config.json", "results.jsonl"]), st.integers(0, 10**6),
              st.integers(0, 10**6), VALUES),
    st.tuples(st.just("truncate"), st.sampled_from(["config.json", "results.jsonl", "lm.sqlite"]),
              st.floats(0, 1)),
    st.tuples(st.just("blank"), st.sampled_from(["config.json", "results.jsonl"]), st.integers(1, 50_000)),
    st.tuples(st.just("symlink"), st.sampled_from(["config.json", "results.jsonl", ".lock", "lm.sqlite"])),
    st.tuples(st.just("fifo"), st.sampled_from(["config.json", "results.jsonl", ".lock"])),
    st.tuples(st.just("delete"), st.sampled_from(["config.json", "results.jsonl"])),
)


def apply(run: Path, outside: Path, mutation: tuple) -> None:
    kind, name = mutation[0], mutation[1]
    path = run / name
    if kind == "value" and path.is_file() and not path.is_symlink():
        lines = path.read_text().splitlines()
        if lines and name == "results.jsonl":
            index = mutation[2] % len(lines)
            with contextlib.suppress(ValueError, RecursionError):
                lines[index] = mutate_json_text(lines[index], mutation[3], mutation[4])
            path.write_text("\n".join(lines) + "\n")
        elif lines:
            with contextlib.suppress(ValueError, RecursionError):
                path.write_text(mutate_json_text(path.read_text(), mutation[3], mutation[4]))
    elif kind == "truncate" and path.is_file() and not path.is_symlink():
        data = path.read_bytes()
        path.write_bytes(data[: int(len(data) * mutation[2])])
    elif kind == "blank" and path.is_file() and not path.is_symlink():
        with open(path, "a") as f:
            f.write("\n" * mutation[2])
    elif kind in ("symlink", "fifo", "delete"):
        if path.is_symlink() or path.exists():
            path.unlink()
        if kind == "symlink":
            path.symlink_to(outside / "precious.txt")
        elif kind == "fifo":
            os.mkfifo(path)


def snapshot(directory: Path) -> dict[str, tuple[bytes, int]]:
    return {str(p): (p.read_bytes(), p.stat().st_mtime_ns) for p in sorted(directory.rglob("*")) if p.is_file()}


@contextlib.contextmanager
def time_limit(seconds: int):
    def expire(*_: Any) -> None:
        raise TimeoutError(f"did not finish within {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def command(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), time_limit(SECONDS):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


def assert_answer_or_one_line(code: int, err: str) -> None:
    assert code in (0, 2), err
    if code == 2:
        assert err.count("\n") == 1 and err.startswith("binder-py "), err


@pytest.fixture(scope="module")
def received(tmp_path_factory):
    """A valid run directory and the data it was made from (module-wide: made once)."""
    base = tmp_path_factory.mktemp("received")
    examples = make_examples(base / "data")
    return finished_run(base / "run", examples), examples, base / "data"


@FUZZ
@given(mutations=st.lists(MUTATION, min_size=1, max_size=4))
def test_report_and_resume_of_a_mutated_run_directory(received, mutations):
    pristine, examples, data = received
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        run, outside = root / "run", root / "outside"
        shutil.copytree(pristine, run)
        outside.mkdir()
        (outside / "precious.txt").write_text("precious\n")
        for mutation in mutations:
            apply(run, outside, mutation)
        before, data_before = snapshot(outside), snapshot(data)

        code, _, err = command(["report", str(run), "--out", str(root / "report.md")])
        assert_answer_or_one_line(code, err)

        try:  # resume: what 'binder-py eval' does with the directory (its CLI prints a BinderError as one line)
            with time_limit(SECONDS):
                finished_run(run, examples)
        except (BinderError, LMError) as error:
            assert "\n" not in str(error), str(error)

        assert snapshot(outside) == before and snapshot(data) == data_before


ORACLE = {"f_col": {"is it red?": {"apple": "yes", "sky": "no"}}, "f_val": {"how many?": 3}}


@FUZZ
@given(pick=st.integers(0, 10**6), value=VALUES, cut=st.floats(0, 1), blank=st.integers(0, 3))
def test_a_mutated_oracle_loads_or_fails_in_one_line(pick, value, cut, blank):
    from binder_py.neural.backends import OracleBackend

    text = mutate_json_text(json.dumps(ORACLE), pick, value)
    text = text[: max(1, int(len(text) * cut))] if cut < 0.5 else text + "\n" * blank
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / "oracle.json"
        path.write_text(text)
        try:
            with time_limit(SECONDS):
                OracleBackend.from_file(path)
        except BinderError as error:
            assert "\n" not in str(error)


CELLS = st.one_of(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=12),
                  st.sampled_from(['"', '""', ",", "\n", "{output}", "$", "9" * 400, "x" * 200_000]))


@FUZZ
@given(rows=st.lists(st.lists(CELLS, min_size=1, max_size=6), min_size=1, max_size=6),
       quoted=st.booleans(), wide=st.sampled_from([0, 0, 0, 5_000]), blank=st.integers(0, 3),
       cut=st.floats(0, 1), suffix=st.sampled_from([".csv", ".tsv"]))
def test_a_mutated_table_loads_or_fails_in_one_line(rows, quoted, wide, blank, cut, suffix):
    from binder_py.tables import load_table

    sep = "," if suffix == ".csv" else "\t"
    if wide:
        rows = [[f"c{i}" for i in range(wide)]] + rows
    text = "\n".join(sep.join(f'"{c}"' if quoted else c for c in row) for row in rows) + "\n" * (blank + 1)
    text = text[: max(1, int(len(text) * cut))] if cut < 0.3 else text
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / f"t{suffix}"
        path.write_text(text, encoding="utf-8")
        try:
            with time_limit(SECONDS):
                load_table(path)
        except TableError as error:
            assert "\n" not in str(error).strip(), str(error)
