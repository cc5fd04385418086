"""TabFact small test set (1,998 statements over 298 tables), as Binder evaluates it.

Files (relative to ``<data dir>/tabfact``): ``tokenized_data/small_test_examples.json``
(``{table_id: [[statement, ...], [label, ...], caption]}``, label 1 = entailed) and
``data/all_csv/<table_id>`` (``#``-separated, first line is the header, no quoting).

Each statement becomes an :class:`Example` with ``id = "<table_id>/<k>"`` (``k`` its
0-based position under the table), ``question`` the statement, ``gold`` ``["True"]``
(entailed) or ``["False"]`` (refuted), ``label`` the same as a bool, ``title`` the
table caption and ``subsets`` ``{"test-small"}``.
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

import pandas as pd

from binder_py.datasets.common import TABLE_LOADERS, Example, resolve_data_dir
from binder_py.errors import BinderError, TableError
from binder_py.jsonfile import Shape, check_shape, read_json
from binder_py.tables import TableLimits, make_unique_headers, normalize_header, prepare_table

SPLITS = ("test-small",)
EXAMPLES_FILE = "tokenized_data/small_test_examples.json"
TABLE_DIR = "data/all_csv"
EXPECTED_COUNTS = {"test-small": 1998}
MAX_EXAMPLES_BYTES = 256 * 1024 * 1024


def load_tabfact(split: str = "test-small", data_dir: str | os.PathLike[str] | None = None) -> list[Example]:
    """Load TabFact statements (only ``test-small`` is available)."""
    if split not in SPLITS:
        raise BinderError(f"unknown TabFact split {split!r}; choose one of {', '.join(SPLITS)}")
    root = resolve_data_dir(data_dir, "tabfact") / "tabfact"
    return list(_load_cached(str(root), split))


@lru_cache(maxsize=2)
def _load_cached(root_text: str, split: str) -> tuple[Example, ...]:
    root = Path(root_text)
    path = root / EXAMPLES_FILE
    if not path.is_file():
        raise BinderError(f"missing TabFact file {path}; run 'binder-py data' to check the data folder")
    data = read_json(path, dict, max_bytes=MAX_EXAMPLES_BYTES, what="TabFact examples file")
    examples = []
    for table_id, value in data.items():
        check_shape(value, list, f"{path}", table_id)
        if len(value) != 3 or not isinstance(value[0], list) or not isinstance(value[1], list):
            raise BinderError(f"{path}: field {table_id!r} must be [statements, labels, caption]")
        statements, labels, caption = value
        check_shape(statements, Shape(list, items=str), f"{path}", f"{table_id}[0]")
        check_shape(labels, Shape(list, items=int), f"{path}", f"{table_id}[1]")
        check_shape(caption, (str, type(None)), f"{path}", f"{table_id}[2]")
        if len(statements) != len(labels):
            raise BinderError(f"{path}: table {table_id} has {len(statements)} statements but {len(labels)} labels")
        for k, (statement, label) in enumerate(zip(statements, labels)):
            entailed = int(label) == 1
            examples.append(Example(
                id=f"{table_id}/{k}", question=statement, table_path=str(root / TABLE_DIR / table_id),
                gold=["True" if entailed else "False"], gold_canon=None, title=caption,
                subsets=frozenset({split}), dataset="tabfact", label=entailed, table_root=str(root / TABLE_DIR)))
    return tuple(examples)


def read_tabfact_table(path: str | os.PathLike[str]) -> pd.DataFrame:
    """Parse a ``#``-separated TabFact table (uncached): split lines on ``#``, header normalised and made unique."""
    path = Path(path)
    if not path.is_file():
        raise TableError(f"missing TabFact table {path}; run 'binder-py data' to check the data folder")
    limits = TableLimits.from_env()
    limits.check_size(path, path.stat().st_size)
    lines = path.read_text(encoding="utf-8").split("\n")
    while lines and lines[-1] == "":
        lines.pop()
    if not lines:
        raise TableError(f"TabFact table {path} is empty")
    rows = [line.rstrip("\r").split("#") for line in lines]
    width = max(len(r) for r in rows)
    limits.check_columns(path, width)
    limits.check_filled(path, len(rows), width)  # short rows are filled out to the widest one below
    limits.check_cells(path, rows)
    rows = [r + [""] * (width - len(r)) for r in rows]
    header = [normalize_header(n) for n in rows[0]]
    header = make_unique_headers([n if n else f"column_{i + 1}" for i, n in enumerate(header)])
    body = rows[1:] or [[""] * width]
    return prepare_table(pd.DataFrame(body, columns=header, dtype=object))


@lru_cache(maxsize=64)
def _cached_table(path: str) -> pd.DataFrame:
    return read_tabfact_table(path)


def load_tabfact_table(path: str | os.PathLike[str]) -> pd.DataFrame:
    """A TabFact table as prepared by :func:`read_tabfact_table`; LRU-cached, returns a copy."""
    return _cached_table(str(Path(path).resolve())).copy()


TABLE_LOADERS["tabfact"] = load_tabfact_table
