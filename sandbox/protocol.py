"""Length-prefixed messages on a Unix stream socket.

Frame: 4-byte big-endian payload length, 1 type byte, payload.
"""
from __future__ import annotations

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


def send(sock: socket.socket, kind: int, payload: bytes = b"") -> None:
    sock.sendall(HEADER.pack(len(payload), kind) + payload)


def _recv_exact(sock: socket.socket, n: int, deadline: float | None) -> bytes:
    buf = bytearray()
    while len(buf) < n:
        if deadline is not None:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise Timeout()
            sock.settimeout(remaining)
        else:
            sock.settimeout(None)
        try:
            chunk = sock.recv(min(n - len(buf), 1 << 20))
        except socket.timeout:
            raise Timeout() from None
        if not chunk:
            raise ProtocolError("connection closed")
        buf += chunk
    return bytes(buf)


def recv(sock: socket.socket, deadline: float | None = None) -> tuple[int, bytes]:
    length, kind = HEADER.unpack(_recv_exact(sock, HEADER.size, deadline))
    if length > MAX_PAYLOAD:
        raise ProtocolError(f"message too large ({length} bytes)")
    payload = _recv_exact(sock, length, deadline) if length else b""
    return kind, payload
