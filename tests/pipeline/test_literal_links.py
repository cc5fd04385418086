"""Value linking: a compared value no cell holds, replaced by the one cell it means (and only then)."""

from __future__ import annotations

import json
from typing import Any

import pandas as pd
import pytest

from binder_py import Binder
from binder_py.answer import Candidate, ProgramCounts
from binder_py.lm import ScriptedLM
from binder_py.pipeline.literal_links import closest_value, link_literals

POEMS = pd.DataFrame({
    "name": ["naanmugan thiruvandhadhi", "periya thirumozhi", "Fàbregas", "boston celtics", "boston bruins",
             "1904–1905"],
    "year": [2005, 2006, 2007, 2008, 2009, 2010],
    "code": ["2005", "2006", "x", "y", "z", "w"],
    "pasurams": [96, 1084, 3, 4, 5, 6],
})
TABLES = {"df": POEMS, "table": POEMS}


@pytest.mark.parametrize("literal, expected", [
    ("naanmugan", ("naanmugan thiruvandhadhi", "inside value")),  # the literal's words inside one value
    ("FABREGAS", ("Fàbregas", "case")),  # case and accents set aside
    ("1904-1905", ("1904–1905", "case")),  # a hyphen for an en dash
    ("the periya thirumozhi poem", ("periya thirumozhi", "value inside")),
    ("naanmugan thiruvandadhi", ("naanmugan thiruvandhadhi", "spelling")),
    ("naanmugan thiruvandadhi 2", None),  # a digit the value lacks: another value, not a misspelling
    ("boston", None),  # two values hold it: ambiguous, left as written
    ("thiru", None),  # not a whole word of any value
    ("zz", None),
    ("", None),
])
def test_closest_value(literal, expected) -> None:
    assert closest_value(literal, list(POEMS["name"])) == expected


@pytest.mark.parametrize("program, expected", [
    ('df[df["name"] == "naanmugan"]["pasurams"].iloc[0]',
     'df[df["name"] == "naanmugan thiruvandhadhi"]["pasurams"].iloc[0]'),
    ("len(df[df['year'] == '2005'])", "len(df[df['year'] == 2005])"),  # text read as the number the column holds
    ('df[df["code"] == 2006]', 'df[df["code"] == "2006"]'),  # a number a text column holds as text
    ('"FABREGAS" != table["name"]', '"Fàbregas" != table["name"]'),  # either side, table too
    ('df[df["name"].isin(["periya", "zz"])]', 'df[df["name"].isin(["periya thirumozhi", "zz"])]'),
    ('df[df["year"] > 2006][df["name"] == "naanmugan"]',
     'df[df["year"] > 2006][df["name"] == "naanmugan thiruvandhadhi"]'),
    ("df[df.name == 'naanmugan'].pasurams.iloc[0]", "df[df.name == 'naanmugan thiruvandhadhi'].pasurams.iloc[0]"),
])
def test_link_literals_rewrites_only_the_literal(program, expected) -> None:
    linked = link_literals(program, TABLES)
    assert linked is not None and linked[0] == expected


@pytest.mark.parametrize("program", [
    'df[df["name"] == "periya thirumozhi"]',  # a cell holds it
    'df[df["name"] == "boston"]',  # ambiguous
    'df[df["year"] == "2020"]',  # no row holds that number either
    'df[df["missing"] == "naanmugan"]',  # no such column
    'other[other["name"] == "naanmugan"]',  # no such table
    'df[df["name"].str.contains("naanmugan")]',  # not a comparison of equality
    'df[df["name"] == x]',  # not a literal
    "df[df['name'] == 'naanmugan'",  # does not parse
])
def test_link_literals_leaves_alone(program) -> None:
    assert link_literals(program, TABLES) is None


