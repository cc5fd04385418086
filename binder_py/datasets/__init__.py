"""Benchmark datasets: WikiTQ (dev/test and the program-unsolvable subsets) and TabFact small-test."""

from __future__ import annotations

import os

from binder_py.datasets.common import ENV_VAR, Example, candidate_data_dirs, resolve_data_dir
from binder_py.datasets.tabfact import load_tabfact, load_tabfact_table
from binder_py.datasets.wikitq import load_wikitq, load_wikitq_table
from binder_py.errors import BinderError

DATASETS = {"wikitq": ("dev", "test", "unsolvable-squall", "unsolvable-binder", "solvable-squall", "solvable-binder"),
            "tabfact": ("test-small",)}

__all__ = ["DATASETS", "ENV_VAR", "Example", "candidate_data_dirs", "load_dataset", "load_tabfact",
           "load_tabfact_table", "load_wikitq", "load_wikitq_table", "resolve_data_dir"]


def load_dataset(name: str, split: str | None = None,
                 data_dir: str | os.PathLike[str] | None = None) -> list[Example]:
    """``load_dataset("wikitq", "dev")`` / ``load_dataset("tabfact")``; split defaults to the first listed."""
    if name not in DATASETS:
        raise BinderError(f"unknown dataset {name!r}; choose one of {', '.join(DATASETS)}")
    split = split or DATASETS[name][0]
    return load_wikitq(split, data_dir) if name == "wikitq" else load_tabfact(split, data_dir)
