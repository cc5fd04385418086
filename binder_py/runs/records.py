"""A run directory on disk: ``config.json``, ``results.jsonl`` (one line per finished question), ``lm.sqlite``.

``results.jsonl`` is append-only: each line is written whole, flushed and fsynced before the
next question is counted as done, so a killed run loses at most the questions in flight. A
last line cut short by a kill is detected on the next start and cut away (the question runs
again). When an id occurs more than once (``--retry-errors``), the last line wins.

A run directory may come from someone else, so every file in it is opened through
:mod:`binder_py.safefiles` (no symlinks followed, regular files only, replacements through
``O_EXCL`` temporary files) and read through :mod:`binder_py.jsonfile` (size and depth limits,
expected shape, one-line errors naming the file, line and field). ``results.jsonl`` is streamed.
"""

from __future__ import annotations

import json
import os
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from binder_py.errors import BinderError, env_whole_number
from binder_py.jsonfile import Shape, check_shape, iter_json_lines, read_json
from binder_py.lm.spec import answering_spec
from binder_py.pipeline.settings import SAMPLING_MODES
from binder_py.safefiles import open_regular, redact_spec, replace_regular, truncate_regular

CONFIG_FILE = "config.json"
LOCK_FILE = ".lock"
RESULTS_FILE = "results.jsonl"
RECORDING_FILE = "lm.sqlite"

#: the files binder-py keeps in a run directory (the recording's SQLite journal files too)
RUN_FILES = (CONFIG_FILE, RESULTS_FILE, RECORDING_FILE, f"{RECORDING_FILE}-wal", f"{RECORDING_FILE}-shm", LOCK_FILE)


def run_files(directory: str | os.PathLike[str]) -> list[Path]:
    """The files of the run directory ``directory`` (:data:`RUN_FILES`): never an output file's name."""
    return [Path(directory) / name for name in RUN_FILES]


#: config keys whose change changes the answers: a run may only be resumed when they are equal
ANSWER_KEYS = ("task", "split", "mode", "lm", "neural", "n", "seed", "vote", "neural_weight", "shots", "settings")

#: size limits of the files of a run directory (a results line holds one question's candidates and prompt)
MAX_CONFIG_BYTES = 1024 * 1024
MAX_RESULT_LINE_BYTES = 64 * 1024 * 1024  # BINDER_MAX_RESULT_LINE_BYTES overrides it: max_result_line_bytes()


def max_result_line_bytes() -> int:
    """The longest results line read or written: ``BINDER_MAX_RESULT_LINE_BYTES``, else
    :data:`MAX_RESULT_LINE_BYTES` (a bad value is a one-line error, not a traceback at import)."""
    return env_whole_number("BINDER_MAX_RESULT_LINE_BYTES", MAX_RESULT_LINE_BYTES)


#: a recorded sample position or count above this is not one a run can have made
MAX_SAMPLES = 10_000
#: the settings a replay takes over from the recorded config, and the largest value each may have
#: (``n`` is not bounded here: a report reads it clamped to the recorded sample positions, and a
#: replay asks the recording for that many samples, which it then does not find)
REPLAYED_SETTINGS = {"shots": MAX_SAMPLES, "shots_effective": MAX_SAMPLES,
                     "core_shots_effective": MAX_SAMPLES, "table_rows_effective": 10**7,
                     "max_tokens_effective": 10**7, "plan_wave": 10**6, "plan_packing": 10**6}

#: the usage figures a results line records (summed by the runner and the report)
USAGE_KEYS = ("requests", "prompt_tokens", "completion_tokens", "cached_requests", "cached_prompt_tokens",
              "cached_completion_tokens", "cost_usd")

_OPTIONAL_TEXT = (str, type(None))
_OPTIONAL_INT = (int, type(None))
_OPTIONAL_NUMBER = (float, type(None))

