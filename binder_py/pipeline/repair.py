"""Stage 6, repair (execution-guided decoding): when fewer than k samples succeeded, or none answered
in the question's shape (rule 0 of the vote: not a number where it asks which or who, not a bare
yes/no ...), the most sampled failing programs go back to the model with their error, once each
(greedily; when that gives the failed program again or nothing, once more for two samples at
temperature 0.8), then those that answered otherwise, with what is wrong with their answer; the new
programs are planned and run like the samples."""

from __future__ import annotations

import math
from dataclasses import replace

from binder_py.answer import Candidate
from binder_py.errors import BinderError
from binder_py.pipeline.error_hints import error_hints
from binder_py.pipeline.link import link_from
from binder_py.pipeline.literal_hints import literal_hints
from binder_py.pipeline.plan import plan_candidates
from binder_py.pipeline.prompt import parse_prompt
from binder_py.pipeline.run import run_programs
from binder_py.pipeline.sample import complete, program_identity, program_request
from binder_py.pipeline.state import QuestionState
from binder_py.lm.types import Completion
from binder_py.prompting import BuiltPrompt, build_repair_prompt, extract_program

#: when the greedy repair writes the failed program again (the embedded model did for 35–50% of its
#: repair requests in the twentieth session's runs), it is asked once more for this many samples at
#: this temperature, and the first new program is taken
RETRY_SAMPLES = 2
RETRY_TEMPERATURE = 0.8


def _new_program(completion: Completion, known: set[str]) -> tuple[str, float | None] | None:
    """The completion's first program that is not empty and not one already tried, with its mean
    log-probability."""
    for choice in completion.choices:
        program = extract_program(choice.text)
        if program.strip() and program_identity(program) not in known:
            return program, choice.mean_logprob
    return None


def repair_request(error_message: str) -> str:
    """What a chat model is told after its program failed (the error, then a request for a fix)."""
    return (f"That program failed: {error_message}\nWrite a corrected program for the same question and table: "
            "only the code, no explanation, no blank lines.")


def failure_message(candidate: Candidate, state: QuestionState | None = None) -> str:
    """What went wrong, and (with ``state``) which compared strings no row holds
    (:mod:`binder_py.pipeline.literal_hints`) and what the error means for the columns the program reads
    (:mod:`binder_py.pipeline.error_hints`)."""
    error = candidate.error
    misfit = state.misfit(candidate) if state is not None else None
    if error is not None:
        where = f" (line {error.line})" if error.line else ""
        message = f"{error.kind} error{where}: {error.message}"
    elif misfit is not None:
        shown = repr(candidate.value)
        shown = shown if len(shown) <= 80 else shown[:77] + "..."
        message = f"the program answered {shown}, which does not answer the question as asked: {misfit}"
    else:
        message = "the program returned an empty result (None, NaN, an empty table or an empty list)"
    if state is not None:
        tables = {"df": state.table, "table": state.table, **state.tables}
        hints = literal_hints(candidate.program, tables)
        if error is not None:
            hints += [hint for hint in error_hints(candidate.program, error.message, tables) if hint not in hints]
        message += "".join(f"\n{hint}" for hint in hints)
    return message


#: tokens a tokenizer may count more for the prompt and the repair text joined than for the two apart
_JOIN_TOKENS = 8


#: a refitted prompt leaves room in steps of this many tokens, so the failed programs of a question share
#: a few refits instead of one each
_REFIT_STEP = 256


