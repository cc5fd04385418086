"""The job's hand-off to a worker: large arrays through shared memory, not through the socket.

The parent pickles a job with protocol 5. Its large contiguous buffers (numpy arrays, the
Arrow buffers of pandas' string columns) are taken *out of band*: written into a memory
file (``memfd``), whose descriptor travels with the job frame (``SCM_RIGHTS``); only the
small rest of the pickle goes through the socket. The worker maps the file copy-on-write
(``MAP_PRIVATE``) and unpickles with ``buffers=`` views of the mapping, so the table's
arrays are the mapped pages themselves: no copy, no decoding.

Read-only by construction: the descriptor the worker gets is opened read-only (a new open
file description through ``/proc/self/fd``), so nothing in the worker can write the file or
map it writable and shared; the worker's mapping is private (a write by the program copies
the page in the worker and never reaches the file); the worker closes the descriptor before
the program starts (the mapping object keeps a private duplicate, as Python's ``mmap``
does, which no program can name: ``os`` and ``mmap`` are not reachable, and the audit hook
refuses ``open`` outside the Python installation); and the mapping covers exactly this
job's bytes (padding zeroed), so a program that reaches the mapping object
(``array.base.obj``) reads its own table and nothing else.

The parent keeps a few memory files for reuse: writing into pages that already exist
costs a third of allocating new ones (3 vs 10 ms for 27 MB), and a file is handed to one
worker at a time (back in the pool only when that run has ended).

Payload of a ``JOB`` frame: ``!I`` count, ``count`` × ``!QQ`` (offset, length) spans of
out-of-band buffers in the file, then the in-band pickle.
"""
from __future__ import annotations

import copyreg
import io
import mmap
import os
import pickle
import struct
import threading
from typing import Any

import numpy as np
from pandas.arrays import ArrowExtensionArray

#: a job whose out-of-band buffers add up to less than this is sent whole through the socket
MIN_SHARED_BYTES = 1 << 20
_ALIGN = 64  # numpy and Arrow like their buffers aligned
_COUNT = struct.Struct("!I")
_SPAN = struct.Struct("!QQ")
_IOV_MAX = 512  # buffers per pwritev call (Linux allows 1024)
_MAX_SPANS = 1 << 20


def available() -> bool:
    """Memory files, vectored writes and ``/proc/self/fd`` (for the read-only descriptor): Linux."""
    return hasattr(os, "memfd_create") and hasattr(os, "pwritev") and os.path.isdir("/proc/self/fd")


class HandoffError(ValueError):
    pass


class MemfdPool:
    """Memory files for job buffers, reused across runs (thread-safe)."""

    def __init__(self, keep: int = 2) -> None:
        self.keep = max(0, keep)
        self._free: list[tuple[int, int]] = []  # (fd, capacity)
        self._lock = threading.Lock()
        self._closed = False

    def acquire(self, size: int) -> tuple[int, int]:
        """A memory file of at least ``size`` bytes: ``(fd, capacity)``."""
        with self._lock:
            fits = [entry for entry in self._free if entry[1] >= size]
            if fits:
                entry = min(fits, key=lambda e: e[1])
                self._free.remove(entry)
                return entry
        fd = os.memfd_create("binder-sandbox-job", os.MFD_CLOEXEC)
        try:
            os.ftruncate(fd, size)
        except BaseException:
            os.close(fd)
            raise
        return fd, size

    def release(self, fd: int, capacity: int) -> None:
        with self._lock:
            if not self._closed:
                self._free.append((fd, capacity))
                self._free.sort(key=lambda e: -e[1])  # keep the largest
                extra, self._free = self._free[self.keep:], self._free[:self.keep]
            else:
                extra = [(fd, capacity)]
        for efd, _cap in extra:
            os.close(efd)

    def held_bytes(self) -> int:
        """Bytes the pool's idle files hold (for memory accounting)."""
        with self._lock:
            return sum(cap for _fd, cap in self._free)

    def close(self) -> None:
        with self._lock:
            self._closed = True
            free, self._free = self._free, []
        for fd, _cap in free:
            os.close(fd)


class PackedJob:
    """A pickled job ready to send: ``payload`` (spans + in-band pickle) and, when its large
    buffers went to shared memory, the memory file's descriptor (``fd``), which the sender
    must give back with :meth:`done` once the run has ended."""

    def __init__(self, payload: bytes, fd: int | None = None, capacity: int = 0,
                 pool: MemfdPool | None = None) -> None:
        self.payload = payload
        self.fd = fd
        self._capacity = capacity
        self._pool = pool

    def readonly_fd(self) -> int:
        """A new read-only descriptor of the memory file, for the worker (close it after sending)."""
        assert self.fd is not None
        return os.open(f"/proc/self/fd/{self.fd}", os.O_RDONLY | os.O_CLOEXEC)

    def done(self) -> None:
        fd, self.fd = self.fd, None
        if fd is None:
            return
        if self._pool is not None:
            self._pool.release(fd, self._capacity)
        else:
            os.close(fd)


def as_dtype(values: Any, dtype: Any) -> Any:
    """Unpickling: an int64 array viewed as the datetime/timedelta dtype it was sent from."""
    return values.view(dtype)


