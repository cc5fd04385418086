"""Does a program keep the question's negation? A neural call that asks the model about what the
question negates must negate it too, in its own words or in the program.

"which is the best-selling shirt made in North America and with **no chemicals**?" negates
*chemicals*. A program that asks ``f_col("Does it contain chemicals?", ["shirt"])`` and keeps the
rows where the model said yes answers the opposite question; one that asks "Does it contain no
chemicals?", or "Does it contain chemicals?" and keeps ``~f_col(...)`` or ``f_col(...) == "no"``,
keeps the negation. Small models drop it often (the shirts question, 1.5B embedded model, five
seeds: 17 of the 24 sampled programs that asked about chemicals).

:func:`negated_words` reads the words a question negates: the first content word after ``no``,
``not``, ``without``, ``never``, ``non``, ``nor`` or a verb ending in ``n't``, skipping articles,
auxiliaries and prepositions ("not from canada": *canada*), never a bare number. ``No.``/``no 5``/
``no of`` is the abbreviation of number, and "or not", "not only" and "yes or no" negate nothing.
"outside of"/"outside the", "other than", "except (for)" and "excluding" negate as
*not* does ("the highest paid employee outside of Europe": *europe*). A
content word right after an ``or``/``nor`` that follows the negated word is negated too: "no meat or
fish" negates *meat* and *fish* (but "no chemicals or is made in Canada" only *chemicals*).

:func:`negation_polarity` reads a program (never run here). A neural call is *about* a negated word
when its question holds it (compared by a crude stem: ``chemicals``/``chemical``). An ``f_val`` is
judged by its question alone; an ``f_col`` only where its answer selects rows (``df[...]``,
``.loc[...]``, ``&``/``|`` of masks), climbing through ``~``/``not``, ``== "no"``, ``!= "yes"``,
``== False``, ``.eq``/``.ne`` and ``.isin(["no"])`` on the way. The call's question and the program
together negate the word an odd number of times (its own *no*/*not*/*…-free*/*lacks*, once a trailing
"yes or no?"/"or not?" is set aside, and the program's negations) to keep it, an even number (none, or
two: ``~f_col("Is it chemical-free?")``) to drop it. A program with a call that keeps it *keeps*
(another call may ask about the word plainly: "did not win the cup but won 10 games"); else one with a
call that drops it *drops*; else it is not judged (``None``): an answer that goes anywhere but a row
mask (``m = f_col(...); df[~m]``, ``(f_col(...) == "yes").sum() == 0``) is not read. A negation outside
the mask (``len(df) - len(df[mask])``, ``df.drop(df[mask].index)``) is not seen: such a program reads
as dropping it. The vote sets a program that drops it aside when one that keeps it answered
(:func:`binder_py.vote.polarity_fit`).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from typing import Literal

from binder_py.language.program import NEURAL_FORMS, call_question, parent_map
from binder_py.normalize import yes_no_word

__all__ = ["Polarity", "call_readings", "negated_terms", "negated_words", "negation_polarity"]

Polarity = Literal["drops", "keeps"]

#: words that negate what follows them in a question
_CUES = frozenset({"no", "not", "without", "never", "non", "nor"})
#: words that negate in a neural call's own question ("chemical-free", "lacks")
_CALL_CUES = _CUES | {"free", "lack", "lacks", "lacking", "none", "neither"}
#: words skipped after a cue before the negated content words ("not have a ...", "not from ...")
_SKIPPED = frozenset(
    "a an the any anyone anything more longer one been be being have has had do does did is are was were "
    "it its they them their he his she her this those these there so very much many single ever yet "
    "with of to in on at for by from into onto after before during over under as between against about "
    "within through since until upon".split())
#: words that end the negated phrase (a new clause)
_CLAUSE_ENDS = frozenset("and or but which who whom whose what when where while that if than".split())
#: content words read after a cue ("did not win the cup but won 10 games": *win* only)
TERMS_AFTER_CUE = 1
#: phrases that negate nothing, set aside before reading: "no. 5", "no 5", "no of", "whether or not",
#: "not only", "(yes or no)"
_NOT_NEGATIONS = (re.compile(r"\bno\b\s*(?:\.|(?=#|\d|of\b))"), re.compile(r"\bor\s+not\b"),
                  re.compile(r"\bnot\s+only\b"), re.compile(r"\byes\s*(?:or|/)\s*no\b"))
#: phrases that negate as "not" does, read as "not": "outside of europe", "outside the eu", "other than
#: canada" ("inside or outside cylinders" names a kind, and "apart from each other" a distance: both stay)
_AS_NOT = re.compile(r"\boutside\s+(?=of\b|the\b)|\bother\s+than\b|\bexcept(?:\s+for)?\b|\bexcluding\b")
_TOKEN = re.compile(r"[a-z0-9]+(?:'[a-z]+)?|[,;:?!.()]")


def _stem(word: str) -> str:
    if word.endswith("es") and len(word) > 4 and re.search(r"(?:s|x|z|ch|sh)es$", word):
        return word[:-2]
    for suffix in ("ing", "ed", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def _tokens(text: str) -> list[str]:
    text = text.casefold().replace("\u2019", "'")
    for pattern in _NOT_NEGATIONS:
        text = pattern.sub(" ", text)
    return _TOKEN.findall(_AS_NOT.sub(" not ", text))


def _is_cue(word: str, cues: frozenset[str]) -> bool:
    return word in cues or word.endswith("n't")


def negated_words(question: str) -> list[str]:
    """The content words ``question`` negates, in order, each once (empty when it negates nothing)."""
    words = _tokens(question)
    found: dict[str, None] = {}
    for index, word in enumerate(words):
        if not _is_cue(word, _CUES):
            continue
        taken = 0
        for offset, following in enumerate(words[index + 1:], start=index + 1):
            if not following[0].isalnum() or following in _CLAUSE_ENDS or _is_cue(following, _CUES):
                break
            if following in _SKIPPED or following.isdigit():
                continue
            found[following] = None
            taken += 1
            if taken == TERMS_AFTER_CUE:
                alternative = _alternative(words, offset + 1)
                if alternative is not None:
                    found[alternative] = None
                break
    return list(found)


def _alternative(words: list[str], index: int) -> str | None:
    """The content word right after an ``or``/``nor`` at ``index`` ("no meat **or fish**": *fish* is
    negated too), None when none follows at once ("no chemicals or is made in …": a new clause)."""
    if index + 1 >= len(words) or words[index] not in ("or", "nor"):
        return None
    word = words[index + 1]
    if not word[0].isalnum() or word.isdigit() or word in _SKIPPED or word in _CLAUSE_ENDS or _is_cue(word, _CUES):
        return None
    return word


def negated_terms(question: str) -> frozenset[str]:
    """The stems of :func:`negated_words`."""
    return frozenset(_stem(word) for word in negated_words(question))


def negation_polarity(program: str, question: str, terms: frozenset[str] | None = None) -> Polarity | None:
    """Whether ``program`` drops or keeps what ``question`` negates, or None when it asks the model
    nothing about it (module docstring). None also when the question negates nothing or the program
    does not parse. ``terms``: :func:`negated_terms` of the question, when the caller has it."""
    terms = negated_terms(question) if terms is None else terms
    if not terms:
        return None
    try:
        tree = ast.parse(program)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    readings = {polarity for _, _, polarity in call_readings(tree, terms)}
    # a program that negates the word in one call and asks about it plainly in another ("did not win the
    # cup but won 10 games") kept the negation where it meant it
    return "keeps" if "keeps" in readings else "drops" if readings else None


def call_readings(tree: ast.AST, terms: frozenset[str]) -> Iterator[tuple[ast.Call, ast.AST, Polarity]]:
    """Each neural call of a parsed program that asks about one of ``terms`` (stems of the words the
    question negates) and is judged (module docstring), with the node where its answer's use ends (the
    call itself for an ``f_val``; for an ``f_col``, the mask after the ``~``/``== "no"`` climb) and
    whether it keeps or drops the negation."""
    parents: dict[int, ast.AST] | None = None
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in NEURAL_FORMS):
            continue
        asked = call_question(node)
        words = _tokens(asked)
        if not terms & {_stem(w) for w in words}:
            continue  # the call asks about something else
        parents = parent_map(tree) if parents is None else parents
        end: ast.AST = node
        if node.func.id == "f_val":
            negations = 0  # one answer, not rows kept: its question alone says what it asks
        else:
            used = _mask_use(node, parents)
            if used is None:
                continue  # not a row mask this reading follows (assigned, aggregated, len(...)): not judged
            negations, end = used  # a row mask: its answers are yes/no
        odd = (sum(_is_cue(w, _CALL_CUES) for w in words) + negations) % 2 == 1
        yield node, end, ("keeps" if odd else "drops")


def _mask_use(call: ast.Call, parents: dict[int, ast.AST]) -> tuple[int, ast.AST] | None:
    """When the call's answer selects rows (the climb below ends in ``T[...]``, ``.loc[...]``, or ``&``/``|``
    of such a mask): how many times the program negates it on the way, and the node the climb ended at.
    None when the answer goes anywhere else (a name, an aggregate, ``len``, a call): a negation there
    (``m = ...; df[~m]``, ``(... == "yes").sum() == 0``) is not read, so the call is not judged."""
    count, end = _negations_around(call, parents)
    parent = parents.get(id(end))
    masked = ((isinstance(parent, ast.Subscript) and parent.slice is end)
              or (isinstance(parent, ast.BinOp) and isinstance(parent.op, (ast.BitAnd, ast.BitOr))))
    return (count, end) if masked else None


def _negations_around(call: ast.Call, parents: dict[int, ast.AST]) -> tuple[int, ast.AST]:
    """How many times the program negates the call's answer where it uses it, climbing through ``~``/
    ``not``, comparisons with yes/no (``== "no"``, ``!= "yes"``, ``== False``), ``.eq``/``.ne`` and
    ``.isin([...])`` of yes/no; and the node the climb ended at."""
    count = 0
    node: ast.AST = call
    while (parent := parents.get(id(node))) is not None:
        if isinstance(parent, ast.UnaryOp) and isinstance(parent.op, (ast.Invert, ast.Not)):
            count += 1
        elif isinstance(parent, ast.Compare) and len(parent.ops) == 1:
            said_no = _says_no(parent.ops[0], parent.comparators[0] if parent.left is node else parent.left)
            if said_no is None:
                break
            count += said_no
        elif isinstance(parent, ast.Attribute) and parent.attr in ("eq", "ne", "isin"):
            method_call = parents.get(id(parent))
            if not (isinstance(method_call, ast.Call) and method_call.func is parent and method_call.args):
                break
            argument = method_call.args[0]
            if parent.attr == "isin":
                items = argument.elts if isinstance(argument, (ast.List, ast.Tuple, ast.Set)) else []
                readings = {_says_no(ast.Eq(), item) for item in items}
                if len(readings) != 1 or None in readings:
                    break
                said_no = readings.pop()
            else:
                said_no = _says_no(ast.Eq() if parent.attr == "eq" else ast.NotEq(), argument)
            if said_no is None:
                break
            count += said_no
            parent = method_call
        else:
            break
        node = parent
    return count, node


def _says_no(op: ast.cmpop, other: ast.AST) -> int | None:
    """1 when comparing an answer with ``other`` by ``op`` keeps the rows the model said no to, 0 when
    it keeps the yes rows, None when ``other`` is no yes/no constant or ``op`` no (in)equality."""
    if not isinstance(other, ast.Constant) or not isinstance(op, (ast.Eq, ast.NotEq)):
        return None
    word = yes_no_word(other.value)
    if word is None:
        return None
    return int(word is False) if isinstance(op, ast.Eq) else int(word is True)
