"""The codec's flat nodes: a list of plain scalars and a dict with text keys cross as one node
each (checked at C speed), and a crafted node of either kind is refused."""
import pandas as pd
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


# red-team round 8: a dtype named by a (compromised) worker sized the parent's allocation
# ("|S1000000000": a gigabyte per value) or named a file pandas would open (dateutil/...)
@pytest.mark.parametrize("dtype", ["|S100000000", "S100000000", "<U30000000", "V100000000",
                                   "(10000,1000)i8", "Sparse[|S100000000]",
                                   "fixed_size_binary[100000000][pyarrow]",
                                   "datetime64[ns, dateutil//etc/hostname]"])
def test_parent_does_not_resolve_worker_dtype(dtype):
    import resource
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    tree = ("series", [1, 2, 3], dtype, ("index", [1, 2, 3], None, dtype), None)
    value = codec.decode(tree)
    assert value.tolist() == [1, 2, 3]
    assert value.memory_usage(deep=False) < 10_000
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 100_000  # KiB


@pytest.mark.parametrize("dtype", ["int64", "float32", "bool", "Int64", "boolean", "string", "str", "category",
                                   "datetime64[ns]", "datetime64[us, UTC]", "datetime64[ns, Europe/Paris]",
                                   "timedelta64[ns]", "int64[pyarrow]", "complex128", "object"])
def test_parent_keeps_ordinary_dtypes(dtype):
    values = [("ts", "2020-01-01T00:00:00+00:00")] if dtype.startswith("datetime64") else \
        [("td", 1)] if dtype.startswith("timedelta") else [True] if "bool" in dtype else [1]
    value = codec.decode(("series", values, dtype, ("range", 0, 1, 1, None), None))
    assert str(value.dtype).split("[")[0] == dtype.split("[")[0]


# an ExtensionArray (what .unique() gives for a str, Int64 or boolean column) crossed as its repr
# text ("<ArrowStringArray>\n['North', ...]\nLength: 4, dtype: str"), so the answer was that text
@pytest.mark.parametrize("array, expected", [
    (pd.Series(["North", "South", "North"], dtype="str").unique(), ["North", "South"]),
    (pd.array([120, None], dtype="Int64"), [120, None]),
    (pd.array([True, False], dtype="boolean"), [True, False]),
    (pd.Categorical(["x", "y"]), ["x", "y"]),
])
def test_extension_arrays_cross_as_lists(array, expected):
    value = codec.decode(codec.safe_loads(codec.dumps(codec.encode_answer(array))))
    assert [None if v is pd.NA else v for v in value] == expected


def test_an_extension_array_answer_is_counted():
    with pytest.raises(codec.AnswerTooLarge):
        codec.encode_answer(pd.array(range(codec.MAX_ANSWER_VALUES + 1), dtype="Int64"))


# red team 3: Python refuses to write an int of more than 4,300 digits in decimal, so an answer
# such as 2 ** 100000 made str(), repr() and json.dumps raise in the parent (binder-py exec ended
# in a traceback; ask --json and eval's results line could not be written)
@pytest.mark.parametrize("program", [
    "2 ** 100000",
    "[2 ** 100000, 1, 'a']",
    "{2 ** 100000: (2 ** 100000,)}",
    "pd.Series([2 ** 100000, 1], dtype='O')",
    "pd.DataFrame({'a': pd.Series([2 ** 100000], dtype='O')}).set_axis(pd.Index([-(2 ** 100000)], dtype='O'))",
])
def test_an_int_too_long_to_write_arrives_as_text(sb, program):
    import json

    import pandas as pd

    outcome = sb.run(program)
    assert outcome.ok, outcome.error
    value = outcome.value
    if isinstance(value, pd.DataFrame):
        value = [value.index.tolist(), value["a"].tolist()]
    elif isinstance(value, pd.Series):
        value = value.tolist()
    text = json.dumps(value, default=repr) + str(value) + repr(value)
    assert "an integer of about 30,104 digits, too long to show" in text


