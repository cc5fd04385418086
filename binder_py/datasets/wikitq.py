"""WikiTableQuestions v1.0.2 (dev split as used by Binder, test split, SQUALL-derived subsets).

Files (relative to ``<data dir>/wikitq``), see that folder's README:

* ``data/random-split-1-dev.tsv`` (2,831 questions) and ``data/pristine-unseen-tables.tsv`` (4,344)
* ``tagged/data/pristine-unseen-tables.tagged`` (``targetCanon`` of the test questions)
* ``csv/20x-csv/N.tsv`` tables and ``page/20x-page/N.json`` page titles
* ``squall/random-split-1-dev.missing-squall.ids`` (625) and
  ``squall/random-split-1-dev.binder-unsolvable.ids`` (1,251)

Escapes in question files and ``.tsv`` tables: newline is ``\\n``, ``|`` is ``\\p``,
backslash is ``\\\\``. Answer lists are split on ``|`` first, then unescaped.
"""

from __future__ import annotations

import csv
import os
import re
from functools import lru_cache
from pathlib import Path

import pandas as pd

from binder_py.datasets.common import TABLE_LOADERS, WRITTEN_NUMBER_READERS, Example, resolve_data_dir
from binder_py.errors import BinderError, TableError
from binder_py.evaluate.written import written_numbers
from binder_py.jsonfile import Shape, read_json
from binder_py.safefiles import contained_path
from binder_py.tables import TableLimits, make_unique_headers, normalize_header, prepare_table

SPLITS = ("dev", "test", "unsolvable-squall", "unsolvable-binder", "solvable-squall", "solvable-binder")
DEV_FILE = "data/random-split-1-dev.tsv"
TEST_FILE = "data/pristine-unseen-tables.tsv"
TAGGED_TEST_FILE = "tagged/data/pristine-unseen-tables.tagged"
SQUALL_MISSING_FILE = "squall/random-split-1-dev.missing-squall.ids"
MAX_PAGE_BYTES = 1024 * 1024  # a page-title file holds a few hundred bytes
BINDER_UNSOLVABLE_FILE = "squall/random-split-1-dev.binder-unsolvable.ids"
EXPECTED_COUNTS = {"dev": 2831, "test": 4344, "unsolvable-squall": 625, "unsolvable-binder": 1251,
                   "solvable-squall": 2206, "solvable-binder": 1580}

_ESCAPE = re.compile(r"\\(.)", re.DOTALL)
_ESCAPES = {"n": "\n", "p": "|", "\\": "\\"}


def unescape(text: str) -> str:
    """Undo WikiTQ's escapes: ``\\n`` -> newline, ``\\p`` -> ``|``, ``\\\\`` -> ``\\``; other ``\\x`` stay as written."""
    if "\\" not in text:
        return text
    return _ESCAPE.sub(lambda m: _ESCAPES.get(m.group(1), m.group(0)), text)


def split_answer(field: str) -> list[str]:
    """A ``targetValue``/``targetCanon`` field as a list: split on ``|`` first, then unescape each item."""
    return [unescape(item) for item in field.split("|")]


def _read_tsv_rows(path: Path) -> list[list[str]]:
    with open(path, encoding="utf-8", newline="") as f:
        text = f.read()
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line.rstrip("\r").split("\t") for line in lines]


def _read_question_file(path: Path) -> list[dict[str, str]]:
    if not path.is_file():
        raise BinderError(f"missing WikiTQ file {path}; run 'binder-py data' to check the data folder")
    rows = _read_tsv_rows(path)
    header, body = rows[0], rows[1:]
    records = []
    for number, row in enumerate(body, start=2):
        if len(row) != len(header):
            raise BinderError(f"{path}, line {number}: expected {len(header)} tab-separated fields, got {len(row)}")
        records.append(dict(zip(header, row)))
    return records


def _read_ids(path: Path) -> set[str]:
    if not path.is_file():
        raise BinderError(f"missing WikiTQ subset file {path}; run 'binder-py data' to check the data folder")
    return {line.strip() for line in path.read_text(encoding="utf-8").splitlines() if line.strip()}


def _page_title(root: Path, context: str) -> str | None:
    # csv/204-csv/772.csv -> page/204-page/772.json
    parts = Path(context).parts
    if len(parts) != 3:
        return None
    try:
        relative = Path("page", parts[1].replace("-csv", "-page"), Path(parts[2]).stem + ".json")
        page = contained_path(root, str(relative), what=f"table {context}: its page title")
        title = read_json(page, Shape(dict, {"title": (str, type(None))}), max_bytes=MAX_PAGE_BYTES).get("title")
    except (OSError, BinderError):  # no page file, or a damaged one: no title
        return None
    return title


def load_wikitq(split: str = "dev", data_dir: str | os.PathLike[str] | None = None) -> list[Example]:
    """Load a WikiTQ split as a list of :class:`Example` (file order).

    Splits: ``dev`` (random-split-1-dev, 2,831), ``test`` (pristine-unseen-tables,
    4,344), ``unsolvable-squall`` (625 dev ids without SQUALL SQL),
    ``unsolvable-binder`` (1,251 dev ids the Binder authors judged SQL-unsolvable),
    ``solvable-squall`` / ``solvable-binder`` (their complements within dev).
    Dev examples carry ``subsets`` {"dev", "(un)solvable-squall", "(un)solvable-binder"};
    test examples carry {"test"}. ``gold_canon`` is set for the test split only.
    """
    if split not in SPLITS:
        raise BinderError(f"unknown WikiTQ split {split!r}; choose one of {', '.join(SPLITS)}")
    root = resolve_data_dir(data_dir, "wikitq") / "wikitq"
    return list(_load_cached(str(root), split))


