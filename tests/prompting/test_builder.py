import pandas as pd
import pytest

from binder_py.errors import BinderError
from binder_py.prompting.builder import build_parse_prompt
from binder_py.prompting.defaults import parse_request
from binder_py.tasks import task_profile as task_defaults
from binder_py.prompting.templates import fill, template_text


def count_tokens(text: str) -> int:
    return len(text) // 4

Q = "which club has won the most titles?"


def build(table, exemplars, **kw):
    kw.setdefault("count_tokens", count_tokens)
    kw.setdefault("context_window", 8000)
    kw.setdefault("instruction", "Write a program.")
    return build_parse_prompt(kw.pop("task", "wikitq"), table, kw.pop("question", Q), title="Clubs",
                              exemplars=exemplars, **kw)


def test_layout(table, exemplars):
    built = build(table, exemplars, selection="fixed", num_shots=2)
    text = built.text
    assert text.startswith("Write a program.\n\nCREATE TABLE 1998 world cup squad(\n\trow_id int,\n")
    assert "3 example rows:" in text and "3\tlilian thuram" not in text  # exemplars show 3 rows
    assert "Q: how many players came from clubs based in italy?\nNeuralPandas:\ndf[f_col(" in text
    blocks = text.split("\n\n")
    assert len(blocks) == 4  # instruction, 2 exemplars, target
    assert blocks[-1].endswith("Q: which club has won the most titles?\nNeuralPandas:\n")
    assert "All rows of the table:" in blocks[-1] and "2\tbayern munich\t6" in blocks[-1]
    assert built.exemplar_ids == ["ex-squad", "ex-mountains"] and built.dropped_exemplars == []
    assert (built.table_rows_shown, built.table_rows_total) == (3, 3)
    assert built.prompt_tokens == count_tokens(text)
    assert built.marker == "NeuralPandas:" and built.stop == ("\n\n",)


def test_python_mode_and_tabfact_label(table, exemplars):
    built = build(table, exemplars, mode="python", task="tabfact", question="real madrid won 14 titles")
    assert built.exemplar_ids and set(built.exemplar_ids) <= {"ex-mountains", "ex-cities"}
    assert "f_col" not in built.text
    assert built.text.endswith("Statement: real madrid won 14 titles\nPandas:\n")
    assert "\nStatement: which peak is the highest?\nPandas:\n" in built.text


def test_pandas_table_style(table, exemplars):
    built = build(table, exemplars, table_style="pandas", num_shots=1)
    assert "# df: 3 rows × 3 columns" in built.text and "CREATE TABLE" not in built.text


def test_braces_in_cells_title_question_are_safe(exemplars):
    df = pd.DataFrame({"a{0}": ["{x}", "{{", "}"], "b": ["{question}", "{marker}", "\\1"]})
    built = build_parse_prompt("wikitq", df, "what is {table}?", title="t{0}{", exemplars=exemplars,
                               instruction="I {x}", count_tokens=count_tokens, context_window=8000, num_shots=1)
    assert "CREATE TABLE t{0}{(" in built.text
    assert "0\t{x}\t{question}" in built.text and "1\t{{\t{marker}" in built.text and "\\1" in built.text
    assert "Q: what is {table}?\nNeuralPandas:\n" in built.text and built.text.startswith("I {x}")


def test_fill_and_template_comments():
    assert fill("{a}-{{b}}", {"a": "{b}"}) == "{b}-{b}"
    assert template_text("## doc\n{x}\n") == "{x}"
    with pytest.raises(BinderError, match="placeholder {y} has no value"):
        fill("{y}", {})


def big_table(rows=200):
    return pd.DataFrame({"name": [f"person number {i}" for i in range(rows)], "score": list(range(rows))})


def test_fit_drops_least_similar_exemplars_first(exemplars):
    table = big_table(3)
    full = build(table, exemplars, question="which peak is the highest?")
    assert full.exemplar_ids[-1] == "ex-mountains" and len(full.exemplar_ids) == 4
    # room for about two exemplars
    window = full.prompt_tokens + 512 - 150
    built = build(table, exemplars, question="which peak is the highest?", context_window=window)
    assert built.dropped_exemplars == full.exemplar_ids[:len(built.dropped_exemplars)]
    assert built.exemplar_ids == full.exemplar_ids[len(built.dropped_exemplars):]
    assert built.exemplar_ids[-1] == "ex-mountains"
    assert built.table_rows_shown == 3  # rows untouched while exemplars can be dropped
    assert built.prompt_tokens + 512 <= window


