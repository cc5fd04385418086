"""Stage 2, sample: n completions of the prompt become candidates.

In program modes identical programs (same AST) become one candidate that keeps its count
and sample positions; in ``e2e`` mode every completion is a direct answer.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from dataclasses import replace

from binder_py.answer import Candidate
from binder_py.errors import BinderError
from binder_py.grammar import build_program_grammar
from binder_py.language.program import PARSE_LOCK
from binder_py.lm.types import Completion, LMContextTooLong, LMRequest
from binder_py.pipeline.state import QuestionState
from binder_py.prompting import e2e_request, extract_program, parse_e2e_answer, parse_request


def program_identity(program: str) -> str:
    """Two programs are the same candidate when their ASTs are (formatting and comments ignored)."""
    try:
        with PARSE_LOCK:
            tree = ast.parse(program)
        return ast.dump(tree)
    except (SyntaxError, ValueError, RecursionError):
        return program.strip()


def complete(state: QuestionState, request: LMRequest, purpose: str) -> tuple[Completion, QuestionState]:
    """Send ``request`` to the program-writing model; its usage is added to the state's."""
    lm = state.lm
    try:
        completion = lm.complete(request, purpose=purpose, tags=state.tags)
    except LMContextTooLong as error:
        raise BinderError(f"the prompt does not fit {lm.name}'s context ({error}); use a model with a "
                          "longer context, fewer shots (--shots) or a smaller table") from error
    return completion, state.evolve(usage=state.usage + completion.usage)


def program_request(state: QuestionState, prompt: str, *, n: int, temperature: float | None = None,
                    messages: Sequence[tuple[str, str]] | None = None) -> LMRequest:
    """The request for ``n`` programs; with :attr:`QuestionState.constrained`, under the grammar of
    the table's columns (a chat model shown one user message writes a fenced block)."""
    settings = state.settings
    request = parse_request(prompt, task=state.profile.name, chat=state.lm.capabilities.chat, n=n,
                            temperature=settings.temperature if temperature is None else temperature,
                            max_tokens=state.max_tokens, seed=settings.seed,
                            logprobs=state.vote_strategy in ("probability", "likelihood"), messages=messages)
    if not state.constrained:
        return request
    fenced = state.lm.capabilities.chat and not messages
    grammar = build_program_grammar(state.column_names, table_names=("df", "table"), fenced=fenced)
    return replace(request, grammar=grammar, stop=() if not fenced else request.stop)


def group_programs(programs: Sequence[tuple[str, float | None]], *, origin: str = "sample",
                   first_order: int = 0, group: bool = True) -> list[Candidate]:
    """Identical programs become one candidate with their count, sample positions and mean
    log-probability (``group=False``: one candidate per sample, as the original Binder ran them)."""
    if not group:
        return [Candidate(program=p, count=1, origin=origin, sample_orders=(first_order + i,), mean_logprob=lp)
                for i, (p, lp) in enumerate(programs)]
    groups: dict[str, Candidate] = {}
    logprobs: dict[str, list[float]] = {}
    for offset, (program, logprob) in enumerate(programs):
        identity = program_identity(program)
        if identity in groups:
            existing = groups[identity]
            groups[identity] = replace(existing, count=existing.count + 1,
                                       sample_orders=existing.sample_orders + (first_order + offset,))
        else:
            groups[identity] = Candidate(program=program, count=1, origin=origin,
                                         sample_orders=(first_order + offset,))
        if logprob is not None:
            logprobs.setdefault(identity, []).append(logprob)
    out = []
    for identity, candidate in groups.items():
        values = logprobs.get(identity)
        out.append(replace(candidate, mean_logprob=sum(values) / len(values) if values else None))
    return out


def sample(state: QuestionState) -> QuestionState:
    if state.settings.mode == "discriminate":
        return state  # candidates come from the proposer
    if state.settings.mode == "e2e":
        return _sample_answers(state)
    prompt, n = state.prompt, state.n
    # the model's own count, or binder-py's estimate (3 characters a token), which the usage the server
    # reports afterwards does not repeat: said so, not given as the count
    tokens = f"{prompt.prompt_tokens} prompt tokens" if state.lm.capabilities.exact_tokens else \
        f"about {prompt.prompt_tokens} prompt tokens, estimated"
    state.services.say(f"writing {n} candidate program(s) with {state.lm.name} ({tokens})")
    completion, state = complete(state, program_request(state, prompt.text, n=n, messages=prompt.messages),
                                 "parse")
    candidates = group_programs([(extract_program(c.text), c.mean_logprob) for c in completion.choices],
                                group=state.settings.group_identical)
    if not any(c.program.strip() for c in candidates):
        raise BinderError(f"the model {state.lm.name} returned no usable program "
                          f"({len(completion.choices)} completion(s), all empty); try another model or a larger n")
    return state.evolve(candidates=tuple(candidates))


def _sample_answers(state: QuestionState) -> QuestionState:
    """End-to-end: one greedy answer, or ``n`` sampled ones when n > 1 was asked for."""
    settings = state.settings
    request = e2e_request(state.prompt.text, chat=state.lm.capabilities.chat, seed=settings.seed)
    if settings.n is not None and settings.n > 1:
        request = replace(request, n=settings.n, temperature=settings.temperature
                          if settings.temperature is not None else state.profile.temperature)
    completion, state = complete(state, request, "e2e")
    candidates = tuple(Candidate(program=f"A: {choice.text.strip()}", count=1, origin="e2e", sample_orders=(order,),
                                 mean_logprob=choice.mean_logprob, direct_value=parse_e2e_answer(choice.text))
                       for order, choice in enumerate(completion.choices))
    return state.evolve(candidates=candidates)
