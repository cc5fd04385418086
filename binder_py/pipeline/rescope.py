"""Stage 7, rescope: a program that ran and whose answer is an ``f_col`` column itself asked its
question of every row, where the question is about the table (small models write
``f_col("Who was the first judge from Florida?", df[["Judge"]])``). Its sibling asks the same
question once of the same context, ``f_val(question, context)`` — as a bare ``f(...)`` as the
last statement already is — and is planned and run like the samples. The vote then sets the
column aside when the sibling's answer has the right shape (rule 0 of :mod:`binder_py.vote`).

No model call is spent on writing it; its neural call is one ``f_val``."""

from __future__ import annotations

from binder_py.answer import Candidate
from binder_py.language.program import as_value_question
from binder_py.pipeline.plan import plan_candidates
from binder_py.pipeline.run import run_programs
from binder_py.pipeline.sample import program_identity
from binder_py.pipeline.state import QuestionState


def rescope(state: QuestionState) -> QuestionState:
    if not state.settings.rescope or not state.neural_allowed:
        return state
    candidates = state.standing()  # a linked version that answered stands for its source, with its count
    known = {program_identity(c.program) for c in state.candidates}
    index_of = {id(c): i for i, c in enumerate(state.candidates)}
    order = 1 + max((o for c in candidates for o in c.sample_orders), default=-1)
    siblings: list[Candidate] = []
    for candidate in candidates:
        if not candidate.ok:
            continue
        program = as_value_question(candidate.program)
        if program is None or program_identity(program) in known:
            continue
        known.add(program_identity(program))
        siblings.append(Candidate(program=program, count=1, origin="rescope", sample_orders=(order,),
                                  repaired_from=index_of[id(candidate)]))
        order += 1
    if not siblings:
        return state
    state.services.say(f"{len(siblings)} program(s) answered with an f_col column; asking the question once "
                       "of its context instead")
    state = plan_candidates(state, siblings)
    done, state = run_programs(state, siblings)
    return state.evolve(candidates=state.candidates + done)
