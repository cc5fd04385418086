"""Typed neural answers: inference from the question and the program, schemas, grammars, parsing."""

from __future__ import annotations

import pandas as pd
import pytest

from binder_py.grammar.gbnf import gbnf_accepts, parse_gbnf
from binder_py.language.program import parse_program
from binder_py.neural.answer_types import (DATE, NUMBER, TEXT, YES_NO, AnswerKind, AnswerType, date_column_sites,
                                           enforce,
                                           infer_answer_type, parse_typed_answer, question_answer_type,
                                           rows_json_schema, site_answer_types, typed_column)

CHOICE = AnswerType(AnswerKind.CHOICE, ("the last ferry", "harbour lights"))


@pytest.mark.parametrize("question, kind, choices", [
    ("is it a loss?", AnswerKind.YES_NO, ()),
    ("Was the film released in the US?", AnswerKind.YES_NO, ()),
    ("does it contain chemicals?", AnswerKind.YES_NO, ()),
    ("how many goals were scored?", AnswerKind.NUMBER, ()),
    ("what is the population?", AnswerKind.NUMBER, ()),
    ("in what year was it founded?", AnswerKind.NUMBER, ()),
    ("when was he born?", AnswerKind.DATE, ()),
    ("what date did the album come out?", AnswerKind.DATE, ()),
    ("which film came first, the last ferry or harbour lights?", AnswerKind.CHOICE, ("the last ferry", "harbour lights")),
    ("is it red or blue?", AnswerKind.CHOICE, ("red", "blue")),
    ("which is it: gold, silver or bronze?", AnswerKind.CHOICE, ("gold", "silver", "bronze")),
    ("what country is the team from?", AnswerKind.TEXT, ()),
    ("name of the director", AnswerKind.TEXT, ()),
])
def test_question_wording(question, kind, choices):
    answer_type = question_answer_type(question)
    assert answer_type.kind is kind
    assert answer_type.choices == choices


def _types(program: str) -> dict[str, AnswerType]:
    parsed = parse_program(program)
    return {parsed.sites[i].text.split("(", 1)[1].split(",")[0].strip("\"'"): t
            for i, t in site_answer_types(parsed).items()}


def test_program_use_decides_the_type():
    types = _types(
        'df[f_col("made in the US", "shirt")]\n'                       # a mask, whatever the wording
        'df[f_col("country", "shirt") & (df.price > 3)]\n'
        '~f_col("in stock", "shirt")\n'
        '(f_col("verdict", ["score"]) == "yes").sum()\n'               # the original's style
        'f_col("flag", "shirt") == True\n'
        'df[f_col("weight", "shirt") > 3]\n'                           # ordering against a number
        'f_col("price", "shirt") * 2\n'
        'f_col("cost", "shirt").mean()\n'
        'pd.to_numeric(f_col("height", "shirt"))\n'
        'f_col("opening", "shirt").dt.year\n'
        'f_col("nickname", "shirt").str.lower()\n'
        'f_col("continent", "shirt") == "europe"\n'
        'if f_val("is it sunny?", df):\n    x = 1\n'
    )
    expected = {"made in the US": "yes_no", "country": "yes_no", "in stock": "yes_no", "verdict": "yes_no",
                "flag": "yes_no", "weight": "number", "price": "number", "cost": "number", "height": "number",
                "opening": "date", "nickname": "text", "continent": "text", "is it sunny?": "yes_no"}
    assert {question: t.kind.value for question, t in types.items()} == expected
    assert "row filter" in types["made in the US"].reason


def test_the_rows_of_a_loc_subscript_are_a_row_filter():
    """`df.loc[f_col("country", "shirt"), "price"]` was typed by the wording (free text), so a yes/no
    mask was asked as text; only `df.loc[f_col(...)]` was a row filter."""
    types = _types('df.loc[f_col("country", "shirt"), "price"]\ndf.loc["x", f_col("colour", "shirt")]')
    assert types["country"].kind is AnswerKind.YES_NO and "row filter" in types["country"].reason
    assert types["colour"].kind is AnswerKind.TEXT


def test_assigned_results_are_followed_to_their_uses():
    types = _types('df["na"] = f_col("where is it made?", ["made in"])\n'
                   'df["w"] = f_col("weight?", ["shirt"])\n'
                   'released = f_col("release?", ["title"])\n'
                   'df[df["na"] & (df["w"] > 2)].sort_values("w")\n'
                   'released.dt.year')
    assert types["where is it made?"].kind is AnswerKind.YES_NO
    assert types["weight?"].kind is AnswerKind.NUMBER
    assert types["release?"].kind is AnswerKind.DATE


