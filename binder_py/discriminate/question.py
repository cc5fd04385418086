"""What the proposer reads in a question: words, numbers, cell values, conditions, and cue words.

Nothing here decides the program — the language model does that among the
candidates. These functions only say which candidates are worth showing it
(and in what order), so the number of candidates stays bounded:

- :func:`mentioned_values` — cells of text columns that the question mentions
  (whole value as a phrase, or most of its words), strongest first;
- :func:`numbers_in` — numbers written in the question (``10,000``, ``2.5``, ``2010``);
- :func:`condition_phrases` — pieces of the question that may be a row condition
  the table cannot check by itself (``made in north america``, ``with no
  chemicals``), each turned into a yes/no question for ``f_col`` by
  :func:`neural_question`;
- :func:`cues` — which final operations the wording suggests (``how many`` →
  count, ``most``/``highest`` → largest, ``total`` → sum, …).
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass

import pandas as pd

__all__ = ["words", "stem", "other_words", "numbers_in", "mentioned_values", "Phrase", "condition_phrases", "neural_question", "cues",
           "overlap"]

_WORD = re.compile(r"[\w][\w'\-\.]*[\w]|[\w]", re.UNICODE)
_NUMBER = re.compile(r"(?<![\w.])[-+]?\d{1,3}(?:,\d{3})+(?:\.\d+)?(?![\w])"  # 10,000 and 1,234.5
                     r"|(?<![\w.])(?<!\d,)[-+]?\d+(?:\.\d+)?(?!\w|,\d)")  # 2010, 2.5 (not inside 10,000)

STOPWORDS = frozenset("""a an the of in on at to for by from with and or but is are was were be been being do does did
what which who whom whose when where why how many much that this these those it its his her their there than then
as into onto about after before over under above below than between most least more less any all each every list
name give tell me number total has have had""".split())

_MAX_WORDS = frozenset("most highest largest biggest greatest maximum max top best longest latest tallest heaviest "
                       "oldest richest more larger higher greater".split())
_MIN_WORDS = frozenset("least lowest smallest fewest minimum min worst shortest earliest youngest lightest cheapest "
                       "less fewer smaller lower".split())
_CONNECTORS = re.compile(r"\s*(?:,|;|\band\b|\bbut\b|\bwith\b|\bthat\b|\bwhich\b|\bwho\b|\bwhose\b|\bwhere\b)\s*")
_LEADING = re.compile(r"^(?:(?:what|which|who|whom|where|when|how many|how much|name|list|give|tell me)\b\s*)?"
                      r"(?:(?:is|are|was|were|did|does|do|has|had|have)\b\s*)?(?:(?:the|a|an)\b\s*)?")


def words(text: str) -> list[str]:
    """Case-folded words (hyphens and apostrophes kept inside words)."""
    return _WORD.findall(text.casefold())


def stem(word: str) -> str:
    """A plural's ``s`` set aside (``medals`` → ``medal``; words of three letters or fewer kept)."""
    return word[:-1] if len(word) > 3 and word.endswith("s") else word


def other_words(text: str, column: str, allowed: Collection[str]) -> set[str]:
    """The words of ``text`` that are neither ``allowed`` nor the column's own, a plural's ``s`` aside."""
    own = {stem(w) for w in words(column)}
    return {w for w in words(text) if w not in allowed and stem(w) not in allowed and stem(w) not in own}


def content_words(text: str) -> set[str]:
    return {w for w in words(text) if w not in STOPWORDS}


def overlap(a: str, b: str) -> float:
    """Share of ``b``'s content words that occur in ``a`` (0 when ``b`` has none)."""
    target = content_words(b)
    return len(target & content_words(a)) / len(target) if target else 0.0


def numbers_in(question: str) -> list[int | float]:
    """Numbers written in the question, in order, without repeats (``10,000`` → 10000)."""
    found: list[int | float] = []
    for match in _NUMBER.finditer(question):
        text = match.group(0).replace(",", "")
        value: int | float = float(text) if "." in text else int(text)
        if value not in found:
            found.append(value)
    return found


def _phrase_in(phrase: str, text: str) -> bool:
    return re.search(rf"(?<!\w){re.escape(phrase)}(?!\w)", text) is not None


@dataclass(frozen=True)
class Mention:
    column: str
    value: object
    strength: float  # 1.0: the whole cell occurs in the question; less: that share of its words


