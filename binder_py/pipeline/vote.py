"""Stage 9, vote: candidates' answers are normalised and voted (:mod:`binder_py.vote`) under the
task's strategy; the state gets its :class:`~binder_py.answer.Answer`."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import replace

from binder_py.answer import ABSTAINED, Answer, Candidate
from binder_py.calibration import (CALIBRATOR_AUTO, CALIBRATOR_NONE, answering_model, confidence,
                                   resolve_calibrator)
from binder_py.language.negation import negated_terms, negated_words, negation_polarity
from binder_py.language.program import answers_per_row
from binder_py.neural.yes_scores import UNSURE_MARGIN, unsure_of_every_row
from binder_py.normalize import key_text, normalize_answer
from binder_py.pipeline.literal_hints import literal_hints
from binder_py.pipeline.state import QuestionState
from binder_py.pipeline.text_order import text_ordered_numbers
from binder_py.pipeline.tiebreak import score_tie, scores_ties
from binder_py.discriminate.rescore import DEFAULT_BETA, likelihood_vote
from binder_py.vote import VoteCandidate, VoteResult, polarity_fit, shape_fit, sure_fit, vote

#: proposed programs' scores are log-probabilities of the choices that built them: weigh answers
#: by their programs' probabilities (β = 1)
PROPOSAL_BETA = 1.0


def cast_vote(voters: Sequence[VoteCandidate], *, strategy: str, mode: str, yes_no: bool,
              answer_weights: Mapping[str, float] | None, neural_weight: float, drop_empty: bool = True,
              drop_failed: bool = True, answer_scores: Mapping[tuple[str, ...], float] | None = None) -> VoteResult:
    """The vote of the candidates that kept their vote (after :func:`~binder_py.vote.shape_fit`), under
    ``strategy``: ``likelihood`` weighs answers by their programs' probabilities (β = 1 for proposed
    programs, whose scores are log-probabilities of the choices that built them), any other is
    :func:`binder_py.vote.vote`'s, with a tie at the top ordered by ``answer_scores`` (the model's
    scores of the tied answers, :mod:`binder_py.pipeline.tiebreak`). The live vote and
    ``binder-py report``'s re-vote both call this."""
    if strategy == "likelihood":
        return likelihood_vote(voters, yes_no=yes_no, drop_empty=drop_empty, drop_failed=drop_failed,
                               beta=PROPOSAL_BETA if mode == "discriminate" else DEFAULT_BETA)
    return vote(voters, strategy=strategy, yes_no=yes_no,  # type: ignore[arg-type]
                answer_weights=answer_weights, neural_weight=neural_weight, drop_empty=drop_empty,
                drop_failed=drop_failed, answer_scores=answer_scores)