CONFIG_SHAPE = Shape(dict, {
    "format": _OPTIONAL_INT, "task": _OPTIONAL_TEXT, "split": _OPTIONAL_TEXT, "mode": _OPTIONAL_TEXT,
    "lm": _OPTIONAL_TEXT, "lm_name": _OPTIONAL_TEXT, "neural": _OPTIONAL_TEXT, "n": _OPTIONAL_INT,
    "seed": _OPTIONAL_INT, "vote": _OPTIONAL_TEXT, "shots": _OPTIONAL_INT, "shots_effective": _OPTIONAL_INT,
    "lm_api": _OPTIONAL_TEXT, "neural_weight": _OPTIONAL_NUMBER, "questions": _OPTIONAL_INT,
    "max_tokens_effective": _OPTIONAL_INT, "plan_packing": _OPTIONAL_INT, "core_shots_effective": _OPTIONAL_INT,
    "table_rows_effective": _OPTIONAL_INT, "plan_wave": _OPTIONAL_INT, "calibrator_effective": _OPTIONAL_TEXT,
    "neural_effective": _OPTIONAL_TEXT, "constrained_effective": (bool, type(None)),
    "link_effective": (bool, type(None)), "score_ties_effective": (bool, type(None)),
    "keep_total_row_effective": (bool, type(None)),
    "split_size": _OPTIONAL_INT, "code": _OPTIONAL_TEXT, "started_at": _OPTIONAL_TEXT,
    "resumed_at": Shape(list, items=str), "codes": Shape(list, items=str), "versions": (dict, type(None)),
    "ids": (list, type(None)),
})

CANDIDATE_SHAPE = Shape(dict, {
    "sample_orders": Shape((list, type(None)), items=int), "count": int, "ok": bool,
    "has_neural_calls": bool, "mean_logprob": _OPTIONAL_NUMBER, "origin": _OPTIONAL_TEXT,
})

RESULT_SHAPE = Shape(dict, {
    "id": (str, int), "question": _OPTIONAL_TEXT, "dataset": _OPTIONAL_TEXT, "split": _OPTIONAL_TEXT,
    "subsets": Shape((list, type(None)), items=(str, int)), "candidates": Shape((list, type(None)),
                                                                                items=CANDIDATE_SHAPE),
    "usage": Shape((dict, type(None)), {key: _OPTIONAL_NUMBER for key in USAGE_KEYS}),
    "seconds": _OPTIONAL_NUMBER, "gold_canon": (list, str, type(None)),
})


def _check_result(record: Any, where: str) -> dict[str, Any]:
    check_shape(record, RESULT_SHAPE, where)
    if "id" not in record:
        raise BinderError(f"{where}: field 'id' is missing")
    for index, candidate in enumerate(record.get("candidates") or []):
        numbers = list(candidate.get("sample_orders") or []) + [candidate.get("count", 1)]
        if any(not 0 <= n < MAX_SAMPLES for n in numbers):
            raise BinderError(f"{where}: field 'candidates[{index}]' has a sample position or count outside "
                              f"0..{MAX_SAMPLES - 1}; the line was not written by binder-py")
    return record


@dataclass
class ResultsFile:
    """What :func:`read_results` found: the records (last line per id) and any repair it made."""

    records: list[dict[str, Any]] = field(default_factory=list)
    truncated_bytes: int = 0  # bytes of a cut-off last line that were (or would be) dropped
    lines: int = 0


def read_results(path: str | os.PathLike[str], *, repair: bool = False) -> ResultsFile:
    """Stream ``results.jsonl``; a cut-off or unparsable *last* line is ignored (and cut away with
    ``repair=True``). An unparsable line in the middle, or a line of the wrong shape, is an error:
    the file was edited by hand (or made elsewhere)."""
    path = Path(path)
    out = ResultsFile()
    by_id: dict[str, dict[str, Any]] = {}
    pending = None  # a broken line: fine only if nothing but blank lines follows it
    good_end = 0
    try:
        for line in iter_json_lines(path, max_line_bytes=max_result_line_bytes()):
            if pending is not None:
                raise BinderError(f"{path}, line {pending.number}: not a JSON object with an 'id' "
                                  f"({pending.error or 'no final newline'}); results.jsonl must not be edited by "
                                  "hand (move the broken line away or start a new --out)")
            if line.error is not None or not line.complete:
                pending = line
                continue
            record = _check_result(line.value, f"{path}, line {line.number}")
            by_id.pop(str(record["id"]), None)
            by_id[str(record["id"])] = record
            out.lines += 1
            good_end = line.end
    except FileNotFoundError:
        return out
    if pending is not None:  # cut off by a kill: drop it, the question runs again
        out.truncated_bytes = os.stat(path, follow_symlinks=False).st_size - pending.start
        good_end = pending.start
    out.records = list(by_id.values())
    if repair and out.truncated_bytes:
        truncate_regular(path, good_end)
    return out


