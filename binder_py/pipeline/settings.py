"""What shapes how one question is answered: :class:`AskSettings` (``None`` = the task profile's default)."""

from __future__ import annotations

import numbers
import os
from collections.abc import Mapping
from dataclasses import dataclass

from binder_py.errors import BinderError

#: binder: programs with neural calls; python: plain pandas (the paper's Codex-Python baseline);
#: e2e: the model answers from the table directly; discriminate: a symbolic proposer grows programs
#: over the table and the model scores them (Pangu)
MODES = ("binder", "python", "e2e", "discriminate")
#: the modes whose candidates are n samples from the model (discriminate: the proposer builds its own)
SAMPLING_MODES = ("binder", "python", "e2e")
#: likelihood: each program weighs count × exp(β·(its mean token log-probability − the best's))
VOTE_STRATEGIES = ("majority", "probability", "answer_biased", "program_biased", "likelihood")


#: the most candidates one question may sample (a run's records refuse larger sample positions too:
#: binder_py.runs.records.MAX_SAMPLES)
MAX_N = 10_000


def _is_int(value: object) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _is_real(value: object) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def sampling_is_constrained(wanted: bool | None, takes_grammar: bool) -> bool:
    """Whether programs are sampled under the table's grammar: asked for (``None``: by default), and
    the model takes grammars (``Capabilities.grammar``)."""
    return takes_grammar and (wanted is None or wanted)


def ties_are_scored(wanted: bool | None, mode: str, can_score: bool) -> bool:
    """Whether a tie at the top of the vote is scored by the model (binder_py/pipeline/tiebreak.py): asked
    for (``None``: by default), in a mode whose candidates are sampled or written (the proposer's programs
    are weighed by their own scores), with a model that can score given answers
    (:func:`binder_py.discriminate.answers.can_score_answers`)."""
    return (wanted is None or wanted) and mode != "discriminate" and can_score


