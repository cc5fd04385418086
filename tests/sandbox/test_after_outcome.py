"""A worker does not outlive its run (red team 8).

The parent took a worker's outcome and returned, and put the job's memory file back in its pool
for the next run, without ending the worker: it was trusted to exit. A worker in which a program
got native code (a memory bug) could send any outcome and stay, past its wall clock (sleeping costs
no CPU, so the CPU limit never came), and its private mapping of the job's memory file shows the
file's pages it never wrote, which the next run's table was then written into. The parent now ends
the worker (pidfd, SIGKILL) and waits for it before the run returns. ``linger_after_outcome``
stands in for the native code: an object freed after the outcome is sent sleeps for 8 s.
"""
import time

from sandbox import Limits, Sandbox
from sandbox_testutil import zygote_children


def _sleeping(zygote):
    out = []
    for pid in zygote_children(zygote):
        try:
            with open(f"/proc/{pid}/wchan") as fh:
                if "nanosleep" in fh.read():
                    out.append(pid)
        except OSError:
            pass
    return out


def test_a_worker_that_stays_after_its_outcome_is_ended():
    with Sandbox(Limits(wall_seconds=2.0, cpu_seconds=1.0, memory_bytes=512 * 1024**2), pool_size=1) as sb:
        outcome = sb.run("1 + 1", worker_globals="escape_helpers:linger_after_outcome")
        assert outcome.ok and outcome.value == 2, outcome.error
        time.sleep(1.0)  # the stand-in has long begun its sleep by now, if its worker is still there
        assert not _sleeping(sb.zygote_pid()), "a worker outlived its run"
        assert sb.run("2 + 2").value == 4
