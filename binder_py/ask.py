"""The Python interface: :class:`Binder` holds the models, the neural backend, the sandbox and
the shared neural cache, and answers each question by running it through the pipeline's stages
(:mod:`binder_py.pipeline`). ``binder-py ask``, the notebook accessor and the evaluation
harness use it.
"""

from __future__ import annotations

import asyncio
import os
import threading
import time
from collections.abc import Iterable, Mapping
from dataclasses import fields, replace
from functools import partial
from typing import Any

import pandas as pd

from binder_py.answer import Answer
from binder_py.errors import BinderError
from binder_py.language.table_names import check_table_names
from binder_py.lm.types import LanguageModel
from binder_py.neural import NeuralBackend, NeuralCache
from binder_py.neural.build import build_neural_backend, early_neural_backend
from binder_py.pipeline import MODES, STAGES, VOTE_STRATEGIES, AskSettings, QuestionState, Services, answer_question
from binder_py.progress import StageProgress, in_notebook, progress_bar
from binder_py.tables import check_table_file, load_table, prepare_table
from binder_py.tasks import task_profile
from binder_py.total_rows import without_total_row
from sandbox import Sandbox

#: the sandbox warms these modules so neural-call bridges start fast
_SANDBOX_PRELOAD = ("binder_py.language.worker.bridge",)


#: what ``Binder(...)`` takes besides the settings: fixed for the binder, not per question
_BINDER_ARGUMENTS = ("lm", "neural_lm", "neural", "sandbox", "cache", "record_dir")


def _check_setting_names(names: Iterable[str], where: str) -> None:
    """A TypeError naming the unknown settings and the known ones (not the dataclass's own)."""
    known = [f.name for f in fields(AskSettings)]
    unknown = [name for name in names if name not in known]
    if not unknown:
        return
    hint = ""
    if where == "ask" and any(name in _BINDER_ARGUMENTS for name in unknown):
        hint = (f"; {', '.join(n for n in unknown if n in _BINDER_ARGUMENTS)} belongs to the Binder, not to one "
                "question: make one, Binder(lm=...), and call its ask (or df.binder.ask(..., binder=Binder(lm=...)))")
    raise TypeError(f"{where}() got unknown setting(s) {', '.join(map(repr, unknown))}{hint}; "
                    f"the settings are {', '.join(known)}")