@pytest.mark.parametrize("literal, values, expected", [
    ("2024-02-27", ["2024-01-15", "2024-02-28", "2024-04-01"], None),  # another day: 0 orders, not 1
    ("ORD-1007", ["ORD-1001", "ORD-2002"], None),
    ("Room 12B", ["Room 13B", "Hall 4"], None),
    ("2024-02-28 ", ["2024-02-28", "2023-01-01"], ("2024-02-28", "case")),
    ("Winter Olympcs 1994", ["Winter Olympics 1994", "Summer Olympics 1996"], ("Winter Olympics 1994", "spelling")),
    # leading zeros are no other number (the digit rule first refused these links)
    ("2024-2-28", ["2024-02-28", "2024-04-01"], ("2024-02-28", "spelling")),
    ("3/5/2024", ["03/05/2024", "03/06/2024"], ("03/05/2024", "spelling")),
])
def test_a_value_differing_in_its_digits_is_no_spelling_of_the_literal(literal, values, expected) -> None:
    """`df[df["Order Date"] == "2024-02-27"]` (no order that day: 0) ran as `== "2024-02-28"` and
    answered 1: one digit apart reads as a close spelling (ratio 0.9)."""
    assert closest_value(literal, values) == expected


def test_links_say_what_they_replaced() -> None:
    _, links = link_literals('df[df["name"] == "naanmugan"]', TABLES)
    assert [(l.column, l.written, l.linked, l.rule) for l in links] == [
        ("name", "naanmugan", "naanmugan thiruvandhadhi", "inside value")]
    assert links[0].describe() == "'name': 'naanmugan' → 'naanmugan thiruvandhadhi' (inside value)"


def test_a_column_of_mixed_cells_or_booleans_is_not_linked_against() -> None:
    mixed = pd.DataFrame({"a": ["x1", 5, "y"], "b": [True, False, True]})
    assert link_literals('df[df["a"] == "x"]', {"df": mixed}) is None
    assert link_literals('df[df["b"] == "true"]', {"df": mixed}) is None


QUESTION = "how many pasurams are in naanmugan?"
WRONG = 'df[df["name"] == "naanmugan"]["pasurams"].sum()'  # 0: no row is named "naanmugan"
EMPTY = 'df[df["name"] == "naanmugan"]["pasurams"].tolist()'  # []


def test_the_link_stage_votes_the_linked_program_in_its_sources_place() -> None:
    lm = ScriptedLM(lambda request, purpose: [WRONG, WRONG, EMPTY, "999"])
    answer = Binder(lm=lm, task="wikitq", mode="python", n=4, repair_attempts=0).ask(POEMS, QUESTION)
    assert answer.value == 96  # not 0, and not 999 (one vote against three)
    linked = [c for c in answer.candidates if c.origin == "link"]
    assert [(c.repaired_from, c.count, c.voted) for c in linked] == [(0, 2, True), (1, 1, True)]
    assert linked[0].links == ("'name': 'naanmugan' → 'naanmugan thiruvandhadhi' (inside value)",)
    sources = [answer.candidates[i] for i in (0, 1)]
    assert not any(c.voted for c in sources)  # replaced, not counted twice
    assert [s.count for s in answer.distribution] == [3, 1]
    counts = ProgramCounts.of(answer.candidates)
    assert (counts.sampled, counts.links) == (4, 3)
    assert "+ 3 with a compared value linked to a cell" in counts.sentence()
    assert "run again as the link stage rewrote it: 'name': 'naanmugan' → 'naanmugan thiruvandhadhi'" in answer.explain()
    assert json.loads(json.dumps(answer.to_json(), default=str))["candidates"][4]["links"]  # recorded


def test_link_literals_false_keeps_the_programs_as_written() -> None:
    lm = ScriptedLM(lambda request, purpose: [WRONG, WRONG])
    answer = Binder(lm=lm, task="wikitq", mode="python", n=2, repair_attempts=0,
                    link_literals=False).ask(POEMS, QUESTION)
    assert answer.value == 0 and not [c for c in answer.candidates if c.origin == "link"]


def test_a_linked_program_that_fails_leaves_its_source_voting() -> None:
    failing = 'df[df["name"] == "naanmugan"]["pasurams"].sum() + undefined_name'
    lm = ScriptedLM(lambda request, purpose: ['int(df[df["name"] == "naanmugan"]["year"].count())', failing])
    answer = Binder(lm=lm, task="wikitq", mode="python", n=2, repair_attempts=0).ask(POEMS, QUESTION)
    assert answer.value == 1  # the linked count (1), in the place of the source's 0
    failed_link = [c for c in answer.candidates if c.origin == "link" and not c.ok]
    assert failed_link and not failed_link[0].voted


