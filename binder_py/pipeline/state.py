"""The state one question carries through the stages, and the services the stages share.

A stage takes a :class:`QuestionState` and returns the next one (``dataclasses.replace``);
records a stage has produced (candidates, their runs, the plan) are never changed
afterwards: a later stage makes new ones.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import pandas as pd

from binder_py.answer import Answer, Candidate
from binder_py.discriminate.proposer import Proposal
from binder_py.lm.types import LanguageModel, Usage
from binder_py.neural.backends import NeuralBackend
from binder_py.neural.cache import NeuralCache
from binder_py.neural.plan import NeuralPlan
from binder_py.pipeline.settings import AskSettings, sampling_is_constrained
from binder_py.tasks import TaskProfile
from sandbox import Sandbox


@dataclass(frozen=True)
class Services:
    """What the stages use but do not own. ``neural`` builds the neural backend on first use
    (only a question whose programs make neural calls needs one)."""

    lm: LanguageModel
    neural: Callable[[], NeuralBackend]
    sandbox: Callable[[], Sandbox]
    neural_cache: NeuralCache
    progress: bool = False

    def say(self, message: str) -> None:
        if self.progress:
            print(f"binder-py: {message}", file=sys.stderr, flush=True)


@dataclass(frozen=True)
class QuestionState:
    """One question on its way through the pipeline."""

    question: str
    table: pd.DataFrame  # as programs see it (text cells lower-cased when the profile says so)
    original_table: pd.DataFrame  # as the user gave it (less a total row set aside: binder_py/total_rows.py)
    title: str | None
    tags: Mapping[str, str]
    settings: AskSettings
    profile: TaskProfile
    services: Services
    lowercased: bool
    started: float
    #: every table by the name programs see it (the first is ``table``), as programs see them;
    #: empty when the question has one unnamed table (programs see it as ``df`` and ``table``)
    tables: Mapping[str, pd.DataFrame] = field(default_factory=dict)
    original_tables: Mapping[str, pd.DataFrame] = field(default_factory=dict)  # as the user gave them
    prompt: Any = None  # prompting.BuiltPrompt (program modes) or prompting.e2e prompt (e2e)
    candidates: tuple[Candidate, ...] = ()
    plan: NeuralPlan | None = None
    #: the plan stage's requests while they are out (neural.plan.PlanInFlight); the run stage
    #: starts the programs meanwhile and folds the finished plan into ``plan``
    plan_in_flight: Any = None
    proposal: Proposal | None = None  # mode discriminate: the proposer's programs and steps
    neural_name: str | None = None  # the neural backend that answered, once one was built
    usage: Usage = field(default_factory=Usage)
    warnings: tuple[str, ...] = ()
    timings: Mapping[str, float] = field(default_factory=dict)
    answer: Answer | None = None

    def evolve(self, **changes: Any) -> QuestionState:
        return replace(self, **changes)

    # --- rules the stages share -------------------------------------------------------
    @property
    def lm(self) -> LanguageModel:
        return self.services.lm

    @property
    def n(self) -> int:
        return self.profile.effective_n(self.lm, self.settings.n, mode=self.settings.mode)

    @property
    def shots(self) -> int:
        return self.profile.effective_shots(self.lm, self.settings.num_shots)

    @property
    def max_tokens(self) -> int:
        return self.profile.effective_max_tokens(self.lm, self.settings.max_tokens)

    @property
    def neural_allowed(self) -> bool:
        """Programs may make neural calls (not in the plain-pandas baseline)."""
        return self.settings.mode in ("binder", "discriminate")

    @property
    def vote_strategy(self) -> str:
        """The vote: what was asked, else ``likelihood`` for proposed programs, else the task's."""
        return self.profile.vote_strategy(self.settings.vote, mode=self.settings.mode)

    @property
    def neural_weight(self) -> float:
        """Under ``program_biased``, the weight factor of programs with neural calls (asked, else the profile's)."""
        return self.profile.effective_neural_weight(self.lm, self.settings.neural_weight)

    @property
    def constrained(self) -> bool:
        """Sampled programs follow the table's grammar (asked for, and the model takes grammars)."""
        return sampling_is_constrained(self.settings.constrained, self.lm.capabilities.grammar)

    @property
    def column_names(self) -> list[str]:
        """Every column a program may name: the table's, and with several tables, every table's
        (``df`` may be rebound to a join)."""
        tables = list(self.tables.values()) or [self.table]
        return list(dict.fromkeys(str(c) for t in tables for c in t.columns))

    @property
    def yes_no(self) -> bool:
        return self.profile.is_yes_no(self.question)

    def succeeded(self, candidate: Candidate) -> bool:
        """The candidate ran and gave a non-empty answer."""
        from binder_py.normalize import normalize_answer

        return candidate.ok and not normalize_answer(candidate.value, yes_no=self.yes_no).is_empty

    def misfit(self, candidate: Candidate) -> str | None:
        """Why a candidate that succeeded does not answer the question as asked (rule 0 of the vote:
        :meth:`binder_py.vote.AnswerShape.misfit`, e.g. a number where it asks which or who); None when it
        does, or did not succeed."""
        from binder_py.language.program import answers_per_row
        from binder_py.vote import VoteCandidate

        if not self.succeeded(candidate):
            return None
        shape = self.profile.answer_shape(self.question)
        return shape.misfit(VoteCandidate(value=shape.read(candidate.value), count=candidate.count, ok=True,
                                          per_row=answers_per_row(candidate.program)))

    def superseded(self) -> set[int]:
        """Positions of the candidates left out for a linked version: sources that selected nothing and
        whose linked version answered, every other linked version (:func:`binder_py.answer.superseded_by_links`)."""
        from binder_py.answer import link_entries, superseded_by_links

        return superseded_by_links(link_entries(self.candidates))

    def standing(self) -> list[Candidate]:
        """The program candidates that speak for the samples: a linked version that answered instead of
        its source, the source where its linked version did not answer (no e2e answers)."""
        superseded = self.superseded()
        return [c for i, c in enumerate(self.candidates) if c.origin != "e2e" and i not in superseded]
