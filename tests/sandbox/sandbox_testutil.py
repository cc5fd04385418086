import os
import time

from sandbox import Limits

SMALL = Limits(wall_seconds=3.0, cpu_seconds=1.0, memory_bytes=512 * 1024**2, stdout_bytes=4096)


def zygote_children(zpid):
    """Pids of live (non-zombie) children of the zygote."""
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fh:
                stat = fh.read()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        if int(fields[1]) == zpid and fields[0] != "Z":
            out.append(int(entry))
    return out


def wait_settled(sb, timeout=10.0):
    """Wait until only the idle pool remains, refilled (a used worker is replaced after it exits, so the
    count may dip below the pool size for a moment); return the number of children."""
    zpid = sb.zygote_pid()
    deadline = time.monotonic() + timeout
    while True:
        n = len(zygote_children(zpid))
        if n == sb.pool_size or time.monotonic() > deadline:
            return n
        time.sleep(0.02)


def policy_message(outcome):
    """The message of ``outcome``'s policy failure (asserting that it is one)."""
    assert outcome.error is not None and outcome.error.kind == "policy", outcome.error or outcome.value
    return outcome.error.message
