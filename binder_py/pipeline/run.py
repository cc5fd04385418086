"""Stage 4, run: every candidate program runs in the sandbox, its neural calls answered by the
neural backend through the question's shared cache (or a fresh one per program, as the original)."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace

from tqdm import tqdm

from binder_py.answer import Candidate
from binder_py.language import ProgramRun, execute
from binder_py.neural import NeuralCache
from binder_py.pipeline.plan import mentions_neural
from binder_py.pipeline.state import QuestionState


def run_programs(state: QuestionState, candidates: Sequence[Candidate]) -> tuple[tuple[Candidate, ...], QuestionState]:
    """``candidates`` with their runs, and the state with the runs' usage and warnings."""
    settings, services = state.settings, state.services
    allow_neural = state.neural_allowed
    neural = services.neural() if allow_neural and any(mentions_neural(c.program) for c in candidates) else None
    sandbox = services.sandbox()

    def run_one(candidate: Candidate) -> ProgramRun:
        cache = services.neural_cache if settings.share_neural_cache else NeuralCache()
        return execute(candidate.program, state.table, neural=neural, sandbox=sandbox, title=state.title,
                       cache=cache, allow_neural=allow_neural, prefetch=settings.prefetch, tables=state.tables)

    bar = tqdm(total=len(candidates), desc="running programs", unit="prog", file=sys.stderr,
               disable=not services.progress, leave=False)
    runs: list[ProgramRun] = []
    with ThreadPoolExecutor(max_workers=min(settings.concurrency, max(1, len(candidates)))) as pool:
        for future in [pool.submit(run_one, c) for c in candidates]:
            runs.append(future.result())
            bar.update(1)
    bar.close()
    done = tuple(replace(c, run=r) for c, r in zip(candidates, runs))
    usage = sum((r.usage for r in runs), state.usage)
    warnings = state.warnings + tuple(w for r in runs for w in r.warnings)
    return done, state.evolve(usage=usage, warnings=warnings,
                              neural_name=neural.name if neural is not None else state.neural_name)


def run(state: QuestionState) -> QuestionState:
    programs = [c for c in state.candidates if c.origin != "e2e"]
    if not programs:
        return state
    done, state = run_programs(state, programs)
    return state.evolve(candidates=done)
