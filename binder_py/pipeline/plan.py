"""Stage 3, plan: the candidates' predictable ``f_col`` calls answered into the shared neural
cache before they run, several questions per prompt (:mod:`binder_py.neural.plan`).

Applies in binder mode, with a shared neural cache and a backend that can plan
(:class:`~binder_py.neural.backends.PlanningBackend`).
"""

from __future__ import annotations

from collections.abc import Sequence

from binder_py.answer import Candidate
from binder_py.language import parse_program
from binder_py.neural.plan import plan_neural_calls, supports_planning
from binder_py.pipeline.state import QuestionState


def mentions_neural(program: str) -> bool:
    try:
        return bool(parse_program(program).sites)
    except Exception:  # noqa: BLE001 - a broken program fails later, with its own message
        return False


def plan_candidates(state: QuestionState, candidates: Sequence[Candidate]) -> QuestionState:
    """The plan of ``candidates``' calls, merged into the state's plan."""
    settings = state.settings
    if not state.neural_allowed or not settings.plan_neural or not settings.share_neural_cache:
        return state
    if not any(mentions_neural(c.program) for c in candidates):
        return state
    backend = state.services.neural()
    if not supports_planning(backend):
        return state
    plan = plan_neural_calls([c.program for c in candidates], state.table, backend, state.services.neural_cache,
                             title=state.title)
    return state.evolve(plan=plan if state.plan is None else state.plan.merged(plan), neural_name=backend.name,
                        usage=state.usage + plan.usage, warnings=state.warnings + tuple(plan.warnings))


def plan(state: QuestionState) -> QuestionState:
    return plan_candidates(state, [c for c in state.candidates if c.origin != "e2e"])