def test_long_ints_in_crafted_trees_arrive_as_text():
    big = 3 ** 20000
    assert codec.decode(big).startswith("<an integer of about")
    assert codec.decode(("plain", [1, big, "x", True]))[1].startswith("<an integer of about")
    assert codec.decode(("plain", [1, 2 ** 64, True])) == [1, 2 ** 64, True]
    assert codec.decode(("dict", [(big, 1)])) == {codec.decode(big): 1}


# red team 3: a lone surrogate (chr(0xD800)) cannot be encoded as UTF-8, so an answer, a printed
# line or an error message holding one made binder-py exec (and --json) raise UnicodeEncodeError
# in the parent, and an eval results line could not be written
@pytest.mark.parametrize("program,expected", [
    ("chr(0xd800)", "\\ud800"),
    ("[chr(0xdfff) + 'a', {'k' + chr(0xd800): (chr(0xdc00),)}]", ["\\udfffa", {"k\\ud800": ("\\udc00",)}]),
    ("chr(0xd83d) + chr(0xde00)", "\\ud83d\\ude00"),
])
def test_text_with_a_lone_surrogate_arrives_escaped(sb, program, expected):
    outcome = sb.run(program)
    assert outcome.ok, outcome.error
    assert outcome.value == expected
    repr(outcome.value).encode("utf-8")


def test_printed_text_and_messages_with_a_lone_surrogate_arrive_escaped(sb):
    outcome = sb.run("print(chr(0xd800))\nraise ValueError(chr(0xd801))")
    assert outcome.stdout == "\\ud800\n" and outcome.error.message == "ValueError: \\ud801"
    callback_seen = []
    outcome = sb.run("ask(chr(0xd800))", callbacks={"ask": lambda q: callback_seen.append(q) or q})
    assert outcome.value == "\\ud800" and callback_seen == ["\\ud800"]


@pytest.mark.parametrize("protocol", [0, 2, 5])
def test_a_lone_surrogate_is_escaped_in_any_pickle_protocol(protocol):
    """Protocol 0 writes text as raw-unicode-escape (no UTF-8 bytes of a surrogate to find); a worker
    that sent it would otherwise hand the parent text it cannot print."""
    import pickle

    from sandbox.codec import safe_loads

    assert safe_loads(pickle.dumps(["a\ud800b", {"k\udfff": 1}], protocol=protocol)) == ["a\\ud800b", {"k\\udfff": 1}]
    assert safe_loads(b"(V\\U0000d800\ntp0\n.") == ("\\ud800",)  # raw-unicode-escape's long form


def test_numbers_that_look_like_half_a_surrogate_do_not_cost_a_walk(monkeypatch):
    """Binary numbers often hold the 2 bytes that begin an encoded surrogate; only all 3 start the walk."""
    import pickle

    import sandbox.codec as codec

    walked = []
    monkeypatch.setattr(codec, "_without_surrogates", lambda tree, memo: walked.append(1) or tree)
    data = pickle.dumps([0xA0ED, [1.5] * 3], protocol=5)  # BININT2 writes 0xA0ED as the bytes ED A0
    assert b"\xed\xa0" in data and codec.safe_loads(data)[0] == 0xA0ED and not walked


def test_periods_and_intervals_cross_as_pandas_shows_them():
    """A Period or Interval answer (df["date"].dt.to_period("M").iloc[0], pd.cut(...)) came back as
    its repr, "Period('2020-01', 'M')", and was answered and voted so."""
    assert codec.decode(codec.encode_answer(pd.Period("2020-01", "M"))) == "2020-01"
    assert codec.decode(codec.encode_answer([pd.Interval(0, 5), pd.Period("2021", "Y")])) == ["(0, 5]", "2021"]
    series = codec.decode(codec.encode_answer(pd.Series(pd.period_range("2020-01", periods=2, freq="M"))))
    assert series.tolist() == ["2020-01", "2020-02"]


def test_a_range_answer_is_its_numbers_counted_like_a_range_index():
    import pandas as pd

    from sandbox import codec

    decoded = codec.decode(codec.safe_loads(codec.dumps(codec.encode_answer(range(5, 0, -2)))))
    assert isinstance(decoded, pd.RangeIndex) and list(decoded) == [5, 3, 1]  # not the text "range(5, 0, -2)"
    with pytest.raises(codec.AnswerTooLarge):
        codec.encode_answer(range(10**12))  # three numbers that hold a trillion labels