def test_the_reports_revote_sets_aside_the_same_sources() -> None:
    from binder_py.runs.report import record_vote

    lm = ScriptedLM(lambda request, purpose: [WRONG, WRONG, "999"])
    answer = Binder(lm=lm, task="wikitq", mode="python", n=3, repair_attempts=0).ask(POEMS, QUESTION)
    record = {"question": QUESTION, "dataset": "wikitq",
              "candidates": json.loads(json.dumps([c.to_json() for c in answer.candidates], default=str))}
    result = record_vote(record, 10, {"task": "wikitq", "mode": "python"})
    assert result.value == answer.value == 96
    assert [s.count for s in result.distribution] == [s.count for s in answer.distribution] == [2, 1]


def test_a_linked_program_that_does_not_answer_never_votes_beside_its_source() -> None:
    failing = 'df[df["name"] == "naanmugan"]["pasurams"].sum() + undefined_name'
    lm = ScriptedLM(lambda request, purpose: [failing])
    answer = Binder(lm=lm, task="wikitq", mode="python", n=1, repair_attempts=0, drop_failed=False,
                    drop_empty=False).ask(POEMS, QUESTION)
    source, linked = answer.candidates
    assert linked.origin == "link" and not linked.ok and not linked.voted
    assert source.voted and sum(s.count for s in answer.distribution) == 1  # one sampled program, one vote


def test_a_winner_that_compares_a_value_no_row_holds_says_so() -> None:
    lm = ScriptedLM(lambda request, purpose: ['len(df[df["name"] == "oxford"])'])
    answer = Binder(lm=lm, task="analyst", mode="python", n=1, repair_attempts=0).ask(POEMS, "poems of oxford?")
    assert answer.value == 0  # nothing to link "oxford" to: the program ran as written (a count: no sum of nothing)
    warning = next(w for w in answer.warnings if w.startswith("the winning program compares a value no row holds"))
    assert "no row of column 'name' equals 'oxford'" in warning and "select the rows it meant" in warning
    assert warning in answer.explain()
    clean = Binder(lm=ScriptedLM(lambda request, purpose: ['df[df["name"] == "Fàbregas"]["pasurams"].sum()']),
                   task="analyst", mode="python", n=1).ask(POEMS, "pasurams of fàbregas?")
    assert clean.value == 3 and not [w for w in clean.warnings if "no row holds" in w]


def test_sources_whose_linked_programs_are_the_same_each_get_its_run() -> None:
    lower, upper = WRONG, WRONG.replace('"naanmugan"', '"Naanmugan"')
    lm = ScriptedLM(lambda request, purpose: [lower, upper, "999"])
    answer = Binder(lm=lm, task="wikitq", mode="python", n=3, repair_attempts=0).ask(POEMS, QUESTION)
    linked = [c for c in answer.candidates if c.origin == "link"]
    assert len(linked) == 2 and all(c.run is not None and c.voted for c in linked)
    assert answer.value == 96 and [s.count for s in answer.distribution] == [2, 1]
    originals = Binder(lm=ScriptedLM(lambda request, purpose: [WRONG] * 3 + ["5", "5"]), task="wikitq",
                       mode="python", n=5, repair_attempts=0, group_identical=False).ask(POEMS, QUESTION)
    assert originals.value == 96 and [s.count for s in originals.distribution] == [3, 2]


@pytest.mark.parametrize("program", [
    'df["name"] = df["name"].str.upper()\nlen(df[df["name"] == "naanmugan"])',  # the column changed first
    'df.name = df.name.str.split().str[0]\nlen(df[df.name == "naanmugan thiruvandhadh"])',
    'df = df.assign(name=df["name"].str.title())\nlen(df[df["name"] == "naanmugan"])',  # the table rebound
    'df.loc[df.year > 0, "name"] = "x"\nlen(df[df["name"] == "naanmugan"])',
    'df.rename(columns={"year": "name"}, inplace=True)\nlen(df[df["name"] == "naanmugan"])',
    'f"{df[df[\'name\'] == \'naanmugan\'][\'pasurams\'].sum()}"',  # inside an f-string: no text range of its own
])
def test_link_literals_leaves_alone_what_the_program_changed_or_cannot_be_cut(program) -> None:
    assert link_literals(program, TABLES) is None


def test_rows_of_the_table_keep_its_cells() -> None:
    program = 'df = df[df["year"] > 2004].sort_values("year")\ndf[df["name"] == "naanmugan"]["pasurams"].iloc[0]'
    linked = link_literals(program, TABLES)
    assert linked is not None and '"naanmugan thiruvandhadhi"' in linked[0]


