"""Stage 3, plan: the candidates' predictable neural calls are claimed in the shared neural
cache and sent (several questions per prompt, :mod:`binder_py.neural.plan`); the stage returns
with the plan in flight, the run stage starts the programs meanwhile (their planned calls wait
for the plan's answers) and folds the finished plan into the state (:func:`settle_plan`).

``f_val`` calls over sub-tables built by plain pandas are planned too: their context
expressions run in the sandbox first (:mod:`binder_py.pipeline.subtables`).

Applies where neural calls are allowed (modes binder and discriminate: ``state.neural_allowed``), with a shared neural cache and a backend that can plan
(:class:`~binder_py.neural.backends.PlanningBackend`).
"""

from __future__ import annotations

from collections.abc import Sequence

from binder_py.answer import Candidate
from binder_py.language import parse_program
from binder_py.neural.batching import current_wave
from binder_py.neural.plan import PlanInFlight, start_plan, supports_planning
from binder_py.pipeline.state import QuestionState
from binder_py.pipeline.subtables import subtable_requests


def mentions_neural(program: str) -> bool:
    try:
        return bool(parse_program(program).sites)
    except Exception:  # noqa: BLE001 - a broken program fails later, with its own message
        return False


def start_candidates_plan(state: QuestionState, candidates: Sequence[Candidate]) -> QuestionState:
    """The state with the plan of ``candidates``' calls in flight (``plan_in_flight``); a plan
    already in flight is settled first."""
    state = settle_plan(state)
    settings = state.settings
    if not state.neural_allowed or not settings.plan_neural or not settings.share_neural_cache:
        return state
    if not any(mentions_neural(c.program) for c in candidates):
        return state
    backend = state.services.neural()
    if not supports_planning(backend):
        return state
    programs = [c.program for c in candidates]
    extra = []
    if backend.combine_tables:  # the values ride in the plan's prompt
        try:
            extra = subtable_requests(programs, state.table, state.services.sandbox(), title=state.title,
                                      tables=state.tables)
        except Exception as error:  # noqa: BLE001 - not planned: the candidates' own calls ask
            state = state.evolve(warnings=state.warnings + (f"sub-tables not planned: {type(error).__name__}: {error}",))
    in_flight = start_plan(programs, state.table, backend, state.services.neural_cache, title=state.title,
                           extra_requests=extra)
    return state.evolve(plan_in_flight=in_flight, neural_name=backend.name)


def settle_plan(state: QuestionState) -> QuestionState:
    """Wait for the plan in flight (if any) and merge it into the state's plan, usage and warnings."""
    in_flight = state.plan_in_flight
    if not isinstance(in_flight, PlanInFlight):
        return state
    plan = in_flight.result()
    return state.evolve(plan=plan if state.plan is None else state.plan.merged(plan), plan_in_flight=None,
                        usage=state.usage + plan.usage, warnings=state.warnings + tuple(plan.warnings))


def plan_candidates(state: QuestionState, candidates: Sequence[Candidate]) -> QuestionState:
    """The plan of ``candidates``' calls, answered and merged into the state's plan."""
    return settle_plan(start_candidates_plan(state, candidates))


def plan(state: QuestionState) -> QuestionState:
    state = start_candidates_plan(state, [c for c in state.candidates if c.origin != "e2e"])
    found = current_wave()
    if found is not None:  # an evaluation wave: this question hands it nothing more (neural/batching.py)
        found[0].planned()
    return state