def _line(record: dict[str, Any]) -> bytes:
    try:
        line = json.dumps(record, ensure_ascii=False, default=str, allow_nan=False) + "\n"
    except ValueError:  # a NaN/inf somewhere: write it as null
        from binder_py.jsonable import to_jsonable

        line = json.dumps(to_jsonable(record), ensure_ascii=False, default=str) + "\n"
    return line.encode("utf-8")


#: what a results line keeps when written whole it would be longer than a run's reader takes
#: (:data:`MAX_RESULT_LINE_BYTES`): at most this much of each text, this much text in all, and this many
#: list items and dictionary entries in all (in the order the line holds them: the prediction first)
KEPT_TEXT = 10_000
KEPT_TEXT_TOTAL = 8_000_000
KEPT_ITEMS_TOTAL = 200_000


def _shortened(value: Any, budget: list[int]) -> Any:
    """``value`` cut to the ``[characters, items]`` left in ``budget`` (spent as it goes)."""
    if isinstance(value, str):
        keep = max(0, min(len(value), KEPT_TEXT, budget[0]))
        budget[0] -= keep
        return value if keep == len(value) else f"{value[:keep]}… [{len(value) - keep:,} characters cut]"
    if isinstance(value, (dict, list, tuple)):
        pairs = value.items() if isinstance(value, dict) else enumerate(value)
        out = []
        for key, item in pairs:
            if budget[1] <= 0:
                break
            budget[1] -= 1
            if isinstance(key, str):  # a key is text too (a program may answer {'x' * 30000000: 1})
                key = _shortened(key, budget)
            out.append((key, _shortened(item, budget)))
        if isinstance(value, dict):  # two keys cut to one text keep both entries
            kept: dict[Any, Any] = {}
            for key, item in out:
                while key in kept:
                    key = f"{key} (another)"
                kept[key] = item
            return kept
        return [item for _key, item in out]
    return value


#: the fields of a results line that hold program output and traces (what can make it long)
BULKY_FIELDS = ("prediction", "candidates", "distribution", "neural_calls", "warnings", "prompt", "table")


def shortened_record(record: dict[str, Any]) -> dict[str, Any]:
    """``record`` as a results line short enough to read back: texts cut to :data:`KEPT_TEXT`
    characters, :data:`KEPT_TEXT_TOTAL` in all, lists and dictionaries to :data:`KEPT_ITEMS_TOTAL`
    items in all; the scores stay those of the whole prediction. A program's answer can hold
    100,000,000 characters, each candidate's, and a run's neural-call traces as much again: written
    whole, such a line was longer than :func:`read_results` takes, and every later ``report`` or resume
    of the run stopped at it (red team 7)."""
    budget = [KEPT_TEXT_TOTAL, KEPT_ITEMS_TOTAL]
    short = {key: _shortened(value, budget) for key, value in record.items()}  # every field stays
    short["cut"] = (f"this line was cut to be read back (written whole it was longer than {max_result_line_bytes():,} "
                    f"bytes): each text to {KEPT_TEXT:,} characters, {KEPT_TEXT_TOTAL:,} in all, and "
                    f"{KEPT_ITEMS_TOTAL:,} list items and entries in all")
    return short


def result_ids(path: str | os.PathLike[str]) -> set[str]:
    """The ids of ``results.jsonl``'s lines, streamed and not kept (a replayed run's may be a
    4,344-question test run); lines that do not parse are passed over."""
    ids: set[str] = set()
    try:
        for line in iter_json_lines(path, max_line_bytes=max_result_line_bytes()):
            if line.error is None and line.complete and isinstance(line.value, dict) and "id" in line.value:
                ids.add(str(line.value["id"]))
    except FileNotFoundError:
        pass
    return ids


