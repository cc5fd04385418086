"""An answer that is a text column's cells joined together is a failure, not an answer.

``df["Amount"].sum()`` over a column of text such as ``$1,234.50`` (currencies, percentages and dates
stay text: :mod:`binder_py.tables`) concatenates the cells: the answer
``"$1,234.50$987.00$12,000.00"`` voted and won, with nothing to say it was no total (the embedded
model wrote that program for "what is the total amount of all orders?", 4 of 5 samples). Such an
answer is made a runtime error that says to convert the column to numbers first, for the user and
for the repair prompt, which quotes it.

The rule: the answer is text made of two or more cells of one text column of a table, each of two
characters or more, in row order (a sum over all rows or over a row selection), it is longer than any
one cell, and no cell of any table column reads it. So ``str(len(df))`` answering ``"10"`` beside a
column of ``"1"`` and ``"0"``, or ``"WL"`` that is a cell elsewhere, stands.

The same holds for the text answers of one ``f_col`` call (a column the model made: ``df["bo"] =
f_col("What is the box office?", ...)`` then ``df["bo"].sum()`` answered ``"$1.2 billion850 million…"``),
in any order (the parent knows each distinct row's answer, not the rows' order), when the answer is no
answer of that call itself.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

import pandas as pd

from sandbox.outcome import Outcome, ProgramFailure

__all__ = ["refuse_joined_text"]


def refuse_joined_text(outcome: Outcome, table: pd.DataFrame, named: Mapping[str, pd.DataFrame],
                       answers: Sequence[tuple[str, Sequence[object]]] = ()) -> Outcome:
    """``outcome`` made a failure when its answer is a text column's cells joined, or the text answers
    of one ``f_col`` call (``answers``: each call's question and answers) joined (module docstring)."""
    value = outcome.value
    if not outcome.ok or not isinstance(value, str) or not value:
        return outcome
    tables = dict(named) or {"df": table}
    budget = [SPLIT_BUDGET]  # (one for the answer: every call's answers, not each call's, red team 14)
    found: list[bool] = []  # whether some cell is the answer: the same for every check, so found once

    def a_cell() -> bool:  # (once per answer: per joined column, it made the parent's work grow with the
        if not found:      # square of the columns; red team 13)
            found.append(_a_cell(value, tables))
        return found[0]

    for question, texts in answers:
        pieces = {text.strip() for text in texts if isinstance(text, str) and len(text.strip()) >= _SHORTEST_CELL}
        # (a sum of the call's answers over a table's rows is no longer than its rows times the longest)
        longest = max(map(len, pieces), default=0)
        if pieces and longest < len(value) <= max(len(t) for t in tables.values()) * longest \
                and _split_into(value, pieces, budget) and not a_cell():  # (so two or more)
            return _refused(outcome, f"TypeError: the answer {_shown(value)} is the text answers of "
                            f"f_col({question!r}, ...) joined together (sum() of a text column joins its text); to add "
                            "numbers, have them read as numbers: pd.to_numeric(f_col(...), errors='coerce') asks for "
                            "a number and reads \"$25 million\" as 25000000")
    for name, other in tables.items():
        for position, column in enumerate(other.columns):
            cells = other.iloc[:, position]  # (by position: a table may have two columns of one name)
            lengths_of = _text_lengths(cells)
            if lengths_of is None or not len(value) > lengths_of.max():
                continue  # (most answers are no longer than a cell: no row is read one by one)
            lengths = {int(n) for n in lengths_of.dropna().unique() if n >= _SHORTEST_CELL}
            if not cells.isin([value[:n] for n in lengths]).any():
                continue  # (no cell starts the answer: no row is read one by one)
            if _joins(value, cells.tolist()) and not a_cell():
                return _refused(outcome, f"TypeError: the answer {_shown(value)} is the text cells of column "
                                f"{column!r} of {name} joined together (sum() of a text column joins its text); to add "
                                "numbers written as text (currencies, percentages), convert them first, e.g. "
                                f"pd.to_numeric({name}[{column!r}].str.replace(r'[^0-9.\\-]', '', regex=True), "
                                "errors='coerce').sum()")
    return outcome


#: the shortest cell counted as joined ("1" and "0" make "10", which a count written as text may be)
_SHORTEST_CELL = 2


def _text_lengths(cells: pd.Series) -> pd.Series | None:
    """The lengths of a text column's cells (NaN for a cell that is not text), or None when the column holds
    no text: an object column of dates or numbers (a DataFrame a caller passed, which
    :func:`binder_py.tables.prepare_table` keeps as it is) made ``.str`` raise, and every text answer a
    traceback in the parent (red team 13)."""
    if not pd.api.types.is_string_dtype(cells.dtype):
        return None
    try:
        return cells.str.len()
    except (AttributeError, TypeError):  # ("Can only use .str accessor with string values")
        return None


def _a_cell(value: str, tables: Mapping[str, pd.DataFrame]) -> bool:
    """Whether some cell of some table column is ``value`` (then the answer may be that cell)."""
    return any(bool((other.iloc[:, i] == value).any()) for other in tables.values() for i in range(other.shape[1])
               if pd.api.types.is_string_dtype(other.iloc[:, i].dtype) or other.iloc[:, i].dtype == object)


def _joins(value: str, cells: list[object]) -> bool:
    """Whether ``value`` is two or more of ``cells`` (non-empty text), in order, joined."""
    position = used = 0
    for cell in cells:
        if isinstance(cell, str) and len(cell) >= _SHORTEST_CELL and value.startswith(cell, position):
            position += len(cell)
            used += 1
            if position == len(value):
                return used >= 2
    return False


#: how many characters (of the pieces tried, one more per try) :func:`_split_into` compares for one answer, over
#: all the calls' answers, before it gives up
SPLIT_BUDGET = 5_000_000


def _split_into(value: str, pieces: set[str], budget: list[int]) -> bool:
    """Whether ``value`` is ``pieces`` (each any number of times, in any order) joined; only the positions
    where a piece ends are visited, so an answer that no piece starts costs one look.

    At most ``budget[0]`` characters are compared, and taken from it (False past them: the answer stands;
    the budget is the answer's, :data:`SPLIT_BUDGET`, shared by every call's answers). Every position a piece
    reaches tries every length of piece, so the work grew with the answer times the number of piece lengths:
    3,000 answers "aa", "aaa", ... of an f_col call over rows the program made up, and a program answering
    "a" * 300001 + "b" (beside a 3-row table and one 100,000-character answer), cost the parent 47 s after a
    run of 0.4 s, and twice both, four times that; a budget per call left 0.3 s per call, and a program makes
    thousands of calls (red team 14)."""
    lengths = sorted({len(piece) for piece in pieces})
    seen, todo = {0}, [0]
    while todo and budget[0] >= 0:
        start = todo.pop()
        for n in lengths:
            end = start + n
            if end > len(value):
                break
            budget[0] -= 1
            if end in seen:
                continue
            budget[0] -= n
            if budget[0] < 0:
                return False
            if value[start:end] in pieces:
                if end == len(value):
                    return True
                seen.add(end)
                todo.append(end)
    return False


def _refused(outcome: Outcome, message: str) -> Outcome:
    """``outcome`` as a failed run whose error (a TypeError) is ``message``."""
    return replace(outcome, ok=False, value=None,
                   error=ProgramFailure(kind="runtime", exception_type="TypeError", message=message))


def _shown(value: str) -> str:
    return repr(value if len(value) <= 60 else value[:57] + "...")
