"""The names programs see tables by, when a question has several tables.

A program sees every table as a variable: ``df`` (and ``table``) is the first table, and each
table is also bound to its own name (``orders``, ``customers``). A name must be a Python
identifier the program can use and must not hide anything the language binds: ``df``,
``table``, ``pd``, ``np``, the neural functions (``f_col``, ``f_val``, ``f``, ``qa_map``,
``qa_ans``), the bridge, Python's keywords and builtins. RestrictedPython refuses names that
start with ``_``.

Two ways in:

* :func:`check_table_names` for names the caller chose (``binder.ask({"orders": df1, ...})``):
  a bad name is a :class:`BinderError` that says why and suggests a usable name (the first
  table may be named ``df``, which it is anyway);
* :func:`names_from_stems` for names made from file names (``binder-py ask orders.csv
  customers.csv``): each stem becomes an identifier (other characters become ``_``, a leading
  digit gets ``t_`` in front), a reserved name gets ``_`` appended (``list.csv`` → ``list_``,
  ``df.csv`` → ``df_``), and a name taken by an earlier table gets ``_2``, ``_3``, …
  (``a/orders.csv b/orders.csv`` → ``orders``, ``orders_2``).
"""

from __future__ import annotations

import builtins
import keyword
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from binder_py.errors import BinderError
from binder_py.language.program import INTERNAL_NAMES, NEURAL_FORMS

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["FIRST_TABLE_NAMES", "RESERVED_NAMES", "check_table_names", "load_table_files", "names_from_stems", "variable_name"]

#: the names the first table is always bound to
FIRST_TABLE_NAMES = ("df", "table")

#: names a table may not take: what the language and the sandbox bind, keywords and builtins
RESERVED_NAMES = frozenset({
    *FIRST_TABLE_NAMES, "pd", "np", "printed", *NEURAL_FORMS, *INTERNAL_NAMES,
    *keyword.kwlist, *keyword.softkwlist, *dir(builtins),
})

_NOT_IDENTIFIER = re.compile(r"\W+")


def variable_name(stem: str) -> str:
    """``stem`` made a Python identifier that clashes with nothing reserved (see the module docstring)."""
    name = _NOT_IDENTIFIER.sub("_", stem.strip()).strip("_")
    if not name:
        name = "t"
    if name[0].isdigit():
        name = "t_" + name
    if not name.isidentifier():  # letters Python does not take in identifiers
        name = "t_" + "".join(ch if (ch.isascii() and ch.isalnum()) else "_" for ch in name).strip("_")
    if name in RESERVED_NAMES:
        name += "_"
    return name


def names_from_stems(stems: Sequence[str]) -> list[str]:
    """One distinct variable name per stem, in order (duplicates get ``_2``, ``_3``, …)."""
    names: list[str] = []
    for stem in stems:
        base = variable_name(stem)
        name, n = base, 1
        while name in names:
            n += 1
            name = f"{base}_{n}"
        names.append(name)
    return names


def load_table_files(paths: Sequence[str]) -> dict[str, pd.DataFrame]:
    """The table files read with :func:`~binder_py.tables.load_table`, in order, each named after its
    file by :func:`names_from_stems` (the command line's ``TABLE...``)."""
    from binder_py.tables import load_table

    names = names_from_stems([Path(path).stem for path in paths])
    return {name: load_table(path) for name, path in zip(names, paths)}


def check_table_names(names: Iterable[object]) -> list[str]:
    """``names`` as given, or a :class:`BinderError` naming the first unusable one and a usable one."""
    checked: list[str] = []
    for position, name in enumerate(names):
        if position == 0 and name == FIRST_TABLE_NAMES[0]:  # the first table may be called what it is: df
            checked.append(name)
            continue
        if not isinstance(name, str):
            raise BinderError(f"table names must be strings, got {type(name).__name__} {name!r}")
        problem = _problem(name)
        if problem:
            raise BinderError(f"table name {name!r} {problem}; use another name, e.g. {variable_name(name)!r}")
        checked.append(name)
    return checked


def _problem(name: str) -> str | None:
    if not name.isidentifier():
        return "is not a Python identifier (programs refer to each table by its name)"
    if name.startswith("_"):
        return "starts with '_' (the sandbox refuses such names)"
    if name in FIRST_TABLE_NAMES:
        return f"is what programs call the first table ({', '.join(FIRST_TABLE_NAMES)})"
    if keyword.iskeyword(name) or keyword.issoftkeyword(name):
        return "is a Python keyword"
    if name in RESERVED_NAMES:
        return "would hide a name programs use (pandas, numpy, the neural functions or a builtin)"
    return None