def test_date_columns_read_through_dt_are_the_ones_handed_over_as_datetimes():
    parsed = parse_program('a = f_col("when was it released?", ["film"])\n'
                           'df["b"] = f_col("opening?", ["film"])\n'
                           'a.dt.year.max() + df["b"].dt.month.min()\n'
                           'f_col("when did it close?", ["film"]).dt.year\n'
                           'df[f_col("when was it built?", ["film"]) > "1990"]\n'   # a date, kept as written
                           'pd.to_datetime(f_col("when was it sold?", ["film"]))\n'
                           'f_col("what is its launch?", ["film"]).dt.year')   # .dt types it a date, whatever the wording
    types = site_answer_types(parsed)
    dated = {parsed.sites[i].text.split('"')[1] for i in date_column_sites(parsed, types)}
    assert dated == {"when was it released?", "opening?", "when did it close?", "what is its launch?",
                     "when was it sold?"}
    assert date_column_sites(parse_program('f_col("is it old?", ["film"]).sum()'), {}) == frozenset()


def test_a_date_column_read_through_dt_is_a_datetime_column_in_a_run():
    """`f_col("When was it released?", ["film"]).dt.year` failed: the date answers were handed over as
    text ("Can only use .dt accessor with datetimelike values")."""
    from binder_py.language.execute import execute
    from binder_py.neural import OracleBackend

    films = pd.DataFrame({"film": ["Alien", "Heat", "Ran"]})
    oracle = OracleBackend({"f_col": {"When was it released?": {"alien": "1979-05-25", "heat": "1995",
                                                                "ran": "sometime in the eighties"}}})
    run = execute('d = f_col("When was it released?", ["film"])\n[str(d.dtype), d.dt.year.tolist()]',
                  films, neural=oracle)
    assert run.ok, run.error
    assert run.value[0].startswith("datetime64")
    assert run.value[1][:2] == [1979, 1995] and pd.isna(run.value[1][2])
    assert any("not a date" in w and "sometime" in w for w in run.warnings), run.warnings
    # without .dt a date is kept as written: a year stays a year
    kept = execute('f_col("When was it released?", ["film"]).iloc[1]', films, neural=oracle)
    assert kept.ok and kept.value == "1995"


def test_a_date_column_passed_to_to_datetime_is_a_datetime_column_whatever_the_answers_formats():
    """`pd.to_datetime(f_col("When was it released?", ...))` failed when the answers were written in
    several formats (pandas reads all by the first one's: 'time data "1999-07-14" doesn't match format
    "%B %d, %Y"'), and with errors="coerce" made them NaT without a word, so a sort picked the wrong film."""
    from binder_py.language.execute import execute
    from binder_py.neural import OracleBackend

    films = pd.DataFrame({"film": ["Alien", "Heat", "Ran"]})
    oracle = OracleBackend({"f_col": {"When was it released?": {"alien": "May 25, 1979", "heat": "1995-12-15",
                                                                "ran": "1 June 1985"}}})
    for coerce in ("", ', errors="coerce"'):
        run = execute(f'df["d"] = pd.to_datetime(f_col("When was it released?", ["film"]){coerce})\n'
                      'df.sort_values("d")["film"].tolist()', films, neural=oracle)
        assert run.ok, run.error
        assert run.value == ["Alien", "Ran", "Heat"]
    # a column the program converts a copy of stays text where it is read as text (the answers as written)
    run = execute('df["r"] = f_col("When was it released?", ["film"])\ndf["d"] = pd.to_datetime(df["r"], format="mixed")\n'
                  '[df.sort_values("d")["r"].iloc[0], df[df["r"].str.contains("1985")]["film"].tolist()]',
                  films, neural=oracle)
    assert run.ok, run.error
    assert run.value == ["May 25, 1979", ["Ran"]]


