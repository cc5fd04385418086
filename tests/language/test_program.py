import ast

import pandas as pd
import pytest

from binder_py.errors import ProgramError
from binder_py.language import execute
from binder_py.language.program import BRIDGE_NAME, parse_program
from binder_py.language.rewrite import rewrite, rewritten_source


def test_sites_spans_and_nesting():
    src = ('x = 1\n'
           'f_val("Which is the most formal?", df[f_col("Made in North America?", "made in")][["shirt"]])\n')
    parsed = parse_program(src)
    assert [s.name for s in parsed.sites] == ["f_val", "f_col"]
    outer, inner = parsed.sites
    assert src[outer.span[0]:outer.span[1]] == outer.text and outer.text.startswith("f_val(")
    assert inner.text == 'f_col("Made in North America?", "made in")'
    assert (inner.line, inner.col, inner.end_line) == (2, src.splitlines()[1].index("f_col"), 2)
    assert inner.parent_site == outer.id and outer.parent_site is None
    assert (outer.kind, inner.kind) == ("val", "col")


def test_span_columns_count_characters_not_bytes():
    src = 'é = 1; y = f_col("q?", "a")'
    site = parse_program(src).sites[0]
    assert site.col == src.index("f_col") and src[site.span[0]:site.span[1]] == site.text


def test_rewrite_keeps_lines_and_uses_bridge():
    src = 'a = 1\n\ndf["na"] = f_col("Is it?", ["made in"])\nf_val(question="Best?", context=df)\n'
    parsed = parse_program(src)
    module = rewrite(parsed)
    code = rewritten_source(module)
    assert f"{BRIDGE_NAME}(0, 'f_col', 'Is it?', ['made in'], df)" in code
    assert f"{BRIDGE_NAME}(1, 'f_val', 'Best?', df, df)" in code
    calls = [n for n in ast.walk(module) if isinstance(n, ast.Call) and getattr(n.func, "id", "") == BRIDGE_NAME]
    assert sorted(c.lineno for c in calls) == [3, 4]
    assert "f_col" in ast.unparse(parsed.tree)  # the parsed tree itself is untouched


@pytest.mark.parametrize("src, kind", [
    ('df[f("Is it?", "a")]', "col"),
    ('df[f("Is it?", "a") == "yes"]', "col"),
    ('df["n"] = f("Is it?", "a")', "col"),
    ('f("Is it?", "a").sum()', "col"),
    ('x = f("Best?", df)', "val"),
    ('f("Best?", df)', "val"),
    ('df[df.a == f("Best?", df)]', "col"),  # documented: climbing through a comparison into an index
    ('df.loc[f("Is it?", "a"), "b"]', "col"),  # the rows of .loc[rows, column] (was val: df.loc[True, "b"])
    ('df.loc[f("Is it?", "a") == "yes", ["a", "b"]]', "col"),
    ('df.loc["x", f("Best?", df)]', "val"),  # the column part is not a mask
    ('df.iloc[f("Best?", df), 0]', "val"),  # .iloc takes positions
])
def test_bare_f_resolution(src, kind):
    assert parse_program(src).sites[0].kind == kind


def test_bare_f_is_ordinary_when_program_binds_it():
    parsed = parse_program("def f(x, y):\n    return x\nf(1, 2)")
    assert parsed.sites == []


def test_compat_forms():
    parsed = parse_program('def solve(table):\n'
                           '    table = qa_map(table, "Is it?", ["a"])\n'
                           '    return qa_ans(table, "Best?")\n')
    assert parsed.defines_solve
    assert [(s.name, s.kind) for s in parsed.sites] == [("qa_map", "col"), ("qa_ans", "val")]


def test_syntax_error_has_position():
    with pytest.raises(ProgramError) as info:
        parse_program("x = 1\ny = (2 +\n")
    assert info.value.line is not None and info.value.line >= 2 and "syntax error" in str(info.value)