class ResultsWriter:
    """Appends one JSON line per finished question, durably (write + flush + fsync), thread-safe."""

    def __init__(self, path: str | os.PathLike[str]):
        self.path = Path(path)
        self._file = open_regular(self.path, "ab")
        self._lock = threading.Lock()

    def append(self, record: dict[str, Any]) -> None:
        data, limit = _line(record), max_result_line_bytes()
        if len(data) > limit:
            short = shortened_record(record)
            data = _line(short)
            if len(data) > limit:  # still too long (a lower limit set by the environment): the
                # fields that make a line long are emptied and named in the note; id, gold and scores stay
                bulky = [name for name in BULKY_FIELDS if name in record]
                emptied = {name: type(record[name])() if isinstance(record[name], (list, dict, str)) else None
                           for name in bulky}
                data = _line({**short, **emptied, "cut": f"left out: {', '.join(bulky)} (the line was longer than "
                                                        f"{limit:,} bytes even with its texts cut)"})
        with self._lock:
            self._file.write(data)
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
    """``config.json`` of a run directory (``None`` when absent), checked against :data:`CONFIG_SHAPE`."""
    path = Path(directory) / CONFIG_FILE
    try:
        config = read_json(path, CONFIG_SHAPE, max_bytes=MAX_CONFIG_BYTES, what="config.json")
    except FileNotFoundError:
        return None
    from binder_py.pipeline.settings import VOTE_STRATEGIES  # every strategy a run may record (likelihood too)

    if config.get("vote") is not None and config["vote"] not in VOTE_STRATEGIES:
        raise BinderError(f"{path}: field 'vote' must be one of {', '.join(VOTE_STRATEGIES)}, not {config['vote']!r}")
    for key, most in REPLAYED_SETTINGS.items():
        value = config.get(key)
        if value is not None and not 0 <= value <= most:
            raise BinderError(f"{path}: field {key!r} must be from 0 to {most:,}, not {value!r}; the file was not "
                              "written by binder-py")
    weight = config.get("neural_weight")
    if weight is not None and not 0 <= weight < float("inf"):
        raise BinderError(f"{path}: field 'neural_weight' must be a finite number >= 0, not {weight!r}")
    return config


def recorded_config(config: dict[str, Any]) -> dict[str, Any]:
    """``config`` as it is written: credentials removed from the ``--lm`` spec and the command line."""
    out = dict(config)
    if isinstance(out.get("lm"), str):
        out["lm"] = redact_spec(out["lm"])
    if isinstance(out.get("command"), list):
        out["command"] = [redact_spec(part) if isinstance(part, str) else part for part in out["command"]]
    return out


def write_config(directory: str | os.PathLike[str], config: dict[str, Any]) -> None:
    """Replace ``config.json`` atomically (``O_EXCL`` temporary file, never through a symlink),
    with the credentials of the ``--lm`` spec redacted."""
    text = json.dumps(recorded_config(config), indent=2, ensure_ascii=False, default=str) + "\n"
    replace_regular(Path(directory) / CONFIG_FILE, text.encode("utf-8"))


def recorded_vote(config: dict[str, Any]) -> str | None:
    """The vote strategy a run held. A discriminate run voted by likelihood unless told otherwise,
    but runs recorded before its config said so wrote the task's vote: read as likelihood unless
    the recorded command asked for a vote."""
    from binder_py.tasks import PROFILES

    vote = config.get("vote")
    profile = PROFILES.get(str(config.get("task")))
    if (config.get("mode") == "discriminate" and profile is not None and vote == profile.vote
            and "--vote" not in (config.get("command") or ())):
        return "likelihood"
    return vote


#: settings a run also records as the value they took (``setting: config key``): when both runs
#: record that value it is compared instead, so a setting given at its default (``--shots 4``,
#: ``--neural-weight 1`` with the embedded model) resumes a run that left it out
TAKEN_SETTINGS = {"shots": "shots_effective", "core_shots": "core_shots_effective",
                  "table_rows": "table_rows_effective", "neural_weight": "neural_weight",
                  "calibrator": "calibrator_effective", "neural": "neural_effective",
                  "constrained": "constrained_effective", "link_literals": "link_effective",
                  "score_ties": "score_ties_effective", "keep_total_row": "keep_total_row_effective"}
#: settings whose default is a value (``--calibrator auto``): given at it, they are as left out (for
#: runs recorded before the value they took was)
SETTING_DEFAULTS = {"calibrator": "auto"}
#: answer-changing keys whose default is a value (``--neural lm``): given at it, they are as left out
ANSWER_DEFAULTS = {"neural": "lm"}


