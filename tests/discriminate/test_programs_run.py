"""Every enumerated program is valid Binder-Python: it parses, runs in the sandbox, and means what ops say."""

from __future__ import annotations

import pandas as pd
import pytest

from binder_py.discriminate.candidates import filter_candidates, final_candidates
from binder_py.discriminate.ops import NeuralFilter, ProposedCode
from binder_py.neural.backends import CallableBackend
from binder_py.language.execute import execute
from binder_py.normalize import normalize_answer
from binder_py.tables import load_table, prepare_table

NORTH_AMERICA = {"mexico", "united states", "canada"}


def row_answer(question: str, row: dict[str, str]) -> str:
    cells = " ".join(row.values()).lower()
    if "north america" in question.lower():
        return "yes" if cells in NORTH_AMERICA else "no"
    return "yes" if ("cotton" in cells or "linen" in cells) else "no"


def some_programs(table: pd.DataFrame, question: str, *, neural: bool = True) -> list[ProposedCode]:
    """Every answer expression; every condition on the best one; two second conditions on each of those."""
    programs = [ProposedCode(c.step) for c in final_candidates(table, question, limit=1000)]
    base = programs[0]
    for extra in filter_candidates(table, question, base, limit=1000, neural=neural):
        one = base.with_filter(extra.step)
        programs.append(one)
        programs += [one.with_filter(e.step) for e in filter_candidates(table, question, one, limit=2,
                                                                          neural=neural)]
    return programs


@pytest.mark.slow
def test_every_enumerated_shirts_program_runs_and_pure_ones_agree_with_pandas():
    table = load_table("examples/shirts.csv")
    question = "which is the best-selling shirt made in North America and with no chemicals, or in Canada over 30?"
    backend = CallableBackend.per_row(row_answer)
    programs = some_programs(table, question)
    assert len(programs) > 50
    failures = []
    for program in programs:
        run = execute(program.code, table, neural=backend)
        neural = any(isinstance(f, NeuralFilter) for f in program.filters)
        if not run.ok:
            # only an f_col condition that keeps no row may leave nothing to answer (.iloc[0] of nothing)
            if not (neural and run.error.kind == "runtime" and "IndexError" in run.error.message):
                failures.append((program.code, run.error))
            continue
        if not neural:
            expected = program.final.apply(program.known_rows(table))
            assert normalize_answer(run.value).key == normalize_answer(expected).key, program.code
    assert failures == []
    gold = ("df = df[f_col('Is it made in north america?', ['made in'])]\n"
            "df = df[f_col('Does it have no chemicals?', ['shirt'])]\n"
            "df.sort_values('sales', ascending=False)['shirt'].iloc[0]")
    assert execute(gold, table, neural=backend).value == "pure cotton oxford shirt"


@pytest.mark.slow
def test_awkward_names_run_in_the_sandbox():
    table = prepare_table(pd.DataFrame({"class": ["it's \"x\"", "naïve\\path", "b"], "2010": [1, 2, 3],
                                        "lambda value": [3.5, 1.0, 2.0]}))
    question = "which class has the most lambda value where class is it's \"x\" or naïve\\path and 2010 over 1?"
    programs = some_programs(table, question, neural=False)
    assert len(programs) > 20
    for program in programs:
        run = execute(program.code, table, neural=None)
        assert run.ok, (program.code, run.error)
        expected = program.final.apply(program.known_rows(table))
        assert normalize_answer(run.value).key == normalize_answer(expected).key, program.code
