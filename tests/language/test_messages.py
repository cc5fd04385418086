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

    answers = {"a": "".join(["ye", "s"]), "b": "".join(["y", "es"]), "c": 3, "d": None, "e": "no"}
    shared = _shared_texts(answers)
    assert shared == answers and list(shared) == list(answers)
    assert shared["a"] is shared["b"]
