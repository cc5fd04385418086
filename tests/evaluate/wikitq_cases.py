"""Judgement cases generated from the WikiTQ dev gold answers by our own perturbations.

Each :class:`Rule` picks dev questions whose gold it applies to and perturbs the gold into a prediction (and,
for the official evaluator's canonical-value rules, writes the ``targetCanon`` CoreNLP would give). Its
``expected`` judgements were derived by reading the original code: ppasupat/WikiTableQuestions
``evaluator.py`` (``official``), xlang-ai/Binder ``utils/evaluator.py`` with ``utils/normalizer.py``
(``binder``), and docs/RESULTS.md for binder-py's own ``semantic``. A rule leaves out an evaluator whose
judgement turns on details not stated by the rule (those cases are still compared with the originals by
``test_crosscheck.py``).

Run as a script to write every case as JSON Lines (used by ``agreement.py``).
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

Prediction = tuple[tuple[str, ...], tuple[str, ...] | None]  # (prediction, gold_canon or None)


@dataclass(frozen=True)
class Case:
    rule: str
    id: str
    question: str
    gold: tuple[str, ...]
    prediction: tuple[str, ...]
    canon: tuple[str, ...] | None
    expected: dict[str, bool] = field(hash=False)

    def as_json(self) -> dict[str, object]:
        return {"rule": self.rule, "id": self.id, "question": self.question, "gold": list(self.gold),
                "prediction": list(self.prediction), "gold_canon": None if self.canon is None else list(self.canon),
                "expected": self.expected}


@dataclass(frozen=True)
class Rule:
    name: str
    expected: dict[str, bool]
    make: Callable[[str, tuple[str, ...]], Prediction | None]  # (question, gold) -> perturbation, or None


# ----------------------------------------------------------------------------- gold classes

MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December"]
_MONTH_NUMBER = {m: i + 1 for i, m in enumerate(MONTHS)}
# words the recognizers of Binder's normaliser turn into numbers or dates
_RECOGNISED_WORDS = {w.lower() for w in MONTHS} | {
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
    "first", "second", "third", "fourth", "fifth", "last", "next", "monday", "tuesday", "wednesday", "thursday",
    "friday", "saturday", "sunday", "today", "tomorrow", "yesterday", "now", "day", "week", "year", "month",
    "night", "morning", "evening", "noon", "midnight", "dozen", "hundred", "thousand", "million", "a", "an",
    "half", "quarter", "christmas", "easter", "new", "eve", "spring", "summer", "fall", "autumn", "winter",
    "mid", "weekend", "decade", "century", "hour", "minute", "second", "sec", "min", "am", "pm", "may", "march",
    "sat", "sun", "mon", "wed", "fri", "tue", "thu", "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep",
    "oct", "nov", "dec", "single", "double", "triple", "couple", "pair", "none", "nil", "both", "all"}


def one(gold: tuple[str, ...]) -> str | None:
    return gold[0] if len(gold) == 1 else None


def plain_words(text: str | None) -> bool:
    """Letters, spaces, apostrophes and hyphens only, no word a recogniser reads as a number or date."""
    if text is None or not re.fullmatch(r"[A-Za-z][A-Za-z' -]*[A-Za-z]", text) or "  " in text:
        return False
    return not any(word in _RECOGNISED_WORDS for word in re.split(r"[ '-]", text.lower()))


def positive_int(text: str | None) -> int | None:
    return int(text) if text is not None and re.fullmatch(r"[1-9]\d{0,5}", text) else None


def written_date(text: str | None) -> tuple[int, int, int] | None:
    """'January 4, 1994' or '14 May 1919' -> (y, m, d)."""
    if text is None:
        return None
    m = re.fullmatch(r"([A-Z][a-z]+) (\d{1,2}), (\d{4})", text) or re.fullmatch(r"(\d{1,2}) ([A-Z][a-z]+) (\d{4})",
                                                                                 text)
    if not m:
        return None
    a, b, year = m.groups()
    month, day = (a, b) if a in _MONTH_NUMBER else (b, a)
    if month not in _MONTH_NUMBER or not 1000 <= int(year) < 2100:  # the recogniser reads years 1000-2099
        return None
    return int(year), _MONTH_NUMBER[month], int(day)


def _number_and_unit(text: str | None) -> tuple[str, str] | None:
    m = re.fullmatch(r"(\d+) ([a-z]+)", text or "")
    return (m.group(1), m.group(2)) if m else None


DURATIONS = {"years": "months", "months": "years", "days": "hours", "hours": "days"}  # TIMEX P_Y, P_M, P_D, PT_H
_NUMBER_WORDS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"]


# ----------------------------------------------------------------------------- perturbations

def _same(g: tuple[str, ...]) -> Prediction:
    return g, None


def _if(condition: bool, prediction: Callable[[], Prediction]) -> Prediction | None:
    return prediction() if condition else None


def _upper_spaced(q: str, g: tuple[str, ...]) -> Prediction | None:
    value = one(g)
    return _if(plain_words(value) and " " in value, lambda: ((value.upper().replace(" ", "   ") + "  ",), None))


def _accent(q: str, g: tuple[str, ...]) -> Prediction | None:
    value = one(g)
    return _if(plain_words(value) and "e" in value, lambda: ((value.replace("e", "\u00e9", 1),), None))


def _smart_quote(q: str, g: tuple[str, ...]) -> Prediction | None:
    value = one(g)
    return _if(plain_words(value) and ("'" in value or "-" in value), lambda:
               ((value.replace("'", "\u2019").replace("-", "\u2013"),), None))


def _suffix(suffix: str) -> Callable[[str, tuple[str, ...]], Prediction | None]:
    def make(q: str, g: tuple[str, ...]) -> Prediction | None:
        value = one(g)
        return _if(plain_words(value), lambda: ((value + suffix,), None))
    return make


def _wrap(prefix: str, suffix: str) -> Callable[[str, tuple[str, ...]], Prediction | None]:
    def make(q: str, g: tuple[str, ...]) -> Prediction | None:
        value = one(g)
        return _if(plain_words(value), lambda: ((prefix + value + suffix,), None))
    return make


def _reordered(q: str, g: tuple[str, ...]) -> Prediction | None:
    return _if(len(g) > 1 and len({x.lower() for x in g}) == len(g) and all(plain_words(x) for x in g), lambda:
               (tuple(reversed(g)), None))


def _duplicated(q: str, g: tuple[str, ...]) -> Prediction | None:
    return _if(len(g) > 1 and all(plain_words(x) for x in g), lambda: (g + (g[0],), None))


def _dropped(q: str, g: tuple[str, ...]) -> Prediction | None:
    return _if(len(g) > 1 and len({x.lower() for x in g}) == len(g) and all(plain_words(x) for x in g), lambda:
               (g[:-1], None))


def _extra(q: str, g: tuple[str, ...]) -> Prediction | None:
    value = one(g)
    return _if(plain_words(value), lambda: ((value, "Zyxwv"), None))


def _other_text(q: str, g: tuple[str, ...]) -> Prediction | None:
    value = one(g)
    return _if(plain_words(value), lambda: ((value + " Zyxwv",), None))


def _int_as(text: Callable[[int], str], keep: Callable[[int], bool] = lambda n: True
            ) -> Callable[[str, tuple[str, ...]], Prediction | None]:
    def make(q: str, g: tuple[str, ...]) -> Prediction | None:
        n = positive_int(one(g))
        return _if(n is not None and keep(n), lambda: ((text(n),), None))  # type: ignore[arg-type]
    return make


def _thousands(with_canon: bool) -> Callable[[str, tuple[str, ...]], Prediction | None]:
    def make(q: str, g: tuple[str, ...]) -> Prediction | None:
        value = one(g)
        if value is None or not re.fullmatch(r"\d{1,3}(,\d{3})+", value):
            return None
        plain = value.replace(",", "")
        return (plain,), ((plain,) if with_canon else None)
    return make


def _thousands_plus_one(q: str, g: tuple[str, ...]) -> Prediction | None:
    value = one(g)
    if value is None or not re.fullmatch(r"\d{1,3}(,\d{3})+", value):
        return None
    plain = value.replace(",", "")
    return (str(int(plain) + 1),), (plain,)


def _date_iso(canon: bool, wrong_day: str = "") -> Callable[[str, tuple[str, ...]], Prediction | None]:
    """The gold date as yyyy-mm-dd; ``wrong_day``: "month" puts the month number as the day, "other" the day
    after (when that is not the month number)."""
    def make(q: str, g: tuple[str, ...]) -> Prediction | None:
        ymd = written_date(one(g))
        if ymd is None:
            return None
        y, m, d = ymd
        day = {"": d, "month": m, "other": d + 1}[wrong_day]
        if day > 28 or (wrong_day and day in (d, m) and not (wrong_day == "month" and day != d)):
            return None
        return (f"{y:04d}-{m:02d}-{day:02d}",), ((f"{y:04d}-{m:02d}-{d:02d}",) if canon else None)
    return make


def _date_year_only(q: str, g: tuple[str, ...]) -> Prediction | None:
    ymd = written_date(one(g))
    return ((str(ymd[0]),), None) if ymd else None


def _date_month_year(q: str, g: tuple[str, ...]) -> Prediction | None:
    ymd = written_date(one(g))
    return ((f"{MONTHS[ymd[1] - 1]} {ymd[0]}",), None) if ymd else None


def _year_as(text: Callable[[int], str]) -> Callable[[str, tuple[str, ...]], Prediction | None]:
    def make(q: str, g: tuple[str, ...]) -> Prediction | None:
        value = one(g)
        return _if(value is not None and re.fullmatch(r"(1[89]|20)\d\d", value) is not None, lambda:
                   ((text(int(value or 0)),), None))
    return make


def _yes_no(answers: dict[str, str]) -> Callable[[str, tuple[str, ...]], Prediction | None]:
    def make(q: str, g: tuple[str, ...]) -> Prediction | None:
        value = (one(g) or "").lower()
        return _if(value in answers, lambda: ((answers.get(value, ""),), None))
    return make


def _choice(position: str, prediction: str) -> Callable[[str, tuple[str, ...]], Prediction | None]:
    """A one-word gold that is the word just before/after the question's first "or"."""
    def make(q: str, g: tuple[str, ...]) -> Prediction | None:
        value = one(g)
        if not plain_words(value) or " " in (value or ""):
            return None
        tokens = re.sub(r"\s+", " ", q).strip().lower().split()
        if "or" not in tokens or tokens.index("or") in (0, len(tokens) - 1):
            return None
        i = tokens.index("or")
        neighbour = tokens[i - 1] if position == "before" else tokens[i + 1]
        return _if(neighbour == (value or "").lower(), lambda: ((prediction,), None))
    return make