class Binder:
    """Answer questions about tables with LM-written pandas programs that call the LM back.

    >>> binder = Binder(lm="openai:gpt-4o-mini")                      # doctest: +SKIP
    >>> answer = binder.ask(df, "which shirt sold best in North America?")  # doctest: +SKIP
    >>> answer.value, answer.confidence; print(answer.explain())      # doctest: +SKIP

    ``lm`` writes programs; ``neural_lm`` answers neural calls (default: ``lm``); ``neural``
    replaces the LM for neural calls with an oracle (``"oracle:FILE.json"``), a
    :class:`~binder_py.neural.NeuralBackend`, or any callable taking a
    :class:`~binder_py.neural.NeuralRequest`. Specs are documented in docs/LM.md.

    ``progress`` (default on) shows what a question is doing while it works: tqdm's notebook
    bar in Jupyter, messages on stderr elsewhere (:mod:`binder_py.progress`); ``False`` turns
    it off, for this binder or for one ``ask``/``ask_many`` call.
    """

    def __init__(self, lm: str | LanguageModel | None = None, *, neural_lm: str | LanguageModel | None = None,
                 neural: Any = None, sandbox: Sandbox | None = None, cache: bool = True, record_dir: str | None = None,
                 progress: bool = True, **settings: Any):
        _check_setting_names(settings, "Binder")
        self.settings = AskSettings(**settings)
        self._early_neural = early_neural_backend(neural)  # a typo fails now; an oracle file is read now, once
        for name, arg in (("lm", lm), ("neural_lm", neural_lm)):
            if arg is not None and not isinstance(arg, (str, LanguageModel)):
                raise TypeError(f"{name}= takes a spec string ('local', 'openai:gpt-4o-mini', ...; docs/LM.md) "
                                f"or a LanguageModel, not {type(arg).__name__}")
        self._lm_arg, self._neural_lm_arg = lm, neural_lm
        self._cache, self._record_dir = cache, record_dir
        self._neural_arg = neural
        self._sandbox = sandbox
        self._lock = threading.RLock()  # re-entrant: building the neural backend builds the model
        self._lm: LanguageModel | None = None
        self._neural_backend: NeuralBackend | None = None
        self.progress = progress
        self.neural_cache = NeuralCache()

    # --- components, built on first use ------------------------------------------------
    @property
    def lm(self) -> LanguageModel:
        with self._lock:
            if self._lm is None:
                self._lm = self._make_lm(self._lm_arg)
            return self._lm

    @property
    def neural(self) -> NeuralBackend:
        with self._lock:
            if self._neural_backend is None:
                self._neural_backend = self._make_neural()
            return self._neural_backend

    @property
    def sandbox(self) -> Sandbox:
        with self._lock:
            if self._sandbox is None:
                self._sandbox = shared_sandbox()
            return self._sandbox

    def _make_lm(self, arg: str | LanguageModel | None) -> LanguageModel:
        if arg is not None and not isinstance(arg, str):
            return arg
        from binder_py.lm import lm_from_spec

        return lm_from_spec(arg, cache=self._cache, record_dir=self._record_dir, progress=self.progress)

    def _make_neural(self) -> NeuralBackend:
        if self._early_neural is not None:
            return self._early_neural
        neural_lm = self._neural_lm_arg
        return build_neural_backend(self._neural_arg, make_lm=self._make_lm,
                                    lm=lambda: self.lm if neural_lm is None else self._make_lm(neural_lm))

    # --- asking -------------------------------------------------------------------------
    def ask(self, table: TablesArg, question: str, title: str | None = None, *,
            question_id: str | None = None, progress: bool | None = None, **overrides: Any) -> Answer:
        """Answer ``question`` about ``table``: a DataFrame or a table file's path, or several
        tables as a mapping ``{"orders": df1, "customers": "customers.csv"}``. Programs see
        each table by its name, and the first also as ``df`` (and ``table``); ``answer.table``
        is the first and ``answer.tables`` holds them all. ``progress`` overrides the binder's
        for this question."""
        _check_setting_names(overrides, "ask")
        settings = replace(self.settings, **overrides) if overrides else self.settings
        show = self.progress if progress is None else progress
        notebook = show and in_notebook()  # the notebook bar replaces the stages' stderr messages
        state = self._initial_state(settings, table, question, title, question_id, progress=show and not notebook)
        with StageProgress(STAGES, enabled=notebook) as stages:
            answer = answer_question(state, stages.stages)
        return replace(answer, tables=dict(state.original_tables)) if state.original_tables else answer

    def _initial_state(self, settings: AskSettings, table: TablesArg, question: str,
                       title: str | None, question_id: str | None, *, progress: bool) -> QuestionState:
        _check_question(question, title)
        originals = read_tables(table)
        warnings: tuple[str, ...] = ()
        if not settings.keep_total_row:  # a last row that adds up the rows above is no row of data
            for name, df in list(originals.items()):
                originals[name], total = without_total_row(df)
                if total is not None:
                    warnings += (total.note(name if len(originals) > 1 else None),)
        profile = task_profile(settings.task)
        lowercase = profile.lowercase_cells if settings.lowercase is None else settings.lowercase
        seen = {name: lowercase_text_cells(df) if lowercase else df for name, df in originals.items()}
        services = Services(lm=self.lm, neural=lambda: self.neural, sandbox=lambda: self.sandbox,
                            neural_cache=self.neural_cache, progress=progress)
        named = not isinstance(table, (pd.DataFrame, str, os.PathLike))
        given = [name for name, arg in (("neural", self._neural_arg), ("neural_lm", self._neural_lm_arg))
                 if arg is not None]
        if given and settings.mode not in ("binder", "discriminate"):  # said, rather than dropped unsaid
            why = "its programs make no neural calls" if settings.mode == "python" else "the model answers directly"
            warnings += (f"{' and '.join(given)} is not used in {settings.mode} mode: {why}",)
        strategy = profile.vote_strategy(settings.vote, mode=settings.mode)
        if settings.answer_weights is not None and strategy != "answer_biased":  # said, not dropped unsaid
            warnings += (f"answer_weights is not used by the {strategy} vote, only by vote='answer_biased'",)
        return QuestionState(question=question.strip(), table=next(iter(seen.values())), warnings=warnings,
                             original_table=next(iter(originals.values())), title=title,
                             tags={"question_id": question_id} if question_id else {},
                             settings=settings, profile=profile, services=services, lowercased=lowercase,
                             started=time.perf_counter(), tables=seen if named else {},
                             original_tables=originals if named else {})

    async def aask(self, table: TablesArg, question: str, title: str | None = None,
                   **overrides: Any) -> Answer:
        """:meth:`ask` without blocking the event loop (the work runs in a thread)."""
        return await asyncio.to_thread(self.ask, table, question, title, **overrides)

    def ask_many(self, items: Iterable[Any], *, concurrency: int = 2, progress: bool | None = None,
                 return_exceptions: bool = False, engine: str = "local",
                 ray_address: str | None = None) -> list[Answer | BaseException]:
        """Answer many questions, ``concurrency`` at a time, with one progress bar over the questions
        (tqdm's notebook bar in Jupyter; ``progress`` overrides the binder's).

        ``items`` are ``(table, question)`` or ``(table, question, title)`` tuples or mappings
        with ``table``, ``question`` and optional ``title``/``question_id``; ``table`` may
        name several tables (a mapping, as for :meth:`ask`). Answers come
        back in input order. With ``return_exceptions`` a failing question gives its
        exception in place of an answer instead of stopping the others; without it, a question
        that cannot be asked (not text, empty), a title that is no text or a table file that is
        missing (or of an unknown format) stops the run before any question is asked.

        ``engine="ray"`` runs each question as a Ray task (``ray_address``: the cluster,
        default ``$RAY_ADDRESS`` or a new local Ray); each worker builds its own binder with
        this one's settings and model (docs/SCALE.md). Tables given as paths are read here.
        """
        from binder_py.engines import check_concurrency, check_engine

        check_engine(engine)
        check_concurrency(concurrency)
        jobs = [{**_job(item), "position": position} for position, item in enumerate(items)]
        if not return_exceptions:  # a question that cannot be asked stops the run before the others are paid for
            for job in jobs:
                try:
                    _check_question(job.get("question"), job.get("title"))
                    _check_table_files(job.get("table"))
                except BinderError as error:
                    _item_failure(error, job["position"], return_exceptions)
        results: list[Answer | BaseException | None] = [None] * len(jobs)
        if engine == "ray":  # workers need not see our files: read here, a file that fails is its item's error
            read = []
            for job in jobs:
                try:
                    read.append({**job, "table": _files_read(job["table"])})
                except Exception as error:  # noqa: BLE001 - as the question would have failed in ask
                    results[job["position"]] = _item_failure(error, job["position"], return_exceptions)
            jobs = read
            if not jobs:  # every item failed to read: no cluster to start
                return results  # type: ignore[return-value]
        runner = self._engine(engine, concurrency, ray_address)
        bar = progress_bar(len(results), "questions", "q", self.progress if progress is None else progress)
        bar.update(len(results) - len(jobs))
        answers = runner.run(partial(_ask_job, return_exceptions=return_exceptions), jobs)
        try:
            for index, answer in answers:
                results[jobs[index]["position"]] = answer
                bar.update(1)
        finally:
            answers.close()
            bar.close()
            runner.close()
        return results  # type: ignore[return-value]

    def _engine(self, engine: str, concurrency: int, ray_address: str | None) -> Any:
        if engine == "local":
            if ray_address is not None:
                raise BinderError("ray_address needs engine='ray'")
            from binder_py.engines.local import LocalEngine

            return LocalEngine(self, concurrency)
        from binder_py.engines import require_ray

        require_ray()
        from binder_py.engines.ray_engine import RayEngine, recipe_for
        from binder_py.lm import default_spec

        lm_arg = self._lm_arg if self._lm_arg is not None else default_spec()
        make = partial(_rebuild_binder, lm_arg=lm_arg, neural_lm=self._neural_lm_arg, neural=self._neural_arg,
                       cache=self._cache, settings={f.name: getattr(self.settings, f.name)
                                                    for f in fields(self.settings)})
        recorder = None
        if self._record_dir is not None:  # the workers' answers go into record_dir/lm.sqlite, as here
            from pathlib import Path

            from binder_py.lm.spec import open_store

            Path(self._record_dir).expanduser().mkdir(parents=True, exist_ok=True)
            recorder = open_store(Path(self._record_dir).expanduser() / "lm.sqlite")
        return RayEngine(recipe_for(make, lm_arg, cache=self._cache, record=recorder is not None), concurrency,
                         address=ray_address, recorder=recorder)

    def close(self) -> None:
        """Release the models this binder built (their worker processes, thread pools and files)."""
        with self._lock:
            if self._lm is not None and (self._lm_arg is None or isinstance(self._lm_arg, str)):
                self._lm.close()
            self._lm = None
            self._neural_backend = None


