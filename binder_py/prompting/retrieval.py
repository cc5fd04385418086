"""Choosing the in-context exemplars for a question.

Strategies
----------
``fixed``
    The first ``k`` exemplars in file order, in file order.
``bm25``
    :class:`rank_bm25.BM25Okapi` over each exemplar's question plus column
    names; the query is the question plus the target table's column names.
``bleu``
    Smoothed sentence BLEU-4 (:func:`sentence_bleu`) between the question and
    each exemplar's question.
a callable ``score(question, table, exemplar) -> float``
    Any other similarity (e.g. embeddings).

For the similarity strategies the ``k`` most similar exemplars are kept (ties:
earlier in the file wins) and returned **least similar first, most similar
last**, so the most similar exemplar sits right before the target question and
the fitting step drops the least similar first. Exemplars with equal scores
stay in file order.

Mode ``python`` keeps only exemplars whose program makes no neural call.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Literal, Union

import pandas as pd

from binder_py.errors import BinderError
from binder_py.prompting.exemplars import Exemplar

__all__ = ["Strategy", "select_exemplars", "tokenize", "sentence_bleu", "similarity_scores"]

Scorer = Callable[[str, "pd.DataFrame | None", Exemplar], float]
Strategy = Union[Literal["fixed", "bm25", "bleu"], Scorer]
STRATEGIES = ("fixed", "bm25", "bleu")
PROMPT_MODES = ("binder", "python", "e2e")  # the modes that have prompts (discriminate has its own)
_WORD = re.compile(r"[a-z0-9]+")


def tokenize(text: str) -> list[str]:
    """Lower-cased runs of letters and digits (``"Club's caps-2"`` -> ``["club", "s", "caps", "2"]``)."""
    return _WORD.findall(text.lower())


def _ngrams(tokens: Sequence[str], n: int) -> Counter[tuple[str, ...]]:
    return Counter(tuple(tokens[i:i + n]) for i in range(len(tokens) - n + 1))


def sentence_bleu(hypothesis: Sequence[str], reference: Sequence[str], max_n: int = 4) -> float:
    """Sentence BLEU with add-one smoothing of the 2..4-gram precisions (Lin & Och, 2004).

    Unigram precision is not smoothed (no shared word: 0). Brevity penalty as
    in BLEU. Token lists in, a score in [0, 1] out.
    """
    if not hypothesis or not reference:
        return 0.0
    log_sum = 0.0
    for n in range(1, max_n + 1):
        hyp, ref = _ngrams(hypothesis, n), _ngrams(reference, n)
        overlap = sum(min(c, ref[g]) for g, c in hyp.items())
        total = sum(hyp.values())
        if n == 1:
            if overlap == 0:
                return 0.0
            precision = overlap / total
        else:
            precision = (overlap + 1) / (total + 1)
        log_sum += math.log(precision) / max_n
    c, r = len(hypothesis), len(reference)
    brevity = 1.0 if c > r else math.exp(1 - r / c)
    return brevity * math.exp(log_sum)


def bm25_scores(documents: Sequence[str], query: str) -> list[float]:
    """BM25 (:class:`rank_bm25.BM25Okapi`) score of each document for ``query``, over :func:`tokenize`'s words."""
    from rank_bm25 import BM25Okapi

    corpus = [tokenize(d) or ["<empty>"] for d in documents]
    return [float(s) for s in BM25Okapi(corpus).get_scores(tokenize(query))]


def similarity_scores(exemplars: Sequence[Exemplar], question: str, table: pd.DataFrame | None,
                      strategy: Strategy) -> list[float]:
    """One similarity score per exemplar (higher is more similar)."""
    if not exemplars:
        return []
    if callable(strategy):
        return [float(strategy(question, table, e)) for e in exemplars]
    if strategy == "fixed":
        return [0.0] * len(exemplars)
    if strategy == "bleu":
        hyp = tokenize(question)
        return [sentence_bleu(hyp, tokenize(e.question)) for e in exemplars]
    if strategy == "bm25":
        columns = [str(c) for c in table.columns] if table is not None else []
        return bm25_scores([e.question + " " + " ".join(e.columns) for e in exemplars],
                           question + " " + " ".join(columns))
    raise BinderError(f"unknown exemplar selection {strategy!r}; use one of: {', '.join(STRATEGIES)} "
                      "(or a function score(question, table, exemplar) -> float)")


def select_exemplars(exemplars: Sequence[Exemplar], question: str, table: pd.DataFrame | None = None, *,
                     k: int, strategy: Strategy = "bm25", mode: str = "binder") -> list[Exemplar]:
    """The ``k`` exemplars to show, least similar first and most similar last (see the module docstring)."""
    if mode not in PROMPT_MODES:
        raise BinderError(f"unknown mode {mode!r}; use one of: {', '.join(PROMPT_MODES)}")
    if k < 0:
        raise BinderError(f"the number of exemplars must be 0 or more, got {k}")
    pool = [e for e in exemplars if not (mode == "python" and e.uses_neural)]
    if strategy == "fixed":
        return pool[:k]
    scores = similarity_scores(pool, question, table, strategy)
    ranked = sorted(range(len(pool)), key=lambda i: (-scores[i], i))[:k]
    ranked.sort(key=lambda i: (scores[i], i))
    return [pool[i] for i in ranked]
