"""The per-table program grammar: column positions name only the table's columns; ordinary pandas stays allowed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from binder_py.grammar.gbnf import GbnfError, gbnf_accepts, parse_gbnf
from binder_py.grammar.program import build_program_grammar
from binder_py.language.program import parse_program

ROOT = Path(__file__).resolve().parents[2]
ODD_COLUMNS = ["team", "played", "lost", "units sold", 'say "hi"', "it's", "back\\slash", "Größe", "2010",
               "class", "None", "f_col", "tab\there", "  padded "]


@pytest.fixture(scope="module")
def grammar():
    return parse_gbnf(build_program_grammar(ODD_COLUMNS))


ACCEPTED = [
    'df["team"]', "df['team']", 'df[["team", "lost"]]', "df[['team','lost']]", 'df[ "team" ]',
    'df[df["lost"] > 3]["team"]', 'df.sort_values("lost")["team"].iloc[0]',
    'df.sort_values(["lost", "team"], ascending=False).head(1)["team"]', 'df.sort_values(by="lost")',
    'df.loc[df["lost"].idxmax(), "team"]', 'df.loc[:, ["team", "lost"]]', 'df.at[0, "team"]',
    'df["team"].value_counts()["fc nordby"]',  # after a column, subscripts index values
    'f_col("is it?", ["team"])', 'f_val("q?", "team")', "f_col('q?', 'team')",
    'x = f_col("q?", df[["team"]])\ndf[x]', 'df["new"] = f_col("q?", ["team"])',
    'df["units sold"].sum()', 'df["say \\"hi\\""]', "df['say \"hi\"']", "df['it\\'s']", 'df["it\'s"]',
    'df["back\\\\slash"]', 'df["Größe"]', 'df["2010"]', 'df["class"]', 'df["None"]', 'df["f_col"]',
    'df["tab\\there"]', 'df["  padded "]',
    'len(df)', 'df.apply(lambda r: r["anything"], axis=1)', 'x = 1\ny = x + 2.5e-3\ny',
    '(df["lost"] > 2).sum()', 'df.groupby("team")["lost"].sum()', 'df[df["team"].isin(["a", "b"])]',
    'df.iloc[0]["team"]', 'df.columns[0]', 'print(f"{x}")', '# comment\ndf["team"]', 'qa_map(df, "q?", ["team"])',
    'def solve(df):\n    return df["team"]\nsolve(df)', 'def solve(df):\n    df["new"] = 1\n    return df',
    'x = 1\ndf["new col"] = x', 'df[f_col("is it?", "team") & (df["lost"] > 1)]',
    'df[[c for c in df.columns]]', 'df[:3]', 'df[~df["lost"].isna()]', "r'raw' + rb\"x\"",
    'd = df[df["lost"] > 1]\nd["anything"]',  # other names are not tracked
    'sorted({1: "a", 2: "b"}.items(), key=lambda kv: kv[1])', 'x = [1, 2,\n     3]\nx',
    'df.shape[0] if len(df) > 0 else None', 'df[df["team"] == "x"]["lost"].tolist()[0]',
]
REJECTED = [
    'df["bogus"]', 'df[["team", "bogus"]]', 'df[df["lost"] > 3]["bogus"]', 'df ["bogus"]', 'df.sort_values("bogus")',
    'df.sort_values("lost")["bogus"]', 'df.loc[df["lost"].idxmax(), "bogus"]', 'df.at[0, "bogus"]',
    'f_col("is it?", ["bogus"])', 'f_val("q?", "bogus")', 'f("q?", ["bogus"])', 'f_col("q?", df[["bogus"]])',
    'df["new"] = 1\ndf["new"] > 1', 'df.groupby("team")["bogus"]', 'df.iloc[0]["bogus"]', 'df.head(3)["bogus"]',
    'qa_map(df, "q?", ["bogus"])', 'def solve(df):\n    return df["bogus"]', 'df["back\\slash"]',
    'df["Team"]',  # exact spelling only
    '', 'df[]', ' df', '\ndf', 'x = 1\n\ny', 'x = 1\n   \ny', 'x = [1,\n\n 2]', 'df[df["bogus"] = "x"]', 'x = df["bogus"] = 1', 'f(df["bogus"] = 1)', 'g = f_col', 'df["team"', 'df[(1]',
]


@pytest.mark.parametrize("program", ACCEPTED)
def test_ordinary_programs_over_real_columns_are_accepted(grammar, program):
    assert gbnf_accepts(grammar, program)


@pytest.mark.parametrize("program", REJECTED)
def test_invented_columns_are_rejected(grammar, program):
    assert not gbnf_accepts(grammar, program)


def test_accepted_programs_are_python_the_project_parses():
    for program in ACCEPTED:
        parse_program(program)


def test_every_packaged_exemplar_program_is_in_its_tables_grammar():
    for path in sorted((ROOT / "prompts" / "parse").glob("*/exemplars.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            exemplar = json.loads(line)
            # with several tables, df may be rebound to a join: every table's columns are columns
            columns = list(dict.fromkeys([*exemplar["columns"], *(c for t in exemplar.get("tables", [])
                                                                   for c in t["columns"])]))
            grammar = build_program_grammar(columns)
            assert gbnf_accepts(grammar, exemplar["program"]), (path.parent.name, exemplar["id"])


def test_table_names_and_original_binder_style():
    grammar = parse_gbnf(build_program_grammar(["result", "opponent"], table_names=("df", "table")))
    assert gbnf_accepts(grammar, "table = qa_map(table, 'is it a loss?', ['result'])\n"
                                 "len(table[table['opponent'] == 'x'])")
    assert not gbnf_accepts(grammar, "table['bogus']")
    assert not gbnf_accepts(grammar, "table = qa_map(table, 'is it a loss?', ['bogus'])")


def test_fenced_form_wraps_the_program():
    grammar = parse_gbnf(build_program_grammar(["team"], fenced=True))
    assert gbnf_accepts(grammar, '```python\ndf["team"]\n```')
    assert not gbnf_accepts(grammar, 'df["team"]')
    assert not gbnf_accepts(grammar, '```python\ndf["bogus"]\n```')


@pytest.mark.parametrize("columns, table_names, message", [
    ([], ("df",), "no columns"),
    ("team", ("df",), "not one string"),
    ([1, "a"], ("df",), "must be strings"),
    (["a"], ("f_col",), "neural-call name"),
    (["a"], ("my table",), "not an ASCII identifier"),
    (["a"], (), "table_names is empty"),
    (["\ud800"], ("df",), "surrogate"),
])
def test_bad_input_is_a_clear_error(columns, table_names, message):
    with pytest.raises(GbnfError, match=message):
        build_program_grammar(columns, table_names=table_names)
