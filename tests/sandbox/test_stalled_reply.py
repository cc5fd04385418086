"""What a worker whose memory a program corrupted sends (or does not read) is bounded by the parent (red team 10).

A worker that stops reading a callback's reply is a timeout, not an exception out of ``run``.

The parent sent a callback's reply with the socket's timeout left from its last read, and outside the
``try`` that turns a timeout into an outcome: a worker that asked a callback whose reply outgrew the
socket's buffer, then never read it (``call_and_stall`` stands in for native code a memory bug would give a
program), made ``Sandbox.run`` raise ``TimeoutError`` (and a worker that asked and exited,
``BrokenPipeError``) where every other misbehaviour of a worker is a failed outcome. The reply is now sent by
the run's wall-clock deadline and a failure to send it ends the run like a failure to read.
"""
import time

from sandbox import Limits, Sandbox


def test_a_worker_that_never_reads_its_reply_times_out():
    with Sandbox(Limits(wall_seconds=1.5, cpu_seconds=1.0, memory_bytes=512 * 1024**2), pool_size=1) as sb:
        start = time.monotonic()
        outcome = sb.run("stall(30)", callbacks={"big": lambda: [f"x{i}" for i in range(300000)]},
                         worker_globals="escape_helpers:call_and_stall")
        assert not outcome.ok and outcome.error.kind == "timeout", outcome.error
        assert time.monotonic() - start < 10
        assert sb.run("2 + 2").value == 4


def test_a_small_reply_to_a_stalled_worker_still_times_out():
    with Sandbox(Limits(wall_seconds=1.0, cpu_seconds=1.0, memory_bytes=512 * 1024**2), pool_size=1) as sb:
        outcome = sb.run("stall(30)", callbacks={"big": lambda: 1}, worker_globals="escape_helpers:call_and_stall")
        assert not outcome.ok and outcome.error.kind == "timeout", outcome.error


def test_a_forged_outcome_prints_no_more_than_the_limit():
    """Red team 10: the parent took the printed output of a worker's outcome as it came, whatever
    ``Limits.stdout_bytes`` said (the worker's own buffer keeps to it, a worker whose memory a program
    corrupted need not): 30,000,000 characters of output, for ``binder-py exec`` to print and ``ask`` to keep."""
    limits = Limits(wall_seconds=5.0, cpu_seconds=5.0, memory_bytes=1024**3, stdout_bytes=4096)
    with Sandbox(limits, pool_size=1) as sb:
        outcome = sb.run("forge(30000000)", callbacks={"big": lambda: 1}, worker_globals="escape_helpers:forge_outcome")
        assert outcome.ok and outcome.value == 1, outcome.error
        assert len(outcome.stdout.encode()) <= 4096 and outcome.stdout_truncated
        assert outcome.stdout == "\u20ac" * (4096 // 3)