def test_a_date_column_read_through_dt_takes_dates_of_any_form_and_refuses_dates_without_a_year():
    """Numbers and timestamps a callable backend returns are dates too (they were NaT); an answer with
    a time zone is read at its wall time (mixed zones made the call fail); "today" or "5 May" names no
    year, which pandas would invent: refused, with a warning, like any answer of the wrong kind."""
    from binder_py.language.execute import execute
    from binder_py.neural import CallableBackend

    films = pd.DataFrame({"film": ["a", "b", "c", "d", "e", "f"]})
    answers = {"a": 1979, "b": pd.Timestamp("1985-07-01"), "c": "2020-01-01T10:00:00+02:00", "d": "1999",
               "e": "today", "f": "5 May"}
    backend = CallableBackend.per_row(lambda q, row: answers[row["film"]])
    run = execute('d = f_col("When was it released?", ["film"])\n[d.dt.year.tolist(), d.dt.hour.tolist()]',
                  films, neural=backend)
    assert run.ok, run.error
    years, hours = run.value
    assert years[:4] == [1979, 1985, 2020, 1999] and all(pd.isna(y) for y in years[4:])
    assert hours[2] == 10
    assert any("not a date with its year" in w and "today" in w and "5 May" in w for w in run.warnings), run.warnings


def test_weak_uses_pick_by_the_wording():
    assert _types('f_col("is it a win?", "score").sum()')["is it a win?"].kind is AnswerKind.YES_NO
    assert _types('f_col("how many goals?", "score").sum()')["how many goals?"].kind is AnswerKind.NUMBER
    assert _types('df["d"] = f_col("when did it open?", "name")\ndf.sort_values("d")')[
        "when did it open?"].kind is AnswerKind.DATE
    # a sort is no evidence of a kind (text sorts too): without a telling wording, nothing is enforced
    assert _types('df["s"] = f_col("score of the match", "name")\ndf.sort_values("s")')[
        "score of the match"].kind is AnswerKind.TEXT
    assert _types('df["c"] = f_col("price?", "price")\nint(df["c"].sum())')[
        "price?"].kind is AnswerKind.TEXT
    # ... and a telling wording decides a weak use: a unit after "in" asks for a number
    assert _types('df["c"] = f_col("price in cents?", "price")\nint(df["c"].sum())')[
        "price in cents?"].kind is AnswerKind.NUMBER
    assert _types('x = f_val("is it a or b?", df)\nx')["is it a or b?"].choices == ("a", "b")
    assert infer_answer_type("what colour?").kind is AnswerKind.TEXT


@pytest.mark.parametrize("text, answer_type, value", [
    ("yes", YES_NO, True), ("Yes.", YES_NO, True), ("NO", YES_NO, False), ("true", YES_NO, False is False),
    ("no, it is not", YES_NO, False), (" y ", YES_NO, True), (True, YES_NO, True),
    ("12", NUMBER, 12), ("1,234", NUMBER, 1234), ("$3.50", NUMBER, 3.5), ("12 kg", NUMBER, 12), ("seven", NUMBER, 7),
    ("-4", NUMBER, -4), (2.5, NUMBER, 2.5),
    # an abbreviated scale after an amount of money (was 465: sums of "$465M" answers were silently wrong);
    # without a currency sign "220m" may be metres, and "$2 t-shirts" names no trillion
    ("$465M", NUMBER, 465_000_000), ("€3.5k", NUMBER, 3500), ("£1.2bn", NUMBER, 1_200_000_000),
    ("-$1.5 mn", NUMBER, -1_500_000), ("about 220m", NUMBER, 220), ("$2 t-shirts", NUMBER, 2),
    ("1999", DATE, pd.Timestamp("1999-01-01")), ("2001-03-04", DATE, pd.Timestamp("2001-03-04")),
    ("March 4, 2001", DATE, pd.Timestamp("2001-03-04")),
    ("Harbour Lights", CHOICE, "harbour lights"), ("last ferry", CHOICE, "the last ferry"),
    ("It was harbour lights.", CHOICE, "harbour lights"),
    ("  Lisbon ", TEXT, "Lisbon"),
])
def test_parsing_reads_the_type(text, answer_type, value):
    parsed = parse_typed_answer(text, answer_type)
    assert parsed.ok and not parsed.missing
    assert parsed.value == value


@pytest.mark.parametrize("text, answer_type, message", [
    ("maybe", YES_NO, "expected yes or no, got 'maybe'"),
    ("a lot", NUMBER, "expected a number"),
    ("between 3 and 5", NUMBER, "expected a number"),
    ("the nineties", DATE, "expected a date"),
    ("both", CHOICE, "expected one of 'the last ferry', 'harbour lights'"),
    ("the last ferry or harbour lights", CHOICE, "expected one of"),
])
def test_unreadable_answers_are_failures_that_say_why(text, answer_type, message):
    parsed = parse_typed_answer(text, answer_type)
    assert not parsed.ok and parsed.value is None
    assert message in parsed.error


