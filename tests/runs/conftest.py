"""A tiny fake WikiTQ split (one table, five questions) and a scripted model that answers it."""

from __future__ import annotations

from pathlib import Path

import pytest

from binder_py.datasets.common import Example
from binder_py.lm import ScriptedLM

TABLE = "name,points,team\nalice,3,red\nbob,5,blue\ncarol,4,red\n"

# question -> (gold, programs sampled in order; n = 3)
CASES = {
    "who scored the most points?": (["bob"], ['df.loc[df["points"].idxmax(), "name"]',
                                              'df.loc[df["points"].idxmax(), "name"]', 'df["name"].iloc[0]']),
    "how many players are on team red?": (["2"], ['len(df[df["team"] == "red"])', 'len(df)',
                                                  'len(df[df["team"] == "red"])']),
    "what is the total of points?": (["12"], ['df["points"].max() * 3', 'df["points"].sum()', 'df["points"].sum()']),
    "who scored the fewest points?": (["alice"], ['df["name"].iloc[2]', 'df["name"].iloc[2]',
                                                  'df.loc[df["points"].idxmin(), "name"]']),
    "how many teams are there?": (["2"], ['df["team"].nunique()'] * 3),
}
# question -> three end-to-end answers (e2e mode: no sandbox, fast); first-k majority votes:
# k=1: 2 of 5 right, k=2: 2 of 5 (ties go to the earliest answer), k=3: 4 of 5
E2E = {
    "who scored the most points?": ["alice", "bob", "bob"],
    "how many players are on team red?": ["2", "2", "3"],
    "what is the total of points?": ["9", "12", "12"],
    "who scored the fewest points?": ["carol", "carol", "carol"],
    "how many teams are there?": ["2", "2", "2"],
}
SUBSETS = ["solvable-squall", "unsolvable-squall", "solvable-squall", "unsolvable-squall", "solvable-squall"]


def question_of(prompt: str) -> str:
    """The test question a prompt is about (the last one of ours it mentions)."""
    best, where = None, -1
    for q in CASES:
        i = prompt.lower().rfind(q)
        if i > where:
            best, where = q, i
    assert best is not None, prompt[-300:]
    return best


def prompt_text(request) -> str:
    return request.prompt if request.prompt is not None else "\n".join(c for _, c in request.messages)


def programs_for(prompt: str, purpose: str):
    if purpose == "repair":
        return ""
    if purpose == "e2e":
        return ["A: " + a for a in E2E[question_of(prompt)]]
    return list(CASES[question_of(prompt)][1])


@pytest.fixture()
def fake_examples(tmp_path: Path) -> list[Example]:
    table = tmp_path / "data" / "t.csv"
    table.parent.mkdir()
    table.write_text(TABLE, encoding="utf-8")
    return [Example(id=f"q{i}", question=q, table_path=str(table), gold=gold, title="scores",
                    subsets=frozenset({"dev", SUBSETS[i]}), dataset="wikitq")
            for i, (q, (gold, _)) in enumerate(CASES.items())]


@pytest.fixture()
def scripted_lm():
    return ScriptedLM(lambda request, purpose: programs_for(prompt_text(request), purpose))


def asked(lm: ScriptedLM) -> list[str]:
    """The test questions the model was asked about, in order (program-writing and e2e calls)."""
    return [question_of(prompt_text(r)) for r, purpose, _ in lm.calls if purpose in ("parse", "e2e")]