@pytest.mark.parametrize("src, fragment, line, col", [
    ("x = 1\nf_col()", "missing question, context", 2, 0),
    ('f_val("q")', "missing context", 1, 0),
    ('y = f_col("q", "a", "b")', "at most 2", 1, 4),
    ('f_col(*args)', "*args", 1, 0),
    ('f_col(question="q", ctx="a")', "no argument 'ctx'", 1, 0),
    ('f_col(3, "a")', "must be a string", 1, 0),
    ('g = f_col', "must be called directly", 1, 4),
    ('f_col = 1', "may not define", 1, 0),
    ('def f_val(q, c):\n    return 1', "may not define", 1, 0),
    (f'{BRIDGE_NAME}(0, "f_col", "q", "a")', "reserved", 1, 0),
])
def test_bad_neural_forms_have_positions(src, fragment, line, col):
    with pytest.raises(ProgramError) as info:
        parse_program(src)
    assert fragment in str(info.value)
    assert (info.value.line, info.value.column) == (line, col)


def test_method_named_f_col_is_not_neural():
    assert parse_program("df.f_col('a', 'b')").sites == []


def test_rewrite_hands_over_the_table_the_call_site_sees():
    src = ("def solve(table):\n    return f_col('q1', ['a'])\n"
           "def pick(df, table):\n    return df.apply(lambda row: f_val('q2', ['b']), axis=1)\n"
           "def outer():\n    df = 1\n    def inner(x):\n        return f_col('q3', ['c'])\n    return inner\n"
           "def shadow():\n    global df\n    df = df.head(2)\n    return f_col('q4', ['d'])\n"
           "f_col('q5', ['e'])\n")
    code = rewritten_source(rewrite(parse_program(src)))
    assert f"{BRIDGE_NAME}(0, 'f_col', 'q1', ['a'], table)" in code  # the function's own parameter
    assert f"{BRIDGE_NAME}(1, 'f_val', 'q2', ['b'], df)" in code  # df is preferred to table in one scope
    assert f"{BRIDGE_NAME}(2, 'f_col', 'q3', ['c'], df)" in code  # the enclosing function's df
    assert f"{BRIDGE_NAME}(3, 'f_col', 'q4', ['d'], df)" in code  # global df (declared global)
    assert f"{BRIDGE_NAME}(4, 'f_col', 'q5', ['e'], df)" in code


def test_the_bridge_does_not_look_at_frames():
    import inspect

    from binder_py.language.worker import bridge

    assert "_getframe" not in inspect.getsource(bridge) and "f_locals" not in inspect.getsource(bridge)


@pytest.mark.parametrize("program", [
    "+".join(["df['a']"] * 600),  # a model repeating itself: a left-deep chain of additions
    "-" * 900 + "1",
    "not " * 900 + "True",
    "df" + ".copy()" * 700,
    "df" + "['a']" * 900,
], ids=["additions", "minus", "not", "methods", "subscripts"])
def test_a_program_nested_too_deeply_is_one_failed_candidate_not_a_crash(program):
    with pytest.raises(ProgramError, match="nested"):
        parse_program(program)
    run = execute(program, pd.DataFrame({"a": [1, 2]}), neural=None)
    assert not run.ok and run.outcome.error.kind == "syntax" and "nested" in run.outcome.error.message
    # and in the pipeline: the question gets no answer from that candidate, and the others still vote
    from binder_py import Binder
    from binder_py.lm import ScriptedLM

    lm = ScriptedLM(lambda request, purpose: [program, "df['a'].sum()"])
    answer = Binder(lm=lm, n=2, progress=False).ask(pd.DataFrame({"a": [1, 2]}), "what is the total?")
    assert answer.value == 3


def test_ordinary_nesting_is_fine():
    program = "df[(df['a'] > 1) & ((df['a'] < 5) | (df['a'] == 9))].sort_values('a').head(3)['a'].tolist()"
    assert parse_program(program).tree is not None
    assert parse_program("x = " + "(" * 60 + "1" + ")" * 60).tree is not None