@pytest.mark.parametrize("text, value", [("$25 million", 25_000_000), ("1.1 million", 1_100_000),
                                         ("2.5 Billion dollars", 2_500_000_000), ("300 thousand", 300_000)])
def test_a_number_with_a_scale_word_is_read_at_its_scale(text, value):
    """'$25 million' was read as 25: beside '$11,000,000' in one column of amounts, 25 was the smaller."""
    assert parse_typed_answer(text, NUMBER).value == value


@pytest.mark.parametrize("text", [None, "unknown", "N/A", "", "none", float("nan")])
def test_unknown_is_missing_not_a_failure(text):
    parsed = parse_typed_answer(text, NUMBER)
    assert parsed.ok and parsed.missing and parsed.value is None


def test_typed_columns_list_their_failures():
    index = pd.Index([10, 11, 12, 13])
    column = typed_column(["yes", "no", "perhaps", "unknown"], YES_NO, index=index, name="q?")
    assert str(column.series.dtype) == "yesno"
    assert column.series.index.tolist() == [10, 11, 12, 13] and column.series.name == "q?"
    assert column.failures == {2: "expected yes or no, got 'perhaps'"}
    assert (column.series == "yes").sum() == 1  # a failed row is never selected: not an all-True mask
    assert column.failure_message().startswith("1 of 4 answers could not be read: row 2")
    numbers = typed_column(["3", "4", "x"], NUMBER)
    assert str(numbers.series.dtype) == "Int64" and numbers.series.tolist()[:2] == [3, 4]
    assert list(numbers.failures) == [2]
    assert str(typed_column(["3.5", "4"], NUMBER).series.dtype) == "Float64"
    dates = typed_column(["1999", "2001-03-04"], DATE)
    assert dates.series.dt.year.tolist() == [1999, 2001] and not dates.failures
    assert str(typed_column(["a", "b"], TEXT).series.dtype) == "string"
    assert typed_column(["a"], TEXT).failure_message() is None


@pytest.mark.parametrize("answer_type, good, bad", [
    (YES_NO, ["yes", "no", "unknown"], ["Yes", "maybe", ""]),
    (NUMBER, ["12", "-3.5", "1,234", "unknown"], ["12kg", "1,23", "", "abc"]),
    (DATE, ["1999", "1999-03", "1999-03-04", "unknown"], ["99", "March 1999"]),
    (TEXT, ["Lisbon", "a b c"], ["", "two\nlines"]),
    (AnswerType(AnswerKind.CHOICE, ('the "last" ferry', "harbour lights")), ['the "last" ferry', "unknown"],
     ["harbour", "the last ferry"]),
])
def test_grammars_accept_exactly_the_type(answer_type, good, bad):
    grammar = parse_gbnf(answer_type.gbnf())
    for text in good:
        assert gbnf_accepts(grammar, text), text
        assert parse_typed_answer(text, answer_type).ok, text
    for text in bad:
        assert not gbnf_accepts(grammar, text), text


def test_json_schemas():
    jsonschema = pytest.importorskip("jsonschema")
    jsonschema.validate("yes", YES_NO.json_schema())
    jsonschema.validate(12.5, NUMBER.json_schema())
    jsonschema.validate("unknown", NUMBER.json_schema())
    jsonschema.validate("1999-03-04", DATE.json_schema())
    jsonschema.validate("harbour lights", CHOICE.json_schema())
    for value, schema in (("maybe", YES_NO), ("12", NUMBER), ("March 1999", DATE), ("both", CHOICE), ("", TEXT)):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(value, schema.json_schema())
    batch = rows_json_schema(YES_NO, [0, 1])
    jsonschema.validate({"0": "yes", "1": "no"}, batch)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"0": "yes"}, batch)


def test_choice_types_need_two_choices():
    with pytest.raises(ValueError, match="two or more"):
        AnswerType(AnswerKind.CHOICE, ("a", "a"))
    with pytest.raises(ValueError, match="choices are given exactly"):
        AnswerType(AnswerKind.TEXT, ("a", "b"))