def mentioned_values(table: pd.DataFrame, question: str, *, limit: int = 8, min_share: float = 0.6) -> list[Mention]:
    """Cells of text columns that the question mentions, strongest (then longest) first, at most ``limit``."""
    text = " ".join(words(question))
    q_words = content_words(question)
    found: dict[tuple[str, str], Mention] = {}
    for column in table.columns:
        series = table[column]
        if pd.api.types.is_numeric_dtype(series) or pd.api.types.is_bool_dtype(series):
            continue
        for value in pd.unique(series.dropna()):
            if not isinstance(value, str) or not value.strip():
                continue
            cell = " ".join(words(value))
            if not cell:
                continue
            if _phrase_in(cell, text) and content_words(value):
                strength = 1.0
            else:
                cell_words = content_words(value)
                if len(cell_words) < 2:
                    continue
                strength = len(cell_words & q_words) / len(cell_words)
                if strength < min_share:
                    continue
            key = (column, value)
            found[key] = Mention(column, value, strength)
    ranked = sorted(found.values(), key=lambda m: (-m.strength, -len(str(m.value)), str(m.column)))
    return ranked[:limit]


@dataclass(frozen=True)
class Phrase:
    """A piece of the question that may be a row condition; ``connector`` is the word that introduced it."""

    text: str
    connector: str = ""


def condition_phrases(question: str, table: pd.DataFrame, *, limit: int = 3) -> list[Phrase]:
    """Pieces of the question that may be conditions on rows, at most ``limit``, in question order.

    The question is cut at connectors (``and``, ``with``, ``that``, ``,``, …); from each
    piece, the leading wh-words, column names and superlative/cue words are dropped (they
    are the answer and the sort, not a condition), and pieces left with no content word,
    or whose words are all cells of the table (an equality filter says that better), are
    dropped.
    """
    body = question.strip().rstrip("?.! ").casefold()
    column_words = set().union(*(content_words(str(c)) for c in table.columns)) if len(table.columns) else set()
    column_names = sorted((words(str(c)) for c in table.columns), key=len, reverse=True)
    cell_words: set[str] = set()
    for column in table.columns:
        if not pd.api.types.is_numeric_dtype(table[column]):
            for value in pd.unique(table[column].dropna()):
                cell_words |= content_words(str(value))
    skip = _MAX_WORDS | _MIN_WORDS | {"best-selling", "selling", "one", "ones"}
    phrases: list[Phrase] = []
    pieces = _CONNECTORS.split(body)
    connectors = [""] + [m.group(0).strip() for m in _CONNECTORS.finditer(body)]
    for piece, connector in zip(pieces, connectors):
        piece = _LEADING.sub("", piece.strip())
        kept = words(piece)
        while kept and (kept[0] in STOPWORDS or kept[0] in skip):
            kept = kept[1:]
        singular = [stem(w) for w in kept]
        name = next((n for n in column_names if n and (kept[:len(n)] == n or singular[:len(n)] == n)), None)
        if name is not None and len(kept) > len(name):
            kept = kept[len(name):]  # one whole column name leading the piece is the answer ("shirt made in …")
        content = {w for w in kept if w not in STOPWORDS} - cell_words - column_words - skip
        content = {w for w in content if not re.fullmatch(r"[-+]?[\d.,]+", w)}
        if not content:
            continue
        phrase = Phrase(" ".join(kept), connector if connector not in (",", ";", "and", "but") else "")
        if phrase not in phrases:
            phrases.append(phrase)
    return phrases[:limit]


def neural_question(phrase: Phrase) -> str:
    """A yes/no question about one row for ``f_col`` (``with no chemicals`` → ``Does it have no chemicals?``)."""
    if phrase.connector == "with":
        return f"Does it have {phrase.text}?"
    first, *rest = phrase.text.split()
    verb = {"are": "is", "were": "was", "have": "has", "do": "does"}.get(first, first)
    if verb in ("is", "was", "has", "had", "does", "did") and rest:
        return f"{verb.capitalize()} it {' '.join(rest)}?"
    return f"Is it {phrase.text}?"


def cues(question: str) -> set[str]:
    """Final operations the wording suggests: ``count``, ``sum``, ``mean``, ``max``, ``min``, ``first``,
    ``last``, ``previous``, ``next``."""
    text = question.casefold()
    found: set[str] = set()
    ws = set(words(question))
    if re.search(r"\bhow many\b|\bnumber of\b|\bcount\b", text):
        found.add("count")
    if ws & {"total", "sum", "combined", "altogether", "overall"}:
        found.add("sum")
    if ws & {"average", "mean"}:
        found.add("mean")
    if ws & _MAX_WORDS or re.search(r"best[- ]selling|\bthe most\b", text):
        found.add("max")
    if ws & _MIN_WORDS:
        found.add("min")
    if ws & {"first", "top"}:
        found.add("first")
    if ws & {"last", "final", "bottom"}:
        found.add("last")
    if ws & {"previous", "before", "preceding", "above", "prior"}:
        found.add("previous")
    if ws & {"next", "after", "following", "below", "succeeding"}:
        found.add("next")
    return found
