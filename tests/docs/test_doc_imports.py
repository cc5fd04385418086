"""What the documentation tells a user to import exists: every ``from binder_py... import ...``
line of README.md and docs/*.md, and the module README's "Limits" names for ``load_table``."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
IMPORTS = sorted({(path.name, m.group(1), m.group(2)) for path in DOCS
                  for m in re.finditer(r"^\s*from ((?:binder_py|sandbox)[\w.]*) import ([\w, ]+?)\s*(?:#.*)?$",
                                       path.read_text(), re.M)})


@pytest.mark.parametrize("doc, module, names", IMPORTS)
def test_documented_imports_exist(doc, module, names):
    imported = importlib.import_module(module)
    for name in (n.strip() for n in names.split(",")):
        assert hasattr(imported, name), f"{doc}: from {module} import {name} fails"


def test_readme_names_the_module_of_load_table():
    """README said `load_table(path, limits=TableLimits(...))`; `from binder_py import load_table`
    fails: the names are binder_py.tables'."""
    readme = (ROOT / "README.md").read_text()
    for dotted in re.findall(r"`(binder_py\.[\w.]+)\(path, limits=TableLimits", readme) or ["(none)"]:
        module, _, name = dotted.rpartition(".")
        assert hasattr(importlib.import_module(module), name) and hasattr(importlib.import_module(module), "TableLimits")
    assert "`load_table(path" not in readme
