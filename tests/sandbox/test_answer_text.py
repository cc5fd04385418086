"""An answer is bounded in text as written out, not only in values (red team 6).

The encoder counted every value once whatever its length, and pickle sends a repeated object once:
``s = "x" * 1000000; [s] * 2000`` crossed as a 1 MB message and was 2 GB in the parent once printed
(``binder-py exec`` wrote 2,000,000,008 bytes and held 4 GB; ``[s] * 5000000`` would be 5 TB).
The same with a long int, an object's repr, a frame column of one shared text, a shared list.
The worker refuses such an answer (``AnswerTooLarge``), and the parent checks what it receives
itself (``codec.check_answer_size``), so a compromised worker cannot send it either.
"""
import pickle
import time

import pytest

from sandbox import codec
from sandbox.executor import _outcome_from_dict

TEXT = codec.MAX_ANSWER_TEXT


@pytest.mark.parametrize("program", [
    's = "x" * 1000000\n[s] * 200',
    's = "x" * 1000000\n{"k%d" % i: s for i in range(200)}',
    's = "x" * 1000000\npd.DataFrame({"a": [s] * 200})',
    's = "x" * 1000000\npd.Series([s] * 200, dtype="O")',
    's = "x" * 1000000\nv = [s] * 10\n[v] * 20',
    's = "x" * 1000000\n[(s, 1)] * 200',
    '[2 ** 14000] * 30000',
    'o = np.dtype([("f%d" % i, "i1") for i in range(300)])\n[o] * 100000',
    's = "x" * 1000000\nnp.array([s] * 200, dtype="O")',
])
def test_shared_text_answer_is_refused(sb, program):
    start = time.monotonic()
    outcome = sb.run(program)
    assert outcome.error is not None and outcome.error.kind == "policy", outcome.error
    assert "AnswerTooLarge" in outcome.error.message and "too much text" in outcome.error.message
    assert time.monotonic() - start < 2.5


def test_long_text_answers_below_the_bound_still_cross(sb):
    outcome = sb.run('s = "x" * 1000000\n[s] * 20')
    assert outcome.ok, outcome.error
    assert len(outcome.value) == 20 and len(outcome.value[0]) == 1000000


def _shared(tree):
    """``tree`` as the parent receives it: pickled, so repeated objects are shared."""
    return codec.safe_loads(codec.dumps(tree))


@pytest.mark.parametrize("tree", [
    ("plain", ["x" * 1000000] * 200),
    ("list", [("plain", ["x" * 100000])] * 2000),
    ("list", [("bytes", b"x" * 1000000)] * 200),
    ("list", [("repr", "x" * 10000)] * 20000),
    ("plain", [2 ** 10000] * 50000),
    ("plain", [1] * (codec.MAX_ANSWER_VALUES + 1)),
])
def test_parent_refuses_an_answer_too_large_written_out(tree):
    message = codec.dumps({"ok": True, "value": tree})
    assert len(message) < 70_000_000  # far smaller than written out
    with pytest.raises(codec.CodecError, match="too large"):
        _outcome_from_dict(codec.safe_loads(message), 0.0, 0.0)


def test_parent_check_walks_each_shared_node_once():
    tree = ("plain", ["a"])
    for _ in range(200):  # 2 ** 200 leaves written out
        tree = ("list", [tree, tree])
    start = time.monotonic()
    with pytest.raises(codec.CodecError):
        codec.check_answer_size(_shared(tree))
    assert time.monotonic() - start < 1.0


def test_ordinary_answers_pass_the_parent_check():
    frame = codec.encode_answer(__import__("pandas").DataFrame({"a": ["row %d" % i for i in range(100000)],
                                                                "b": range(100000)}))
    codec.check_answer_size(_shared(frame))
    codec.check_answer_size(_shared(("plain", ["x" * 1000] * 1000)))


def test_parent_takes_only_text_as_an_error_message():
    bomb = ["x" * 1000]
    for _ in range(60):  # 2 ** 60 texts written out
        bomb = [bomb, bomb]
    message = codec.dumps({"ok": False, "error": {"kind": "runtime", "message": bomb}})
    start = time.monotonic()
    outcome = _outcome_from_dict(codec.safe_loads(message), 0.0, 0.0)
    assert time.monotonic() - start < 1.0
    assert outcome.error.message == "<malformed error message>"


# red team 8: a RangeIndex crosses as three numbers whatever its length, and the parent lists its
# labels out: pd.RangeIndex(0, 10**8) as an answer held 4 GB of `binder-py exec --json`'s memory
# (to_jsonable lists an index before it cuts it) and the vote's normalisation about 20 GB
@pytest.mark.parametrize("program", [
    "pd.RangeIndex(0, 10**8)",
    "[pd.RangeIndex(0, 10**8)]",
    "pd.DataFrame(index=pd.RangeIndex(0, 10**18))",
    "pd.DataFrame({'a': [1]}).set_index(pd.RangeIndex(5, 6)).index.append(pd.RangeIndex(6, 10**8))",
])
def test_a_range_index_counts_its_labels(sb, program):
    outcome = sb.run(program)
    assert outcome.error is not None and outcome.error.kind == "policy", outcome.error
    assert "AnswerTooLarge" in outcome.error.message


@pytest.mark.parametrize("tree", [
    ("pindex", ("range", 0, 10 ** 8, 1, None)),
    ("list", [("pindex", ("range", 0, 10 ** 30, 3, None))]),
    ("frame", [], ("range", 0, 0, 1, None), ("range", 10 ** 18, 0, -1, None)),
])
def test_parent_counts_the_labels_of_a_range(tree):
    with pytest.raises(codec.CodecError, match="too large"):
        _outcome_from_dict(codec.safe_loads(codec.dumps({"ok": True, "value": tree})), 0.0, 0.0)


def test_small_range_indexes_still_cross(sb):
    outcome = sb.run("pd.Series([1, 2, 3]).index")
    assert outcome.ok and list(outcome.value) == [0, 1, 2]
    outcome = sb.run("df = pd.DataFrame({'a': range(1000)})\ndf")
    assert outcome.ok and outcome.value.shape == (1000, 1)
