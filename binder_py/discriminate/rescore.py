"""The ``"likelihood"`` vote: sampled programs rescored by their length-normalised likelihood.

Issue 12, item 3a. Each distinct program ``c`` that ran has a ``count`` (how many
samples were identical) and ``mean_logprob`` ``ℓ_c`` (the mean token
log-probability of its text, i.e. its length-normalised likelihood). Its weight is

    weight_c = count_c × exp(β · (ℓ_c − ℓ_max))

summed per normalised answer (``ℓ_max``: the best ``ℓ`` among the voters, so the
best program weighs its count and the others less). ``β`` sets how much the
likelihood counts against the vote:

- ``β = 0`` is the majority vote;
- ``β = 1`` is :func:`binder_py.vote.vote`'s ``"probability"`` strategy (the weights
  are only scaled by the constant ``exp(-ℓ_max)``);
- larger ``β`` trusts the likelihood more: with the default ``β = 5`` a program whose
  mean token log-probability is 0.14 nats lower weighs half as much per sample.

Length-normalised log-probabilities of different programs for one question differ
by tenths of a nat, so ``β = 1`` barely moves a vote; ``5`` is a starting point, to
be fitted on a dev set (:mod:`binder_py.calibration` fits the confidence; choose
``β`` by dev accuracy).

For the proposer's ranked programs (count 1 each, ``score`` = log-probability of
the program under the model's step-wise choices) use ``β = 1``: the weight is then
the program's probability and an answer's weight the total probability of the
programs that give it (the answer's marginal probability).

A candidate without ``mean_logprob`` (or NaN) is scored as the *mean* ``ℓ`` of the
candidates that have one (neutral, not as good as the best), and as ``ℓ_max`` when
no candidate has one (then it is the majority vote).

Everything else — who votes, normalisation, ranking, ties, the shape of the result
— is :func:`binder_py.vote.vote`'s (this function calls it), so a ``"likelihood"``
result has the same fields as any other vote, with ``strategy="likelihood"`` and
each answer's ``mean_logprob`` the count-weighted mean of its candidates' own values.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence

from binder_py.vote import VoteCandidate, VoteResult, vote

__all__ = ["DEFAULT_BETA", "STRATEGY_NAME", "likelihood_vote", "likelihood_weights"]

STRATEGY_NAME = "likelihood"
#: Likelihood sharpness for sampled programs (a starting point, see the module docstring).
DEFAULT_BETA = 5.0


def _logprob(candidate: VoteCandidate) -> float | None:
    lp = candidate.mean_logprob
    if lp is None:
        return None
    lp = float(lp)
    return None if math.isnan(lp) else lp


def likelihood_weights(candidates: Sequence[VoteCandidate], *, beta: float = DEFAULT_BETA) -> list[float]:
    """Per-candidate weight ``count × exp(β·(ℓ − ℓ_max))`` (missing ``ℓ``: the mean of the others)."""
    if not beta >= 0 or math.isinf(beta):
        raise ValueError(f"beta must be a finite number ≥ 0, got {beta!r}")
    known = [(lp, c.count) for c in candidates if (lp := _logprob(c)) is not None]
    if any(math.isinf(lp) and lp > 0 for lp, _ in known):
        raise ValueError("mean_logprob must not be +inf")
    finite = [(lp, n) for lp, n in known if math.isfinite(lp)]
    best = max((lp for lp, _ in finite), default=0.0)
    neutral = sum(lp * n for lp, n in finite) / sum(n for _, n in finite) if finite else best
    weights = []
    for c in candidates:
        lp = _logprob(c)
        lp = neutral if lp is None else lp
        weights.append(c.count * (math.exp(beta * (lp - best)) if math.isfinite(lp) else 0.0))
    return weights


def likelihood_vote(candidates: Sequence[VoteCandidate], *, beta: float = DEFAULT_BETA, yes_no: bool = False,
                    drop_empty: bool = True, drop_failed: bool = True) -> VoteResult:
    """Vote with weights ``count × exp(β·(ℓ − ℓ_max))`` (see the module docstring).

    Only voters (``ok``, non-empty answers, as :func:`~binder_py.vote.vote` decides)
    set ``ℓ_max`` and the neutral value, so a failed program's likelihood changes nothing.

    Raises:
        ValueError: ``beta`` negative or infinite, ``count < 1``, ``mean_logprob`` = +inf.
    """
    from binder_py.normalize import normalize_answer

    voting = [c for c in candidates
              if (c.ok or not drop_failed) and not (drop_empty and normalize_answer(c.value, yes_no=yes_no).is_empty)]
    weights = iter(likelihood_weights(voting, beta=beta))
    # vote()'s "probability" strategy weighs count × exp(mean_logprob): hand it log(weight / count).
    voting_ids = {id(c) for c in voting}
    shifted = []
    for c in candidates:
        if id(c) in voting_ids:
            w = next(weights) / c.count
            shifted.append(dataclasses.replace(c, mean_logprob=math.log(w) if w > 0 else -math.inf))
        else:
            shifted.append(c)
    result = vote(shifted, strategy="probability", yes_no=yes_no, drop_empty=drop_empty, drop_failed=drop_failed)
    own = {}
    for c in voting:
        key = normalize_answer(c.value, yes_no=yes_no).key
        lp = _logprob(c)
        if lp is not None and math.isfinite(lp):
            total, n = own.get(key, (0.0, 0))
            own[key] = (total + lp * c.count, n + c.count)
    distribution = [dataclasses.replace(s, mean_logprob=(own[s.key][0] / own[s.key][1]) if s.key in own else None)
                    for s in result.distribution]
    return dataclasses.replace(result, distribution=distribution, strategy=STRATEGY_NAME)
