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
of one numeric column ("which had more ger numbers, 1898 or 1893?"), that make the run "A, B … or C"
around its last "or" (two to six of them: "roy hibbert" in "compared with roy hibbert, which player
is taller, paul george or greg smith?" is no option), or else the ones inside the options the
question's wording offers, one each ("…: fabiana de oliveira, helia souza, or sheilla castro?" when
"helia souza" is no whole cell) ("does der liebeswalzer or manöverkinder contain more acts?" → the two
titles, where the question's words alone would give "does der liebeswalzer"). The call's answer
type is then a choice among them (:func:`binder_py.neural.answer_types.question_answer_type`),
enforced by the grammar where the model takes one and by the parser everywhere. The candidate
(origin ``choose``, after the samples) is planned, run and voted like the others.

Not when a program already answered with one of the options (another value the question names,
"denmark" for "is denmark better against sweden or england?", is no option), when the options are not cells of one column (or a
cell holds a comma, which would split an option), in python mode (no neural calls), for a statement
to verify (TabFact: it wants a verdict), or with several tables; ``Binder(..., rescope=False)`` turns it off with the rescope stage, its sibling.
"""

from __future__ import annotations

import re
from typing import Any

import pandas as pd

from binder_py.answer import Candidate
from binder_py.discriminate.question import mentioned_values, words
from binder_py.neural.answer_types import question_answer_type
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
    text = " ".join(words(question))  # (punctuation is dropped: options run "a b or c")
    ors = [m.start() for m in re.finditer(r"\bor\b", text)]
    if not ors:
        return None
    last_or = ors[-1]
    by_column: dict[str, list[tuple[int, int, Any]]] = {}
    for mention in mentioned_values(table, question, limit=50):
        if mention.strength < 1.0 or not isinstance(mention.value, str) or "," in mention.value:
            continue
        phrase = " ".join(words(mention.value))
        for position in re.finditer(rf"(?<!\w){re.escape(phrase)}(?!\w)", text):
            by_column.setdefault(str(mention.column), []).append((position.start(), position.end(), mention.value))
    for column in table.columns:  # numbers the question names that are cells of a numeric column
        series = table[column]
        if not pd.api.types.is_numeric_dtype(series) or pd.api.types.is_bool_dtype(series):
            continue
        cells = set(series.dropna().tolist())
        for match in re.finditer(r"(?<![\w.])\d+(?:\.\d+)?(?![\w.])", text):
            number = float(match.group(0))
            if number in cells:
                value = int(number) if number.is_integer() else number
                by_column.setdefault(str(column), []).append((match.start(), match.end(), value))
    spans = _choice_spans(question, text)
    best: tuple[str, tuple[Any, ...]] | None = None
    for column, found in by_column.items():
        # "kansas" inside "kansas state" is no mention of its own
        found = [m for m in found if not any(o != m and o[0] <= m[0] and m[1] <= o[1] for o in found)]
        chain = _options_around(text, sorted(found), last_or) or _options_within(sorted(found), spans)
        if chain is not None and (best is None or len(chain) > len(best[1])):
            best = (column, chain)
    return best


def _choice_spans(question: str, text: str) -> list[tuple[int, int]]:
    """Where in ``text`` (the question's words) the options the question's wording offers lie
    (:func:`binder_py.neural.answer_types.question_answer_type`: "…: a, b, or c?" → a, b, c)."""
    answer_type = question_answer_type(question)
    spans = []
    for choice in answer_type.choices:
        phrase = " ".join(words(choice))
        found = re.search(rf"(?<!\w){re.escape(phrase)}(?!\w)", text) if phrase else None
        if found is not None:
            spans.append(found.span())
    return spans


def _options_within(found: list[tuple[int, int, Any]], spans: list[tuple[int, int]]) -> tuple[Any, ...] | None:
    """The mentions inside the options the wording offers, at most one each, one of them in the last
    ("whose weight is the heaviest among the following: fabiana de oliveira, helia souza, or sheilla
    castro?", where "helia souza" is no whole cell: the other two); None unless 2 to :data:`MAX_OPTIONS`."""
    if len(spans) < 2:
        return None
    picked: list[Any] = []
    for start, end in spans:
        inside = [value for s, e, value in found if start <= s and e <= end]
        if len(set(inside)) == 1:
            picked.append(inside[0])
        elif len(set(inside)) > 1:
            return None  # an option that names two cells: which one is meant is unclear
    if not picked or not any(spans[-1][0] <= s and e <= spans[-1][1] for s, e, _ in found):
        return None
    cells = tuple(dict.fromkeys(picked))
    return cells if 2 <= len(cells) <= MAX_OPTIONS else None


def _options_around(text: str, found: list[tuple[int, int, Any]], last_or: int) -> tuple[Any, ...] | None:
    """The run of mentions ``A B … or C`` around the last "or": the first mention after it, and the ones
    before it that only spaces (and that "or") separate; None unless there are 2 to :data:`MAX_OPTIONS`."""
    after = next((m for m in found if m[0] > last_or), None)
    if after is None:
        return None
    chain = [after]
    for mention in reversed([m for m in found if m[1] <= last_or]):
        if not re.fullmatch(r"\s*(?:or\s*)?", text[mention[1]:chain[0][0]]):
            break
        chain.insert(0, mention)
    cells = tuple(dict.fromkeys(value for _, _, value in chain))
    return cells if 2 <= len(cells) <= MAX_OPTIONS else None


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
    linked = linked_options(state.table, question)
    if linked is None:
        return state
    offered = " or ".join(map(str, linked[1]))  # (not the question: "is denmark better against sweden or england?")
    if any(c.ok and names_option(offered, c.value) for c in state.standing()):
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
