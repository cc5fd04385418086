"""Yes/no row answers read from the model's probabilities, decided when a call reads its rows.

A small model leans the same way for every row of a question: asked "Is it in North America?"
row by row, the 0.5B model gave every country P(yes) 0.61–0.75, the three North American ones
highest; asked "Does not contain chemicals?", the 1.5B model gave 0.50–0.89 and every shirt but
one read "yes". The rows are ranked well; the line at 0.5 is not. So a row's yes/no answer is
decided against a threshold centred on the call's own rows: halfway between 0.5 and the mean
P(yes) of the call's distinct rows. That removes half of the question's lean, while a call whose
rows are all yes (or all no) mostly stays so, and a call of one row is read at 0.5 as before.

Why at read time: the neural cache shares answered rows between programs, and a backend is
handed only the rows no program has asked yet. A threshold computed by the backend would make a
row's answer depend on which program asked first (tried so, and taken out, in the seventeenth
session). So the backend (:class:`~binder_py.neural.rowwise.RowwiseNeuralBackend`) returns a
:class:`ScoredYesNo` — the text at 0.5, with P(yes) kept — the cache stores it as it is, and
:func:`decide_call` reads each call's rows against that call's threshold, whatever their order.

Measured in docs/LANGUAGE.md ("The row-by-row backend"); ``BINDER_YES_THRESHOLD=P`` (a number
between 0 and 1, e.g. 0.5) reads every row at that fixed threshold instead (for comparison).
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from typing import Any

from binder_py.errors import BinderError

#: the plain threshold: P(yes) above it is "yes"
PLAIN_THRESHOLD = 0.5
#: a fixed threshold instead of the centred one (for comparison)
THRESHOLD_ENV = "BINDER_YES_THRESHOLD"


class ScoredYesNo(str):
    """``"yes"`` or ``"no"`` as P(yes) reads at 0.5, with ``p_yes`` kept for :func:`decide_call`.

    A ``str``, so that whatever does not decide (a trace, a JSON record) sees the plain answer."""

    p_yes: float

    def __new__(cls, p_yes: float) -> ScoredYesNo:
        text = super().__new__(cls, "yes" if p_yes > PLAIN_THRESHOLD else "no")
        text.p_yes = float(p_yes)
        return text

    def __reduce__(self) -> tuple[Any, tuple[float]]:  # (pickled between processes, e.g. Ray workers)
        return ScoredYesNo, (self.p_yes,)


def fixed_threshold() -> float | None:
    """``$BINDER_YES_THRESHOLD`` as a number in (0, 1), None when unset; anything else is an error."""
    text = os.environ.get(THRESHOLD_ENV, "").strip()
    if not text:
        return None
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not 0.0 < value < 1.0:
        raise BinderError(f"{THRESHOLD_ENV}={text!r} is not a probability between 0 and 1: give e.g. "
                          f"{THRESHOLD_ENV}=0.5, or unset it for the threshold centred on each call's rows")
    return value


def centred_threshold(probabilities: list[float]) -> float:
    """Halfway between 0.5 and the mean of ``probabilities`` (0.5 for none)."""
    if not probabilities:
        return PLAIN_THRESHOLD
    return (PLAIN_THRESHOLD + sum(probabilities) / len(probabilities)) / 2


#: a call whose model put every row's P(yes) within this distance of 0.5 was unsure of all of them
UNSURE_MARGIN = 0.2


def p_yes_range(answers: Mapping[str, Any]) -> tuple[float, float] | None:
    """The lowest and highest P(yes) of a call's rows that the model scored (:class:`ScoredYesNo`); None
    when fewer than two were."""
    scored = [value.p_yes for value in answers.values() if isinstance(value, ScoredYesNo)]
    return (min(scored), max(scored)) if len(scored) >= 2 else None


def unsure_of_every_row(p_range: tuple[float, float] | None) -> bool:
    """Whether a call's P(yes) range (:func:`p_yes_range`) lies within :data:`UNSURE_MARGIN` of 0.5 at both
    ends: the model was unsure of every row ("Does it contain chemicals?" asked of countries: 0.35–0.68).
    Such a call tells the program next to nothing about its rows (in the twenty-eighth session's replayed
    WikiTQ runs, none of the 25 answers from programs with such a call was right), and the vote sets its
    program aside when another answered (:func:`binder_py.vote.sure_fit`)."""
    return p_range is not None and 0.5 - UNSURE_MARGIN < p_range[0] and p_range[1] < 0.5 + UNSURE_MARGIN


def decide_call(answers: Mapping[str, Any]) -> tuple[dict[str, Any], str | None]:
    """``answers`` (a call's distinct row keys → raw answers) with every :class:`ScoredYesNo` read as
    a plain ``"yes"``/``"no"`` against the call's centred threshold (or ``$BINDER_YES_THRESHOLD``),
    and a line saying so (None when no answer was scored). Other answers are kept as they are."""
    if ScoredYesNo not in set(map(type, answers.values())):  # (an oracle's, a table prompt's: one pass at C speed)
        return dict(answers), None
    scored = {key: value.p_yes for key, value in answers.items() if isinstance(value, ScoredYesNo)}
    fixed = fixed_threshold()
    threshold = centred_threshold(list(scored.values())) if fixed is None else fixed
    decided = {key: ("yes" if scored[key] > threshold else "no") if key in scored else value
               for key, value in answers.items()}
    yes = sum(1 for key in scored if decided[key] == "yes")
    counts = f"{yes} yes, {len(scored) - yes} no"
    if fixed is not None:
        return decided, f"yes/no read at P(yes) > {threshold:.3f} ({THRESHOLD_ENV}) for the call's {len(scored)} row(s): {counts}"
    mean = sum(scored.values()) / len(scored)
    p_range = p_yes_range(answers)
    spread = f" ({p_range[0]:.2f} to {p_range[1]:.2f})" if p_range is not None else ""
    return decided, (f"yes/no read at P(yes) > {threshold:.3f}, halfway between 0.5 and the mean P(yes) {mean:.3f} "
                     f"of the call's {len(scored)} row(s){spread}: {counts}")
