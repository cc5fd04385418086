"""A text shared many times in a message is escaped once in the parent (red team 11).

The parent writes text holding a lone surrogate with a backslash escape as it unpickles a message
(``codec.safe_loads``), before it checks the message's size. Pickle sends a text repeated in a list
once, and the walk that escaped it copied every occurrence: ``f_val`` over a frame of 100,000 rows of
one 1,000-surrogate text (the bridge sends every row, the same text object each time) was a message of
well under a megabyte that made the parent (``binder-py exec``) build 100,000 escaped copies, 1.3 GB,
before the size check refused the call; ten times the rows would have been 13 GB. A worker's own
callback requests are not bounded in size (only the parent checks them), so no memory bug was needed.
"""
import pickle
import tracemalloc

from sandbox import codec


def _peak_bytes(work):
    """What ``work()`` returns, and the most memory Python allocated in this process while it ran."""
    tracemalloc.start()
    try:
        result = work()
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_shared_text_is_escaped_once_and_stays_shared():
    text = chr(0xD800) * 1000
    tree = ("plain", [text] * 100_000)
    data = pickle.dumps(tree, protocol=5)
    assert len(data) < 1_000_000
    loaded, peak = _peak_bytes(lambda: codec.safe_loads(data))
    assert peak < 50_000_000  # unfixed: 100,000 escaped copies of 6 KB each, 600 MB
    items = loaded[1]
    assert items[0] == "\\ud800" * 1000
    assert all(item is items[0] for item in items)


def test_shared_lists_and_keys_stay_shared_too():
    key = "k" + chr(0xDFFF)
    row = [chr(0xD800), "plain"]
    loaded = codec.safe_loads(pickle.dumps([row, row, {key: row}, key], protocol=5))
    assert loaded[0] is loaded[1] is loaded[2]["k\\udfff"] and loaded[0] == ["\\ud800", "plain"]
    assert loaded[3] == "k\\udfff"


def test_a_callback_request_of_one_shared_text_costs_the_parent_little(sb):
    """Unfixed, this request made the parent build about 600 MB of escaped copies before refusing it."""
    seen = []
    program = "s = chr(0xD800) * 1000\nask([s] * 100000)"
    outcome, peak = _peak_bytes(lambda: sb.run(program, callbacks={"ask": lambda items: seen.append(len(items)) or 0}))
    assert peak < 100_000_000
    assert not outcome.ok and outcome.error is not None and "too large" in outcome.error.message, outcome
    assert not seen
