import json

import pytest

from binder_py.errors import BinderError
from binder_py.prompting import exemplars as ex
from binder_py.prompting.exemplars import Exemplar, parse_exemplar_lines, program_uses_neural


def _line(**over):
    data = {"id": "a", "title": "t", "columns": ["x"], "rows": [["1"]], "question": "q?", "program": "df.x.sum()",
            "answer": 1}
    data.update(over)
    return json.dumps(data)


def test_fixture_exemplars_parse(exemplars):
    assert [e.id for e in exemplars] == ["ex-squad", "ex-mountains", "ex-elections", "ex-cities"]
    assert exemplars[0].columns == ("player", "club", "caps")
    assert str(exemplars[0].table["caps"].dtype) == "int64"  # typed like a real table


def test_uses_neural_checks_calls_not_substrings(exemplars):
    assert [e.uses_neural for e in exemplars] == [True, False, True, False]
    assert not program_uses_neural('df["f_col("].sum()')  # inside a string
    assert not program_uses_neural("df.x.sum()  # f_val(...) later")
    assert program_uses_neural('f_val("Which is bigger?", ["a"])')


@pytest.mark.parametrize("line, message", [
    ("{not json", "not valid JSON"),
    (_line(columns=["x", "x"]), "duplicate names"),
    (_line(rows=[["1", "2"]]), "row 0 must be a list of 1 cells"),
    (_line(rows=[[1]]), "every cell must be a string"),
    (_line(program="x = 1\n\ndf.x"), "blank line"),
    (_line(program="df[("), "not valid Python"),
    (json.dumps({"id": "a"}), "missing field"),
])
def test_malformed_exemplar_names_file_and_line(line, message):
    with pytest.raises(BinderError) as info:
        parse_exemplar_lines(["", line], source="x/exemplars.jsonl")
    assert "x/exemplars.jsonl, line 2" in str(info.value) and message in str(info.value)


def test_duplicate_ids():
    with pytest.raises(BinderError, match="duplicate exemplar id 'a'"):
        parse_exemplar_lines([_line(), _line()], source="f")


def test_packaged_loading_and_cache(task_root):
    assert ex.available_tasks() == ["alpha", "beta"]
    first = ex.load_exemplars("alpha")
    assert len(first) == 4 and isinstance(first[0], Exemplar)
    first.clear()  # callers get copies
    assert len(ex.load_exemplars("alpha")) == 4
    assert ex.load_instruction("alpha") == "Instruction for alpha."
    assert "f_col and f_val are not available" in ex.load_instruction("alpha", "python")
    (task_root / "beta" / "instruction_python.txt").write_text("Plain pandas only.\n")
    assert ex.load_instruction("beta", "python") == "Plain pandas only."


def test_unknown_task_lists_known(task_root):
    with pytest.raises(BinderError, match=r"unknown task 'gamma'; known tasks: alpha, beta"):
        ex.load_exemplars("gamma")


def test_malformed_packaged_file(task_root):
    (task_root / "beta" / "exemplars.jsonl").write_text(_line() + "\n" + _line(id="b", rows=[]) + "\n")
    with pytest.raises(BinderError, match=r"prompts/parse/beta/exemplars.jsonl, line 2"):
        ex.load_exemplars("beta")


def test_real_package_tasks_load_if_present():
    ex.clear_caches()
    for task in ex.available_tasks():
        if (ex._parse_root() / task / "exemplars.jsonl").is_file():
            assert ex.load_exemplars(task)
