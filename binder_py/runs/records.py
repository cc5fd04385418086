"""A run directory on disk: ``config.json``, ``results.jsonl`` (one line per finished question), ``lm.sqlite``.

``results.jsonl`` is append-only: each line is written whole, flushed and fsynced before the
next question is counted as done, so a killed run loses at most the questions in flight. A
last line cut short by a kill is detected on the next start and cut away (the question runs
again). When an id occurs more than once (``--retry-errors``), the last line wins.
"""

from __future__ import annotations

import json
import os
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from binder_py.errors import BinderError

CONFIG_FILE = "config.json"
LOCK_FILE = ".lock"
RESULTS_FILE = "results.jsonl"
RECORDING_FILE = "lm.sqlite"

#: config keys whose change changes the answers: a run may only be resumed when they are equal
ANSWER_KEYS = ("task", "split", "mode", "lm", "neural", "n", "seed", "vote", "shots", "settings")


@dataclass
class ResultsFile:
    """What :func:`read_results` found: the records (last line per id) and any repair it made."""

    records: list[dict[str, Any]] = field(default_factory=list)
    truncated_bytes: int = 0  # bytes of a cut-off last line that were (or would be) dropped
    lines: int = 0


def read_results(path: str | os.PathLike[str], *, repair: bool = False) -> ResultsFile:
    """Read ``results.jsonl``; a cut-off or unparsable *last* line is ignored (and cut away with
    ``repair=True``). An unparsable line in the middle is an error: the file was edited by hand."""
    path = Path(path)
    out = ResultsFile()
    if not path.exists():
        return out
    data = path.read_bytes()
    by_id: dict[str, dict[str, Any]] = {}
    offsets, position = [], 0
    for raw in data.splitlines(keepends=True):
        offsets.append((position, raw))
        position += len(raw)
    good_end = 0
    for index, (start, raw) in enumerate(offsets):
        is_last = all(not rest.strip() for _, rest in offsets[index + 1:])
        if not raw.strip():
            good_end = start + len(raw) if raw.endswith(b"\n") else good_end
            continue
        try:
            record = json.loads(raw.decode("utf-8"))
            ok = raw.endswith(b"\n") and isinstance(record, dict) and "id" in record
        except (UnicodeDecodeError, json.JSONDecodeError):
            ok = False
        if not ok:
            if is_last:  # cut off by a kill: drop it, the question runs again
                out.truncated_bytes = len(data) - start
                break
            raise BinderError(f"{path}, line {index + 1}: not a JSON object with an 'id'; results.jsonl must not be "
                              "edited by hand (move the broken line away or start a new --out)")
        by_id.pop(str(record["id"]), None)
        by_id[str(record["id"])] = record
        out.lines += 1
        good_end = start + len(raw)
    out.records = list(by_id.values())
    if repair and out.truncated_bytes:
        with open(path, "r+b") as f:
            f.truncate(good_end)
            f.flush()
            os.fsync(f.fileno())
    return out


class ResultsWriter:
    """Appends one JSON line per finished question, durably (write + flush + fsync), thread-safe."""

    def __init__(self, path: str | os.PathLike[str]):
        self.path = Path(path)
        self._file = open(self.path, "a", encoding="utf-8")
        self._lock = threading.Lock()

    def append(self, record: dict[str, Any]) -> None:
        try:
            line = json.dumps(record, ensure_ascii=False, default=str, allow_nan=False) + "\n"
        except ValueError:  # a NaN/inf somewhere: write it as null
            from binder_py.jsonable import to_jsonable

            line = json.dumps(to_jsonable(record), ensure_ascii=False, default=str) + "\n"
        with self._lock:
            self._file.write(line)
            self._file.flush()
            os.fsync(self._file.fileno())

    def close(self) -> None:
        with self._lock:
            if not self._file.closed:
                self._file.close()

    def __enter__(self) -> ResultsWriter:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def read_config(directory: str | os.PathLike[str]) -> dict[str, Any] | None:
    path = Path(directory) / CONFIG_FILE
    if not path.exists():
        return None
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise BinderError(f"{path} is not valid JSON ({error.msg}); fix it or start a new --out") from None


def write_config(directory: str | os.PathLike[str], config: dict[str, Any]) -> None:
    path = Path(directory) / CONFIG_FILE
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(config, indent=2, ensure_ascii=False, default=str) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def config_differences(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """The answer-changing settings that differ, as ``key: old -> new`` texts."""
    return [f"{key}: {old.get(key)!r} -> {new.get(key)!r}" for key in ANSWER_KEYS if old.get(key) != new.get(key)]


class RunLock:
    """An exclusive lock on a run directory: two ``binder-py eval`` processes never append to one file."""

    def __init__(self, directory: str | os.PathLike[str]):
        self.path = Path(directory) / LOCK_FILE
        self._file: Any = None

    def acquire(self) -> RunLock:
        import fcntl

        self._file = open(self.path, "a+", encoding="utf-8")
        try:
            fcntl.flock(self._file.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            self._file.seek(0)
            holder = self._file.read().strip() or "another process"
            self._file.close()
            self._file = None
            raise BinderError(f"{self.path.parent} is in use by a running 'binder-py eval' ({holder}); wait for it "
                              "to finish or stop it, or use another --out") from None
        self._file.seek(0)
        self._file.truncate()
        self._file.write(f"pid {os.getpid()}")
        self._file.flush()
        return self

    def release(self) -> None:
        if self._file is not None:
            self._file.close()  # closing drops the lock
            self._file = None
