"""Does a program keep the question's negation? A neural call that asks the model about what the
question negates must negate it too, in its own words or in the program.

"which is the best-selling shirt made in North America and with **no chemicals**?" negates
*chemicals*. A program that asks ``f_col("Does it contain chemicals?", ["shirt"])`` and keeps the
rows where the model said yes answers the opposite question; one that asks "Does it contain no
chemicals?", or "Does it contain chemicals?" and keeps ``~f_col(...)`` or ``f_col(...) == "no"``,
keeps the negation. Small models drop it often (measured on the shirts question with the 1.5B
embedded model: 6 of 14 sampled programs that asked about chemicals dropped it).

:func:`negated_terms` reads the words a question negates (up to two content words after ``no``,
``not``, ``without``, ``never``, ``non``, or a verb ending in ``n't``; ``No.`` the abbreviation is
no negation). :func:`drops_negation` reads a program (never run here): a neural call whose
question names one of those words (compared by a crude stem: ``chemicals``/``chemical``) drops
the negation when the call's question and the program together negate it an even number of
times (neither, or both: ``~f_col("Is it chemical-free?")``). The vote sets such a program aside
when another program that keeps the negation answered (:func:`binder_py.vote.polarity_fit`).
"""

from __future__ import annotations

import ast
import re

from binder_py.language.program import NEURAL_FORMS

__all__ = ["drops_negation", "negated_terms"]

_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
#: words that negate what follows them in a question
_CUES = frozenset({"no", "not", "without", "never", "non", "nor"})
#: words that negate in a neural call's own question ("chemical-free", "lacks")
_CALL_CUES = _CUES | {"free", "lack", "lacks", "lacking", "none", "neither"}
#: words skipped after a cue before the negated content words ("not have a ...", "no more than")
_SKIPPED = frozenset(
    "a an the any anyone anything more longer one been be being have has had do does did is are was were "
    "with of to in on at for by it its they them their he his she her that this those these there than "
    "so very much many single only ever yet".split())
#: words that end the negated phrase (a new clause)
_CLAUSE_ENDS = frozenset("and or but which who whom whose what when where while that if than".split())
#: content words read after a cue
TERMS_AFTER_CUE = 2


def _stem(word: str) -> str:
    for suffix in ("ing", "ed", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def _words(text: str) -> list[str]:
    return _WORD.findall(text.casefold().replace("\u2019", "'"))


def _is_cue(word: str, cues: frozenset[str]) -> bool:
    return word in cues or word.endswith("n't")


def negated_terms(question: str) -> frozenset[str]:
    """The stems of the content words ``question`` negates (empty when it negates nothing)."""
    text = question.casefold()
    text = re.sub(r"\bno\s*\.", " number ", text)  # "No. 5", "the no. of": the abbreviation, not a negation
    text = re.sub(r"\b(?:or|and) not\b", " ", text)  # "whether or not": no term negated
    words = re.findall(r"[a-z0-9]+(?:'[a-z]+)?|[,;:?!.()]", text.replace("\u2019", "'"))
    terms: set[str] = set()
    for index, word in enumerate(words):
        if not _is_cue(word, _CUES):
            continue
        taken = 0
        for following in words[index + 1:]:
            if not following[0].isalnum() or following in _CLAUSE_ENDS or _is_cue(following, _CUES):
                break
            if following in _SKIPPED:
                continue
            terms.add(_stem(following))
            taken += 1
            if taken == TERMS_AFTER_CUE:
                break
    return frozenset(terms)


def drops_negation(program: str, question: str, terms: frozenset[str] | None = None) -> bool:
    """Whether a neural call of ``program`` asks about a word ``question`` negates without negating
    it (module docstring). False when the question negates nothing or the program does not parse.
    ``terms``: :func:`negated_terms` of the question, when the caller has it."""
    terms = negated_terms(question) if terms is None else terms
    if not terms:
        return False
    try:
        tree = ast.parse(program)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    parents = {id(child): node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in NEURAL_FORMS
                and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
            continue
        words = _words(node.args[0].value)
        if not terms & {_stem(w) for w in words}:
            continue  # the call asks about something else
        negations = sum(_is_cue(w, _CALL_CUES) for w in words) + _negations_around(node, parents)
        if negations % 2 == 0:
            return True
    return False


def _negations_around(call: ast.Call, parents: dict[int, ast.AST]) -> int:
    """How many times the program negates the call's answer where it uses it: ``~``/``not`` around
    it, ``== "no"``/``== False``/``== 0``, ``!= "yes"``/``!= True``, ``.eq("no")``/``.ne("yes")``."""
    count = 0
    node: ast.AST = call
    while True:
        parent = parents.get(id(node))
        if isinstance(parent, ast.UnaryOp) and isinstance(parent.op, (ast.Invert, ast.Not)):
            count += 1
        elif isinstance(parent, ast.Compare) and len(parent.ops) == 1:
            other = parent.comparators[0] if parent.left is node else parent.left
            count += _negating_comparison(parent.ops[0], other)
            return count
        elif (isinstance(parent, ast.Attribute) and parent.attr in ("eq", "ne")
              and isinstance(call_of := parents.get(id(parent)), ast.Call) and call_of.args):
            count += _negating_comparison(ast.Eq() if parent.attr == "eq" else ast.NotEq(), call_of.args[0])
            return count
        else:
            return count
        node = parent


def _negating_comparison(op: ast.cmpop, other: ast.AST) -> int:
    """1 when comparing an answer with ``other`` by ``op`` keeps the rows the model said no to."""
    if not isinstance(other, ast.Constant) or not isinstance(other.value, (str, bool, int)):
        return 0
    value = other.value
    said_no = (value.strip().casefold() in ("no", "false", "n") if isinstance(value, str)
               else value is False or (type(value) is int and value == 0))
    said_yes = (value.strip().casefold() in ("yes", "true", "y") if isinstance(value, str)
                else value is True or (type(value) is int and value == 1))
    if isinstance(op, ast.Eq):
        return int(said_no)
    if isinstance(op, ast.NotEq):
        return int(said_yes)
    return 0
