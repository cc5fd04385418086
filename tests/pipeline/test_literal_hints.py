"""Repair hints: compared strings that no row of the column holds, with the closest values."""

import pandas as pd

from binder_py.pipeline.literal_hints import literal_hints

TABLE = pd.DataFrame({"name": ["james ii", "charles i", "anne"], "term": ["1904–1905", "1906-1907", "1908"],
                      "votes": [10, 20, 30]})
TABLES = {"df": TABLE, "table": TABLE}


def test_an_equality_with_a_missing_value_gets_the_closest_values_first():
    hints = literal_hints('df[df["term"] == "1904-1905"]["name"].iloc[0]', TABLES)
    assert hints == ["no row of column 'term' equals '1904-1905'; its closest values are: '1904–1905', "
                     "'1906-1907', '1908'"]


def test_other_shapes_are_read_and_values_that_exist_say_nothing():
    assert literal_hints('"James II" != table["name"]', TABLES)[0].startswith("no row of column 'name' equals 'James II'")
    hints = literal_hints('df[df["votes"] > 5][df["name"].isin(["anne", "james 2"])]', TABLES)
    assert len(hints) == 1 and hints[0].startswith("no row of column 'name' equals 'james 2'; its closest values "
                                                   "are: 'james ii', ")
    assert literal_hints('df[df[df["votes"] > 1]["name"] == "anne"]', TABLES) == []
    assert literal_hints('df[df["name"] == "anne"]', TABLES) == []


def test_a_column_read_as_an_attribute_gets_the_hint_too():
    """`df[df.name == "James II"]` (pandas' attribute access, common in sampled programs) got no
    hint: only `df["name"]` was read."""
    assert literal_hints('df[df.name == "James II"]["term"].iloc[0]', TABLES)[0].startswith(
        "no row of column 'name' equals 'James II'; its closest values are: 'james ii'")
    assert literal_hints('df[df.votes > 5].name.isin(["ann"])', TABLES)[0].startswith(
        "no row of column 'name' equals 'ann'")
    assert literal_hints('df[df.shape == "x"]', TABLES) == []  # not a column


def test_numbers_unknown_columns_other_names_and_broken_programs_give_no_hint():
    assert literal_hints('df[df["votes"] == "10"]', TABLES) == []  # not a text column
    assert literal_hints('df[df["nope"] == "x"]', TABLES) == []
    assert literal_hints('other[other["name"] == "x"]', TABLES) == []
    assert literal_hints('df[df["name"] == ', TABLES) == []
    assert literal_hints("(" * 200 + "1" + ")" * 200, TABLES) == []


def test_several_tables_by_name_and_at_most_three_hints():
    orders = pd.DataFrame({"city": ["paris", "rome"]})
    program = "\n".join(f'orders[orders["city"] == "x{i}"]' for i in range(5))
    hints = literal_hints(program, {**TABLES, "orders": orders})
    assert len(hints) == 3 and all("column 'city'" in h for h in hints)
