"""Length-prefixed messages on a Unix stream socket.

Frame: 4-byte big-endian payload length, 1 type byte, payload.
"""
from __future__ import annotations

import os
import socket
import struct
import time

HEADER = struct.Struct("!IB")
MAX_PAYLOAD = 512 * 1024 * 1024

PID = ord("P")      # worker -> parent: worker pid (struct !i)
JOB = ord("J")      # parent -> worker: pickled job (trusted direction)
CALL = ord("C")     # worker -> parent: callback request (plain data)
REPLY = ord("R")    # parent -> worker: callback reply (plain data)
OUTCOME = ord("O")  # worker -> parent: outcome (plain data)
EXIT = ord("X")     # zygote -> parent: worker exit status (struct !iid)

EXIT_STRUCT = struct.Struct("!iid")  # signal (0 if none), exit code, cpu seconds


class ProtocolError(ConnectionError):
    pass


class Timeout(Exception):
    pass


#: payloads at least this large are sent and received without an extra full copy
LARGE = 1 << 20


def send(sock: socket.socket, kind: int, payload: bytes = b"", deadline: float | None = None) -> None:
    """Send one frame; with ``deadline`` (``time.monotonic()``), :class:`Timeout` when the peer has not taken it
    all by then (a worker that stopped reading its reply; red team 10). Without, the socket's timeout applies."""
    header = HEADER.pack(len(payload), kind)
    if deadline is not None:
        _arm(sock, deadline)
    try:
        if len(payload) < LARGE:
            sock.sendall(header + payload)
        else:  # a large job (a big table): no header + payload concatenation copy
            sock.sendall(header)
            sock.sendall(payload)
    except socket.timeout:
        if deadline is None:
            raise
        raise Timeout() from None


def _arm(sock: socket.socket, deadline: float | None) -> None:
    """Set the socket's timeout to what is left before ``deadline`` (None: block); Timeout if none is."""
    if deadline is None:
        sock.settimeout(None)
        return
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        raise Timeout()
    sock.settimeout(remaining)


def _recv_exact(sock: socket.socket, n: int, deadline: float | None) -> bytes:
    if n >= LARGE:
        return _recv_large(sock, n, deadline)
    buf = bytearray()
    while len(buf) < n:
        _arm(sock, deadline)
        try:
            chunk = sock.recv(min(n - len(buf), 1 << 20))
        except socket.timeout:
            raise Timeout() from None
        if not chunk:
            raise ProtocolError("connection closed")
        buf += chunk
    return bytes(buf)


def _recv_large(sock: socket.socket, n: int, deadline: float | None) -> bytes:
    """Receive ``n`` bytes into one preallocated buffer (returned as a bytearray, which
    pickle and the codec read like bytes): no regrowth, no final ``bytes()`` copy."""
    buf = bytearray(n)
    view = memoryview(buf)
    got = 0
    try:
        while got < n:
            _arm(sock, deadline)
            try:
                k = sock.recv_into(view[got:], min(n - got, 1 << 20))
            except socket.timeout:
                raise Timeout() from None
            if not k:
                raise ProtocolError("connection closed")
            got += k
    finally:
        view.release()
    return buf  # type: ignore[return-value]


class PayloadReader:
    """A read-only file over the next ``length`` bytes of ``sock``, for ``pickle.load``.

    The worker unpickles its job straight from the socket, so a large table is never held
    twice (once as received bytes, once as the unpickled DataFrame)."""

    def __init__(self, sock: socket.socket, length: int):
        self._sock = sock
        self._left = length

    def readinto(self, buffer: bytearray | memoryview) -> int:
        view = memoryview(buffer).cast("B")
        want = min(len(view), self._left)
        got = 0
        while got < want:
            k = self._sock.recv_into(view[got:want], want - got)
            if not k:
                raise ProtocolError("connection closed")
            got += k
        self._left -= got
        return got

    def read(self, n: int = -1) -> bytes:
        n = self._left if n is None or n < 0 else min(n, self._left)
        buffer = bytearray(n)
        self.readinto(buffer)
        return bytes(buffer)

    def readline(self) -> bytes:
        line = bytearray()
        while self._left and not line.endswith(b"\n"):
            line += self.read(1)
        return bytes(line)


def recv_exact(sock: socket.socket, n: int) -> bytes:
    """The next ``n`` bytes (blocking)."""
    return _recv_exact(sock, n, None)


def recv_header(sock: socket.socket) -> tuple[int, int]:
    """The next frame's (kind, payload length); the payload is left on the socket."""
    sock.settimeout(None)
    length, kind = HEADER.unpack(_recv_exact(sock, HEADER.size, None))
    if length > MAX_PAYLOAD:
        raise ProtocolError(f"message too large ({length} bytes)")
    return kind, length


def send_with_fd(sock: socket.socket, kind: int, payload: bytes, fd: int) -> None:
    """:func:`send`, with ``fd`` passed along (``SCM_RIGHTS``) on the frame's header."""
    socket.send_fds(sock, [HEADER.pack(len(payload), kind)], [fd])
    sock.sendall(payload)


def recv_header_fds(sock: socket.socket, max_fds: int = 1) -> tuple[int, int, list[int]]:
    """:func:`recv_header`, also taking up to ``max_fds`` descriptors passed with the header
    (the caller owns and must close them)."""
    sock.settimeout(None)
    head, fds, _flags, _addr = socket.recv_fds(sock, HEADER.size, max_fds)
    try:
        if not head:
            raise ProtocolError("connection closed")
        if len(head) < HEADER.size:
            head += _recv_exact(sock, HEADER.size - len(head), None)
        length, kind = HEADER.unpack(head)
        if length > MAX_PAYLOAD:
            raise ProtocolError(f"message too large ({length} bytes)")
    except BaseException:
        for fd in fds:
            os.close(fd)
        raise
    return kind, length, list(fds)


def recv(sock: socket.socket, deadline: float | None = None) -> tuple[int, bytes]:
    length, kind = HEADER.unpack(_recv_exact(sock, HEADER.size, deadline))
    if length > MAX_PAYLOAD:
        raise ProtocolError(f"message too large ({length} bytes)")
    payload = _recv_exact(sock, length, deadline) if length else b""
    return kind, payload