def test_a_value_held_past_the_searched_values_is_never_linked() -> None:
    names = [f"player {i}" for i in range(6000)]
    names[10], names[5500] = "john smith jr", "john smith"
    table = pd.DataFrame({"name": names})
    assert link_literals('df[df["name"] == "john smith"]', {"df": table}) is None


@pytest.mark.parametrize("literal", ["1" + "0" * 400, "1e999", "-" + "9" * 400])
def test_a_number_no_float_holds_is_left_alone(literal) -> None:
    for column in ("year", "code"):
        assert link_literals(f'df[df["{column}"] == {literal}]', TABLES) is None


def test_a_source_that_answered_something_keeps_its_vote() -> None:
    """Only a source that selected nothing (failed, no answer, 0) gives way: '"is naanmugan listed?"'
    answered False as written, and the linked version, which would say True, does not vote."""
    lm = ScriptedLM(lambda request, purpose: ['(df["name"] == "naanmugan").any()'])
    answer = Binder(lm=lm, task="wikitq", mode="python", n=1, repair_attempts=0).ask(POEMS, "is naanmugan listed?")
    source, linked = answer.candidates
    assert linked.origin == "link" and linked.value is True and not linked.voted
    assert source.voted and answer.value in (False, "no")


def test_the_notebook_view_says_why_a_candidate_did_not_vote() -> None:
    from binder_py.notebook import answer_html

    lm = ScriptedLM(lambda request, purpose: [WRONG, '(df["name"] == "naanmugan").any()'])
    answer = Binder(lm=lm, task="wikitq", mode="python", n=2, repair_attempts=0).ask(POEMS, QUESTION)
    page = answer_html(answer)
    assert "did not vote: replaced by its linked version" in page
    assert "did not vote: its source&#x27;s answer stands" in page


def test_a_program_written_by_repair_is_linked_too() -> None:
    """Repair ran after the link stage, so a repaired program comparing a value no cell holds (a
    name in the wrong case, common on WikiTQ's lower-cased tables) was never linked: its sum over
    no rows, 0, voted alone."""
    failing = 'df[df["nme"] == "x"]["pasurams"].sum()'

    def responder(request, purpose):
        return [failing] if purpose == "parse" else 'df.loc[df["name"] == "FABREGAS", "pasurams"].sum()'

    answer = Binder(lm=ScriptedLM(responder), task="analyst", mode="python", n=1).ask(POEMS, QUESTION)
    assert answer.value == 3
    origins = [(c.origin, c.repaired_from, c.voted) for c in answer.candidates]
    assert origins == [("sample", None, False), ("repair", 0, False), ("link", 1, True)]
    assert ProgramCounts.of(answer.candidates).sentence().startswith(
        "1 program(s) sampled (1 distinct) + 1 written by repair + 1 with a compared value linked to a cell")


NOTES = pd.DataFrame({"name": ["Ann", "Bo", "Cy", "Di"],
                      "notes": ["promotion of the chernobyl program", "world food programme", "chernobyl fund",
                                "Heads the UN office"]})


@pytest.mark.parametrize("program, expected", [
    ('df[df["notes"].str.contains("Chernobyl")]["name"].tolist()',
     'df[df["notes"].str.contains("chernobyl")]["name"].tolist()'),
    ("df[df.notes.str.startswith('World')].shape[0]", "df[df.notes.str.startswith('world')].shape[0]"),
    ('df[df["notes"].str.endswith("FUND")]', 'df[df["notes"].str.endswith("fund")]'),
    ('df[df["notes"].str.contains("UN Office", regex=False)]', 'df[df["notes"].str.contains("UN office", regex=False)]'),
    ('df[df["notes"].str.contains("Chernobyl", na=False)]', 'df[df["notes"].str.contains("chernobyl", na=False)]'),
])
def test_a_searched_text_is_linked_to_how_the_cells_write_it(program, expected) -> None:
    """Small models write the question's case (`str.contains("Chernobyl")`) into a table whose cells are
    lower-cased: nothing is found, a count answers 0."""
    linked = link_literals(program, {"df": NOTES})
    assert linked is not None and linked[0] == expected
    assert linked[1][0].rule == "case in text"


