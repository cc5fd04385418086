"""Stage 5, link (value linking): a program that compared a column with a value no cell holds is
run again with that value replaced by the one cell it unmistakably means
(:func:`binder_py.pipeline.literal_links.link_literals`: ``"naanmugan"`` → ``"naanmugan
thiruvandhadhi"``, ``"2005"`` → ``2005``); a program that joined comparisons with ``&``/``|``
without parentheses (``df["a"] == "x" & df["b"] == "y"``, which Python reads as a chained
comparison) is run again with them regrouped as meant (:mod:`binder_py.pipeline.precedence`); and a
program that orders a text column whose cells write numbers, durations or dates (``$14.90`` before
``$8.00`` as text) is run again with that column ordered by value
(:func:`binder_py.pipeline.text_order.order_by_value`); and a program that adds, averages or does other
arithmetic with a text column whose cells write amounts (``$124,000``: a sum joins the text) is run
again with that column read as its numbers (:func:`binder_py.pipeline.text_numbers.read_as_numbers`);
and a program that filters a table's rows with a one-value neural call over its columns
(``df[f_val("Is the surface hard?", "Surface")]``, which looks up a column named True) is run again
with that call asked of every row, as ``f_col`` (:mod:`binder_py.pipeline.row_filters`; not in
python mode).

The linked program is a new candidate (origin ``link``, ``repaired_from`` its source, the
source's count and sample positions): when it answers, it votes in its source's place unless the
source answered a bare yes/no (:func:`binder_py.answer.superseded_by_links`), since a filter on a value
no row holds selects nothing, a count over it answers 0 and what is computed from it is no answer.
Before repair, so that a program fixed here is not sent back to the model; repair links the programs
it adds the same way (:func:`link_from`), since a repaired program may compare a value no cell holds
too. No model call is spent on finding the link;
the linked program's neural calls (if any) are planned and run like the samples'.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from binder_py.answer import Candidate
from binder_py.language.negation import negated_terms, negated_words, negation_polarity
from binder_py.normalize import normalize_answer
from binder_py.pipeline.literal_links import link_literals
from binder_py.pipeline.negation_links import restore_negation
from binder_py.pipeline.plan import plan_candidates
from binder_py.pipeline.precedence import regroup_comparisons
from binder_py.pipeline.row_filters import as_row_filters
from binder_py.pipeline.run import run_programs
from binder_py.pipeline.sample import program_identity
from binder_py.pipeline.state import QuestionState
from binder_py.pipeline.text_numbers import read_as_numbers
from binder_py.pipeline.text_order import order_by_value


def link(state: QuestionState) -> QuestionState:
    return link_from(state, 0)


#: a program with its comparisons regrouped and the notes saying how (None: nothing to regroup)
Regrouped = tuple[str, tuple[str, ...]] | None
Regrouping = Callable[[str], Regrouped]


def _restorable_negation(state: QuestionState, regrouped_of: Regrouping) -> frozenset[str]:
    """The stems of the words the question negates, when no candidate that keeps that negation answered
    (as written, or with its comparisons regrouped: ``regrouped_of``); empty otherwise
    (:mod:`binder_py.pipeline.negation_links`)."""
    terms = negated_terms(state.question)
    if not terms:
        return terms
    for candidate in state.candidates:
        if not candidate.ok or normalize_answer(candidate.value).is_empty:
            continue
        regrouped = regrouped_of(candidate.program)
        programs = (candidate.program,) if regrouped is None else (candidate.program, regrouped[0])
        if any(negation_polarity(program, state.question, terms) == "keeps" for program in programs):
            return frozenset()
    return terms


def link_from(state: QuestionState, start: int) -> QuestionState:
    """Link the candidates from position ``start`` on (the stage: all of them; repair: the ones it added)."""
    if not state.settings.link_literals:
        return state
    tables = {"df": state.table, "table": state.table, **state.tables}
    ran = {program_identity(c.program): c.run for c in state.candidates if c.run is not None}
    to_run: dict[str, Candidate] = {}  # each distinct linked program that no candidate ran, run once
    waiting: list[Candidate] = []  # links whose program another candidate ran or runs: its run stands for them
    columns: dict[tuple[str, str], Any] = {}  # each compared column's values, read once for all the programs
    orders: dict[tuple[str, str], list[str] | None] = {}  # each ordered column's value order, read once too
    readings: dict[tuple[str, str], Any] = {}  # each column of amounts' numbers, read once too
    regroupings: dict[str, Regrouped] = {}  # each program regrouped once, for the negation check and the rewrite

    def regrouped_of(program: str) -> Regrouped:
        if program not in regroupings:
            regroupings[program] = regroup_comparisons(program)
        return regroupings[program]

    negated = _restorable_negation(state, regrouped_of) if state.neural_allowed else frozenset()
    negated_text = ", ".join(negated_words(state.question)) if negated else ""
    for index, candidate in enumerate(state.candidates):
        if index < start or candidate.origin in ("e2e", "link") or candidate.run is None:
            continue
        as_filters = as_row_filters(candidate.program, tables) if state.neural_allowed else None
        program, notes = as_filters if as_filters is not None else (candidate.program, ())
        regrouped = regrouped_of(program)
        if regrouped is not None:
            program, regroup_notes = regrouped
            notes += regroup_notes
        restored = restore_negation(program, negated, negated_text)
        if restored is not None:
            program, negation_notes = restored
            notes += negation_notes
        try:
            found = link_literals(program, tables, columns)
        except (ValueError, OverflowError, RecursionError, MemoryError):
            found = None  # a literal no rule can read (a 400-digit number ...): the literals stay as written
        if found is not None:
            program, links = found
            notes += tuple(link.describe() for link in links)
        as_numbers = read_as_numbers(program, tables, readings)
        if as_numbers is not None:
            program, number_notes = as_numbers
            notes += number_notes
        ordered = order_by_value(program, tables, orders)
        if ordered is not None:
            program, order_notes = ordered
            notes += order_notes
        if not notes:
            continue
        sibling = Candidate(program=program, count=candidate.count, origin="link",
                            sample_orders=candidate.sample_orders, mean_logprob=candidate.mean_logprob,
                            repaired_from=index, links=notes)
        identity = program_identity(program)
        if identity in ran or identity in to_run:
            waiting.append(sibling)
        else:
            to_run[identity] = sibling
    if not to_run and not waiting:
        return state
    state.services.say(f"running {len(to_run) + len(waiting)} program(s) again as the link stage rewrote them: a "
                       "one-value call asked of every row, values linked to the cells they mean, comparisons "
                       "regrouped, a dropped negation restored, text read as its numbers or ordered by value")
    linked: list[Candidate] = []
    if to_run:
        state = plan_candidates(state, list(to_run.values()))
        done, state = run_programs(state, list(to_run.values()))
        linked += done
        ran.update({program_identity(c.program): c.run for c in done})
    linked += [replace(c, run=ran[program_identity(c.program)]) for c in waiting]
    ordered = sorted(linked, key=lambda c: c.repaired_from if c.repaired_from is not None else -1)
    return state.evolve(candidates=state.candidates + tuple(ordered))
