"""A row filter that drops the question's negation, negated as the question asks.

"which is the best-selling shirt made in North America and with **no chemicals**?" asked as
``df[m & f_col("Does it contain chemicals?", ["shirt"])]`` keeps the shirts with chemicals: the
opposite question (:mod:`binder_py.language.negation` reads which programs keep the negation and
which drop it). The vote already sets such a program aside when one that keeps the negation
answered (vote rule 0). When none did — every program that asked the model about the negated word
dropped the negation, as the 1.5B model's programs often all do — :func:`restore_negation` writes
each dropping ``f_col`` mask negated, ``df[m & ~(f_col("Does it contain chemicals?", ["shirt"]))]``,
and the link stage (:mod:`binder_py.pipeline.link`) runs it in its source's place. The model's
answers are the same (the call's question is unchanged, so they come from the neural-call cache);
only which rows are kept changes.

Only ``f_col`` masks are negated: an ``f_val`` answers one value, and "Which shirt has chemicals?"
negated is no question. A mask that asks the negated word of a column that cannot hold it ("Does it
contain chemicals?" asked of the countries) is negated too, and then keeps what the model's no
rows are, as its source kept its yes rows: this stage reads the program, not whether its call
fits its column.
"""

from __future__ import annotations

import ast

from binder_py.language.negation import call_readings
from binder_py.language.program import KIND_OF_FORM
from binder_py.pipeline.precedence import SourceSpans

__all__ = ["restore_negation"]


def restore_negation(program: str, terms: frozenset[str], words: str) -> tuple[str, tuple[str, ...]] | None:
    """``program`` with each ``f_col`` row mask that drops the negation of ``terms`` (stems of the words
    the question negates, :func:`binder_py.language.negation.negated_terms`; ``words``: those words as
    the question writes them, for the note) negated with ``~(...)``, and one note per mask; None when
    the program has no such mask or does not parse."""
    if not terms:
        return None
    try:
        tree = ast.parse(program)
        source = SourceSpans(program)
        spans = sorted({source.span(end) for call, end, polarity in call_readings(tree, terms)
                        if polarity == "drops" and isinstance(call.func, ast.Name)
                        and KIND_OF_FORM.get(call.func.id) == "col"})
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    outermost = [s for s in spans if not any(o != s and o[0] <= s[0] and s[1] <= o[1] for o in spans)]
    if not outermost:
        return None
    text = program
    notes = []
    for start, end in sorted(outermost, key=lambda s: -s[0]):
        mask = program[start:end]
        text = text[:start] + f"~({mask})" + text[end:]
        notes.append(f"`{mask}` negated as `~({mask})`: the question excludes {words}, and no program that "
                     "kept that negation answered")
    return text, tuple(reversed(notes))
