"""Stage 4, run: every candidate program runs in the sandbox, its neural calls answered by the
neural backend through the question's shared cache (or a fresh one per program, as the original).
The programs start while the plan stage's requests are still out (their planned calls wait for
the plan's answers); the finished plan is then folded into the state."""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace

from tqdm import tqdm

from binder_py.answer import Candidate
from binder_py.language import ProgramRun, execute, parse_program
from binder_py.neural import NeuralCache
from binder_py.pipeline.empty_sums import is_zero, selection_probe, sum_of_nothing
from binder_py.pipeline.plan import mentions_neural, settle_plan
from binder_py.pipeline.state import QuestionState


def start_priority(program: str) -> int:
    """Which candidates start first (lowest first): those with an ``f_val`` (its context is often
    a sub-table the program builds, so its request is not planned and goes out when the program
    reaches it), then the other neural programs (their planned calls wait for the plan), then
    plain pandas."""
    try:
        sites = parse_program(program).sites
    except Exception:  # noqa: BLE001 - a broken program fails when it runs, with its own message
        return 2
    if any(site.kind == "val" for site in sites):
        return 0
    return 1 if sites else 2


#: the most characters of a program quoted before the warnings of its run
_LABEL_CHARS = 60


def program_label(program: str) -> str:
    """Which program a run's warning is about, in the answer's warnings (where every candidate's
    run warnings land, the losers' too: "site 0 (line 1): ..." alone read as the winner's)."""
    lines = [line.strip() for line in program.strip().splitlines() if line.strip()]
    text = " ".join(lines)
    shown = text if len(text) <= _LABEL_CHARS else text[:_LABEL_CHARS - 1].rstrip() + "…"
    return f"in program `{shown}`"


def labelled_warnings(candidates: Sequence[Candidate], runs: Sequence[ProgramRun]) -> tuple[str, ...]:
    """The runs' warnings for the answer, each once, saying which program it is about (``in program
    `...`: ``) or, when several programs gave it, how many (``in 3 programs: ``)."""
    programs_of: dict[str, list[str]] = {}
    for candidate, run_ in zip(candidates, runs):
        for warning in run_.warnings:
            programs_of.setdefault(warning, []).append(candidate.program)
    return tuple((program_label(programs[0]) if len(set(programs)) == 1 else f"in {len(set(programs))} programs")
                 + f": {warning}" for warning, programs in programs_of.items())


def summed_something(run: ProgramRun, run_program: Callable[[str], ProgramRun]) -> ProgramRun:
    """``run``, or a failure when it answered 0 by summing no rows (:mod:`binder_py.pipeline.empty_sums`:
    the program's sum counted by one more run, ``run_program``)."""
    if not run.ok or not is_zero(run.value):
        return run
    probe = selection_probe(run.program)
    if probe is None:
        return run
    program, selection = probe
    counted = run_program(program)
    return sum_of_nothing(run, selection) if counted.ok and is_zero(counted.value) else run


def run_programs(state: QuestionState, candidates: Sequence[Candidate]) -> tuple[tuple[Candidate, ...], QuestionState]:
    """``candidates`` with their runs, and the state with the runs' usage and warnings."""
    settings, services = state.settings, state.services
    allow_neural = state.neural_allowed
    neural = services.neural() if allow_neural and any(mentions_neural(c.program) for c in candidates) else None
    sandbox = services.sandbox()

    def run_program(program: str) -> ProgramRun:
        cache = services.neural_cache if settings.share_neural_cache else NeuralCache()
        return execute(program, state.table, neural=neural, sandbox=sandbox, title=state.title,
                       cache=cache, allow_neural=allow_neural, prefetch=settings.prefetch, tables=state.tables)

    # a sum over no rows answers nothing, except to "how many …?", where nothing counts 0 (and vote rule 0
    # sets a count of 0 aside when another program counted more)
    counts = state.profile.answer_shape(state.question).expects_number

    def run_one(candidate: Candidate) -> ProgramRun:
        run_ = run_program(candidate.program)
        return run_ if counts else summed_something(run_, run_program)

    runs_of: dict[int, ProgramRun] = {}
    # a terminal clears the bar when it is done; a log (stderr not a terminal) keeps its last state, ended,
    # so that what is printed next does not follow the bar's carriage returns on the same line
    bar = tqdm(total=len(candidates), desc="running programs", unit="prog", file=sys.stderr,
               disable=not services.progress, leave=not sys.stderr.isatty())
    order = sorted(range(len(candidates)), key=lambda i: start_priority(candidates[i].program))
    with ThreadPoolExecutor(max_workers=min(settings.concurrency, max(1, len(candidates)))) as pool:
        futures = {i: pool.submit(run_one, candidates[i]) for i in order}
        for i in order:
            runs_of[i] = futures[i].result()
            bar.update(1)
    bar.close()
    runs = [runs_of[i] for i in range(len(candidates))]
    state = settle_plan(state)
    done = tuple(replace(c, run=r) for c, r in zip(candidates, runs))
    usage = sum((r.usage for r in runs), state.usage)
    warnings = state.warnings + labelled_warnings(candidates, runs)
    return done, state.evolve(usage=usage, warnings=warnings,
                              neural_name=neural.name if neural is not None else state.neural_name)


def run(state: QuestionState) -> QuestionState:
    programs = [c for c in state.candidates if c.origin != "e2e"]
    if not programs:
        return settle_plan(state)
    done, state = run_programs(state, programs)
    return state.evolve(candidates=done)
