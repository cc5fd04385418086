"""sandbox.prefault: the pages a job writes are learned by a probe child and copied into an
idle worker ahead of its job, so that the job's run takes fewer copy-on-write faults."""
from __future__ import annotations

import ctypes
import os
import resource

import pytest

from sandbox import Sandbox, prefault

pytestmark = pytest.mark.skipif(not prefault.can_learn(), reason="needs fork and /proc/self/pagemap")

PAGE = prefault.PAGE
BUFFER_PAGES = 64


def _buffer() -> tuple[bytearray, int]:
    """A buffer written here (its pages present in this process) of BUFFER_PAGES whole pages,
    and the offset in it of its first whole page (the part before it shares a page with
    other objects)."""
    buf = bytearray(b"\1" * ((BUFFER_PAGES + 1) * PAGE))
    address = ctypes.addressof((ctypes.c_char * len(buf)).from_buffer(buf))
    return buf, -address % PAGE


def _covered(ranges: list[tuple[int, int]], address: int) -> bool:
    return any(lo <= address < hi for lo, hi in ranges)


def test_the_probe_reports_the_pages_its_workload_wrote_and_not_the_others() -> None:
    buf, offset = _buffer()
    base = ctypes.addressof((ctypes.c_char * len(buf)).from_buffer(buf)) + offset
    written = [3, 40]

    def workload() -> None:
        for page in written:
            buf[offset + page * PAGE] = 2

    ranges = prefault.learn(workload)
    for page in written:
        assert _covered(ranges, base + page * PAGE)
    untouched = [p for p in range(BUFFER_PAGES) if p not in written and abs(p - 3) > 1 and abs(p - 40) > 1]
    assert not [p for p in untouched if _covered(ranges, base + p * PAGE)]


def _faults_writing(buf: bytearray, offset: int, populate: bool, ranges: list[tuple[int, int]]) -> int:
    """Page faults a forked child takes writing every page of ``buf``, after populating or not."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            if populate:
                prefault.populate(ranges, lambda: False)
            before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
            for page in range(BUFFER_PAGES):
                buf[offset + page * PAGE] = 3
            os.write(write_end, str(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before).encode())
        finally:
            os._exit(0)
    os.close(write_end)
    faults = int(os.read(read_end, 64))
    os.close(read_end)
    os.waitpid(pid, 0)
    return faults


def test_populated_pages_are_no_longer_faulted_on_first_write() -> None:
    buf, offset = _buffer()
    base = ctypes.addressof((ctypes.c_char * len(buf)).from_buffer(buf)) + offset
    ranges = [(base, base + BUFFER_PAGES * PAGE)]
    without = _faults_writing(buf, offset, False, ranges)
    with_prefault = _faults_writing(buf, offset, True, ranges)
    assert without >= BUFFER_PAGES - 2
    if with_prefault >= without:
        pytest.skip("the kernel does not know MADV_POPULATE_WRITE (Linux < 5.14)")
    assert with_prefault <= without - BUFFER_PAGES // 2


def test_populating_stops_when_a_job_stays_waiting() -> None:
    buf, offset = _buffer()
    base = ctypes.addressof((ctypes.c_char * len(buf)).from_buffer(buf)) + offset
    ranges = [(base + PAGE * i, base + PAGE * (i + 1)) for i in range(40)]
    assert prefault.populate(ranges, lambda: True) == 0
    assert prefault.populate([], lambda: False) == 0


@pytest.mark.parametrize("setting", ["1", "0"])
def test_programs_answer_the_same_with_and_without_prefaulting(monkeypatch: pytest.MonkeyPatch,
                                                                setting: str) -> None:
    import pandas as pd

    monkeypatch.setenv("BINDER_SANDBOX_PREFAULT", setting)
    df = pd.DataFrame({"team": ["a", "b", "a"], "score": [1, 5, 3]})
    with Sandbox(pool_size=2) as sandbox:
        for _ in range(6):  # the later ones run in workers forked after the probe has answered
            out = sandbox.run('df.groupby("team")["score"].sum().idxmax()', variables={"df": df})
            assert out.ok and out.value == "b"
        escape = sandbox.run("import ctypes\nctypes.CDLL(None)", variables={"df": df})
        assert not escape.ok
