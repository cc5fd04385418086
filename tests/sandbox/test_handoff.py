"""The table's hand-off through shared memory (sandbox/handoff.py): the same values as through
the socket, and a channel the program can neither write through nor reach."""
import io

import numpy as np
import pandas as pd
import pytest

from sandbox import Sandbox, handoff
from sandbox_testutil import SMALL

pytestmark = pytest.mark.skipif(not handoff.available(), reason="memory files are Linux-only")

ROWS = 60_000  # int + float + text columns: well over handoff.MIN_SHARED_BYTES


@pytest.fixture(scope="module")
def table():
    rng = np.random.default_rng(1)
    return pd.DataFrame({
        "n": rng.integers(0, 1000, ROWS),
        "x": rng.random(ROWS),
        "city": pd.Series([f"city {i % 977}" for i in range(ROWS)], dtype="str"),
        "when": pd.date_range("2000-01-01", periods=ROWS, freq="h"),
        "mixed": pd.Series([1, "a", None] * (ROWS // 3), dtype=object),
    })


@pytest.fixture(scope="module")
def shared_sb():
    with Sandbox(SMALL, pool_size=1) as box:
        yield box


def test_a_large_table_goes_through_shared_memory(table):
    arrays = table.drop(columns="mixed")  # (an object column's Python objects are pickled in band)
    job = handoff.pack({"variables": {"df": arrays}}, handoff.MemfdPool())
    try:
        assert job.fd is not None and len(job.payload) < 10_000  # the arrays are not in the payload
    finally:
        job.done()


def _out_of_band_addresses(job: object) -> set[int]:
    buffers: list = []
    handoff._Pickler(io.BytesIO(), protocol=5, buffer_callback=buffers.append).dump(job)
    return {np.frombuffer(b.raw(), dtype=np.uint8).ctypes.data for b in buffers if b.raw().nbytes}


def test_a_text_column_is_handed_off_without_a_copy(table):
    # pandas would pickle combine_chunks() of the column: a copy of every text, in the parent
    chunk = table["city"].array._pa_array.chunk(0)
    addresses = _out_of_band_addresses({"df": table[["city"]]})
    assert {b.address for b in chunk.buffers() if b is not None} <= addresses


def test_a_slice_of_a_text_column_is_not_handed_off_with_its_whole_buffers(table):
    part = table[["city"]].iloc[100:200]
    assert part["city"].array._pa_array.chunk(0).get_total_buffer_size() > 100_000  # the whole column's
    job = handoff.pack({"variables": {"df": part}}, handoff.MemfdPool())
    assert job.fd is None and len(job.payload) < 10_000  # compacted: 100 rows, through the socket


def test_the_worker_sees_sliced_and_chunked_text_columns(shared_sb, table):
    chunked = pd.concat([table["city"], table["city"].str.upper()], ignore_index=True)
    assert chunked.array._pa_array.num_chunks == 2
    program = "[df['city'].tolist()[:3], df['city'].tolist()[-3:], len(df), str(df['city'].dtype)]"
    for frame in (table.iloc[ROWS // 2 + 7:], pd.DataFrame({"city": chunked})):
        outcome = shared_sb.run(program, variables={"df": frame})
        assert outcome.ok, outcome.error
        assert outcome.value == [frame["city"].tolist()[:3], frame["city"].tolist()[-3:], len(frame),
                                 str(frame["city"].dtype)]


def test_a_small_table_goes_through_the_socket():
    job = handoff.pack({"variables": {"df": pd.DataFrame({"a": [1, 2]})}}, handoff.MemfdPool())
    assert job.fd is None


def test_the_worker_sees_the_same_table(shared_sb, table):
    program = ("[int(df['n'].sum()), float(df['x'].sum()), int(df['city'].str.len().sum()), "
               "str(df['when'].max()), df['mixed'].tolist()[:3], [str(t) for t in df.dtypes]]")
    expected = [int(table["n"].sum()), float(table["x"].sum()), int(table["city"].str.len().sum()),
                str(table["when"].max()), [1, "a", None], [str(t) for t in table.dtypes]]
    with Sandbox(SMALL, pool_size=1, shared_memory=False) as socket_only:
        through_socket = socket_only.run(program, variables={"df": table})
    shared = shared_sb.run(program, variables={"df": table})
    assert shared.ok, shared.error
    assert shared.value == through_socket.value == expected


def test_a_program_writing_its_table_changes_nothing_outside_its_worker(shared_sb, table):
    before = table.copy()
    wrote = shared_sb.run("df.loc[0, 'n'] = -1\ndf.loc[:, 'x'] = 0.0\n"
                          "[int(df.loc[0, 'n']), float(df['x'].sum())]", variables={"df": table})
    assert wrote.ok, wrote.error
    assert wrote.value == [-1, 0.0]
    pd.testing.assert_frame_equal(table, before)
    # the next run reuses the memory file: it sees the table as the parent has it
    again = shared_sb.run("[int(df.loc[0, 'n']), float(df['x'].sum())]", variables={"df": table})
    assert again.value == [int(table.loc[0, "n"]), float(table["x"].sum())]


@pytest.mark.parametrize("route", [
    "x = df['n'].to_numpy()\nx.base.base.obj",
    "x = df['n'].to_numpy()\nm = x.base.base.obj\nm.write(b'x')",
    "x = df['n'].to_numpy()\nm = getattr(getattr(x.base, 'base'), 'obj')\nm.size()",
])
def test_the_mapping_is_out_of_reach(shared_sb, table, route):
    outcome = shared_sb.run(route, variables={"df": table})
    assert not outcome.ok and outcome.error.kind == "policy"
    # refused at an array's base (sandbox.codes), the memoryview over the mapping, or the mapping itself
    assert "an array's 'base' is refused" in outcome.error.message or any(
        f"{kind} object, which programs may not hold" in outcome.error.message for kind in ("mmap", "memoryview"))


def test_the_worker_holds_the_memory_file_read_only(shared_sb, table):
    outcome = shared_sb.run("shared_fds", variables={"df": table}, worker_globals="handoff_probe:shared_descriptors")
    assert outcome.ok, outcome.error
    # the descriptor that came with the job is closed; the mapping's own duplicate is read-only
    assert len(outcome.value) == 1 and not outcome.value[0]["writable"]


def test_even_raw_file_access_cannot_find_the_memory_file(shared_sb, table):
    outcome = shared_sb.run("raw_listdir('/proc/self/fd')", variables={"df": table},
                            worker_globals="escape_helpers:expose_raw")
    assert not outcome.ok and outcome.error.kind == "policy"
    outcome = shared_sb.run("raw_open('/proc/self/map_files/0-0')", variables={"df": table},
                            worker_globals="escape_helpers:expose_raw")
    assert not outcome.ok and outcome.error.kind == "policy"


def test_the_pool_keeps_a_bounded_number_of_files():
    pool = handoff.MemfdPool(keep=1)
    a, b = pool.acquire(1 << 20), pool.acquire(2 << 20)
    pool.release(*a)
    pool.release(*b)
    assert pool.held_bytes() == 2 << 20  # the larger one is kept
    assert pool.acquire(1 << 10) == b  # and reused for a smaller job
    pool.release(*b)
    pool.close()
    assert pool.held_bytes() == 0


def test_spans_outside_the_file_are_refused():
    pool = handoff.MemfdPool()
    fd, _cap = pool.acquire(4096)
    with pytest.raises(handoff.HandoffError):
        handoff.map_buffers(fd, [(0, 8192)])  # closes fd
    pool.close()