TableArg = pd.DataFrame | str | os.PathLike[str]
#: one table (a DataFrame or a file's path) or several by name
TablesArg = TableArg | Mapping[str, TableArg]


def read_tables(tables: TablesArg) -> dict[str, pd.DataFrame]:
    """The question's tables, typed (:func:`~binder_py.tables.prepare_table`), by name; one
    table given alone is named ``df``. Names are checked
    (:func:`~binder_py.language.table_names.check_table_names`)."""
    if isinstance(tables, (pd.DataFrame, str, os.PathLike)):
        return {"df": _read_table(tables, "the table")}
    if not isinstance(tables, Mapping):
        raise BinderError(f"the table must be a DataFrame, a table file's path, or a mapping of names to "
                          f"those, got {type(tables).__name__}")
    if not tables:
        raise BinderError("no tables given: pass a DataFrame, a file's path, or {name: table, ...}")
    names = check_table_names(tables)
    return {name: _read_table(tables[name], f"table {name!r}") for name in names}


def _read_table(table: Any, what: str) -> pd.DataFrame:
    if isinstance(table, pd.DataFrame):
        return prepare_table(table)
    if isinstance(table, (str, os.PathLike)):
        return load_table(table)
    raise BinderError(f"{what} must be a DataFrame or a table file's path, got {type(table).__name__}")


