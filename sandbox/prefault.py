"""Copy-on-write faults taken before a worker's job arrives, not during its run.

A worker is a fork of the zygote: its memory is the zygote's, shared until written. A
program's first writes to pandas' and Python's objects (reference counts, caches) each copy
a 4 KiB page: about 1,300–1,900 page faults for a typical program on a 200-row table, which
is most of what a fresh worker costs over a warm process. So the zygote learns, once, which
pages a typical job writes (:func:`learn`: a probe child runs the workload, then reads
``/proc/self/pagemap`` for the pages it now holds alone), and every idle worker asks the
kernel to copy those pages ahead (:func:`populate`, ``madvise(MADV_POPULATE_WRITE)``, Linux ≥
5.14) while it waits for a job, stopping as soon as one is waiting. Nothing here runs the
job's code, and it all happens before the worker accepts a job (before its audit hook).

Everything degrades to doing nothing: no ``/proc/self/pagemap``, an older kernel, no
``madvise`` in the C library.
"""
from __future__ import annotations

import ctypes
import errno
import os
import struct
import time
from collections.abc import Callable

import numpy as np

MADV_POPULATE_WRITE = 23
PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
#: pagemap entry bits: the page is present, and mapped by this process alone
_PRESENT = np.uint64(1 << 63)
_EXCLUSIVE = np.uint64(1 << 56)
#: ranges closer than this many pages are populated as one (fewer calls, more pages copied)
MERGE_GAP_PAGES = 0
#: ranges populated between two looks at whether a job is waiting
CHUNK = 32
#: seconds to let an idle worker blocked in ``accept`` take a waiting job
WAIT_FOR_OTHER_TAKER = 0.0003

Range = tuple[int, int]


def _private_writable_mappings() -> list[Range]:
    out = []
    with open("/proc/self/maps") as maps:
        for line in maps:
            fields = line.split()
            perms = fields[1]
            if "w" in perms and perms.endswith("p"):
                lo, hi = (int(x, 16) for x in fields[0].split("-"))
                out.append((lo, hi))
    return out


def owned_pages() -> list[Range]:
    """The page ranges of this process's private writable memory that it maps alone (written
    since it was forked, or allocated since), merged when closer than ``MERGE_GAP_PAGES``."""
    ranges: list[list[int]] = []
    with open("/proc/self/pagemap", "rb", buffering=0) as pagemap:
        for lo, hi in _private_writable_mappings():
            pagemap.seek(lo // PAGE * 8)
            data = pagemap.read((hi - lo) // PAGE * 8)
            entries = np.frombuffer(data, dtype=np.uint64)
            owned = np.flatnonzero((entries & _PRESENT != 0) & (entries & _EXCLUSIVE != 0))
            for index in owned.tolist():
                start = lo + index * PAGE
                if ranges and start - ranges[-1][1] <= MERGE_GAP_PAGES * PAGE:
                    ranges[-1][1] = start + PAGE
                else:
                    ranges.append([start, start + PAGE])
    return [(a, b) for a, b in ranges]


class Probe:
    """A forked child of this process (which must be single-threaded) that runs ``workload``
    and writes back the page ranges it then maps alone. The caller reads them with
    :meth:`read_some` when ``fd`` is readable (or at once: it blocks), and reaps ``pid``."""

    def __init__(self, workload: Callable[[], None], in_child: Callable[[], None] = lambda: None) -> None:
        read_end, write_end = os.pipe()
        pid = os.fork()
        if pid == 0:  # the probe
            try:
                os.close(read_end)
                in_child()
                workload()
                payload = b"".join(struct.pack("!QQ", a, b) for a, b in owned_pages())
                view = memoryview(payload)
                while view:
                    view = view[os.write(write_end, view):]
            finally:
                os._exit(0)
        os.close(write_end)
        self.pid, self.fd = pid, read_end
        self._chunks: list[bytes] = []

    def read_some(self) -> list[Range] | None:
        """Read what the probe wrote; the ranges once it has finished (``[]`` if it failed),
        else ``None``."""
        chunk = os.read(self.fd, 1 << 20)
        if chunk:
            self._chunks.append(chunk)
            return None
        os.close(self.fd)
        data = b"".join(self._chunks)
        return [struct.unpack_from("!QQ", data, i) for i in range(0, len(data) - len(data) % 16, 16)]


def can_learn() -> bool:
    """Whether this platform tells which pages a process maps alone."""
    return hasattr(os, "fork") and os.path.exists("/proc/self/pagemap")


def learn(workload: Callable[[], None]) -> list[Range]:
    """The pages ``workload`` writes, learned by a :class:`Probe` (waited for)."""
    if not can_learn():
        return []
    probe = Probe(workload)
    try:
        while (ranges := probe.read_some()) is None:
            pass
        return ranges
    finally:
        os.waitpid(probe.pid, 0)


def _madvise() -> Callable[[int, int, int], int] | None:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        fn = libc.madvise
    except (OSError, AttributeError):
        return None
    fn.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    fn.restype = ctypes.c_int
    return fn


def populate(ranges: list[Range], job_waiting: Callable[[], bool]) -> int:
    """Copy ``ranges`` into this process ahead of need, checking ``job_waiting`` every
    ``CHUNK`` ranges and stopping when a job stays waiting (another idle worker, already
    blocked in ``accept``, takes a new job at once; one still waiting a moment later has no
    other taker). Returns the ranges populated."""
    madvise = _madvise() if ranges else None
    if madvise is None:
        return 0
    done = 0
    for start in range(0, len(ranges), CHUNK):
        if job_waiting():
            time.sleep(WAIT_FOR_OTHER_TAKER)
            if job_waiting():
                return done
        for lo, hi in ranges[start:start + CHUNK]:
            if madvise(lo, hi - lo, MADV_POPULATE_WRITE) != 0 and ctypes.get_errno() == errno.EINVAL:
                return done  # the kernel does not know the advice (Linux < 5.14)
            done += 1  # ENOMEM (no longer mapped here) and EFAULT skip one range
    return done
