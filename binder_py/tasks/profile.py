"""A task profile: every rule that depends on the task, in one record.

The paper's settings (appendix A.2, table 8) for its two benchmarks, and ``analyst`` (not in
the paper) for a user's own data:

=========  ===========  =====  ==========  ======  =========  ==============  ==============
task       temperature  n      max_tokens  stop    num_shots  question label  vote
=========  ===========  =====  ==========  ======  =========  ==============  ==============
wikitq     0.4          20     512         "\\n\\n"  14         ``Q:``          program_biased
tabfact    0.6          50     512         "\\n\\n"  14         ``Statement:``  answer_biased
analyst    0.4          20     512         "\\n\\n"  14         ``Q:``          majority
=========  ===========  =====  ==========  ======  =========  ==============  ==============

``top_p`` is 1.0 everywhere. WikiTQ and TabFact show tables with lower-cased text cells
(the paper's normalisation); ``analyst`` keeps cells as entered. The embedded local model
(``Capabilities.embedded``) samples :attr:`TaskProfile.embedded_n` programs from
:attr:`TaskProfile.embedded_shots` exemplars: its prompt reading is slow on a laptop. Of those,
the first :attr:`TaskProfile.embedded_core_shots` are the mode's *core* exemplars
(:attr:`TaskProfile.core_exemplars`), the same for every question and shown first, so the
runtime keeps them evaluated in a slot from one question to the next; only the rest are
retrieved. Its target table shows at most :attr:`TaskProfile.embedded_table_rows` rows, and a
program it writes takes at most :attr:`TaskProfile.embedded_max_tokens` tokens.

Nothing outside this package compares task names: callers ask a profile.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from binder_py.lm.types import LanguageModel
from binder_py.vote import AnswerShape


def _frozen(mapping: Mapping[str, float] | None) -> Mapping[str, float] | None:
    return MappingProxyType(dict(mapping)) if mapping is not None else None


@dataclass(frozen=True)
class TaskProfile:
    """How one task is prompted, sampled, voted and scored."""

    name: str
    #: the folder of parse prompts under ``prompts/parse/``
    prompts: str
    temperature: float = 0.4
    top_p: float = 1.0
    n: int = 20
    max_tokens: int = 512
    stop: tuple[str, ...] = ("\n\n",)
    num_shots: int = 14
    question_label: str = "Q:"
    #: candidates and exemplars when the program-writing model is the embedded one
    embedded_n: int = 5
    embedded_shots: int = 4
    #: of the embedded model's exemplars, how many are core ones (shown first, the same for every question)
    embedded_core_shots: int = 3
    #: the embedded model's target table shows at most this many rows (the program still runs on all)
    embedded_table_rows: int | None = 20
    #: tokens a program may take when the embedded model writes it: its programs take at most ~200
    #: (measured: docs/BENCHMARKS.md), and a sample caught in a repetition loop runs to the cap while the other samples
    #: of its request wait (5-8% of requests have one)
    embedded_max_tokens: int = 256
    #: per mode, the exemplar ids that core exemplars are taken from, in prompt order
    core_exemplars: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    #: what the end-to-end prompt asks for after ``A:``, and what it asks the model to do
    e2e_answer_format: str = "the answer; separate several values with \" | \""
    e2e_task: str = "answer the question"
    #: lower-case text cells of the table (prompt and executed table), as the paper does
    lowercase_cells: bool = True
    #: the default vote strategy and the per-answer weights it applies (``answer_biased``)
    vote: str = "majority"
    answer_weights: Mapping[str, float] | None = None
    #: under ``program_biased``, programs with neural calls weigh this many times a plain one (the
    #: paper's ×10, for Codex); the embedded model's neural answers are far less reliable, and on
    #: its dev runs weight 1 (a plain majority) answered more questions right (docs/RESULTS.md)
    neural_weight: float = 10.0
    embedded_neural_weight: float = 1.0
    #: a text answer taken from a cell of several lines stands for its first line: WikiTQ's cells are
    #: HTML cells whose lines are separate facts (a height and its metric conversion, a building and its
    #: photo caption), and its answers take the first (on dev, a one-value gold that is a line of such a
    #: cell is its first line 36 times, the whole cell 3 times, another line 10 times)
    first_line_of_cells: bool = False
    #: a number answer that is a cell the table writes with thousands separators is reported as written
    #: (``10031`` as ``"10,031"``): WikiTQ's gold is the cell's text, which its official evaluator reads as
    #: text (:mod:`binder_py.evaluate.written`); set by the benchmark that scores it, not for an analyst
    numbers_as_written: bool = False
    #: every input is a statement whose answer is yes/no (TabFact), whatever its wording
    statements: bool = False
    #: how a prediction is scored against gold (``binder_py.evaluate.judge``): "denotation" (WikiTQ's
    #: three evaluators: official, binder, semantic) or "label" (TabFact: one, correct)
    evaluator: str = "denotation"
    #: the dataset loader that holds this task's benchmark (``binder_py.datasets``), if any
    dataset: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "answer_weights", _frozen(self.answer_weights))
        object.__setattr__(self, "core_exemplars", MappingProxyType({m: tuple(ids) for m, ids in self.core_exemplars.items()}))

    @property
    def evaluators(self) -> tuple[str, ...]:
        """The names of the judgements a scored prediction gets."""
        return ("correct",) if self.evaluator == "label" else ("official", "binder", "semantic")

    # --- rules --------------------------------------------------------------------------
    def effective_n(self, lm: LanguageModel, requested: int | None, *, mode: str = "binder") -> int:
        """Candidates sampled per question: what was asked, else 1 for end-to-end answers,
        else the embedded model's or the task's default."""
        if requested is not None:
            return requested
        if mode == "e2e":
            return 1
        return self.embedded_n if lm.capabilities.embedded else self.n

    def effective_shots(self, lm: LanguageModel, requested: int | None) -> int:
        """Exemplars shown in the parse prompt."""
        if requested is not None:
            return requested
        return self.embedded_shots if lm.capabilities.embedded else self.num_shots

    def effective_core(self, lm: LanguageModel, requested: int | None, *, mode: str) -> tuple[str, ...]:
        """The core exemplars (ids) every prompt of ``mode`` shows first: ``requested`` of them
        (``None``: :attr:`embedded_core_shots` for the embedded model, none for others)."""
        count = requested if requested is not None else (self.embedded_core_shots if lm.capabilities.embedded else 0)
        return self.core_exemplars.get(mode, ())[:max(0, count)]

    def effective_max_tokens(self, lm: LanguageModel, requested: int | None) -> int:
        """Tokens a sampled or repaired program may take: ``requested``, else
        :attr:`embedded_max_tokens` for the embedded model, else the task's."""
        if requested:
            return requested
        return self.embedded_max_tokens if lm.capabilities.embedded else self.max_tokens

    def effective_table_rows(self, lm: LanguageModel, requested: int | None) -> int | None:
        """The most target-table rows a prompt shows (``None``: as many as fit): ``requested``
        (0 = no cap), else :attr:`embedded_table_rows` for the embedded model."""
        if requested is not None:
            return requested or None
        return self.embedded_table_rows if lm.capabilities.embedded else None

    def vote_strategy(self, requested: str | None, *, mode: str = "binder") -> str:
        """The vote: what was asked, else ``likelihood`` for proposed programs (discriminate mode:
        each answer weighs its programs' probabilities), else the task's."""
        if requested:
            return requested
        return "likelihood" if mode == "discriminate" else self.vote

    def effective_neural_weight(self, lm: LanguageModel, requested: float | None) -> float:
        """The weight factor of programs with neural calls under ``program_biased``: what was
        asked, else :attr:`embedded_neural_weight` for the embedded model, else :attr:`neural_weight`."""
        if requested is not None:
            return float(requested)
        return self.embedded_neural_weight if lm.capabilities.embedded else self.neural_weight

    def vote_weights(self, strategy: str, requested: Mapping[str, float] | None) -> Mapping[str, float] | None:
        """The answer weights a vote applies: what was asked, else the task's when its own
        strategy is used (TabFact's four votes for "entailed" under ``answer_biased``)."""
        if requested is not None:
            return requested
        return self.answer_weights if strategy == "answer_biased" else None

    def is_yes_no(self, question: str) -> bool:
        """Is the answer to ``question`` yes/no (answers are then normalised as such)?"""
        from binder_py.normalize import is_yes_no_question

        return self.statements or is_yes_no_question(question)

    def answer_shape(self, question: str) -> AnswerShape:
        """The shape of answer ``question`` wants (:class:`binder_py.vote.AnswerShape`): answers of
        another shape are set aside before the vote (:func:`binder_py.vote.shape_fit`). A statement
        wants one yes/no verdict; a question asks for one number (a count), for one of the options
        it names ("which year had more venues, 2007 or 2012?"), or for a name ("which …", "who …":
        not a bare yes/no, nor numbers when it asks for no quantity, nor several values when it asks for one); one that asks for something it does not name ("which …", "what …")
        is not answered by one value it names, nor any question by what it sets aside ("other than
        …"); one that asks by how much two things differ reads a negative number as its absolute value."""
        from binder_py.normalize import (asks_beyond_itself, asks_for_a_magnitude, asks_for_a_name, asks_for_one,
                                         asks_what_not_whether, excluded_phrase, is_choice_question,
                                         is_count_question, is_name_question)

        if self.statements:
            return AnswerShape(expects_verdict=True)
        return AnswerShape(expects_number=is_count_question(question),
                           choice_question=question if is_choice_question(question) else None,
                           expects_no_verdict=asks_what_not_whether(question),
                           expects_name=is_name_question(question),
                           expects_text=asks_for_a_name(question),
                           expects_one=asks_for_one(question),
                           echo_question=question if asks_beyond_itself(question) else None,
                           excluded=excluded_phrase(question),
                           first_line=self.first_line_of_cells,
                           magnitude=asks_for_a_magnitude(question))

    def final_value(self, value: Any, key: str) -> Any:
        """The answer as the task reports it: a statement's verdict is True/False."""
        if self.statements and value is not None:
            return key in ("yes", "true")
        return value
