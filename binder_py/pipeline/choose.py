"""Stage 8, choose: a question that offers options ("which player is taller, paul george or greg
smith?") that no program answered with one of them is asked once of the rows that hold the options,
with the options as the only answers the model may give.

Small models often answer such a question with what their program computed on the way — a height,
``True`` for "the first is taller", a date — and the vote then sets every answer aside or reports one
of the wrong shape (rule 0 of :mod:`binder_py.vote`): in the seeded 100-question unsolvable-squall
sample, the embedded 1.5B model's programs named no option in 9 of its 12 choice questions. Binder's
answer to what a program cannot compute is a neural call, so this stage writes one:

    f_val("which player is taller, paul george or greg smith? Answer with one of: paul george or
    greg smith", df[df["Player"].isin(["paul george", "greg smith"])])

The options are the table's own cells: the cells of one text column that the question names whole
(:func:`binder_py.discriminate.question.mentioned_values`), or the numbers it names that are cells
of one numeric column ("which had more ger numbers, 1898 or 1893?"), at least one before its last
"or" and one after it, at most six ("does der liebeswalzer or manöverkinder contain more acts?" → the two
titles, where the question's words alone would give "does der liebeswalzer"). The call's answer
type is then a choice among them (:func:`binder_py.neural.answer_types.question_answer_type`),
enforced by the grammar where the model takes one and by the parser everywhere. The candidate
(origin ``choose``, after the samples) is planned, run and voted like the others.

Not when a program already named an option, when the options are not cells of one column (or a
cell holds a comma, which would split an option), in python mode (no neural calls), for a statement
to verify (TabFact: it wants a verdict), or with several tables; ``Binder(..., rescope=False)`` turns it off with the rescope stage, its sibling.
"""

from __future__ import annotations

import re
from typing import Any

import pandas as pd

from binder_py.answer import Candidate
from binder_py.discriminate.question import mentioned_values, words
from binder_py.normalize import is_choice_question, names_option
from binder_py.pipeline.plan import plan_candidates
from binder_py.pipeline.run import run_programs
from binder_py.pipeline.state import QuestionState

__all__ = ["choose", "linked_options", "choice_program"]

#: at most this many options (the answer type's own bound)
MAX_OPTIONS = 6


def linked_options(table: pd.DataFrame, question: str) -> tuple[str, tuple[Any, ...]] | None:
    """The column and the cells of it that the question offers as options (see the module docstring),
    in the order the question names them (texts, or numbers of a numeric column: "which had more ger
    numbers, 1898 or 1893?"); None when there are no such cells."""
    text = " ".join(words(question))
    ors = [m.start() for m in re.finditer(r"\bor\b", text)]
    if not ors:
        return None
    last_or = ors[-1]
    by_column: dict[str, list[tuple[int, Any]]] = {}
    for mention in mentioned_values(table, question, limit=50):
        if mention.strength < 1.0 or not isinstance(mention.value, str) or "," in mention.value:
            continue
        phrase = " ".join(words(mention.value))
        position = re.search(rf"(?<!\w){re.escape(phrase)}(?!\w)", text)
        if position is None or position.start() <= last_or < position.end():
            continue
        by_column.setdefault(str(mention.column), []).append((position.start(), mention.value))
    for column in table.columns:  # numbers the question names that are cells of a numeric column
        series = table[column]
        if not pd.api.types.is_numeric_dtype(series) or pd.api.types.is_bool_dtype(series):
            continue
        cells = set(series.dropna().tolist())
        for match in re.finditer(r"(?<![\w.,])\d+(?:\.\d+)?(?![\w.]|,\d)", text):
            number = float(match.group(0))
            if number in cells and not match.start() <= last_or < match.end():
                value = int(number) if number.is_integer() else number
                by_column.setdefault(str(column), []).append((match.start(), value))  # type: ignore[arg-type]
    best: tuple[str, tuple[Any, ...]] | None = None
    for column, found in by_column.items():
        found.sort()
        cells = tuple(dict.fromkeys(value for _, value in found))
        before = any(start < last_or for start, _ in found)
        after = any(start > last_or for start, _ in found)
        if before and after and 2 <= len(cells) <= MAX_OPTIONS and (best is None or len(cells) > len(best[1])):
            best = (column, cells)
    return best


def choice_program(question: str, column: str, options: tuple[Any, ...]) -> str:
    """The ``f_val`` call that asks ``question`` of the rows holding ``options``, with them as its answers."""
    listed = ", ".join(str(o) for o in options[:-1]) + f" or {options[-1]}"
    asked = f"{question.strip().rstrip('?.! ')}? Answer with one of: {listed}"
    return f"f_val({asked!r}, df[df[{column!r}].isin({list(options)!r})])"


def choose(state: QuestionState) -> QuestionState:
    if not state.settings.rescope or not state.neural_allowed or state.tables or state.profile.statements:
        return state  # (a statement to verify wants a verdict, whatever "or" it holds)
    question = state.question
    if not is_choice_question(question):
        return state
    if any(c.ok and names_option(question, c.value) for c in state.standing()):
        return state
    linked = linked_options(state.table, question)
    if linked is None:
        return state
    program = choice_program(question, *linked)
    if any(c.program == program for c in state.candidates):
        return state
    order = 1 + max((o for c in state.candidates for o in c.sample_orders), default=-1)
    candidate = Candidate(program=program, count=1, origin="choose", sample_orders=(order,))
    state.services.say(f"no program answered with one of the question's options ({', '.join(map(str, linked[1]))}); "
                       "asking the model to choose among them")
    state = plan_candidates(state, [candidate])
    done, state = run_programs(state, [candidate])
    return state.evolve(candidates=state.candidates + tuple(done))
