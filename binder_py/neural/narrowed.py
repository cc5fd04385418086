"""The one cell a program narrowed an ``f_val``'s rows to, as the answer the model could not give.

A program that selects the rows a "which …?"/"who …?" question is about and asks ``f_val`` of one
text cell — ``f_val("Which UNESCO goodwill ambassador is most known for the Chernobyl program?",
df[df.projects.str.contains("chernobyl")]["name"])``, one name left — has done the choosing; the
model, shown the name without the cells that chose it, answers that it cannot tell. Then that cell
is the answer (the call's trace says so). A model that answers anything else is taken at its word,
and a question of another kind ("what nationality …?" of one name) is never answered with the cell."""

from __future__ import annotations

from typing import Any

from binder_py.neural.requests import NeuralRequest, classify
from binder_py.normalize import is_name_question

__all__ = ["NARROWED_NOTE", "narrowed_cell"]

NARROWED_NOTE = ("the model could not tell from the one cell the program narrowed the rows to, and the question "
                 "asks which or who: that cell is the answer")


def narrowed_cell(request: NeuralRequest, answer: Any) -> str | None:
    """The one text cell of ``request`` when ``answer`` says the model cannot tell ("unknown", "n/a", …),
    the request is an ``f_val`` of a which/who question, and its rows hold one text cell with letters
    in it (repeated or not); else None. ``None`` as the answer is no such word: the model was not asked (a row too long
    for its context) or gave nothing."""
    if not isinstance(answer, str) or classify(answer)[0] != "na":
        return None
    if request.kind != "val" or len(request.columns) != 1 or not request.rows:
        return None
    if len(set(request.keys)) != 1 or not is_name_question(request.question):
        return None
    cell = str(request.rows[0][0]).strip()
    # a name has letters: a time, a date or a number the program computed ("1:20:54", the minimum of a
    # column) is not what "which athlete …?" asks for
    return cell if classify(cell)[0] == "str" and any(ch.isalpha() for ch in cell) else None
