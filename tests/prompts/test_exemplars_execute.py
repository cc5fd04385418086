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


def test_several_table_exemplars_show_joins_and_neural_calls_across_tables():
    several = [ex for ex in load_exemplars("analyst") if ex.several_tables]
    assert len(several) >= 4
    assert any(".merge(" in ex.program and not ex.uses_neural for ex in several)  # a plain join
    other_names = {t.name for ex in several for t in ex.others}
    # neural calls whose context is another table's column or sub-table
    assert any(ex.uses_neural and any(f"{name}[" in ex.program.split("f_", 1)[1] for name in other_names)
               for ex in several)
    assert any("f_val(" in ex.program for ex in several) and any("f_col(" in ex.program for ex in several)


@pytest.mark.parametrize("task, exemplar", CASES, ids=[f"{t}:{e.id}" for t, e in CASES])
def test_exemplar_program_gives_its_answer(task, exemplar):
    run = execute(exemplar.program, exemplar.table, neural=OracleBackend(exemplar.oracle), title=exemplar.title,
                  tables=exemplar.tables)
    assert run.ok, f"{exemplar.id}: {run.error}"
    assert same(run.value, exemplar.answer), f"{exemplar.id}: got {run.value!r}, expected {exemplar.answer!r}"
    assert not run.warnings, run.warnings  # every neural row had an oracle answer
