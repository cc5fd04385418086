from pathlib import Path

import pandas as pd
import pytest

from binder_py.prompting import exemplars as exemplars_module
from binder_py.prompting.exemplars import parse_exemplar_lines

FIXTURES = Path(__file__).parent / "fixtures.jsonl"


def count_tokens(text: str) -> int:
    return len(text) // 4


@pytest.fixture
def exemplars():
    return parse_exemplar_lines(FIXTURES.read_text(encoding="utf-8").splitlines(), source=str(FIXTURES))


@pytest.fixture
def table():
    return pd.DataFrame({"Club": ["Real Madrid", "AC Milan", "Bayern\nMunich"], "Titles": [14, 7, 6],
                         "Share": [0.5, 0.25, float("nan")]})


@pytest.fixture
def task_root(tmp_path, monkeypatch):
    """A fake prompts/parse/ with tasks 'alpha' (fixture exemplars) and 'beta'."""
    root = tmp_path / "parse"
    for task in ("alpha", "beta"):
        (root / task).mkdir(parents=True)
        (root / task / "instruction.txt").write_text(f"Instruction for {task}.\n", encoding="utf-8")
        (root / task / "exemplars.jsonl").write_text(FIXTURES.read_text(encoding="utf-8"), encoding="utf-8")
    monkeypatch.setattr(exemplars_module, "_parse_root", lambda: root)
    exemplars_module.clear_caches()
    yield root
    exemplars_module.clear_caches()