def _whole_chunk(array: ArrowExtensionArray) -> Any:
    """The Arrow array a pandas Arrow-backed array can be pickled as without a copy: its one
    chunk, when that chunk's buffers hold little beyond its own values (a column as built, not
    a slice of a larger one, whose whole buffers would go out of band); else None."""
    if type(array).__getstate__ is not ArrowExtensionArray.__getstate__ or "_pa_array" not in vars(array):
        return None
    chunks = array._pa_array
    if chunks.num_chunks != 1:
        return None
    chunk = chunks.chunk(0)
    return chunk if chunk.get_total_buffer_size() <= chunk.nbytes + chunk.nbytes // 16 + 4096 else None


class _Pickler(pickle.Pickler):
    """numpy pickles datetime64/timedelta64 arrays in band (8 bytes a value through the
    socket); this sends them as int64 arrays, out of band, viewed back on arrival.

    pandas pickles an Arrow-backed array (a ``str`` column) as ``combine_chunks()`` of its
    data, a copy of the column even when it has one chunk (19 MB for a million short
    texts); this pickles that chunk itself, with the state pandas' ``__getstate__`` gives
    otherwise (its ``__setstate__`` takes an Arrow array either way)."""

    def reducer_override(self, obj: Any) -> Any:
        if type(obj) is np.ndarray and obj.dtype.kind in "mM" and obj.flags.c_contiguous:
            return as_dtype, (obj.view(np.int64), obj.dtype)
        if isinstance(obj, ArrowExtensionArray):
            chunk = _whole_chunk(obj)
            if chunk is not None:
                return copyreg.__newobj__, (type(obj),), {**vars(obj), "_pa_array": chunk, "_cache": {}}
        return NotImplemented


def pack(job: Any, pool: MemfdPool | None) -> PackedJob:
    """Pickle ``job``; with a pool (and memfd support), its buffers of at least
    :data:`MIN_SHARED_BYTES` in all go into one of the pool's memory files."""
    if pool is None or not available():
        return PackedJob(_COUNT.pack(0) + pickle.dumps(job, protocol=5))
    buffers: list[pickle.PickleBuffer] = []
    out = io.BytesIO()
    _Pickler(out, protocol=5, buffer_callback=buffers.append).dump(job)
    inband = out.getvalue()
    views = [b.raw() for b in buffers]
    total = sum(-(-v.nbytes // _ALIGN) * _ALIGN for v in views)
    if total < MIN_SHARED_BYTES:  # small: the whole pickle through the socket
        return PackedJob(_COUNT.pack(0) + pickle.dumps(job, protocol=5))
    try:
        return _pack_shared(views, inband, total, pool)
    except OSError:  # no memory file to be had (descriptors, memory): the whole pickle through the socket
        return PackedJob(_COUNT.pack(0) + pickle.dumps(job, protocol=5))


def _pack_shared(views: list[memoryview], inband: bytes, total: int, pool: MemfdPool) -> PackedJob:
    fd, capacity = pool.acquire(total)
    try:
        spans, iov, offset = [], [], 0
        for view in views:
            pad = -view.nbytes % _ALIGN
            spans.append(_SPAN.pack(offset, view.nbytes))
            iov.append(view)
            if pad:
                iov.append(bytes(pad))  # zeroed: the mapping shows nothing of an earlier job
            offset += view.nbytes + pad
        written = 0
        for start in range(0, len(iov), _IOV_MAX):
            part = iov[start:start + _IOV_MAX]
            want = sum(memoryview(b).nbytes for b in part)
            n = os.pwritev(fd, part, written)
            if n != want:
                raise OSError(f"short write to the job's memory file ({n} of {want} bytes)")
            written += n
    except BaseException:
        pool.release(fd, capacity)
        raise
    return PackedJob(_COUNT.pack(len(spans)) + b"".join(spans) + inband, fd, capacity, pool)


def read_spans(read_exact: Any) -> list[tuple[int, int]]:
    """The spans at the head of a JOB payload (``read_exact(n)`` reads the next n bytes)."""
    (count,) = _COUNT.unpack(read_exact(_COUNT.size))
    if count > _MAX_SPANS:
        raise HandoffError(f"too many shared buffers ({count})")
    if not count:
        return []
    raw = read_exact(count * _SPAN.size)
    return [_SPAN.unpack_from(raw, i * _SPAN.size) for i in range(count)]


def header_size(spans: list[tuple[int, int]]) -> int:
    return _COUNT.size + len(spans) * _SPAN.size


def map_buffers(fd: int, spans: list[tuple[int, int]]) -> list[memoryview]:
    """Worker side: map exactly the bytes the spans cover, copy-on-write, close ``fd``, and
    return one view per buffer (for ``pickle.load(..., buffers=...)``)."""
    try:
        if not spans:
            return []
        end = max(offset + length for offset, length in spans)
        size = os.fstat(fd).st_size
        if end > size or any(offset < 0 or length < 0 for offset, length in spans):
            raise HandoffError("shared buffers outside the memory file")
        mapping = mmap.mmap(fd, end, access=mmap.ACCESS_COPY) if end else None
    finally:
        os.close(fd)
    if mapping is None:
        return [memoryview(b"") for _ in spans]
    whole = memoryview(mapping)
    return [whole[offset:offset + length] for offset, length in spans]


__all__ = ["MIN_SHARED_BYTES", "HandoffError", "MemfdPool", "PackedJob", "available", "map_buffers", "pack",
           "read_spans"]
