"""Yes/no row questions that only ask whether a cell mentions a word, answered by computing.

Small models write ``f_col("Was arsenic produced?", "Comments")`` over a column of free text where
``df["Comments"].str.contains("arsenic")`` would do, and the embedded 1.5B model then answered yes for
8 or 9 of a table's 14 mines, 3 of whose comments mention arsenic; it answered "Did they play
Seattle?" no for all 37 games, 4 of whose opponents are Seattle. Across the recorded 1.5B runs, in the
count programs (``df[f_col(q, col)].shape[0]``) whose question names a word that at most half of the
column's cells hold, the cells holding the rarest such word gave the gold count in 7 calls where the
model's rows did not, and the model's rows in none where the cells did not (docs/LANGUAGE.md). So,
when :func:`mentioned_words` finds that the question asks exactly that, the rows are answered without
the model:

* the question's words, other than the frame of a yes/no question about a row (is, was, it, the, in,
  from, …), generic nouns for what a row is (city, team, player, …), the column's own words and a few
  pronouns and verbs of relation that a cell does not repeat (they, play, produce, feature, include,
  mention, …), are held whole, all of them, by at least one of the call's cells ("Was arsenic
  produced?" over comments that say "produced copper and arsenic"); words no cell holds together ("Is
  it in Europe?" over city names, "Was it a win?" over ``W 3–1``) leave the question to the model,
  which knows what the cells do not say;
* no negation, conjunction, comparison or number ("Was no arsenic produced?", "Is it scrapped or
  destroyed?", "Is it in the first stage of 2008?" are asked);
* at most half of the cells hold them (words most cells hold, as "months" over ``12 months``, ``18
  months``, …, do not tell the rows apart).

A row whose cell holds those words (whole, casefolded; a plural's ``s`` aside) is yes, unless the cell
also holds a negation ("no arsenic", "not vegan": that row is asked), and any other row is no. Each computed
row's raw output says so ("mine x: yes (computed, not asked: the cell mentions 'arsenic')"). It is the
last reader tried (:data:`binder_py.neural.computed.READERS`): a question an equality, a date, an
extreme or a comparison answers is theirs.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from binder_py.discriminate.question import other_words, stem, words
from binder_py.neural.comparisons import Decision, is_missing
from binder_py.neural.equalities import FRAME_WORDS, ROW_NOUNS, phrase_of
from binder_py.normalize import whole_phrase_in

__all__ = ["mentioned_words", "mention_reader"]

#: words that make the question more than "does the cell mention it": negation, conjunction, comparison,
#: quantity, position
_DECLINE = frozenset("""not no nor or and but without never except excluding other than more less most least fewer
fewest greater higher lower larger smaller over under above below before after first last only any all every each
same different between many much times""".split())
#: words that, in a cell that mentions the asked words, may deny them ("no arsenic", "not vegan"): such a
#: row is asked
_NEGATION = frozenset("no not non nor never without none neither".split())
#: words of a yes/no question about a row that a cell does not repeat: pronouns, auxiliaries, and verbs of
#: relation between the row and the word the question names
_RELATION = frozenset("""they he she we you them him his her their also ever was were will would could can
play plays played playing produce produces produced producing feature features featured include includes
included mention mentions mentioned contain contains contained appear appears appeared list lists involve
involves involved have has had get got make made""".split())


def mentioned_words(question: str, column: str, cells: Sequence[Any]) -> tuple[str, ...] | None:
    """The words (casefolded, in alphabetical order) whose mention in a row's cell is all the question
    asks, or None (see the module docstring)."""
    if re.search(r"\d", question):
        return None
    text = words(question)
    if any(w in _DECLINE or w.endswith("n't") for w in text):
        return None
    asked = other_words(" ".join(text), str(column), FRAME_WORDS | ROW_NOUNS | _RELATION)
    asked = {w for w in asked if re.search(r"[^\W\d_]", w)}
    if not asked:
        return None
    phrases = [phrase_of(str(cell)) for cell in cells if not is_missing(cell)]
    if len(phrases) < 2:
        return None
    holding = [phrase for phrase in phrases if all(_holds(phrase, word) for word in asked)]
    if not holding or len(holding) * 2 > len(phrases):
        return None  # a condition no cell speaks to (the model's), or words most cells hold
    return tuple(sorted(asked))


def _holds(phrase: str, word: str) -> bool:
    """Whether ``phrase`` holds ``word`` whole (or its singular: "medals" → "medal")."""
    return any(whole_phrase_in(form, phrase) for form in {word, stem(word)})


def mention_reader(question: str, column: str, cells: Sequence[Any]) -> Callable[[Any], Decision] | None:
    """How a row's cell answers ``question`` when it only asks whether the cell mentions a word (see the
    module docstring); None for any other question."""
    asked = mentioned_words(question, column, cells)
    if asked is None:
        return None
    shown = " and ".join(repr(word) for word in asked)

    def decide(cell: Any) -> Decision:
        if is_missing(cell):
            return None
        phrase = phrase_of(str(cell))
        if not all(_holds(phrase, word) for word in asked):
            return False, f"the cell does not mention {shown}"
        if any(w in _NEGATION or w.endswith("n't") for w in phrase.split()):
            return None  # "no arsenic", "not vegan": the model reads it
        return True, f"the cell mentions {shown}"

    return decide
