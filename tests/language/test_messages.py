"""The bridge → parent message: built from plain data and refused when malformed."""

from __future__ import annotations

import pytest

from binder_py.errors import ProgramError
from binder_py.language.messages import NeuralCallMessage


def test_a_message_survives_the_wire():
    message = NeuralCallMessage(2, "col", "Is it?", ("made in",), (("usa",), ("china",)), ("usa", "china"), 5)
    assert NeuralCallMessage.from_wire(message.to_wire()) == message


@pytest.mark.parametrize("payload", [
    None, [], "x",
    {"site": 0, "kind": "col", "question": "q", "columns": ["a"], "rows": [["x"]], "keys": ["x"]},  # no n_rows
    {"site": True, "kind": "col", "question": "q", "columns": ["a"], "rows": [["x"]], "keys": ["x"], "n_rows": 1},
    {"site": 0, "kind": "exec", "question": "q", "columns": ["a"], "rows": [["x"]], "keys": ["x"], "n_rows": 1},
    {"site": 0, "kind": "col", "question": 3, "columns": ["a"], "rows": [["x"]], "keys": ["x"], "n_rows": 1},
    {"site": 0, "kind": "col", "question": "q", "columns": [1], "rows": [["x"]], "keys": ["x"], "n_rows": 1},
    {"site": 0, "kind": "col", "question": "q", "columns": ["a"], "rows": [[{}]], "keys": ["x"], "n_rows": 1},
    {"site": 0, "kind": "col", "question": "q", "columns": ["a"], "rows": [["x"], ["y"]], "keys": ["x"],
     "n_rows": 2},
])
def test_a_malformed_message_is_refused(payload):
    with pytest.raises(ProgramError, match="malformed neural call"):
        NeuralCallMessage.from_wire(payload)