def repair_prompt(state: QuestionState, prompt: BuiltPrompt, program: str, message: str,
                  refits: dict[int, BuiltPrompt] | None = None) -> tuple[BuiltPrompt, str]:
    """The prompt a failed program is repaired from, and the repair prompt's text. When the question's
    prompt filled the context (a long table shown to an API model), the failed program and its error do
    not fit after it: the prompt is fitted again with room for them (fewer rows or exemplars), so that a
    long table is still repaired. ``refits`` (by room left) keeps the refitted prompts of one question."""
    lm = state.lm
    window = lm.context_window or None
    try:
        return prompt, build_repair_prompt(prompt, program, message, count_tokens=lm.count_tokens,
                                           context_window=window, max_output_tokens=state.max_tokens)
    except BinderError:
        if window is None:
            raise
    added = lm.count_tokens(build_repair_prompt(prompt, program, message)) - lm.count_tokens(prompt.text)
    needed = state.max_tokens + added + _JOIN_TOKENS
    room = -(-needed // _REFIT_STEP) * _REFIT_STEP
    refits = {} if refits is None else refits
    try:
        base = refits[room] if room in refits else refits.setdefault(room, parse_prompt(state, room))
    except BinderError:  # the rounded room does not fit where the room needed may
        base = parse_prompt(state, needed)
    return base, build_repair_prompt(base, program, message, count_tokens=lm.count_tokens, context_window=window,
                                     max_output_tokens=state.max_tokens)


def repair(state: QuestionState) -> QuestionState:
    settings, lm, prompt = state.settings, state.lm, state.prompt
    candidates = state.standing()  # a linked version that answered stands for its source, with its count
    n = sum(c.count for c in candidates)
    if not candidates or settings.repair_attempts <= 0 or prompt is None:
        return state  # (no parse prompt: the proposer's programs are valid by construction)
    k = settings.repair_below if settings.repair_below is not None else max(1, math.ceil(n / 4))
    misfits = [c for c in candidates if state.misfit(c) is not None]  # answered, but not as the question asks
    succeeded = sum(c.count for c in candidates if state.succeeded(c))
    if succeeded >= k and succeeded > sum(c.count for c in misfits):
        return state  # (enough answers, and one at least of the question's shape)
    index_of = {id(c): i for i, c in enumerate(state.candidates)}
    failing = sorted((c for c in candidates if not state.succeeded(c)), key=lambda c: -c.count)
    failing = (failing + sorted(misfits, key=lambda c: -c.count))[: settings.repair_attempts]
    if not failing:
        return state
    state.services.say(f"{succeeded} of {n} program(s) succeeded; repairing {len(failing)}")
    known = {program_identity(c.program) for c in state.candidates}
    chat = lm.capabilities.chat and prompt.messages
    repaired: list[Candidate] = []
    order = n
    warnings = state.warnings
    unused = 0  # repair requests whose program was empty or one already tried
    refits: dict[int, BuiltPrompt] = {}  # the question's prompt fitted again, by room left (long tables)
    for candidate in failing:
        message = failure_message(candidate, state)
        try:
            base, text = repair_prompt(state, prompt, candidate.program, message, refits)
        except BinderError as error:
            warnings += (f"repair skipped: {error}",)
            continue
        # a chat model sees its own program as its turn and the error as the user's reply
        turns = base.messages + (("assistant", candidate.program), ("user", repair_request(message))) \
            if chat and base.messages else None
        request = program_request(state, text, n=1, temperature=0.0, messages=turns)
        completion, state = complete(state, request, "repair")
        found = _new_program(completion, known)
        if found is None:  # the greedy fix was the failed program again (or nothing): two sampled tries
            completion, state = complete(state, replace(request, n=RETRY_SAMPLES, temperature=RETRY_TEMPERATURE),
                                         "repair")
            found = _new_program(completion, known)
        if found is None:
            unused += 1
            continue
        program, mean_logprob = found
        known.add(program_identity(program))
        repaired.append(Candidate(program=program, count=1, origin="repair", sample_orders=(order,),
                                  mean_logprob=mean_logprob, repaired_from=index_of[id(candidate)]))
        order += 1
    if unused:
        warnings += (f"repair: {unused} of {len(failing)} failing program(s) got no new program back (an empty one, "
                     f"or one already tried, greedily and in {RETRY_SAMPLES} samples), so they added no candidate",)
    state = state.evolve(warnings=warnings)
    if not repaired:
        return state
    state = plan_candidates(state, repaired)
    done, state = run_programs(state, repaired)
    added = len(state.candidates)
    return link_from(state.evolve(candidates=state.candidates + done), added)