@dataclass(frozen=True)
class AskSettings:
    """Everything that shapes how one question is answered (``None`` = the task's default)."""

    task: str = "analyst"  # the task profile: analyst (your own data) | wikitq | tabfact
    mode: str = "binder"  # binder | python | e2e | discriminate
    n: int | None = None  # candidate programs sampled (the profile's n; fewer for the embedded model)
    temperature: float | None = None
    max_tokens: int | None = None
    num_shots: int | None = None
    # of those, the task's core exemplars shown first to every question (None: 3 for the embedded
    # model, whose runtime then keeps them evaluated from one question to the next; 0 otherwise)
    core_shots: int | None = None
    # the most target-table rows the prompt shows (None: 20 for the embedded model, else as many as
    # fit; 0: as many as fit). Programs always run on the whole table.
    table_rows: int | None = None
    selection: str = "bm25"  # fixed | bm25 | bleu
    table_style: str = "binder"  # binder | pandas
    lowercase: bool | None = None  # lower-case text cells (prompt and executed table); task default
    # keep a table's last row when it adds up the rows above it (binder_py/total_rows.py); by default the
    # programs run without it, and the answer says so
    keep_total_row: bool = False
    vote: str | None = None  # majority | probability | answer_biased | program_biased | likelihood; task default
    neural_weight: float | None = None  # program_biased: ×this for programs with neural calls (profile's)
    answer_weights: Mapping[str, float] | None = None
    drop_failed: bool = True
    drop_empty: bool = True
    repair_below: int | None = None  # repair when fewer than k samples succeed; default ceil(n / 4)
    repair_attempts: int = 3  # failing programs re-prompted in the repair round
    # a program whose answer is an f_col column itself gets a sibling asking the question once (f_val);
    # and a question offering options that no program answered with one is asked once (the choose stage)
    rescope: bool = True
    # a program that compared a column with a value no cell holds is run again with the value linked
    # to the cell it means, or one that joined comparisons with & or | unparenthesized, regrouped; it
    # votes in its place (binder_py/pipeline/link.py)
    link_literals: bool = True
    seed: int | None = None
    concurrency: int = 8  # candidate programs executing at once
    share_neural_cache: bool = True  # False: every program asks its own neural calls (original Binder)
    prefetch: bool | None = None  # answer a program's independent neural calls concurrently (None: backend's default)
    # answer the predictable f_col calls of ALL candidates before they run, several questions per prompt
    # (modes binder and discriminate, a planning backend, and only with share_neural_cache; see binder_py/neural/plan.py)
    plan_neural: bool = True
    # identical programs run once and vote with their count (False: every sample runs, like the original)
    group_identical: bool = True
    # give no answer (value None, with a warning saying why) when the confidence is below this
    abstain_below: float | None = None
    # the confidence calibrator (binder_py/calibration.py): "auto" the one shipped for the question's
    # model and mode, if any; a file fitted on dev runs (``binder-py calibrate``); "none" (or None) the
    # raw vote share. With one, the confidence is P(right) from the vote's features
    calibrator: str | None = "auto"
    # when answers tie at the top of the vote, the model scores each given the table and question and
    # the best wins (binder_py/discriminate/answers.py); None: when the model can (it takes grammars and
    # reports log-probabilities: the embedded model, llama.cpp servers); False: the earliest sample wins
    score_ties: bool | None = None
    # constrain sampled programs by a grammar of the table's own columns (binder_py/grammar), so that
    # column subscripts and neural-call contexts name only real columns; None: when the model takes
    # grammars (Capabilities.grammar: the embedded model, llama.cpp servers)
    constrained: bool | None = None

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise BinderError(f"unknown mode {self.mode!r}; use one of {', '.join(MODES)}")
        if self.vote is not None and self.vote not in VOTE_STRATEGIES:
            raise BinderError(f"unknown vote strategy {self.vote!r}; use one of {', '.join(VOTE_STRATEGIES)}")
        if self.n is not None and (not _is_int(self.n) or not 1 <= self.n <= MAX_N):
            raise BinderError(f"n must be a whole number from 1 to {MAX_N:,}, got {self.n!r}")
        if self.temperature is not None and (not _is_real(self.temperature)
                                             or not 0.0 <= self.temperature < float("inf")):
            raise BinderError(f"temperature is a finite number of 0 or more, got {self.temperature!r}")
        if self.max_tokens is not None and (not _is_int(self.max_tokens) or self.max_tokens < 1):
            raise BinderError(f"max_tokens must be a whole number of at least 1, got {self.max_tokens!r}")
        for name in ("num_shots", "core_shots", "table_rows", "repair_below", "repair_attempts"):
            value = getattr(self, name)
            if value is not None and (not _is_int(value) or value < 0):
                raise BinderError(f"{name} is a count of 0 or more, got {value!r}")
        if self.neural_weight is not None and (not _is_real(self.neural_weight)
                                               or not 0.0 <= self.neural_weight < float("inf")):
            raise BinderError(f"neural_weight is a finite weight of 0 or more, got {self.neural_weight!r}")
        if self.answer_weights is not None:  # checked by the vote too, but only after every model call
            if not isinstance(self.answer_weights, Mapping):
                raise BinderError(f"answer_weights maps answers to weights, got {self.answer_weights!r}"[:200])
            for answer, weight in self.answer_weights.items():
                if not _is_real(weight) or not 0.0 <= weight < float("inf"):
                    raise BinderError(f"answer_weights gives {answer!r} the weight {weight!r}; a weight is a "
                                      "finite number of 0 or more"[:300])
        if self.abstain_below is not None and (not _is_real(self.abstain_below)
                                               or not 0.0 <= self.abstain_below <= 1.0):
            raise BinderError(f"abstain_below is a confidence between 0 and 1, got {self.abstain_below!r}")
        if self.seed is not None and not _is_int(self.seed):  # sent to the model with every request
            raise BinderError(f"seed is a whole number (or None), got {self.seed!r}")
        if self.calibrator is not None and not isinstance(self.calibrator, (str, os.PathLike)):
            raise BinderError(f"calibrator is 'auto', 'none' or a calibrator file's path, got {self.calibrator!r}")
        if self.calibrator is not None:
            from binder_py.calibration import CALIBRATOR_AUTO, CALIBRATOR_NONE, load_calibration

            if self.calibrator not in (CALIBRATOR_AUTO, CALIBRATOR_NONE):
                load_calibration(self.calibrator)  # a missing or bad file fails here, before any model call
        if self.concurrency < 1:
            raise BinderError(f"concurrency must be at least 1, got {self.concurrency}")
        if not isinstance(self.keep_total_row, bool):
            raise BinderError(f"keep_total_row is True or False, got {self.keep_total_row!r}")
        from binder_py.tasks import task_profile

        task_profile(self.task)  # an unknown task fails here, with the known ones
