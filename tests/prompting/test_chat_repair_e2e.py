import pytest

from binder_py.errors import BinderError
from binder_py.prompting.builder import build_parse_prompt
from binder_py.prompting.chat import as_chat_messages, extract_program
from binder_py.prompting.e2e import build_e2e_prompt, format_answer, parse_e2e_answer
from binder_py.prompting.repair import build_repair_prompt


def count_tokens(text: str) -> int:
    return len(text) // 4


@pytest.mark.parametrize("answer, program", [
    ("df.shape[0]\n\nQ: next question\nNeuralPandas:\ndf.x", "df.shape[0]"),  # blank-line stop
    ("\ndf.a.max()", "df.a.max()"),  # leading newline after the marker
    ("NeuralPandas:\nx = 1\ndf.a + x", "x = 1\ndf.a + x"),  # echoed marker
    ("NeuralPandas: df.a.max()", "df.a.max()"),  # marker and code on one line
    ("Q: how many?\nPandas:\ndf.a.sum()", "df.a.sum()"),  # echoed question
    ("df.a.sum()\nThis sums the column a.", "df.a.sum()"),  # trailing prose
    ("Here is the program:\n```python\nx = df[df.a > 1]\n\ny = x.shape[0]\ny\n```\nIt counts the rows.",
     "x = df[df.a > 1]\ny = x.shape[0]\ny"),  # fence: whole content, blank lines removed
    ("```sql\nSELECT 1\n```\n```python\ndf.a.sum()\n```", "df.a.sum()"),  # first python fence
    ("```\ndf.a.sum()\n", "df.a.sum()"),  # unclosed, untagged fence
    ("    df.a.sum()\n    df.b", "df.a.sum()\ndf.b"),  # dedent
    ("df[(", "df[("),  # does not parse, nothing prose-like: returned as is
    ("", ""),
])
def test_extract_program(answer, program):
    assert extract_program(answer) == program


def test_extract_program_keeps_dict_literals_and_strings():
    code = 'df["a"].map({"x": 1, "y": 2})'
    assert extract_program(code + "\n\n") == code


def test_chat_messages():
    assert as_chat_messages("P") == (("user", "P"),)
    assert as_chat_messages("P", system="S") == (("system", "S"), ("user", "P"))


def test_repair_prompt(table, exemplars):
    base = build_parse_prompt("wikitq", table, "which club has most titles?", title="Clubs", exemplars=exemplars,
                              instruction="Write.", count_tokens=count_tokens, context_window=8000, num_shots=1)
    text = build_repair_prompt(base, "df['club'].max()\n\n", "KeyError: 'club'\n\nin line 1 {0}")
    assert text.startswith(base.text)
    tail = text[len(base.text):]
    assert tail == ("df['club'].max()\n"
                    "# This program failed when it was run on the table:\n"
                    "# KeyError: 'club'\n"
                    "# in line 1 {0}\n"
                    "# Write a corrected program for the same question (fix the error; do not repeat it).\n"
                    "NeuralPandas:\n")
    assert "\n\n" not in tail
    # plain text base: the marker is read from its last line
    plain = build_repair_prompt("P\nPandas:\n", "x", "boom")
    assert plain.endswith("Pandas:\n") and "# boom" in plain


def test_repair_prompt_long_error_and_context():
    long_error = "Traceback\n" + "line\n" * 500 + "ValueError: bad"
    text = build_repair_prompt("P\nNeuralPandas:\n", "x", long_error)
    assert "ValueError: bad" in text and "# Traceback" in text and len(text) < 1300
    with pytest.raises(BinderError, match="repair prompt needs"):
        build_repair_prompt("P" * 4000 + "\nNeuralPandas:\n", "x", "e", count_tokens=count_tokens,
                            context_window=1400, max_output_tokens=512)


def test_e2e_prompt(table, exemplars):
    built = build_e2e_prompt("wikitq", table, "which club has most titles?", "Clubs", exemplars=exemplars,
                             count_tokens=count_tokens, context_window=8000, selection="fixed", num_shots=1)
    assert built.mode == "e2e" and built.marker == "A:"
    assert built.text.startswith("Read the table and answer the question using only the table.")
    assert "3\tlilian thuram\tparma\t38" in built.text  # exemplar tables in full
    assert "Q: how many players came from clubs based in italy?\nA: 4\n\n" in built.text
    assert built.text.endswith("Q: which club has most titles?\nA:")
    tabfact = build_e2e_prompt("tabfact", table, "real madrid has 14 titles", "Clubs", exemplars=exemplars,
                               count_tokens=count_tokens, context_window=8000)
    assert "verify the statement" in tabfact.text and tabfact.text.endswith("Statement: real madrid has 14 titles\nA:")


def test_format_and_parse_answers():
    assert format_answer(["tokyo", "delhi"]) == "tokyo | delhi"
    assert format_answer(True) == "true" and format_answer(3.0) == "3"
    assert parse_e2e_answer(" 1998\n\nQ: next") == "1998"
    assert parse_e2e_answer("A: tokyo | delhi") == ["tokyo", "delhi"]
    assert parse_e2e_answer("Looking at the table...\nA: \"Paris\".") == "Paris"
    assert parse_e2e_answer("A: U.S.") == "U.S."
    assert parse_e2e_answer("") == ""