def _multiword_choice(q: str, g: tuple[str, ...]) -> Prediction | None:
    """A gold of several words that ends just before the question's "or": 1 picks it in words only."""
    value = one(g)
    if not plain_words(value) or " " not in (value or ""):
        return None
    text = re.sub(r"\s+", " ", q).strip().lower()
    return _if(f"{(value or '').lower()} or " in text, lambda: (("1",), None))


def _unit(make_prediction: Callable[[str, str], str], units: Callable[[str], bool]
          ) -> Callable[[str, tuple[str, ...]], Prediction | None]:
    def make(q: str, g: tuple[str, ...]) -> Prediction | None:
        found = _number_and_unit(one(g))
        if found is None or not units(found[1]):
            return None
        return (make_prediction(*found),), None
    return make


def _float_gold(make_prediction: Callable[[str], str | None]) -> Callable[[str, tuple[str, ...]], Prediction | None]:
    def make(q: str, g: tuple[str, ...]) -> Prediction | None:
        value = one(g)
        if value is None or not re.fullmatch(r"[1-9]\d*\.[1-9]", value):
            return None
        prediction = make_prediction(value)
        return ((prediction,), None) if prediction else None
    return make


def _the(q: str, g: tuple[str, ...]) -> Prediction | None:
    value = one(g)
    return _if(plain_words(value) and not (value or "").lower().startswith("the "),
               lambda: (("The " + (value or ""),), None))