def _compared(config: dict[str, Any], other: dict[str, Any]) -> dict[str, Any]:
    """``config``'s answer-changing settings as :func:`config_differences` compares them with ``other``'s."""
    settings = {name: value for name, value in (config.get("settings") or {}).items()
                if name not in SETTING_DEFAULTS or value != SETTING_DEFAULTS[name]}
    out = {key: None if key in ANSWER_DEFAULTS and config.get(key) == ANSWER_DEFAULTS[key] else config.get(key)
           for key in ANSWER_KEYS}
    if isinstance(out["lm"], str):  # ?rpm= and the other pacing options do not change the answers
        out["lm"] = answering_spec(out["lm"], config.get("lm_name"))
    neural = out["neural"]
    if isinstance(neural, str) and neural.startswith("lm:") and not ("neural_effective" in config
                                                                     and "neural_effective" in other):
        # one run was recorded before runs held the backend they used (compared by it below when both
        # do): the neural model by the file it ran, as the lm's (an embedded model's by the backend's id)
        effective = config.get("neural_effective")
        model_name = effective.split(":", 1)[1] if isinstance(effective, str) and ":" in effective else None
        out["neural"] = "lm:" + answering_spec(neural[3:], model_name)
    if config.get("mode") not in SAMPLING_MODES:  # discriminate: n samples nothing
        out["n"] = None
    for name, taken in TAKEN_SETTINGS.items():
        if taken in config and taken in other:
            settings.pop(name, None)
            out[name] = config[taken]
    out["settings"] = settings
    return out


def config_differences(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """The answer-changing settings that differ, as ``key: old -> new`` texts (specs compared redacted)."""
    old, new = recorded_config(old), recorded_config(new)
    old["vote"], new["vote"] = recorded_vote(old), recorded_vote(new)
    for config in (old, new):  # a run recorded before the link stage (tie scoring) ran without it (as its
        config.setdefault("link_effective", False)  # replay does)
        config.setdefault("score_ties_effective", False)
        config.setdefault("keep_total_row_effective", True)  # (before total rows were set aside: kept)
    before, after = _compared(old, new), _compared(new, old)
    return [f"{key}: {before.get(key)!r} -> {after.get(key)!r}" for key in before
            if _answering(key, before[key]) != _answering(key, after.get(key))]


def _answering(key: str, value: Any) -> Any:
    """What of a compared setting decides the answers: an oracle file (``oracle:NAME:DIGEST``) by its
    content alone, not by its name (a copy or a rename answers the same)."""
    if key == "neural" and isinstance(value, str) and value.startswith("oracle:"):
        return "oracle:" + value.rsplit(":", 1)[-1]
    return value


class RunLock:
    """An exclusive lock on a run directory: two ``binder-py eval`` processes never append to one file."""

    def __init__(self, directory: str | os.PathLike[str]):
        self.path = Path(directory) / LOCK_FILE
        self._file: Any = None

    def acquire(self) -> RunLock:
        self._file = open_regular(self.path, "r+b")  # refuses a symlink or anything but a regular file
        self._lock_or_refuse()
        os.ftruncate(self._file.fileno(), 0)
        os.pwrite(self._file.fileno(), f"pid {os.getpid()}".encode(), 0)
        return self

    def check_free(self) -> None:
        """Refuse at once when another process holds the lock, before the model is built (loading an
        embedded model, or a Ray engine, takes a while); nothing is created or written. The lock itself
        is still taken by :meth:`acquire`."""
        try:
            self._file = open_regular(self.path, "rb")
        except (FileNotFoundError, NotADirectoryError):  # no run there yet (or --out is a file: said later)
            return
        try:
            self._lock_or_refuse(exclusive=False)  # a shared lock conflicts with the holder's exclusive one, and
            # needs no write access (NFS emulates flock with fcntl locks, whose exclusive lock does)
        finally:
            self.release()

    def _lock_or_refuse(self, exclusive: bool = True) -> None:
        import errno
        import fcntl

        try:
            fcntl.flock(self._file.fileno(), (fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH) | fcntl.LOCK_NB)
        except OSError as error:
            if error.errno not in (errno.EWOULDBLOCK, errno.EAGAIN):
                self.release()
                raise BinderError(f"{self.path}: cannot lock the run directory ({error.strerror or error})") from None
            holder = os.pread(self._file.fileno(), 200, 0).decode("utf-8", "replace").strip() or "another process"
            self.release()
            raise BinderError(f"{self.path.parent} is in use by a running 'binder-py eval' ({holder}); wait for it "
                              "to finish or stop it, or use another --out") from None

    def release(self) -> None:
        if self._file is not None:
            self._file.close()  # closing drops the lock
            self._file = None
