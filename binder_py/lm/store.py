"""The SQLite store: cached responses, and a log of every call (hit or miss).

One file holds both (the default is ``<user cache dir>/binder-py/lm-cache.sqlite``,
or ``$BINDER_CACHE_DIR/lm-cache.sqlite``). A *record* directory uses the same
schema in ``DIR/lm.sqlite``; ``replay:DIR`` answers from it alone.

Tables:

* ``responses(key, request_key, lm, endpoint, model, api, request_json, response_json,
  prompt_tokens, completion_tokens, created)`` — ``key`` is the SHA-256 of everything
  that determines a response (endpoint, model, API, prompt or messages, every
  sampling parameter including ``n`` and ``seed``); ``request_key`` leaves out the
  endpoint and model (replay looks responses up by it).
* ``log(id, ts, lm, purpose, tags, key, source, requests, prompt_tokens,
  completion_tokens, latency, cost, error, request_json)`` — ``source`` is
  ``model`` (sent to a model), ``cache``, ``inflight`` (shared with an identical
  request in flight), ``replay`` or ``error``. The prompt and response of a
  logged call are in ``responses`` under ``key``; failed calls carry their
  request in ``request_json``.
* ``token_counts(lm, text_hash, n)`` — token counts seen while recording, so a
  replayed run budgets its prompts exactly as the recorded run did.
* ``models(lm, endpoint, model, context_window)`` — the models a file has answers from.

Multi-process safety: WAL journal, a 30 s busy timeout, short autocommit
transactions. Within a process one connection is shared under a lock.
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import os
import sqlite3
import stat
import threading
import time
from contextlib import closing
from pathlib import Path
from typing import Any

from binder_py.errors import BinderError
from binder_py.jsonfile import Shape, parse_json
from binder_py.safefiles import file_kind, require_regular_or_absent
from binder_py.lm.types import Choice, LMConfigError, LMRequest

SCHEMA_VERSION = 1
KEY_VERSION = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (k TEXT PRIMARY KEY, v TEXT);
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    request_key TEXT NOT NULL,
    lm TEXT NOT NULL,
    endpoint TEXT,
    model TEXT,
    api TEXT,
    request_json TEXT NOT NULL,
    response_json TEXT NOT NULL,
    prompt_tokens INTEGER,
    completion_tokens INTEGER,
    created REAL
);
CREATE INDEX IF NOT EXISTS responses_request_key ON responses(request_key);
CREATE TABLE IF NOT EXISTS log (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    ts REAL NOT NULL,
    lm TEXT,
    purpose TEXT,
    tags TEXT,
    key TEXT,
    source TEXT,
    requests INTEGER,
    prompt_tokens INTEGER,
    completion_tokens INTEGER,
    latency REAL,
    cost REAL,
    error TEXT,
    request_json TEXT
);
CREATE TABLE IF NOT EXISTS token_counts (
    lm TEXT NOT NULL, text_hash TEXT NOT NULL, n INTEGER NOT NULL, PRIMARY KEY (lm, text_hash)
);
CREATE TABLE IF NOT EXISTS models (
    lm TEXT PRIMARY KEY, endpoint TEXT, model TEXT, context_window INTEGER
);
"""


@functools.cache
def _own_schema() -> tuple[dict[str, tuple[str, ...]], dict[str, str]]:
    """The columns of each table of :data:`_SCHEMA`, and its indexes as SQLite stores their text
    (spaces collapsed), read from an in-memory database made with it."""
    with closing(sqlite3.connect(":memory:")) as db:
        db.executescript(_SCHEMA)
        rows = db.execute("SELECT type, name, sql FROM sqlite_master").fetchall()
        columns = {name: tuple(column[1] for column in db.execute(f"PRAGMA table_info({name})"))
                   for kind, name, _ in rows if kind == "table" and not name.startswith("sqlite_")}
    return columns, {name: " ".join(sql.split()) for kind, name, sql in rows if kind == "index" and sql}


#: the largest token count (of an answer, a text, a context window) a file may record
MAX_TOKEN_COUNT = 10**9
#: the largest value (a recorded response, a request) SQLite may hold in memory for one of these files
MAX_VALUE_BYTES = 256 * 1024 * 1024