def _percent(q: str, g: tuple[str, ...]) -> Prediction | None:
    value = one(g)
    return _if(value is not None and re.fullmatch(r"\d+(\.\d+)?%", value) is not None,
               lambda: (((value or "")[:-1],), None))


def _dollar_dropped(q: str, g: tuple[str, ...]) -> Prediction | None:
    value = one(g)
    return _if(value is not None and re.fullmatch(r"\$[\d,]+", value) is not None, lambda:
               (((value or "").lstrip("$").replace(",", ""),), None))


def _month_day(with_year: bool) -> Callable[[str, tuple[str, ...]], Prediction | None]:
    def make(q: str, g: tuple[str, ...]) -> Prediction | None:
        m = re.fullmatch(r"([A-Z][a-z]+) (\d{1,2})", one(g) or "")
        if not m or m.group(1) not in _MONTH_NUMBER:
            return None
        month, day = _MONTH_NUMBER[m.group(1)], int(m.group(2))
        return ((f"2001-{month:02d}-{day:02d}" if with_year else f"xx-{month:02d}-{day:02d}"),), None
    return make


T, F = True, False
RULES: list[Rule] = [
    # --- rules every evaluator shares
    Rule("identity", {"official": T, "binder": T, "semantic": T}, lambda q, g: _same(g)),
    Rule("case and whitespace", {"official": T, "binder": T, "semantic": T}, _upper_spaced),
    Rule("reordered list", {"official": T, "binder": T, "semantic": T}, _reordered),
    Rule("duplicated value", {"official": T, "binder": T, "semantic": T}, _duplicated),
    Rule("value dropped from a list", {"official": F, "binder": F, "semantic": F}, _dropped),
    Rule("extra value", {"official": F, "binder": F, "semantic": F}, _extra),
    Rule("other text", {"official": F, "binder": F, "semantic": F}, _other_text),
    # --- official normalize()
    Rule("diacritic added", {"official": T, "binder": T, "semantic": T}, _accent),
    Rule("curly apostrophe and en dash", {"official": T, "binder": T, "semantic": T}, _smart_quote),
    Rule("citation [1] appended", {"official": T, "semantic": T}, _suffix("[1]")),
    Rule("citation [note] appended", {"official": T, "semantic": T}, _suffix("[note]")),
    Rule("dagger appended", {"official": T, "semantic": T}, _suffix("\u2020")),
    Rule("parenthetical appended", {"official": T, "binder": T, "semantic": T}, _suffix(" (retired)")),
    Rule("parenthetical prefix only", {"official": F, "binder": F, "semantic": F}, _wrap("(retired)", "")),
    Rule("outer quotes", {"official": T, "binder": T, "semantic": T}, _wrap('"', '"')),
    Rule("doubled outer quotes are kept", {"official": F, "binder": F, "semantic": T}, _wrap('""', '""')),
    Rule("final period", {"official": T, "binder": T, "semantic": T}, _suffix(".")),
    Rule("two final periods", {"official": F, "binder": F, "semantic": T}, _suffix("..")),
    # --- official numbers
    Rule("integer as float text", {"official": T, "binder": T, "semantic": T}, _int_as(lambda n: f"{n}.0")),
    Rule("integer within 1e-6 above", {"official": T, "binder": T, "semantic": T},
         _int_as(lambda n: f"{n}.0000001", lambda n: n < 10_000)),
    Rule("integer 1e-5 above", {"official": F, "binder": F, "semantic": F},
         _int_as(lambda n: f"{n}.00001", lambda n: n < 10_000)),
    Rule("float noise just below an integer (int() truncates)", {"official": F, "binder": F, "semantic": T},
         _int_as(lambda n: f"{n - 1}.999999999", lambda n: n < 10_000)),
    Rule("integer plus one", {"official": F, "binder": F, "semantic": F}, _int_as(lambda n: str(n + 1))),
    Rule("large number plus one, with canon", {"official": F, "binder": F, "semantic": F}, _thousands_plus_one),
    Rule("integer with digit separator _", {"official": F, "semantic": F},
         _int_as(lambda n: f"{n // 10}_{n % 10}", lambda n: n >= 10)),
    Rule("integer in Arabic-Indic digits", {"official": T, "semantic": T},
         _int_as(lambda n: "".join(chr(0x660 + int(c)) for c in str(n)))),
    Rule("thousands separator dropped, no canon", {"official": F, "binder": T, "semantic": T}, _thousands(False)),
    Rule("thousands separator dropped, with canon", {"official": T, "semantic": T}, _thousands(True)),
    Rule("year as yyyy-xx-xx", {"official": T, "semantic": T}, _year_as(lambda y: f"{y}-xx-xx")),
    Rule("year plus one", {"official": F, "binder": F, "semantic": F}, _year_as(lambda y: str(y + 1))),
    # --- official dates (the canon types the gold)
    Rule("date as yyyy-mm-dd, no canon", {"official": F, "binder": T, "semantic": T}, _date_iso(False)),
    Rule("date as yyyy-mm-dd, with canon", {"official": T, "semantic": T}, _date_iso(True)),
    Rule("date with the wrong day, with canon", {"official": F, "binder": F, "semantic": F}, _date_iso(True, "other")),
    Rule("date with the month number as the wrong day, with canon", {"official": F, "binder": T, "semantic": F},
         _date_iso(True, "month")),
    Rule("year-less date as xx-mm-dd", {"official": F, "semantic": T}, _month_day(False)),
    # --- yes/no and choices
    Rule("yes/no as 1/0", {"official": F, "binder": T, "semantic": T}, _yes_no({"yes": "1", "no": "0"})),
    Rule("yes/no as True/False", {"official": F, "binder": F, "semantic": T},
         _yes_no({"yes": "True", "no": "False"})),
    Rule("yes/no reversed as 0/1", {"official": F, "binder": F, "semantic": F}, _yes_no({"yes": "0", "no": "1"})),
    Rule("choice before 'or' as 1", {"official": F, "binder": T, "semantic": F}, _choice("before", "1")),
    Rule("choice after 'or' as 0", {"official": F, "binder": T, "semantic": F}, _choice("after", "0")),
    Rule("choice before 'or' as 0", {"official": F, "binder": F, "semantic": F}, _choice("before", "0")),
    Rule("multi-word choice before 'or' as 1", {"official": F, "binder": F, "semantic": F}, _multiword_choice),
    # --- numbers with units, words, rounding
    Rule("unit dropped", {"official": F, "binder": T, "semantic": T}, _unit(lambda n, u: n, lambda u: True)),
    Rule("singular unit", {"official": F, "semantic": T},
         _unit(lambda n, u: f"{n} {u[:-1]}", lambda u: u.endswith("s"))),
    Rule("other duration unit", {"official": F, "binder": T, "semantic": F},
         _unit(lambda n, u: f"{n} {DURATIONS[u]}", lambda u: u in DURATIONS)),
    Rule("number in words", {"official": F, "binder": T, "semantic": T},
         _int_as(lambda n: _NUMBER_WORDS[n], lambda n: 2 <= n <= 10)),
    Rule("float gold, prediction with float noise", {"official": T, "binder": T, "semantic": T},
         _float_gold(lambda v: repr(float(v) - 1e-12))),
    Rule("float gold, prediction with more decimals", {"official": F, "binder": F, "semantic": T},
         _float_gold(lambda v: v + "3")),
    Rule("float gold, prediction off by 0.1", {"official": F, "binder": F, "semantic": F},
         _float_gold(lambda v: f"{float(v) + 0.1:.1f}")),
    Rule("percent sign dropped", {"official": F, "binder": F, "semantic": T}, _percent),
    Rule("dollar sign and separators dropped", {"official": F, "semantic": T}, _dollar_dropped),
    # --- text and dates (binder-py's semantic; Binder's subset rules)
    Rule("leading 'The' added", {"official": F, "binder": F, "semantic": T}, _the),
    Rule("bare year for a full date", {"official": F, "binder": T, "semantic": F}, _date_year_only),
    Rule("month and year for a full date", {"official": F, "binder": T, "semantic": F}, _date_month_year),
    Rule("year as the first of January", {"official": F, "binder": T, "semantic": T}, _year_as(lambda y: f"{y}-01-01")),
    Rule("year as a day in July", {"official": F, "binder": T, "semantic": F}, _year_as(lambda y: f"{y}-07-14")),
    Rule("year-less date with a year added", {"official": F, "binder": F, "semantic": T}, _month_day(True)),
]


