"""Every shipped exemplar program runs in the real executor and gives its recorded answer.

The oracle backend answers its neural calls from the exemplar's ``oracle`` field, so this
checks the program text, the table typing and the language semantics together.
"""

from __future__ import annotations

import math

import pytest

from binder_py.neural import OracleBackend
from binder_py.language import execute
from binder_py.prompting import available_tasks, load_exemplars

CASES = [(task, ex) for task in available_tasks() for ex in load_exemplars(task)]


def same(value, expected) -> bool:
    if isinstance(expected, bool) or isinstance(value, bool):
        return value is expected or value == expected
    if isinstance(expected, float) or isinstance(value, float):
        return value is not None and math.isclose(float(value), float(expected), rel_tol=1e-6, abs_tol=1e-6)
    if isinstance(expected, list):
        return isinstance(value, list) and len(value) == len(expected) and all(
            same(v, e) for v, e in zip(value, expected))
    return value == expected


def test_every_task_has_enough_exemplars():
    counts = {task: len(load_exemplars(task)) for task in ("wikitq", "tabfact", "analyst")}
    assert counts["wikitq"] >= 14 and counts["tabfact"] >= 14 and counts["analyst"] >= 8
    for task in ("wikitq", "tabfact"):
        neural = sum(ex.uses_neural for ex in load_exemplars(task))
        assert 6 <= neural < counts[task]  # a mix of plain pandas and neural calls


@pytest.mark.parametrize("task, exemplar", CASES, ids=[f"{t}:{e.id}" for t, e in CASES])
def test_exemplar_program_gives_its_answer(task, exemplar):
    run = execute(exemplar.program, exemplar.table, neural=OracleBackend(exemplar.oracle), title=exemplar.title)
    assert run.ok, f"{exemplar.id}: {run.error}"
    assert same(run.value, exemplar.answer), f"{exemplar.id}: got {run.value!r}, expected {exemplar.answer!r}"
    assert not run.warnings, run.warnings  # every neural row had an oracle answer