def test_a_yes_no_question_stays_yes_no_in_arithmetic_and_whatever_quantity_it_names():
    """`f_col("Is the population over 1 million?", "city").sum()` was typed a number (the wording
    names a quantity), and `f_col("is it a kazakhstan team?", "team") * df.goals` too (arithmetic):
    every yes/no answer was then unreadable, NA, and the program answered 0."""
    assert question_answer_type("Is the population over 1 million?").kind is AnswerKind.YES_NO
    types = _types('f_col("Is the population over 1 million?", "city").sum()\n'
                   '(f_col("is it a kazakhstan team?", "team") * df.goals).sum()\n'
                   'f_col("is it sold out?", "shirt").mean() * 100\n'
                   'f_col("how many goals?", "team") * 2')
    assert {q: t.kind for q, t in types.items()} == {
        "Is the population over 1 million?": AnswerKind.YES_NO, "is it a kazakhstan team?": AnswerKind.YES_NO,
        "is it sold out?": AnswerKind.YES_NO, "how many goals?": AnswerKind.NUMBER}


def test_yes_no_answers_take_part_in_arithmetic_in_a_run():
    from binder_py.language.execute import execute
    from binder_py.neural import CallableBackend

    teams = pd.DataFrame({"team": ["Astana", "Chelsea", "Kairat"], "goals": [3, 7, 5]})
    backend = CallableBackend.per_row(lambda q, row: "no" if row["team"] == "Chelsea" else "yes")
    run = execute('(f_col("is it a kazakhstan team?", "team") * df.goals).sum()', teams, neural=backend)
    assert run.ok and run.value == 8 and not run.warnings


@pytest.mark.parametrize("question, kind", [
    ("Which day of the week was it?", AnswerKind.TEXT),        # Monday is no date
    ("Which month was it released?", AnswerKind.TEXT),         # nor is March
    ("What day did it open?", AnswerKind.DATE),
    ("Which country has the largest population?", AnswerKind.TEXT),  # a name, whatever quantity it mentions
    ("Who had the highest total?", AnswerKind.TEXT),
    ("Which year had the highest total?", AnswerKind.NUMBER),
    ("which team scored how many goals?", AnswerKind.NUMBER),
    ("Which player was born on the earliest date?", AnswerKind.TEXT),  # a name, whatever date it mentions
    ("Who was born on 1 May?", AnswerKind.TEXT),
    ("Which date did it open?", AnswerKind.DATE),
    ("What was his date of birth?", AnswerKind.DATE),
    ("Which percentage of votes did she get?", AnswerKind.NUMBER),
])
def test_wording_that_names_no_date_or_quantity_is_text(question, kind):
    """'Which day of the week was it?' was typed a date and every answer ('Monday') was NA; 'Which
    country has the largest population?' a number, and 'Japan' was NA."""
    assert question_answer_type(question).kind is kind


@pytest.mark.parametrize("question, kind", [
    ("What is the box office in dollars?", AnswerKind.NUMBER),
    ("What is its height in meters?", AnswerKind.NUMBER),
    ("What is the area in square miles?", AnswerKind.NUMBER),
    ("what is the top speed in km/h?", AnswerKind.NUMBER),
    ("What is the running time in minutes?", AnswerKind.NUMBER),
    ("What is the name in French?", AnswerKind.TEXT),            # a language, not a unit
    ("What was it called in 1990?", AnswerKind.TEXT),            # a year, not a unit
    ("What is the team in minutes of play?", AnswerKind.NUMBER),  # the wording decides, not the sense
    ("Which film made more in dollars?", AnswerKind.TEXT),       # a name, whatever unit it mentions
    ("what city proper has the smallest area in km2?", AnswerKind.TEXT),  # WikiTQ: "Jianghai District"
    ("What is the name of the lake with the largest area in square miles?", AnswerKind.TEXT),
    ("price in cents?", AnswerKind.NUMBER),
])
def test_a_quantity_asked_in_a_unit_is_a_number(question, kind):
    """'What is the box office in dollars?' was typed free text ("no cue"), so an f_val answer such as
    '$1.2 million' reached the program as text; a unit after "in" now asks for a number."""
    assert question_answer_type(question).kind is kind


def test_a_refused_answer_says_why_its_type_was_expected():
    from binder_py.neural.answer_types import enforce

    _, [by_wording] = enforce({"a": "long ago"}, question_answer_type("When did it open?"))
    assert "not a date (the question asks when)" in by_wording
    _, [by_use] = enforce({"a": "maybe"}, _types('df[f_col("capital?", "team")]')["capital?"])
    assert "not yes/no (used as a row filter)" in by_use