@lru_cache(maxsize=8)
def _load_cached(root_text: str, split: str) -> tuple[Example, ...]:
    root = Path(root_text)
    if split == "test":
        records = _read_question_file(root / TEST_FILE)
        canon = {}
        tagged = root / TAGGED_TEST_FILE
        if tagged.is_file():
            for record in _read_question_file(tagged):
                canon[record["id"]] = split_answer(record["targetCanon"])
        examples = []
        for r in records:
            gold = split_answer(r["targetValue"])
            gold_canon = canon.get(r["id"])
            if gold_canon is not None and len(gold_canon) != len(gold):
                gold_canon = None
            examples.append(_example(root, r, gold, gold_canon, frozenset({"test"})))
        return tuple(examples)
    records = _read_question_file(root / DEV_FILE)
    missing_squall = _read_ids(root / SQUALL_MISSING_FILE)
    binder_unsolvable = _read_ids(root / BINDER_UNSOLVABLE_FILE)
    examples = []
    for r in records:
        subsets = {"dev",
                   "unsolvable-squall" if r["id"] in missing_squall else "solvable-squall",
                   "unsolvable-binder" if r["id"] in binder_unsolvable else "solvable-binder"}
        if split != "dev" and split not in subsets:
            continue
        examples.append(_example(root, r, split_answer(r["targetValue"]), None, frozenset(subsets)))
    return tuple(examples)


def _example(root: Path, record: dict[str, str], gold: list[str], gold_canon: list[str] | None,
             subsets: frozenset[str]) -> Example:
    context = record["context"]
    table_path = root / (context[:-4] + ".tsv" if context.endswith(".csv") else context)
    return Example(id=record["id"], question=unescape(record["utterance"]), table_path=str(table_path),
                   gold=gold, gold_canon=gold_canon, title=_page_title(root, context),
                   subsets=subsets, dataset="wikitq", table_root=str(root))


def read_wikitq_rows(path: str | os.PathLike[str]) -> list[list[str]]:
    """The rows of a WikiTQ table file (``.tsv`` with escapes, or the backslash-escaped ``.csv``), header
    first, each cell unescaped and each row filled out to the widest; the size limits are checked."""
    path = Path(path)
    if not path.is_file():
        raise TableError(f"missing WikiTQ table {path}; run 'binder-py data' to check the data folder")
    limits = TableLimits.from_env()
    limits.check_size(path, path.stat().st_size)
    if path.suffix == ".csv":
        with open(path, encoding="utf-8", newline="") as f:
            rows = [row for row in csv.reader(f, escapechar="\\", doublequote=False)]
    else:
        rows = [[unescape(cell) for cell in row] for row in _read_tsv_rows(path)]
    if not rows:
        raise TableError(f"WikiTQ table {path} is empty")
    width = max(len(row) for row in rows)
    limits.check_columns(path, width)
    limits.check_filled(path, len(rows), width)  # short rows are filled out to the widest one below
    limits.check_cells(path, rows)
    return [row + [""] * (width - len(row)) for row in rows]


def read_wikitq_table(path: str | os.PathLike[str]) -> pd.DataFrame:
    """Parse a WikiTQ table (``.tsv`` with escapes, or the backslash-escaped ``.csv``), uncached.

    Cells are unescaped (real newlines and ``|``), headers normalised with
    :func:`normalize_header` and made unique (``name``, ``name_2``, ...), then
    the table is typed by :func:`~binder_py.tables.prepare_table`.
    """
    rows = read_wikitq_rows(path)
    width = len(rows[0])
    header = [normalize_header(name) for name in rows[0]]
    header = [name if name else f"column_{i + 1}" for i, name in enumerate(header)]
    header = make_unique_headers(header)
    body = rows[1:]
    if not body:  # keep header-only tables usable: one empty row
        body = [[""] * width]
    frame = pd.DataFrame(body, columns=header, dtype=object)
    return prepare_table(frame)


@lru_cache(maxsize=128)
def wikitq_written_numbers(path: str) -> dict[str, str]:
    """The numbers a WikiTQ table's cells write with thousands separators (cached; copy before changing):
    its answers report them so (:mod:`binder_py.evaluate.written`)."""
    return written_numbers(cell for row in read_wikitq_rows(path)[1:] for cell in row)


@lru_cache(maxsize=128)
def _cached_table(path: str) -> pd.DataFrame:
    return read_wikitq_table(path)


def load_wikitq_table(path: str | os.PathLike[str]) -> pd.DataFrame:
    """A WikiTQ table as prepared by :func:`read_wikitq_table`; LRU-cached (128 tables), returns a copy."""
    return _cached_table(str(Path(path).resolve())).copy()


TABLE_LOADERS["wikitq"] = load_wikitq_table
WRITTEN_NUMBER_READERS["wikitq"] = wikitq_written_numbers