# ----------------------------------------------------------------------------- generation

def dev_golds(data_dir: str | Path | None = None) -> list[tuple[str, str, tuple[str, ...]]]:
    """(id, question, gold) of every dev question, in file order."""
    from binder_py.datasets.wikitq import load_wikitq

    return [(e.id, e.question, tuple(e.gold)) for e in load_wikitq("dev", data_dir)]


def generate(golds: Sequence[tuple[str, str, tuple[str, ...]]], per_rule: int | None = None,
             evaluators: Sequence[str] = ("official", "binder", "semantic")) -> Iterator[Case]:
    """Up to ``per_rule`` cases per rule (all when None), first dev questions first."""
    for rule in RULES:
        expected = {k: v for k, v in rule.expected.items() if k in evaluators}
        made = 0
        for qid, question, gold in golds:
            if per_rule is not None and made >= per_rule:
                break
            perturbed = rule.make(question, gold)
            if perturbed is None:
                continue
            prediction, canon = perturbed
            yield Case(rule.name, qid, question, gold, prediction, canon, expected)
            made += 1


if __name__ == "__main__":
    out = sys.stdout
    for case in generate(dev_golds(sys.argv[1] if len(sys.argv) > 1 else None)):
        out.write(json.dumps(case.as_json(), ensure_ascii=False) + "\n")