def test_fit_then_cuts_rows(exemplars):
    table = big_table(200)
    built = build(table, exemplars, context_window=1200)
    assert len(built.exemplar_ids) == 1  # min_shots=1 kept
    assert len(built.dropped_exemplars) == 3
    assert 1 <= built.table_rows_shown < 200 and built.table_rows_total == 200
    assert built.prompt_tokens + 512 <= 1200
    assert f"{built.table_rows_shown} example rows:" in built.text
    # one more row would not have fit
    more = build(table, exemplars, context_window=1200, max_table_rows=built.table_rows_shown + 1)
    assert more.table_rows_shown == built.table_rows_shown


def test_min_shots_zero_drops_all_exemplars_before_rows(exemplars):
    table = big_table(200)
    built = build(table, exemplars, context_window=1200, min_shots=0)
    assert built.exemplar_ids == [] and len(built.dropped_exemplars) == 4


def test_last_exemplar_dropped_when_one_row_does_not_fit(exemplars):
    table = big_table(5)
    one_row_no_shots = build(table, exemplars, num_shots=0, max_table_rows=1)
    window = one_row_no_shots.prompt_tokens + 512 + 20  # too small for any exemplar
    built = build(table, exemplars, context_window=window)
    assert built.exemplar_ids == [] and built.table_rows_shown >= 1


def test_too_long_error(exemplars):
    table = pd.DataFrame({f"column {i}": ["x" * 50] for i in range(40)})
    with pytest.raises(BinderError, match="too long for the model's context.*longer context window"):
        build(table, exemplars, context_window=1000)
    with pytest.raises(BinderError, match="leaves no room"):
        build(table, exemplars, context_window=500)


def test_unknown_mode(table, exemplars):
    with pytest.raises(BinderError, match="program modes are"):
        build(table, exemplars, mode="e2e")


def test_defaults_and_request():
    assert task_defaults("wikitq").temperature == 0.4 and task_defaults("wikitq").n == 20
    assert task_defaults("tabfact").temperature == 0.6 and task_defaults("tabfact").n == 50
    assert task_defaults("wikitq").num_shots == 14 and task_defaults("wikitq").stop == ("\n\n",)
    req = parse_request("P", task="tabfact")
    assert (req.prompt, req.n, req.temperature, req.max_tokens, req.stop) == ("P", 50, 0.6, 512, ("\n\n",))
    chat = parse_request("P", task="wikitq", chat=True, n=3)
    assert chat.messages == (("user", "P"),) and chat.stop == ("\n```\n",) and chat.n == 3


def test_lowercase_follows_task(table, exemplars):
    assert "real madrid" in build(table, exemplars, task="wikitq").text
    analyst = build(table, exemplars, task="analyst").text
    assert "Real Madrid" in analyst and "Bayern Munich" in analyst
    assert "Real Madrid" in build(table, exemplars, lowercase=False).text


def test_packaged_prompts_build(table):
    from binder_py.prompting.exemplars import available_tasks, clear_caches

    clear_caches()
    for task in available_tasks():
        for mode in ("binder", "python"):
            built = build_parse_prompt(task, table, Q, count_tokens=count_tokens, context_window=8000, mode=mode)
            assert built.text.endswith(("NeuralPandas:\n", "Pandas:\n")) and built.exemplar_ids
            assert built.prompt_tokens + 512 <= 8000


def test_chat_messages_give_exemplars_as_turns(table, exemplars):
    from binder_py.prompting import build_parse_prompt, parse_request

    built = build_parse_prompt("wikitq", table, "how many?", exemplars=exemplars, instruction="Write pandas.",
                               count_tokens=lambda s: len(s) // 4, context_window=100_000, num_shots=2)
    roles = [role for role, _ in built.messages]
    assert roles == ["system", "user", "assistant", "user", "assistant", "user"]
    kept = {e.id: e for e in exemplars}
    assert [text for role, text in built.messages if role == "assistant"] == [
        kept[i].program for i in built.exemplar_ids]
    assert built.messages[-1][1].endswith("NeuralPandas:") and "how many?" in built.messages[-1][1]
    request = parse_request(built.text, task="wikitq", chat=True, messages=built.messages)
    assert request.messages == built.messages and request.stop == ("\n```\n",)
