"""The pipeline: one question goes through the stages in :data:`STAGES`, in order.

    prompt → sample → propose → plan → run → link → repair → rescope → choose → vote

Each stage is a function ``QuestionState -> QuestionState`` in its own module; adding a
stage is writing one module and putting its function in the tuple (docs/ARCHITECTURE.md).
Stages with nothing to do for a question (no programs in ``e2e`` mode, no neural calls,
enough successful samples) return the state unchanged.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace

from binder_py.answer import Answer
from binder_py.pipeline.choose import choose
from binder_py.pipeline.link import link
from binder_py.pipeline.plan import plan
from binder_py.pipeline.prompt import build_prompt
from binder_py.pipeline.propose import propose
from binder_py.pipeline.repair import repair
from binder_py.pipeline.rescope import rescope
from binder_py.pipeline.run import run
from binder_py.pipeline.sample import sample
from binder_py.pipeline.settings import MODES, VOTE_STRATEGIES, AskSettings
from binder_py.pipeline.state import QuestionState, Services
from binder_py.pipeline.vote import vote_candidates

Stage = Callable[[QuestionState], QuestionState]

STAGES: tuple[Stage, ...] = (build_prompt, sample, propose, plan, run, link, repair, rescope, choose,
                              vote_candidates)


def answer_question(state: QuestionState, stages: tuple[Stage, ...] = STAGES) -> Answer:
    """Run ``state`` through ``stages``; each stage's seconds are recorded under its name."""
    for stage in stages:
        started = time.perf_counter()
        state = stage(state)
        state = state.evolve(timings={**state.timings, stage.__name__: time.perf_counter() - started})
    if state.answer is None:
        raise RuntimeError("the pipeline ended without a vote stage")
    return replace(state.answer, timings=dict(state.timings))


__all__ = ["AskSettings", "MODES", "QuestionState", "STAGES", "Services", "Stage", "VOTE_STRATEGIES",
           "answer_question"]
