"""A small finished run directory (end-to-end mode, scripted model: no sandbox, under a second)."""

from __future__ import annotations

from pathlib import Path

import pytest

from binder_py.lm import ScriptedLM
from binder_py.runs import run_eval
from tests.runs.conftest import CASES, SUBSETS, TABLE, programs_for, prompt_text


def make_examples(directory: Path) -> list:
    from binder_py.datasets.common import Example

    table = directory / "t.csv"
    table.parent.mkdir(parents=True, exist_ok=True)
    table.write_text(TABLE, encoding="utf-8")
    return [Example(id=f"q{i}", question=q, table_path=str(table), gold=gold, title="scores",
                    subsets=frozenset({"dev", SUBSETS[i]}), dataset="wikitq")
            for i, (q, (gold, _)) in enumerate(CASES.items())]


def scripted() -> ScriptedLM:
    return ScriptedLM(lambda request, purpose: programs_for(prompt_text(request), purpose))


def finished_run(out: Path, examples: list, **settings) -> Path:
    run_eval("wikitq", "dev", out=out, mode="e2e", lm=settings.pop("lm", None) or scripted(), examples=examples,
             progress=False, n=3, concurrency=1, **settings)
    return out


@pytest.fixture(scope="session")
def pristine_run(tmp_path_factory) -> Path:
    """A finished run directory; copy it before changing it."""
    base = tmp_path_factory.mktemp("pristine")
    return finished_run(base / "run", make_examples(base / "data"))


@pytest.fixture()
def run_copy(pristine_run: Path, tmp_path: Path) -> Path:
    import shutil

    return Path(shutil.copytree(pristine_run, tmp_path / "run"))
