"""Stage: propose (mode ``discriminate``, after Pangu): instead of sampling programs freely, a
symbolic proposer grows valid Binder-Python programs over the table and the model scores each
step's options (:mod:`binder_py.discriminate.proposer`); the best programs become candidates
that run and vote like sampled ones, weighted by their scores."""

from __future__ import annotations

from collections.abc import Mapping

from binder_py.answer import Candidate
from binder_py.lm.types import Completion, LanguageModel, LMRequest, Usage
from binder_py.discriminate.proposer import ProposerSettings, propose as propose_programs
from binder_py.pipeline.state import QuestionState


class _CountingLM:
    """The program-writing model, adding up the usage of the proposer's scoring requests."""

    def __init__(self, lm: LanguageModel):
        self.lm, self.usage = lm, Usage()
        self.name, self.context_window, self.capabilities = lm.name, lm.context_window, lm.capabilities

    def complete(self, request: LMRequest, *, purpose: str = "", tags: Mapping[str, str] | None = None) -> Completion:
        completion = self.lm.complete(request, purpose=purpose, tags=tags)
        self.usage += completion.usage
        return completion

    async def acomplete(self, request: LMRequest, *, purpose: str = "",
                        tags: Mapping[str, str] | None = None) -> Completion:
        completion = await self.lm.acomplete(request, purpose=purpose, tags=tags)
        self.usage += completion.usage
        return completion

    def count_tokens(self, text: str) -> int:
        return self.lm.count_tokens(text)

    def close(self) -> None:
        """The wrapped model belongs to the caller."""


def propose(state: QuestionState) -> QuestionState:
    if state.settings.mode != "discriminate":
        return state
    state.services.say(f"proposing programs over the table; {state.lm.name} scores each step")
    counted = _CountingLM(state.lm)
    proposal = propose_programs(counted, state.table, state.question, title=state.title,
                                shape=state.profile.answer_shape(state.question))
    candidates = tuple(Candidate(program=p.code, count=1, origin="propose", sample_orders=(p.rank,),
                                 mean_logprob=p.score) for p in proposal.programs)
    warnings = tuple(w for step in proposal.steps for w in step.warnings)
    if state.settings.n is not None:  # n=... (--n) was given: say that it does not apply here
        warnings += (f"n={state.settings.n} is not used in discriminate mode: the proposer builds its programs "
                     f"itself (at most {ProposerSettings().max_programs}) instead of sampling n of them",)
    if not candidates:
        warnings += ("the proposer found no program for this question over this table",)
    return state.evolve(candidates=state.candidates + candidates, proposal=proposal,
                        usage=state.usage + counted.usage, warnings=state.warnings + warnings)