def vote_candidates(state: QuestionState) -> QuestionState:
    settings, profile = state.settings, state.profile
    strategy = state.vote_strategy
    negated = negated_terms(state.question)
    shape = profile.answer_shape(state.question)
    every = [VoteCandidate(value=shape.read(c.value), count=c.count, mean_logprob=c.mean_logprob,
                           has_neural_calls=c.has_neural_calls, order=min(c.sample_orders), ok=c.ok,
                           sample_orders=c.sample_orders, per_row=answers_per_row(c.program),
                           negation=negation_polarity(c.program, state.question, negated),
                           unsure=any(unsure_of_every_row(call.p_yes_range) for call in c.neural_calls))
             for c in state.candidates]
    superseded = state.superseded()  # replaced by their linked versions, or linked versions that did not answer
    shaped = shape_fit([v for i, v in enumerate(every) if i not in superseded], shape)
    sure = sure_fit(shaped)
    voters = polarity_fit(sure)
    kept, shape_kept, sure_kept = {id(v) for v in voters}, {id(v) for v in shaped}, {id(v) for v in sure}
    set_aside = [id(v) not in kept for v in every]  # aligned with state.candidates
    rules = dict(strategy=strategy, mode=settings.mode, yes_no=state.yes_no,
                 answer_weights=profile.vote_weights(strategy, settings.answer_weights),
                 neural_weight=state.neural_weight, drop_empty=settings.drop_empty, drop_failed=settings.drop_failed)
    result = cast_vote(voters, **rules)  # type: ignore[arg-type]
    warnings = state.warnings
    usage = state.usage
    if strategy != "likelihood" and scores_ties(state):
        tie = score_tie(state, result.distribution)
        usage, warnings = usage + tie.usage, warnings + tie.warnings
        if tie.scores:
            result = cast_vote(voters, **rules, answer_scores=tie.scores)  # type: ignore[arg-type]
    shares = {key_text(s.key): s for s in result.distribution}
    candidates = tuple(_with_vote(c, v.value, state, shares, aside)
                       for c, v, aside in zip(state.candidates, every, set_aside))
    never = [i for i, v in enumerate(every) if i not in superseded and v.ok and shape.never_fits(v)]
    if never:
        programs = sum(state.candidates[i].count for i in never)
        warnings += (f"{programs} program(s) did not vote: their answer was a bare yes/no, and the question asks "
                     "what, which, who, when or how",)
    off_shape = [i for i, v in enumerate(every) if i not in superseded and id(v) not in shape_kept and i not in never]
    if off_shape:
        programs = sum(state.candidates[i].count for i in off_shape)
        warnings += (f"{programs} program(s) did not vote: {shape.why_set_aside()}",)
    unsure = [i for i, v in enumerate(every) if id(v) in shape_kept and id(v) not in sure_kept]
    if unsure:
        programs = sum(state.candidates[i].count for i in unsure)
        low, high = 0.5 - UNSURE_MARGIN, 0.5 + UNSURE_MARGIN
        warnings += (f"{programs} program(s) did not vote: the model was unsure of every row one of their f_col "
                     f"calls asked about (each P(yes) between {low:.1f} and {high:.1f}); other programs answered "
                     "without such a call",)
    unpolar = [i for i, v in enumerate(every) if id(v) in sure_kept and id(v) not in kept]
    if unpolar:
        programs = sum(state.candidates[i].count for i in unpolar)
        warnings += (f"{programs} program(s) did not vote: they ask the model about what the question negates "
                     f"({', '.join(negated_words(state.question))}) without negating it; other programs' "
                     "neural calls kept the negation",)
    if not result.distribution:
        answered = any(c.answered for c in candidates)
        warnings += ("no candidate's answer voted: the programs that answered were set aside (the warnings above "
                     "say why), and any others failed or returned nothing" if answered else
                     "no candidate produced an answer: every program failed or returned nothing "
                     "(see the candidates' errors)",)
    if (strategy in ("probability", "likelihood") and len(result.distribution) > 1
            and all(v.mean_logprob is None for v in voters)):  # asked for, not given: said, not dropped unsaid
        warnings += (f"the {strategy} vote needs the programs' log-probabilities, and {state.lm.name} gave "
                     "none: every program weighed the same (a majority vote)",)
    winning = next((s for s in result.distribution if s.key == result.key), None)
    if winning is not None and winning.note:  # e.g. a wide DataFrame answered by its first column only
        warnings += (winning.note,)
    value = profile.final_value(result.value, key_text(result.key) if result.key is not None else "")
    confidence_value = result.confidence
    calibrator = resolve_calibrator(settings.calibrator, state.lm.name, settings.mode)
    if not result.distribution:
        calibrator = None  # nothing voted: the confidence is 0 whatever the calibrator
    if calibrator is not None:
        confidence_value = confidence(result, calibrator=calibrator).value
        if settings.calibrator not in (CALIBRATOR_AUTO, CALIBRATOR_NONE):  # a file: said when fitted elsewhere
            model = answering_model(state.lm.name)
            other_model = bool(calibrator.model) and answering_model(calibrator.model) != model
            other_mode = bool(calibrator.modes) and settings.mode not in calibrator.modes
            if other_model or other_mode:
                warnings += (f"the calibrator {settings.calibrator} was fitted on runs of "
                             f"{calibrator.model or 'several models'} in {'/'.join(calibrator.modes) or '?'} mode, "
                             f"not of {model} in {settings.mode} mode: its P(right) may not hold for this answer",)
    if settings.abstain_below is not None and value is not None and confidence_value < settings.abstain_below:
        warnings += (f"{ABSTAINED}the answer {result.value!r} has confidence {confidence_value:.0%}, below "
                     f"{settings.abstain_below:.0%} (abstain_below)",)
        value = None
    prompt = state.prompt
    prompt_info: dict = {"lowercased_table": state.lowercased}
    if prompt is not None:
        prompt_info.update(exemplar_ids=list(prompt.exemplar_ids), dropped_exemplars=list(prompt.dropped_exemplars),
                           table_rows_shown=prompt.table_rows_shown, table_rows_total=prompt.table_rows_total,
                           prompt_tokens=prompt.prompt_tokens)
    if state.proposal is not None:
        prompt_info["proposal"] = [{"stage": s.stage, "base": s.base, "options": list(s.shown),
                                    "probabilities": list(s.probabilities), "kept": list(s.kept)}
                                   for s in state.proposal.steps]
    timings = {**state.timings, "total": time.perf_counter() - state.started}
    answer = Answer(question=state.question, value=value,
                    confidence=confidence_value, calibrated=calibrator is not None,
                    candidates=list(candidates), distribution=list(result.distribution),
                    usage=usage, mode=settings.mode, task=profile.name, title=state.title,
                    table=state.original_table, prompt=prompt_info, timings=timings,
                    warnings=list(dict.fromkeys(warnings)), lm=state.lm.name,
                    neural=state.neural_name if state.neural_allowed else None, plan=state.plan)
    told = (_unmatched_literals(answer, state), *_text_ordered(answer, state))
    if any(told):
        warnings += tuple(line for line in told if line)
        answer = replace(answer, warnings=list(dict.fromkeys(warnings)))
    return state.evolve(candidates=candidates, warnings=warnings, timings=timings, answer=answer, usage=usage)