def _ask_job(binder: Binder, job: dict[str, Any], *, return_exceptions: bool) -> Answer | BaseException:
    """One question of :meth:`Binder.ask_many` (on a thread, or in a Ray worker). Raised, its
    error says which item it was, by its index in the list (``ask_many items[3]: ...``)."""
    question = {name: value for name, value in job.items() if name != "position"}
    try:
        return binder.ask(**question, progress=False)  # one bar, over the questions
    except Exception as error:  # noqa: BLE001 - reported per question
        return _item_failure(error, job["position"], return_exceptions)


def _item_failure(error: Exception, position: int, return_exceptions: bool) -> BaseException:
    """Item ``position``'s ``error``: returned in its place with ``return_exceptions``, else raised
    saying which item it was, by its index in the list (``ask_many items[3]: ...``)."""
    if return_exceptions:
        return error
    where = f"ask_many items[{position}]"  # the list's own index: items[0] is the first
    if isinstance(error, BinderError):
        raise BinderError(f"{where}: {error}") from error
    error.add_note(where)
    raise error


def _files_read(tables: TablesArg) -> TablesArg:
    """``tables`` with every table file read into a DataFrame."""
    if isinstance(tables, (str, os.PathLike)):
        return load_table(tables)
    if isinstance(tables, Mapping):
        return {name: load_table(t) if isinstance(t, (str, os.PathLike)) else t for name, t in tables.items()}
    return tables


def _rebuild_binder(lm: LanguageModel | None, *, lm_arg: Any, neural_lm: Any, neural: Any, cache: bool,
                    settings: dict[str, Any]) -> Binder:
    """A Ray worker's copy of a binder (its own sandbox pool and neural cache)."""
    return Binder(lm=lm if lm is not None else lm_arg, neural_lm=neural_lm, neural=neural, cache=cache,
                  progress=False, **settings)


def _check_question(question: Any, title: Any) -> None:
    """A :class:`BinderError` for a question that is no text or empty, or a title that is no text."""
    if not isinstance(question, str):
        raise BinderError(f"the question must be text, got {type(question).__name__}: {question!r}"[:200])
    if not question.strip():
        raise BinderError("the question is empty: ask something about the table")
    if title is not None and not isinstance(title, str):  # failed later with an AttributeError
        raise BinderError(f"the title must be text (or None), got {type(title).__name__}: {title!r}"[:200])


def _check_table_files(tables: Any) -> None:
    """A :class:`~binder_py.errors.TableError` for a table file that cannot be read (a missing file, an unknown
    extension: :func:`~binder_py.tables.check_table_file`); nothing is read."""
    paths = [tables] if isinstance(tables, (str, os.PathLike)) else list(tables.values()) \
        if isinstance(tables, Mapping) else []
    for path in paths:
        if isinstance(path, (str, os.PathLike)):
            check_table_file(path)


def _job(item: Any) -> dict[str, Any]:
    if isinstance(item, Mapping):
        unknown = set(item) - {"table", "question", "title", "question_id"}
        if unknown:
            raise BinderError(f"ask_many items take table, question, title, question_id; not {sorted(unknown)}")
        return dict(item)
    if isinstance(item, (tuple, list)) and len(item) in (2, 3):
        return dict(zip(("table", "question", "title"), item))
    raise BinderError("ask_many items are (table, question[, title]) tuples or mappings")


_SHARED_SANDBOX: Sandbox | None = None
_SHARED_LOCK = threading.Lock()


def shared_sandbox() -> Sandbox:
    """One process-wide sandbox, warmed with the neural-call bridge."""
    global _SHARED_SANDBOX
    with _SHARED_LOCK:
        if _SHARED_SANDBOX is None:
            _SHARED_SANDBOX = Sandbox(preload=_SANDBOX_PRELOAD, pool_size=4)
        return _SHARED_SANDBOX


def lowercase_text_cells(df: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``df`` whose text cells are lower-cased (the paper's table normalisation)."""
    out = df.copy()
    for column in out.columns:
        series = out[column]
        if series.dtype == object or pd.api.types.is_string_dtype(series.dtype):
            out[column] = series.map(lambda v: v.lower() if isinstance(v, str) else v)
    return out


__all__ = ["AskSettings", "Binder", "MODES", "VOTE_STRATEGIES", "lowercase_text_cells", "shared_sandbox"]
