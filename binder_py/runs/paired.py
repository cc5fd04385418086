"""Two runs on the same questions, side by side: which questions each got right, and whether the
difference could be chance.

Accuracies of two runs over the same questions are paired data: most questions are right (or
wrong) in both, and only the questions where the runs disagree say which is better. McNemar's
exact test asks how likely a split of those discordant questions at least as uneven as the one
seen would be if either run were equally likely to win each of them (a two-sided binomial test
with p = 1/2). With the 100-question samples of docs/RESULTS.md a difference of six points can
still be chance; the p-value says so where the accuracy table cannot.

Only questions recorded in both runs count (a run cut short is compared on what it finished); a
question that ended in an error counts as wrong, as it does in the run's accuracy.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations
from typing import TYPE_CHECKING, Any, Sequence

from binder_py.runs.judgements import evaluator_names, record_scores

if TYPE_CHECKING:
    from binder_py.runs.report import Run


@dataclass(frozen=True)
class PairedComparison:
    """Two runs judged by one evaluator on the questions both recorded."""

    first: str
    second: str
    judged_by: str
    questions: int
    both: int
    only_first: int
    only_second: int
    neither: int

    @property
    def first_accuracy(self) -> float:
        return (self.both + self.only_first) / self.questions if self.questions else 0.0

    @property
    def second_accuracy(self) -> float:
        return (self.both + self.only_second) / self.questions if self.questions else 0.0

    @property
    def p_value(self) -> float:
        return mcnemar_exact(self.only_first, self.only_second)

    def as_dict(self) -> dict[str, Any]:
        return {"first": self.first, "second": self.second, "judged_by": self.judged_by,
                "questions": self.questions, "both": self.both, "only_first": self.only_first,
                "only_second": self.only_second, "neither": self.neither,
                "first_accuracy": self.first_accuracy, "second_accuracy": self.second_accuracy,
                "p_value": self.p_value}


def mcnemar_exact(only_first: int, only_second: int) -> float:
    """Two-sided exact McNemar p-value: P(a split of the discordant questions at least this uneven)
    under Binomial(only_first + only_second, 1/2); 1.0 when the runs never disagree."""
    if only_first < 0 or only_second < 0:
        raise ValueError("counts of discordant questions cannot be negative")
    n = only_first + only_second
    if n == 0:
        return 1.0
    smaller = min(only_first, only_second)
    term, tail = 1, 0  # C(n, 0), and the sum of C(n, i) for i <= smaller, as exact integers
    for i in range(smaller + 1):
        tail += term
        term = term * (n - i) // (i + 1)
    return min(1.0, 2 * tail / 2**n)


def compare(first: Run, second: Run) -> list[PairedComparison]:
    """One comparison per evaluator of the task (WikiTQ: official, binder, semantic; TabFact: correct),
    over the question ids both runs recorded; empty when the tasks differ or no id is shared."""
    return _compare_judged(first, second, _judgements(first), _judgements(second))


def compare_runs(runs: Sequence[Run]) -> list[PairedComparison]:
    """Every pair of runs (in the order given) that shares a task and at least one question; each
    run's lines are judged once, however many pairs it is in."""
    judged = [_judgements(run) for run in runs]
    return [c for (i, first), (j, second) in combinations(enumerate(runs), 2)
            for c in _compare_judged(first, second, judged[i], judged[j])]


def _judgements(run: Run) -> dict[str, dict[str, bool]]:
    """Each question's judgements by evaluator, by question id (lines without a usable id left out)."""
    out = {}
    for record in run.records:
        key = _question_id(record)
        if key is not None:
            out[key] = record_scores(record, run.task)
    return out


def _compare_judged(first: Run, second: Run, mine: dict[str, dict[str, bool]],
                    theirs: dict[str, dict[str, bool]]) -> list[PairedComparison]:
    if first.task != second.task:
        return []
    judged = [(mine[key], theirs[key]) for key in mine if key in theirs]
    if not judged:
        return []
    out = []
    for name in evaluator_names(first.task):
        outcomes = [(a[name], b[name]) for a, b in judged]
        out.append(PairedComparison(
            first=first.name, second=second.name, judged_by=name, questions=len(outcomes),
            both=sum(1 for a, b in outcomes if a and b), only_first=sum(1 for a, b in outcomes if a and not b),
            only_second=sum(1 for a, b in outcomes if b and not a),
            neither=sum(1 for a, b in outcomes if not a and not b)))
    return out


def _question_id(record: dict[str, Any]) -> str | None:
    """A results line's question id as text (a whole number too, as results lines allow); None for a
    line without a usable one (a file made by hand)."""
    key = record.get("id")
    if isinstance(key, bool) or not isinstance(key, (str, int)) or key == "":
        return None
    return str(key)


__all__ = ["PairedComparison", "compare", "compare_runs", "mcnemar_exact"]