def test_a_program_of_many_assigned_calls_is_typed_in_linear_time(monkeypatch):
    """Red team 13: every call assigned to a name or a column walked the whole program again for that name's
    or column's reads, in the parent before the program ran: 2,000 lines `aN = f_col('qN', 'c')` (54 kB) took
    46 s, and calls assigned to one name read in as many places made a list of every read for every call.
    The reads are found in one walk and each name's uses are read once."""
    import time

    from binder_py.neural import answer_types

    many = "".join(f"a{i} = f_col('how many q{i}?', 'c')\ndf['x{i}'] = f_col('when q{i}?', 'c')\n"
                   for i in range(1500)) + "a0 + 1\ndf['x0'].dt.year\n"
    start = time.perf_counter()
    parsed = parse_program(many)
    types = site_answer_types(parsed)
    dated = date_column_sites(parsed, types)
    assert time.perf_counter() - start < 15  # (46 s for 2,000 of the first kind alone before)
    assert len(types) == 3000 and len(dated) == 1

    read = []
    real = answer_types._usage_at
    monkeypatch.setattr(answer_types, "_usage_at", lambda *a: read.append(1) or real(*a))
    same = "".join(f"a = f_col('q{i}?', 'c')\nb = a + {i}\n" for i in range(300)) + "a.dt.year\n"
    parsed = parse_program(same)
    types = site_answer_types(parsed)
    assert {t.kind for t in types.values()} == {AnswerKind.NUMBER}  # (the first telling use: arithmetic)
    assert len(date_column_sites(parsed, {i: DATE for i in types})) == 300
    assert len(read) < 3 * 301 * 2  # once per read of `a` per analysis, not once per read per call


def test_a_question_with_a_long_run_of_spaces_is_read_in_linear_time():
    """Red team 13: the choices of a question were split with `\\s+or\\s+`, tried from every space of a run:
    a program's question literal of 20,000 spaces before "or" cost the parent 1.8 s, 200,000 about three
    minutes, before the program ran."""
    import time

    start = time.perf_counter()
    assert question_answer_type("a" + " " * 200_000 + "b or c").kind is AnswerKind.CHOICE
    assert question_answer_type("is it x" + " \t" * 100_000 + "or" + " " * 100_000 + "y?").kind is AnswerKind.CHOICE
    assert time.perf_counter() - start < 5
    assert question_answer_type("is it red  or   blue?").choices == ("red", "blue")
    assert question_answer_type("which is it: gold,  or silver or bronze?").choices == ("gold", "silver", "bronze")


def test_a_year_out_of_range_is_one_refused_answer_not_a_failed_call():
    """Red team 13: a date answer "0000" (a model's, perhaps told so by a cell) raised ValueError out of the
    typing, so the call failed for every row, in every candidate that asked the question (the raw answers are
    shared); it is that row's refused answer."""
    kept, refused = enforce({"a": "0000", "b": "1999"}, DATE)
    assert list(kept) == ["b"] and refused and "0000" in refused[0]
    assert parse_typed_answer("0000", DATE).error is not None


def test_a_choice_questions_answers_reach_the_program_spelled_as_its_choices():
    """"What genre is it, drama or comedy?" was typed a choice but its answers passed as written: "Drama",
    "a drama" and "Comedy." made `== "drama"` miss two of three dramas. An answer that reads as one choice
    is now that choice; any other stays as written (never refused), and so does an f_val's."""
    from binder_py.language.execute import execute
    from binder_py.neural import CallableBackend

    films = pd.DataFrame({"film": ["a", "b", "c", "d", "e"]})
    answers = {"a": "Drama", "b": "a drama", "c": "Comedy.", "d": "action", "e": "drama"}
    backend = CallableBackend.per_row(lambda q, row: answers[row["film"]])
    run = execute('g = f_col("What genre is it, drama or comedy?", ["film"])\n'
                  '[df[g == "drama"]["film"].tolist(), g.tolist()]', films, neural=backend)
    assert run.ok, run.error
    assert run.value == [["a", "b", "e"], ["drama", "drama", "comedy", "action", "drama"]]
    assert not run.warnings
    value = execute('f_val("Which came first, the last ferry or harbour lights?", df)', films,
                    neural=CallableBackend(lambda request: "The Last Ferry."))
    assert value.ok and value.value == "the last ferry"
