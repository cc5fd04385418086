"""The codec's flat nodes: a list of plain scalars and a dict with text keys cross as one node
each (checked at C speed), and a crafted node of either kind is refused."""
import pytest

from sandbox import codec


@pytest.mark.parametrize("value", [
    ["a", "b", 1, 2.5, None, True],
    {"k1": "yes", "k2": None, "k3": 3},
    {"k": [1, 2], "j": {"x": "y"}},  # text keys, values that are not plain
    [["a"], ["b", "c"]],
    {1: "a", "b": 2},  # a key that is not text: the general form
])
def test_flat_values_round_trip(value):
    assert codec.decode(codec.safe_loads(codec.dumps(codec.encode(value)))) == value


def test_many_values_make_one_node():
    tree = codec.encode({f"key {i}": "yes" for i in range(1000)})
    assert tree[0] == "sdict" and tree[1][0] == "plain" and tree[2][0] == "plain"
    assert codec.encode([str(i) for i in range(1000)])[0] == "plain"


@pytest.mark.parametrize("tree", [
    ("plain", ["a", ("repr", "x")]),
    ("plain", ["a", b"bytes"]),
    ("plain", ("a", "b")),
    ("sdict", ("plain", ["a", "b"]), ("plain", [1])),
    ("sdict", ("plain", ["a", 1]), ("plain", [1, 2])),
    ("sdict", ("plain", ["a"]), "not a list"),
])
def test_crafted_flat_nodes_are_refused(tree):
    with pytest.raises(codec.CodecError):
        codec.decode(tree)


def test_an_answer_counts_its_flat_values():
    with pytest.raises(codec.AnswerTooLarge):
        codec.encode_answer({str(i): i for i in range(codec.MAX_ANSWER_VALUES // 2 + 1)})