def _unmatched_literals(answer: Answer, state: QuestionState) -> str | None:
    """A warning when the winning program compared a text column with a value no row holds (one the
    link stage could not link): with ``==`` its answer then comes from a selection of no rows (a count
    of 0, a sum of 0), which nothing else reveals."""
    winner = answer.winner
    if winner is None or winner.run is None:
        return None
    hints = literal_hints(winner.program, {"df": state.table, "table": state.table, **state.tables})
    if not hints:
        return None
    return (f"the winning program compares a value no row holds ({'; '.join(hints)}): its filter may not "
            "select the rows it meant (with ==, none at all)")


def _text_ordered(answer: Answer, state: QuestionState) -> list[str]:
    """Warnings when the winning program orders numbers a table holds as text ("$987.00" above "$2,500.00")."""
    winner = answer.winner
    if winner is None or winner.run is None:
        return []
    tables = {"df": state.table, "table": state.table, **state.tables}
    return [f"the winning program {line}" for line in text_ordered_numbers(winner.program, tables)]


def _with_vote(candidate: Candidate, read: object, state: QuestionState, shares: dict, set_aside: bool) -> Candidate:
    """``candidate`` with its vote; ``read``: its answer as it voted (:meth:`~binder_py.vote.AnswerShape.read`)."""
    settings = state.settings
    normalized = normalize_answer(read, yes_no=state.yes_no)
    answer_key = key_text(normalized.key)
    eligible = ((candidate.ok or not settings.drop_failed) and (not normalized.is_empty or not settings.drop_empty)
                and not set_aside)
    voted = bool(eligible and answer_key in shares)
    votes = shares[answer_key].weight * candidate.count / max(1, shares[answer_key].count) if voted else 0.0
    return replace(candidate, answer_key=answer_key, voted=voted, votes=votes)