def default_cache_dir() -> Path:
    if os.environ.get("BINDER_CACHE_DIR"):
        return Path(os.environ["BINDER_CACHE_DIR"]).expanduser()
    import platformdirs

    return Path(platformdirs.user_cache_dir("binder-py"))


def default_cache_path() -> Path:
    return default_cache_dir() / "lm-cache.sqlite"


def request_dict(request: LMRequest) -> dict[str, Any]:
    """The request as stored and hashed. ``grammar``, ``json_schema`` and ``top_logprobs`` appear only
    when set, so requests without them keep the keys of runs recorded before those fields existed."""
    data: dict[str, Any] = {
        "prompt": request.prompt,
        "messages": [list(m) for m in request.messages] if request.messages is not None else None,
        "n": request.n,
        "temperature": float(request.temperature),
        "top_p": float(request.top_p),
        "stop": list(request.stop),
        "max_tokens": request.max_tokens,
        "seed": request.seed,
        "logprobs": bool(request.logprobs),
    }
    if request.grammar is not None:
        data["grammar"] = request.grammar
    if request.json_schema is not None:
        data["json_schema"] = request.json_schema
    if request.top_logprobs:
        data["top_logprobs"] = int(request.top_logprobs)
    return data


def _digest(obj: Any) -> str:
    text = json.dumps(obj, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def request_key(request: LMRequest) -> str:
    """Hash of the request alone (what replay looks up)."""
    return _digest({"v": KEY_VERSION, "request": request_dict(request)})


def cache_key(endpoint: str, model: str, api: str, request: LMRequest) -> str:
    """Hash of everything that determines a response."""
    return _digest({"v": KEY_VERSION, "endpoint": endpoint, "model": model, "api": api,
                    "request": request_dict(request)})


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _choice_dict(choice: Choice) -> dict[str, Any]:
    data: dict[str, Any] = {"text": choice.text, "mean_logprob": choice.mean_logprob,
                            "finish_reason": choice.finish_reason}
    if choice.token_logprobs is not None:  # only when asked for: older answers keep their exact JSON
        data["token_logprobs"] = [[token, logprob] for token, logprob in choice.token_logprobs]
    if choice.top_logprobs is not None:
        data["top_logprobs"] = [[[token, logprob] for token, logprob in row] for row in choice.top_logprobs]
    return data


def choices_to_json(choices: list[Choice]) -> str:
    return json.dumps([_choice_dict(c) for c in choices], ensure_ascii=False)


_PAIR = Shape(list, items=(str, float))
_CHOICES_SHAPE = Shape(list, items=Shape(dict, {
    "text": str, "mean_logprob": (float, type(None)), "finish_reason": (str, type(None)),
    "token_logprobs": Shape((list, type(None)), items=_PAIR),
    "top_logprobs": Shape((list, type(None)), items=Shape(list, items=_PAIR)),
}))


def _logprob(value: Any, where: str) -> float:
    if not isinstance(value, (int, float)) or isinstance(value, bool) or math.isnan(value) or value == math.inf:
        raise BinderError(f"{where}: a log-probability must be a number below infinity, not {value!r}")
    return float(value)


def _pairs(rows: list[Any], where: str) -> tuple[tuple[str, float], ...]:
    if any(len(row) != 2 or not isinstance(row[0], str) for row in rows):
        raise BinderError(f"{where}: a log-probability entry must be [token text, number]")
    return tuple((row[0], _logprob(row[1], where)) for row in rows)


def _choice_from_dict(data: dict[str, Any], where: str = "a recorded answer") -> Choice:
    if "text" not in data:
        raise BinderError(f"{where}: field 'text' is missing")
    tokens, top, mean = data.get("token_logprobs"), data.get("top_logprobs"), data.get("mean_logprob")
    return Choice(text=data["text"], mean_logprob=None if mean is None else _logprob(mean, where),
                  finish_reason=data.get("finish_reason"),
                  token_logprobs=_pairs(tokens, where) if tokens is not None else None,
                  top_logprobs=tuple(_pairs(row, where) for row in top) if top is not None else None)


def choices_from_json(text: str | bytes, where: str = "a recorded answer") -> list[Choice]:
    """The choices of a stored answer; :class:`BinderError` (one line, naming ``where``) unless it is
    a list of choices as :func:`choices_to_json` writes them (depth and shape checked before use)."""
    if not isinstance(text, (str, bytes)):
        raise BinderError(f"{where}: not JSON text but {type(text).__name__}")
    return [_choice_from_dict(c, where) for c in parse_json(text, where, _CHOICES_SHAPE)]


class _ReadOnly(Exception):
    """SQLite could not open a database for reading without writing beside it."""


def _cannot_write(path: Path, error: sqlite3.Error) -> str:
    return (f"{path} cannot be written ({error}): it or its directory is read-only. Write elsewhere "
            "(a new --out; for the model cache, BINDER_CACHE_DIR or --no-cache), or make it writable")


class LMStore:
    """A cache/log/record file. Thread-safe; several processes may share the file."""

    def __init__(self, path: str | Path, *, readonly: bool = False):
        self.path = Path(path).expanduser()
        self.readonly = readonly
        self._lock = threading.Lock()
        self._models_put: set[str] = set()  # the models put since begin_run (move_aside keeps them)
        if readonly:
            if not self.path.exists():
                raise LMConfigError(f"no recorded language-model answers at {self.path}; "
                                    "record a run first with binder-py eval ... --out DIR (in Python: lm_from_spec(record_dir=DIR))")
            self._require_regular_files()
            # a URI from the resolved path, percent-quoted: '?', '#' or '&' in a directory name stay part of it
            uri = f"{self.path.resolve().as_uri()}?mode=ro"
            self._conn = sqlite3.connect(uri, uri=True, check_same_thread=False, timeout=30.0,
                                         isolation_level=None)
            try:
                self._check_database()
            except _ReadOnly:
                # a WAL database is opened read-only only where its -shm file can be made: in a
                # read-only directory (a shared or received run) it is read as immutable, which
                # is what nobody may write there
                self._conn = sqlite3.connect(f"{uri}&immutable=1", uri=True, check_same_thread=False,
                                             timeout=30.0, isolation_level=None)
                self._check_database()
        else:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as error:  # BINDER_CACHE_DIR names a file, or a folder that cannot be made
                why = "a file has that name" if isinstance(error, FileExistsError) else error.strerror
                raise LMConfigError(f"cannot make the folder {self.path.parent} for {self.path.name} ({why}); for "
                                    "the model cache, set BINDER_CACHE_DIR to a folder that can be written") from None
            require_regular_or_absent(self.path)  # a recording in a received directory may be a symlink
            self._require_regular_files()
            self._conn = sqlite3.connect(str(self.path), check_same_thread=False, timeout=30.0,
                                         isolation_level=None)
            self._check_database()
            self._conn.execute("PRAGMA busy_timeout=30000")
            try:
                self._conn.execute("PRAGMA journal_mode=WAL")
            except sqlite3.OperationalError:
                pass  # another process is converting it; fine
            self._conn.execute("PRAGMA synchronous=NORMAL")
            with self._lock:
                try:
                    self._conn.executescript(_SCHEMA)
                    self._conn.execute("INSERT OR IGNORE INTO meta(k, v) VALUES ('schema_version', ?)",
                                       (str(SCHEMA_VERSION),))
                except sqlite3.OperationalError as error:
                    if not str(getattr(error, "sqlite_errorname", "")).startswith("SQLITE_READONLY"):
                        raise
                    self._conn.close()
                    raise LMConfigError(_cannot_write(self.path, error)) from None

    def _require_regular_files(self) -> None:
        """SQLite opens the file and its companions (``-wal``, ``-shm``, ``-journal``) by name and
        blocks on a FIFO until a writer comes: each, where present, must be a regular file."""
        for path in (self.path, *(Path(f"{self.path}{suffix}") for suffix in ("-wal", "-shm", "-journal"))):
            try:
                mode = os.stat(path).st_mode
            except FileNotFoundError:
                continue
            except OSError as error:
                raise LMConfigError(f"{path}: cannot be read ({error.strerror})") from None
            if not stat.S_ISREG(mode):
                raise LMConfigError(f"{path} {file_kind(mode)}, not a regular file; a binder-py recording is a file "
                                    "written by 'binder-py eval --out DIR'")

    def _check_database(self) -> None:
        """One line, not a traceback, when the file is not an SQLite database of this schema.

        A recording may come from someone else, and SQLite runs what a file's schema says: a view is
        a query run on every read (one that computes without end hung replay), a trigger runs on every
        write, a column default, an index expression or a CHECK constraint on every insert. So the
        schema may hold only this module's tables (their known columns, nothing generated) and
        indexes, and no view or trigger; SQLite's own limits bound any one value."""
        try:
            self._conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
            problem = self._schema_problem()
        except sqlite3.DatabaseError as error:
            self._conn.close()
            if str(getattr(error, "sqlite_errorname", "")).startswith("SQLITE_READONLY"):
                if self.readonly:
                    raise _ReadOnly(str(error)) from None
                raise LMConfigError(_cannot_write(self.path, error)) from None
            raise LMConfigError(f"{self.path} is not a binder-py recording or cache ({error}); give the file "
                                "written by 'binder-py eval --out DIR', or remove it") from None
        if problem is not None:
            self._conn.close()
            raise LMConfigError(f"{self.path} is not a binder-py recording or cache: it has {problem}; give the "
                                "file written by 'binder-py eval --out DIR', or remove it")
        self._conn.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, MAX_VALUE_BYTES)
        self._conn.execute("PRAGMA trusted_schema = OFF")
        self._conn.execute("PRAGMA ignore_check_constraints = ON")

    def _schema_problem(self) -> str | None:
        """What in the file's schema is not this module's (``None`` when nothing is)."""
        own_columns, own_indexes = _own_schema()
        rows = self._conn.execute("SELECT type, name, tbl_name, sql FROM sqlite_master").fetchall()
        tables = set()
        for kind, name, table, sql in rows:
            name = str(name)
            if kind == "table":
                if name not in own_columns and name not in ("sqlite_sequence", "sqlite_stat1", "sqlite_stat4"):
                    return f"a table {name!r} of its own"
                if str(sql or "").lstrip().upper().startswith("CREATE VIRTUAL"):
                    return f"a virtual table {name!r}"
                tables.add(name)
            elif kind == "index":
                if sql is not None and " ".join(str(sql).split()) != own_indexes.get(name):
                    return f"an index {name!r} of its own"
            else:
                return f"a {kind} {name!r}"
        if self.readonly:
            for name in own_columns:
                if name not in tables:
                    return f"no table {name!r}"
        for name in tables & set(own_columns):
            for column in self._conn.execute(f"PRAGMA table_xinfo({name})").fetchall():
                # (cid, name, type, notnull, default, pk, hidden): hidden marks a generated column
                if column[1] not in own_columns[name] or column[6]:
                    return f"a column {column[1]!r} of its own in table {name!r}"
        return None

    # --- responses -------------------------------------------------------------------
    def get(self, key: str) -> tuple[list[Choice], int, int] | None:
        with self._lock:
            row = self._conn.execute(
                "SELECT response_json, prompt_tokens, completion_tokens FROM responses WHERE key = ?",
                (key,)).fetchone()
        if row is None:
            return None
        return self._answer(row, key)

    def get_by_request(self, req_key: str, lm: str | None = None) -> tuple[list[Choice], int, int, str] | None:
        """The most recent answer to a request from any model (or the named one)."""
        sql = ("SELECT response_json, prompt_tokens, completion_tokens, lm FROM responses WHERE request_key = ?"
               + (" AND lm = ?" if lm else "") + " ORDER BY created DESC LIMIT 1")
        with self._lock:
            row = self._conn.execute(sql, (req_key, lm) if lm else (req_key,)).fetchone()
        if row is None:
            return None
        choices, prompt_tokens, completion_tokens = self._answer(row, req_key)
        return choices, prompt_tokens, completion_tokens, self._text(row[3], f"the model of answer {req_key[:12]}")

    def recorded_apis(self, lm: str | None = None) -> set[str]:
        """The APIs ("chat", "completions") the stored answers came from (of one model, if named)."""
        sql = "SELECT DISTINCT api FROM responses" + (" WHERE lm = ?" if lm else "")
        with self._lock:
            apis = {row[0] for row in self._conn.execute(sql, (lm,) if lm else ()) if row[0]}
        for api in apis:
            if api not in ("chat", "completions"):
                self._damaged(f"an answer's api is {api!r}, not 'chat' or 'completions'")
        return apis

    def put(self, key: str, req_key: str, *, lm: str, endpoint: str, model: str, api: str,
            request: LMRequest, choices: list[Choice], prompt_tokens: int, completion_tokens: int) -> None:
        with self._lock:
            self._conn.execute(
                "INSERT OR REPLACE INTO responses(key, request_key, lm, endpoint, model, api, request_json,"
                " response_json, prompt_tokens, completion_tokens, created) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                (key, req_key, lm, endpoint, model, api,
                 json.dumps(request_dict(request), ensure_ascii=False), choices_to_json(choices),
                 prompt_tokens, completion_tokens, time.time()))

    # --- log ---------------------------------------------------------------------------
    def log(self, *, lm: str, purpose: str, tags: dict[str, str] | None, key: str | None, source: str,
            requests: int = 0, prompt_tokens: int = 0, completion_tokens: int = 0, latency: float = 0.0,
            cost: float = 0.0, error: str | None = None, request: LMRequest | None = None) -> None:
        with self._lock:
            self._conn.execute(
                "INSERT INTO log(ts, lm, purpose, tags, key, source, requests, prompt_tokens,"
                " completion_tokens, latency, cost, error, request_json) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (time.time(), lm, purpose, json.dumps(dict(tags or {}), sort_keys=True), key, source, requests,
                 prompt_tokens, completion_tokens, latency, cost, error,
                 json.dumps(request_dict(request), ensure_ascii=False) if request is not None else None))

    # --- token counts and models ---------------------------------------------------------
    def put_token_count(self, lm: str, text: str, n: int) -> None:
        with self._lock:
            self._conn.execute("INSERT OR IGNORE INTO token_counts(lm, text_hash, n) VALUES (?,?,?)",
                               (lm, text_hash(text), n))

    def get_token_count(self, text: str, lm: str | None = None) -> int | None:
        sql = "SELECT n FROM token_counts WHERE text_hash = ?" + (" AND lm = ?" if lm else "") + " LIMIT 1"
        with self._lock:
            row = self._conn.execute(sql, (text_hash(text), lm) if lm else (text_hash(text),)).fetchone()
        return None if row is None else self._count(row[0], "a count in table 'token_counts'")

    def put_model(self, lm: str, endpoint: str, model: str, context_window: int | None) -> None:
        with self._lock:
            self._models_put.add(lm)
            self._conn.execute("INSERT OR REPLACE INTO models(lm, endpoint, model, context_window) VALUES (?,?,?,?)",
                               (lm, endpoint, model, context_window))

    def models(self) -> list[tuple[str, str, str, int | None]]:
        with self._lock:
            rows = self._conn.execute("SELECT lm, endpoint, model, context_window FROM models ORDER BY lm").fetchall()
        return [(self._text(lm, "a model's name ('lm')"), self._text(endpoint, "a model's 'endpoint'", optional=True),
                 self._text(model, "a model's 'model'", optional=True),
                 self._count(window, f"the context_window of model {lm!r}", optional=True))
                for lm, endpoint, model, window in rows]

    # --- values read back: checked, since a recording may come from someone else ------------
    def _damaged(self, what: str) -> Any:
        raise LMConfigError(f"{self.path}: {what}; the recording is damaged or crafted (give the file written by "
                            "'binder-py eval --out DIR', or remove it)")

    def _count(self, value: Any, what: str, *, optional: bool = False) -> Any:
        if value is None and optional:
            return None
        if not isinstance(value, int) or not 0 <= value <= MAX_TOKEN_COUNT:
            self._damaged(f"{what} is {value!r}, not a token count from 0 to {MAX_TOKEN_COUNT:,}")
        return value

    def _text(self, value: Any, what: str, *, optional: bool = False) -> Any:
        if not isinstance(value, str) and not (value is None and optional):
            self._damaged(f"{what} is {value!r}, not a text")
        return value

    def _answer(self, row: Any, key: str) -> tuple[list[Choice], int, int]:
        """(choices, prompt tokens, completion tokens) of a stored answer, each checked."""
        try:
            choices = choices_from_json(row[0], f"the response_json of answer {key[:12]}")
        except BinderError as error:
            self._damaged(str(error))
        prompt_tokens = self._count(row[1], f"the prompt_tokens of answer {key[:12]}", optional=True)
        completion_tokens = self._count(row[2], f"the completion_tokens of answer {key[:12]}", optional=True)
        return choices, prompt_tokens or 0, completion_tokens or 0

    # --- maintenance -------------------------------------------------------------------
    def stats(self) -> dict[str, Any]:
        with self._lock:
            c = self._conn
            responses, = c.execute("SELECT COUNT(*) FROM responses").fetchone()
            by_source = {row[0]: {"calls": row[1], "prompt_tokens": row[2] or 0, "completion_tokens": row[3] or 0,
                                  "cost_usd": row[4] or 0.0}
                         for row in c.execute("SELECT source, COUNT(*), SUM(prompt_tokens), SUM(completion_tokens),"
                                              " SUM(cost) FROM log GROUP BY source")}
            by_lm = {row[0]: row[1] for row in c.execute("SELECT lm, COUNT(*) FROM responses GROUP BY lm")}
        size = sum(p.stat().st_size for p in (self.path, Path(str(self.path) + "-wal")) if p.exists())
        hits = sum(by_source.get(s, {}).get("calls", 0) for s in ("cache", "inflight", "replay"))
        misses = by_source.get("model", {}).get("calls", 0)
        return {"path": str(self.path), "bytes": size, "responses": responses, "responses_by_lm": by_lm,
                "log": by_source, "hits": hits, "misses": misses,
                "hit_rate": (hits / (hits + misses)) if hits + misses else None}

    def clear(self, *, log: bool = True) -> int:
        with self._lock:
            n, = self._conn.execute("SELECT COUNT(*) FROM responses").fetchone()
            self._conn.execute("DELETE FROM responses")
            self._conn.execute("DELETE FROM token_counts")
            if log:
                self._conn.execute("DELETE FROM log")
            self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        with self._lock:
            self._conn.execute("VACUUM")
        return int(n)

    def begin_run(self) -> None:
        """The models put from now on are a new run's (an earlier run of this process may have
        recorded into the same file): :meth:`move_aside` keeps those."""
        with self._lock:
            self._models_put.clear()

    def holds_responses(self) -> bool:
        """Whether any answer is recorded (an earlier run's, when a new run has recorded nothing yet)."""
        with self._lock:
            return self._conn.execute("SELECT 1 FROM responses LIMIT 1").fetchone() is not None

    def move_aside(self, target: Path) -> None:
        """Copy this file to ``target`` and empty it of all but the models put since :meth:`begin_run`
        and their token counts, written once per process (``binder-py eval --force``: the old run's
        recording is kept beside, not replayed as the new run's)."""
        kept = sorted(self._models_put)
        marks = ",".join("?" * len(kept))
        with self._lock:
            with closing(sqlite3.connect(str(target))) as copy:
                self._conn.backup(copy)
                # the new run's models, put as they were built, are not the old run's (unless it used them too)
                copy.execute(f"DELETE FROM models WHERE lm IN ({marks}) AND lm NOT IN (SELECT lm FROM responses)",
                             kept)
                copy.commit()
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                self._conn.execute("DELETE FROM responses")
                self._conn.execute("DELETE FROM log")
                self._conn.execute(f"DELETE FROM token_counts WHERE lm NOT IN ({marks})", kept)
                self._conn.execute(f"DELETE FROM models WHERE lm NOT IN ({marks})", kept)
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            self._conn.execute("COMMIT")

    def close(self) -> None:
        with self._lock:
            self._conn.close()