@pytest.mark.parametrize("program", [
    'df[df["notes"].str.contains("chernobyl")]',  # found as written
    'df[df["notes"].str.contains("Chernobyl", case=False)]',  # case already set aside
    'df[df["notes"].str.contains("Cher.obyl")]',  # a pattern, not a text
    'df[df["notes"].str.contains("Un")]',  # the cells write it two ways ("fund", "the UN office")
    'df[df["notes"].str.contains("Moscow")]',  # no cell holds it in any case
    'df[df["name"].str.lower().str.contains("ANN")]',  # not the column's own texts
    'df["notes"] = df["notes"].str.upper()\ndf[df["notes"].str.contains("Chernobyl")]',  # changed first
])
def test_a_searched_text_is_left_alone(program) -> None:
    assert link_literals(program, {"df": NOTES}) is None


def _asked_once(table: pd.DataFrame, program: str, question: str) -> tuple[Any, list[Candidate]]:
    """The answer of one sampled ``program`` (python mode, wikitq), and its linked versions."""
    answer = Binder(lm=ScriptedLM(lambda request, purpose: [program]), task="wikitq", n=1, mode="python").ask(
        table, question)
    return answer.value, [c for c in answer.candidates if c.origin == "link"]


def test_the_link_stage_links_a_searched_text() -> None:
    value, linked = _asked_once(NOTES, 'len(df[df["notes"].str.contains("Chernobyl")])',
                                "how many notes mention chernobyl?")
    assert value == 2
    assert linked and linked[0].links == ("'notes': 'Chernobyl' → 'chernobyl' (case in text)",)


MATCHES = pd.DataFrame({"home": ["Rovers", "City", "United"], "score": ["2–1", "0–0", "3–2"],
                        "seasons": ["1990–91", "1991–92", "1992–93"], "code": ["a-1", "b–2", "c"]})


@pytest.mark.parametrize("program, expected", [
    ('df["score"].str.split("-").str[0].astype(int).sum()', 'df["score"].str.split("–").str[0].astype(int).sum()'),
    ("df['score'].str.split(pat='-', expand=True)", "df['score'].str.split(pat='–', expand=True)"),
    ('df["score"].str.extract(r"(\\d+)-(\\d+)")', 'df["score"].str.extract(r"(\\d+)–(\\d+)")'),
    ('df["score"].str.extract(r"(\\d+)\\-(\\d+)")', 'df["score"].str.extract(r"(\\d+)–(\\d+)")'),
    ('df[df["score"].str.contains("2-1")]["home"]', 'df[df["score"].str.contains("2–1")]["home"]'),
    ('df[df.seasons.str.startswith("1991-")].home', 'df[df.seasons.str.startswith("1991–")].home'),
    ('df["score"].str.replace("-", " to ")', 'df["score"].str.replace("–", " to ")'),
    ('df["score"].str.extract(r"([0-9-]+)-(\\d)")', 'df["score"].str.extract(r"([0-9-]+)–(\\d)")'),  # class kept
])
def test_a_hyphen_is_linked_to_the_dash_the_cells_write(program, expected) -> None:
    """A model types "-" for the "–" it was shown: the split finds nothing, `.str[1]` is NaN, a sum is 0."""
    linked = link_literals(program, {"df": MATCHES})
    assert linked is not None and linked[0] == expected
    assert [link.rule for link in linked[1]] == ["dash"]


@pytest.mark.parametrize("program", [
    'df["code"].str.split("-")',  # a cell holds a hyphen (and another an en dash)
    'df["home"].str.split("-")',  # no dash in the column
    'df["score"].str.replace(r"[^0-9-]", "", regex=True)',  # every hyphen is inside a character class
    'df["score"].str.split(" ")',  # no hyphen written
    'df["score"] = df["score"].str.upper()\ndf["score"].str.split("-")',  # changed first
])
def test_a_hyphen_is_left_alone(program) -> None:
    assert link_literals(program, {"df": MATCHES}) is None


def test_the_link_stage_splits_at_the_dash_the_cells_write() -> None:
    value, linked = _asked_once(MATCHES, 'df["score"].str.split("-").str[0].astype(int).sum()',
                                "how many goals did the home teams score?")
    assert value == 5
    assert linked and linked[0].links == ("'score': '-' → '–' (dash)",)
