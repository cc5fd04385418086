"""Shared pieces of the dataset loaders: the :class:`Example` record and data-directory resolution."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from binder_py.errors import BinderError
from binder_py.safefiles import contained_path

ENV_VAR = "BINDER_DATA"
# <repository root>/../shared/data, where the repository root is the checkout holding binder_py/
_SOURCE_ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Example:
    """One benchmark question.

    ``gold`` is the gold denotation as a list of strings (WikiTQ: the
    ``|``-separated items of ``targetValue``, unescaped; TabFact: ``["True"]``
    or ``["False"]``). ``gold_canon`` holds WikiTQ's CoreNLP canonical values
    (``targetCanon``) where the tagged file exists (test split only), else
    ``None``. ``label`` is TabFact's label as a bool (``True`` = entailed),
    ``None`` for WikiTQ. ``subsets`` names the subsets the example belongs to,
    e.g. ``{"dev", "solvable-squall", "unsolvable-binder"}``, so one dev run
    can be scored per subset. ``table_path`` is an absolute path; load it with
    :meth:`load_table`. ``table_root`` is the folder the table must lie in (the dataset's
    folder): a path built from the data that resolves outside it is refused when the table
    is loaded, so that question fails with an error naming the path and nothing is read.
    """

    id: str
    question: str
    table_path: str
    gold: list[str]
    gold_canon: list[str] | None = None
    title: str | None = None
    subsets: frozenset[str] = field(default_factory=frozenset)
    dataset: str = "wikitq"
    label: bool | None = None
    table_root: str | None = None

    def load_table(self) -> pd.DataFrame:
        """The example's table, prepared by its dataset's reader (a fresh copy; parsed tables are cached)."""
        if self.table_root is not None:
            contained_path(self.table_root, self.table_path, what=f"question {self.id}: its table")
        try:
            loader = TABLE_LOADERS[self.dataset]
        except KeyError:
            raise BinderError(f"example {self.id}: no table reader for dataset {self.dataset!r} "
                              f"(known: {', '.join(sorted(TABLE_LOADERS))})") from None
        return loader(self.table_path)

    def written_numbers(self) -> dict[str, str]:
        """The numbers the example's table writes with thousands separators, ``{number key: cell
        text}`` (:mod:`binder_py.evaluate.written`); ``{}`` for a dataset whose answers are not
        reported so (no reader registered)."""
        reader = WRITTEN_NUMBER_READERS.get(self.dataset)
        if reader is None:
            return {}
        if self.table_root is not None:
            contained_path(self.table_root, self.table_path, what=f"question {self.id}: its table")
        return dict(reader(self.table_path))


#: dataset name -> its table reader; each dataset module registers its own
TABLE_LOADERS: dict[str, Callable[[str], pd.DataFrame]] = {}
#: dataset name -> the reader of its table's numbers written with thousands separators (WikiTQ)
WRITTEN_NUMBER_READERS: dict[str, Callable[[str], dict[str, str]]] = {}


def candidate_data_dirs() -> list[Path]:
    """Where the data is looked for when neither ``--data-dir`` nor ``BINDER_DATA`` is given."""
    candidates = [Path.cwd() / ".." / "shared" / "data", _SOURCE_ROOT / ".." / "shared" / "data"]
    unique: list[Path] = []
    for c in candidates:
        c = c.resolve()
        if c not in unique:
            unique.append(c)
    return unique


def resolve_data_dir(data_dir: str | os.PathLike[str] | None = None, dataset: str | None = None) -> Path:
    """The data directory (holding ``wikitq/`` and ``tabfact/``).

    Order: the ``data_dir`` argument (``--data-dir``), else the ``BINDER_DATA``
    environment variable, else ``../shared/data`` relative to the current
    directory, else ``../shared/data`` relative to the source checkout. With
    ``dataset`` given, the chosen directory must contain that dataset's folder.
    """
    def usable(path: Path) -> bool:
        return path.is_dir() and (dataset is None or (path / dataset).is_dir())

    hint = "run 'binder-py data' to see where to get the data and how the folder must look"
    for source, value in (("--data-dir", data_dir), (ENV_VAR, os.environ.get(ENV_VAR) or None)):
        if value is None:
            continue
        path = Path(value).expanduser()
        if not path.is_dir():
            problem = "is a file, not a directory" if path.exists() else "does not exist"
            raise BinderError(f"data directory {path} (from {source}) {problem}; {hint}")
        if dataset is not None and not (path / dataset).is_dir():
            raise BinderError(f"data directory {path} (from {source}) has no '{dataset}' folder; {hint}")
        return path.resolve()
    for path in candidate_data_dirs():
        if usable(path):
            return path
    looked = ", ".join(str(p) for p in candidate_data_dirs())
    what = f"the '{dataset}' data" if dataset else "the data directory"
    raise BinderError(f"cannot find {what}: looked in {looked}; pass --data-dir DIR or set {ENV_VAR}=DIR; {hint}")
