"""Progress while a question is answered, for the Python API and notebooks.

* In a **notebook** (Jupyter with ipywidgets: where ``tqdm.auto`` picks tqdm's notebook bar)
  one bar follows the question through the pipeline's stages, its text saying what the
  stage does ("writing 5 program(s) with gpt-4o-mini", "running 5 program(s)", ...); the
  stages' own messages are then left out, so the cell shows the bar and nothing on stderr.
* In a **terminal** the stages say what they do on stderr (``binder-py: writing 5
  candidate program(s) ...``) and the run stage draws its bar there; a second bar would
  garble those lines, so there is none.
* ``progress=False`` (``Binder(progress=False)``, ``binder.ask(..., progress=False)``, the
  CLI's ``--quiet``) shows nothing at all.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable, Sequence
from types import TracebackType
from typing import Any

import tqdm.auto

#: what a stage does, from its function's name and the state it receives
_STAGE_TEXT: dict[str, Callable[[Any], str]] = {
    "build_prompt": lambda state: "building the prompt",
    "sample": lambda state: f"writing {state.n} program(s) with {state.lm.name}",
    "propose": lambda state: f"proposing programs; {state.lm.name} scores them",
    "plan": lambda state: "planning the neural calls",
    "run": lambda state: f"running {len(state.candidates)} program(s)",
    "link": lambda state: "linking compared values that no cell holds to the cells they mean, if any",
    "repair": lambda state: "repairing failed programs, if too few succeeded",
    "rescope": lambda state: "asking once the questions that programs answered row by row, if any",
    "choose": lambda state: "asking the model to choose among the question's options, if no program named one",
    "vote_candidates": lambda state: "voting",
}


def in_notebook() -> bool:
    """``tqdm.auto`` draws tqdm's notebook bar here (a Jupyter kernel with ipywidgets)."""
    from tqdm.notebook import tqdm as notebook_tqdm

    return issubclass(tqdm.auto.tqdm, notebook_tqdm)


def stage_text(name: str, state: Any) -> str:
    describe = _STAGE_TEXT.get(name)
    try:
        return describe(state) if describe is not None else name
    except Exception:  # noqa: BLE001 - a description must never stop a question
        return name


class StageProgress:
    """A ``tqdm.auto`` bar over one question's stages::

        with StageProgress(STAGES, enabled=True) as progress:
            answer = answer_question(state, progress.stages)

    ``progress.stages`` are the stages, each wrapped (name kept, so timings keep their keys)
    to show its text before it runs and to advance the bar after.
    """

    def __init__(self, stages: Sequence[Callable[[Any], Any]], *, enabled: bool, desc: str = "question",
                 bar: Callable[..., Any] | None = None):
        self.enabled = enabled
        self.bar = (bar or tqdm.auto.tqdm)(total=len(stages), desc=desc, unit="stage", leave=False,
                                           file=sys.stderr, disable=not enabled)
        self.stages = tuple(self._wrap(stage) for stage in stages) if enabled else tuple(stages)

    def _wrap(self, stage: Callable[[Any], Any]) -> Callable[[Any], Any]:
        @functools.wraps(stage)
        def run(state: Any) -> Any:
            self.bar.set_postfix_str(stage_text(stage.__name__, state), refresh=True)
            try:
                return stage(state)
            finally:
                self.bar.update(1)

        return run

    def __enter__(self) -> StageProgress:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.bar.close()


def progress_bar(total: int, desc: str, unit: str, enabled: bool) -> Any:
    """A ``tqdm.auto`` bar on stderr (the notebook bar in Jupyter), or a disabled one."""
    return tqdm.auto.tqdm(total=total, desc=desc, unit=unit, file=sys.stderr, disable=not enabled)
