"""Task profiles: one :class:`TaskProfile` per task; a new task is a new profile here
(and its prompt folder under ``prompts/parse/``).
"""

from __future__ import annotations

from binder_py.errors import BinderError
from binder_py.tasks.profile import TaskProfile

WIKITQ = TaskProfile("wikitq", prompts="wikitq", vote="program_biased", evaluator="denotation", dataset="wikitq",
                     first_line_of_cells=True, numbers_as_written=True,
                     core_exemplars={"binder": ("wtq-01", "wtq-12", "wtq-14"), "python": ("wtq-02", "wtq-01", "wtq-09"),
                                     "e2e": ("wtq-02", "wtq-01", "wtq-09")})
TABFACT = TaskProfile("tabfact", prompts="tabfact", temperature=0.6, n=50, question_label="Statement:",
                      e2e_answer_format="true if the statement is supported by the table, else false",
                      e2e_task="verify the statement", vote="answer_biased",
                      answer_weights={"yes": 4.0, "no": 1.0}, statements=True, evaluator="label",
                      dataset="tabfact",
                      core_exemplars={"binder": ("tf-04", "tf-08", "tf-11"), "python": ("tf-04", "tf-03", "tf-02"),
                                      "e2e": ("tf-04", "tf-03", "tf-02")})
ANALYST = TaskProfile("analyst", prompts="analyst", lowercase_cells=False,
                      core_exemplars={"binder": ("an-01", "an-07", "an-10"), "python": ("an-01", "an-03", "an-02"),
                                      "e2e": ("an-01", "an-03", "an-02")})

PROFILES: dict[str, TaskProfile] = {p.name: p for p in (WIKITQ, TABFACT, ANALYST)}
#: the tasks with a benchmark dataset (``binder-py eval``)
BENCHMARK_TASKS: tuple[str, ...] = tuple(name for name, p in PROFILES.items() if p.dataset)


def task_profile(task: str | TaskProfile) -> TaskProfile:
    """The profile of ``task`` (a name or a profile); a clear error for an unknown name."""
    if isinstance(task, TaskProfile):
        return task
    try:
        return PROFILES[task]
    except KeyError:
        raise BinderError(f"unknown task {task!r}; use one of {', '.join(PROFILES)}") from None


__all__ = ["ANALYST", "BENCHMARK_TASKS", "PROFILES", "TABFACT", "TaskProfile", "WIKITQ", "task_profile"]
