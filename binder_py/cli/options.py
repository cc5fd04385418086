"""The options several commands share, declared once (``ask``, ``eval``, ``exec``)."""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from binder_py.pipeline import MODES, VOTE_STRATEGIES
from binder_py.pipeline.settings import MAX_N
from binder_py.tasks import PROFILES


def _bounded(convert: Callable[[str], Any], noun: str, low: float, high: float | None,
             shown: Callable[[float], str], value_text: Callable[[str, Any], str]) -> Callable[[str], Any]:
    """An argparse type: ``convert(text)`` within ``low``..``high`` (and finite), refused in the
    option's own words (``argument --n: a whole number from 1 to 10,000, got 100,000``)."""
    span = f"from {shown(low)} to {shown(high)}" if high is not None else f"of {shown(low)} or more"

    def parse(text: str) -> Any:
        try:
            value = convert(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{noun} {span}, got {text!r}") from None
        if not math.isfinite(value) or value < low or (high is not None and value > high):
            raise argparse.ArgumentTypeError(f"{noun} {span}, got {value_text(text, value)}")
        return value

    parse.__name__ = noun.removeprefix("a ")
    return parse


def whole_number(low: int, high: int | None = None) -> Callable[[str], int]:
    """A whole number from ``low`` (to ``high``); see :func:`_bounded`."""
    return _bounded(int, "a whole number", low, high, lambda x: f"{x:,}", lambda _text, value: f"{value:,}")


def real_number(low: float, high: float | None = None) -> Callable[[str], float]:
    """A finite number from ``low`` (to ``high``); see :func:`_bounded`."""
    return _bounded(float, "a number", low, high, lambda x: f"{x:g}", lambda text, _value: text)


def ask_settings(args: argparse.Namespace) -> dict[str, Any]:
    """The :class:`~binder_py.pipeline.AskSettings` the sampling options ask for (only those given)."""
    # --task is an option of ask and the positional benchmark of eval
    given = {"task": vars(args).get("task"), "mode": args.mode, "n": args.n, "vote": args.vote,
             "num_shots": args.shots, "seed": args.seed, "abstain_below": args.abstain_below,
             "constrained": args.constrained, "calibrator": args.calibrator, "core_shots": args.core_shots,
             "table_rows": args.table_rows, "neural_weight": args.neural_weight,
             "link_literals": args.link_literals, "score_ties": args.score_ties,
             "keep_total_row": args.keep_total_row}
    return {name: value for name, value in given.items() if value is not None}


def refuse_unused_neural(args: argparse.Namespace) -> None:
    """``--neural`` with ``--mode python`` or ``e2e``, which make no neural calls: the answer's warnings
    said so, but the command prints those only with --explain/--json, so it went unsaid."""
    from binder_py.errors import BinderError

    if args.neural is not None and args.mode in ("python", "e2e"):
        why = "its programs make no neural calls" if args.mode == "python" else "the model answers directly"
        raise BinderError(f"--neural is not used with --mode {args.mode} ({why}); leave it out, or use "
                          "--mode binder or discriminate")


def eval_extra_settings(args: argparse.Namespace) -> dict[str, Any] | None:
    """The :func:`ask_settings` that ``run_eval`` takes as ``extra_settings`` (those not its own arguments)."""
    own = ("task", "mode", "n", "vote", "num_shots", "seed")  # eval's --task is the benchmark
    extra = {name: value for name, value in ask_settings(args).items() if name not in own}
    return extra or None


def check_last_argument(last: str, what: str, usage: str) -> None:
    """The tables come first and ``what`` (the question, the program file) last: a table file in
    the last place was given first (``ask QUESTION TABLE``) and is refused in those words, not as
    a table file named like the question."""
    from binder_py.errors import BinderError
    from binder_py.tables import ACCEPTED_EXTENSIONS

    path = Path(last).expanduser()
    if path.suffix.lower() in ACCEPTED_EXTENSIONS and path.is_file():
        raise BinderError(f"the {what} comes last, after the table file(s): {usage} ({last!r} is a table file)")


def add_model_options(parser: argparse.ArgumentParser, *, lm_help: str, neural_help: str) -> None:
    """``--lm SPEC`` and ``--neural SPEC``."""
    parser.add_argument("--lm", metavar="SPEC", help=lm_help)
    parser.add_argument("--neural", metavar="SPEC", help=neural_help)


def add_sampling_options(parser: argparse.ArgumentParser, *, tasks: Sequence[str] | None = None,
                         task_default: str | None = "analyst", seed_default: int | None = None) -> None:
    """``--mode``, ``--n``, ``--vote``, ``--shots``, ``--seed``, ``--no-cache`` and (with
    ``tasks``) ``--task``: how candidates are sampled and voted."""
    parser.add_argument("--mode", choices=MODES, default="binder",
                        help="binder: programs with neural calls (default); python: plain pandas only; "
                             "e2e: the model answers from the table directly; discriminate: a symbolic proposer "
                             "builds programs over the table and the model scores their steps (docs/DISCRIMINATE.md)")
    parser.add_argument("--n", type=whole_number(1, MAX_N), metavar="N",
                        help="candidate programs per question (default: the task's, 20 for wikitq, 50 for "
                             "tabfact; 5 with the embedded model; 1 answer in e2e mode; not used in discriminate mode)")
    if tasks is not None:
        parser.add_argument("--task", default=task_default, choices=tuple(tasks),
                            help="the task profile: prompts, sampling, voting (default analyst: your own data, "
                                 "cells kept as they are)")
    parser.add_argument("--vote", choices=VOTE_STRATEGIES,
                        help="voting strategy (default: the task's: " + ", ".join(
                            f"{name} {profile.vote}" for name, profile in PROFILES.items()) + ")")
    parser.add_argument("--neural-weight", type=real_number(0.0), metavar="W",
                        help="under the program_biased vote, a program with neural calls weighs W plain ones "
                             "(default: 10, the paper's; 1 with the embedded model, whose neural answers are "
                             "less reliable)")
    parser.add_argument("--shots", type=whole_number(0), metavar="K", help="exemplars in the prompt")
    parser.add_argument("--core-shots", type=whole_number(0), metavar="C",
                        help="of those, how many are the task's core exemplars, the same for every question and "
                             "shown first (default: 3 with the embedded model, which then keeps them evaluated "
                             "from one question to the next; 0 otherwise)")
    parser.add_argument("--table-rows", type=whole_number(0), metavar="R",
                        help="show at most R rows of the table in the prompt; programs still run on every row "
                             "(in e2e mode the model answers from the rows shown) "
                             "(default: 20 with the embedded model, else as many as fit; 0: as many as fit)")
    parser.add_argument("--seed", type=int, default=seed_default,
                        help="sampling seed, where the model supports one"
                             + (f" (default {seed_default})" if seed_default is not None else ""))
    parser.add_argument("--no-cache", action="store_true", help="do not answer from the model response cache")
    parser.add_argument("--abstain-below", type=real_number(0.0, 1.0), metavar="P",
                        help="give no answer when its confidence is below P (0 to 1)")
    parser.add_argument("--calibrator", metavar="FILE|auto|none",
                        help="the confidence as P(right) from this calibrator (fitted on dev runs by 'binder-py "
                             "calibrate'; docs/DISCRIMINATE.md); auto (the default): the one shipped for the model "
                             "and mode, if any; none: the raw vote share")
    parser.add_argument("--unconstrained", dest="constrained", action="store_false", default=None,
                        help="sample programs freely, without the grammar of the table's columns (on by "
                             "default for models that take grammars)")
    parser.add_argument("--no-link", dest="link_literals", action="store_false", default=None,
                        help="turn off the link stage: no program runs again as it rewrote it (a value no "
                             "cell holds linked to the cell it means, comparisons joined by & or | regrouped, a "
                             "column of money or dates ordered or read by value, a one-value row filter asked of "
                             "every row, a dropped negation restored; docs/LANGUAGE.md, \"Value linking\")")
    parser.add_argument("--keep-total-row", action="store_true", default=None,
                        help="keep a table's last row when it adds up the rows above it (Total | 11 | 11 | 33); "
                             "by default the programs run without it, and the answer says so")
    parser.add_argument("--no-score-ties", dest="score_ties", action="store_false", default=None,
                        help="break a tie at the top of the vote by the earliest sample, not by the model's "
                             "score of each tied answer (on by default for models that take grammars and "
                             "report log-probabilities; docs/DISCRIMINATE.md, \"Scoring tied answers\")")


def add_engine_options(parser: argparse.ArgumentParser) -> None:
    """``--engine`` and ``--ray-address``: where the questions run (docs/SCALE.md)."""
    from binder_py.engines import ENGINES

    parser.add_argument("--engine", choices=ENGINES, default="local",
                        help="local: threads of this process (default); ray: Ray tasks on a cluster, results "
                             "written here (needs pip install \"binder-py[ray]\"; docs/SCALE.md)")
    parser.add_argument("--ray-address", metavar="ADDR",
                        help="the Ray cluster for --engine ray (default: $RAY_ADDRESS, else a new local Ray), "
                             "e.g. ray://head:10001 or auto")
