"""The bridge → parent message: built from plain data and refused when malformed."""

from __future__ import annotations

import pytest

from binder_py.errors import ProgramError
from binder_py.language.messages import NeuralCallMessage


def test_a_message_survives_the_wire():
    message = NeuralCallMessage(2, "col", "Is it?", ("made in",), (("usa",), ("china",)), ("usa", "china"), 5)
    assert NeuralCallMessage.from_wire(message.to_wire()) == message


def test_rows_cross_column_by_column():
    message = NeuralCallMessage(0, "val", "Which?", ("a", "b"), (("1", "x"), ("2", "y")), ("1 | x", "2 | y"), 2)
    assert message.to_wire()["cells"] == [["1", "2"], ["x", "y"]]
    assert NeuralCallMessage.from_wire(message.to_wire()) == message


def test_a_context_without_columns_keeps_its_rows():
    message = NeuralCallMessage(0, "val", "How many?", (), ((), ()), ("", ""), 2)
    assert NeuralCallMessage.from_wire(message.to_wire()) == message


@pytest.mark.parametrize("payload", [
    None, [], "x",
    {"site": 0, "kind": "col", "question": "q", "columns": ["a"], "cells": [["x"]], "keys": ["x"]},  # no n_rows
    {"site": True, "kind": "col", "question": "q", "columns": ["a"], "cells": [["x"]], "keys": ["x"], "n_rows": 1},
    {"site": 0, "kind": "exec", "question": "q", "columns": ["a"], "cells": [["x"]], "keys": ["x"], "n_rows": 1},
    {"site": 0, "kind": "col", "question": 3, "columns": ["a"], "cells": [["x"]], "keys": ["x"], "n_rows": 1},
    {"site": 0, "kind": "col", "question": "q", "columns": [1], "cells": [["x"]], "keys": ["x"], "n_rows": 1},
    {"site": 0, "kind": "col", "question": "q", "columns": ["a"], "cells": [[{}]], "keys": ["x"], "n_rows": 1},
    {"site": 0, "kind": "col", "question": "q", "columns": ["a", "b"], "cells": [["x"]], "keys": ["x"], "n_rows": 1},
    {"site": 0, "kind": "col", "question": "q", "columns": ["a"], "cells": [["x", "y"]], "keys": ["x"],
     "n_rows": 2},
])
def test_a_malformed_message_is_refused(payload):
    with pytest.raises(ProgramError, match="malformed neural call"):
        NeuralCallMessage.from_wire(payload)


def test_equal_text_answers_go_back_as_one_object():
    from binder_py.language.execute import _shared_texts

    answers = ["".join(["ye", "s"]), "".join(["y", "es"]), 3, None, "no", 1.0, True]
    shared = _shared_texts(answers)
    assert shared == answers and list(map(type, shared)) == list(map(type, answers))
    assert shared[0] is shared[1]
    texts = ["".join(["ye", "s"]), "no", "".join(["y", "es"]), "1", "True", ""]  # texts alone: found at C speed
    shared = _shared_texts(texts)
    assert shared == texts and all(type(v) is str for v in shared)
    assert shared[0] is shared[2]


def test_bridge_reads_answers_by_position_of_the_keys_it_sent_and_refuses_any_other_shape():
    import pandas as pd
    import pytest

    from binder_py.language.worker.bridge import NeuralCallError, make_bridge

    df = pd.DataFrame({"city": ["Oslo", "Rome", "oslo", "Lima"]})
    sent = []

    def parent(wire):
        sent.append(wire)
        return [{"oslo": "yes", "rome": "no", "lima": "yes"}[k] for k in wire["keys"]]

    column = make_bridge(parent)(0, "f_col", "Is it a capital?", "city", df)
    assert sent[0]["keys"] == ["oslo", "rome", "lima"] and column.tolist() == [True, False, True, True]
    every_row = make_bridge(parent, dedup=False)(0, "f_col", "Is it a capital?", "city", df)
    assert sent[1]["keys"] == ["oslo", "rome", "oslo", "lima"] and every_row.tolist() == column.tolist()
    for wrong in ({"oslo": "yes", "rome": "no", "lima": "yes"}, ["yes", "no"], None):
        with pytest.raises(NeuralCallError, match="not one answer per row sent"):
            make_bridge(lambda wire, w=wrong: w)(0, "f_col", "Is it a capital?", "city", df)


def test_a_column_reply_says_when_its_answers_are_dates():
    from binder_py.language.messages import column_reply, read_column_reply

    assert read_column_reply(column_reply(["a", None], as_dates=False)) == (["a", None], False)
    assert read_column_reply(column_reply(["1979", None], as_dates=True)) == (["1979", None], True)
    # a plain list whose answers happen to look like the marker is still a list
    assert read_column_reply([{"dates": []}]) == ([{"dates": []}], False)
