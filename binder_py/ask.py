"""Ask a question: prompt → candidate programs → sandboxed runs (with neural calls) → vote.

:class:`Binder` is the Python interface; ``binder-py ask`` and the evaluation harness use it.
"""

from __future__ import annotations

import ast
import asyncio
import math
import sys
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import Any

import pandas as pd

from binder_py.answer import Answer, Candidate
from binder_py.errors import BinderError
from binder_py.lm.types import LanguageModel, LMContextTooLong, LMRequest, Usage

MODES = ("binder", "python", "e2e")
VOTE_STRATEGIES = ("majority", "probability", "answer_biased", "program_biased")
#: candidates sampled per question when the program-writing model is the embedded local one
LOCAL_DEFAULT_N = 5
#: exemplars shown to the embedded local model (its prompt reading is slow on 2 cores)
LOCAL_DEFAULT_SHOTS = 4
#: the sandbox warms these modules so neural-call bridges start fast
_SANDBOX_PRELOAD = ("binder_py.language.bridge",)


@dataclass(frozen=True)
class AskSettings:
    """Everything that shapes how one question is answered (``None`` = the task's default)."""

    task: str = "analyst"  # prompt set: analyst (your own data) | wikitq | tabfact
    mode: str = "binder"  # binder | python | e2e
    n: int | None = None  # candidate programs sampled (20 for remote models, 5 for the local one)
    temperature: float | None = None
    max_tokens: int | None = None
    num_shots: int | None = None
    selection: str = "bm25"  # fixed | bm25 | bleu
    table_style: str = "binder"  # binder | pandas
    lowercase: bool | None = None  # lower-case text cells (prompt and executed table); task default
    vote: str | None = None  # majority | probability | answer_biased | program_biased; task default
    neural_weight: float = 10.0
    answer_weights: Mapping[str, float] | None = None
    drop_failed: bool = True
    drop_empty: bool = True
    repair_below: int | None = None  # repair when fewer than k samples succeed; default ceil(n / 4)
    repair_attempts: int = 3  # failing programs re-prompted in the repair round
    seed: int | None = None
    concurrency: int = 8  # candidate programs executing at once
    share_neural_cache: bool = True  # False: every program asks its own neural calls (original Binder)
    prefetch: bool | None = None  # answer a program's independent neural calls concurrently (None: backend's default)
    # answer the predictable f_col calls of ALL candidates before they run, several questions per prompt
    # (binder mode, a backend with answer_many, and only with share_neural_cache; see language/plan.py)
    plan_neural: bool = True

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise BinderError(f"unknown mode {self.mode!r}; use one of {', '.join(MODES)}")
        if self.vote is not None and self.vote not in VOTE_STRATEGIES:
            raise BinderError(f"unknown vote strategy {self.vote!r}; use one of {', '.join(VOTE_STRATEGIES)}")
        if self.n is not None and self.n < 1:
            raise BinderError(f"n must be at least 1, got {self.n}")
        if self.concurrency < 1:
            raise BinderError(f"concurrency must be at least 1, got {self.concurrency}")


class Binder:
    """Answer questions about tables with LM-written pandas programs that call the LM back.

    >>> binder = Binder(lm="openai:gpt-4o-mini")                      # doctest: +SKIP
    >>> answer = binder.ask(df, "which shirt sold best in North America?")  # doctest: +SKIP
    >>> answer.value, answer.confidence; print(answer.explain())      # doctest: +SKIP

    ``lm`` writes programs; ``neural_lm`` answers neural calls (default: ``lm``); ``neural``
    replaces the LM for neural calls with an oracle (``"oracle:FILE.json"``), a
    :class:`~binder_py.language.NeuralBackend`, or any callable taking a
    :class:`~binder_py.language.NeuralRequest`. Specs are documented in docs/LM.md.
    """

    def __init__(self, lm: str | LanguageModel | None = None, *, neural_lm: str | LanguageModel | None = None,
                 neural: Any = None, sandbox: Any = None, cache: bool = True, record_dir: str | None = None,
                 progress: bool = False, **settings: Any):
        self.settings = AskSettings(**settings)
        from binder_py.prompting import available_tasks

        if self.settings.task not in available_tasks():
            raise BinderError(f"unknown task {self.settings.task!r}; use one of {', '.join(available_tasks())}")
        self._lm_arg, self._neural_lm_arg = lm, neural_lm
        self._cache, self._record_dir = cache, record_dir
        self._neural_arg = neural
        self._sandbox = sandbox
        self._lock = threading.RLock()  # re-entrant: building the neural backend builds the model
        self._lm: LanguageModel | None = None
        self._neural_backend: Any = None
        self.progress = progress
        from binder_py.language import NeuralCache

        self.neural_cache = NeuralCache()

    # --- components, built on first use ------------------------------------------------
    @property
    def lm(self) -> LanguageModel:
        with self._lock:
            if self._lm is None:
                self._lm = self._make_lm(self._lm_arg)
            return self._lm

    @property
    def neural(self) -> Any:
        with self._lock:
            if self._neural_backend is None:
                self._neural_backend = self._make_neural()
            return self._neural_backend

    @property
    def sandbox(self) -> Any:
        with self._lock:
            if self._sandbox is None:
                self._sandbox = shared_sandbox()
            return self._sandbox

    def _make_lm(self, arg: str | LanguageModel | None) -> LanguageModel:
        if arg is not None and not isinstance(arg, str):
            return arg
        from binder_py.lm import lm_from_spec

        return lm_from_spec(arg, cache=self._cache, record_dir=self._record_dir)

    def _make_neural(self) -> Any:
        from binder_py.language import CallableBackend, LMNeuralBackend, OracleBackend

        arg = self._neural_arg
        if arg is None:
            lm = self.lm if self._neural_lm_arg is None else self._make_lm(self._neural_lm_arg)
            return LMNeuralBackend(lm)
        if isinstance(arg, str):
            if arg.startswith("oracle:"):
                return OracleBackend.from_file(arg[len("oracle:"):])
            if arg == "lm":
                return LMNeuralBackend(self.lm)
            if arg.startswith("lm:"):
                return LMNeuralBackend(self._make_lm(arg[3:]))
            raise BinderError(f"unknown neural backend {arg!r}; use oracle:FILE.json, lm, lm:SPEC, "
                              "a NeuralBackend or a callable")
        if hasattr(arg, "answer"):
            return arg
        if callable(arg):
            return CallableBackend(arg)
        raise BinderError(f"neural= takes a spec string, a NeuralBackend or a callable, not {type(arg).__name__}")

    # --- asking -------------------------------------------------------------------------
    def ask(self, table: pd.DataFrame | str, question: str, title: str | None = None, *,
            question_id: str | None = None, **overrides: Any) -> Answer:
        """Answer ``question`` about ``table`` (a DataFrame or a table file's path)."""
        settings = replace(self.settings, **overrides) if overrides else self.settings
        return _Question(self, settings, table, question, title, question_id).answer()

    async def aask(self, table: pd.DataFrame | str, question: str, title: str | None = None,
                   **overrides: Any) -> Answer:
        """:meth:`ask` without blocking the event loop (the work runs in a thread)."""
        return await asyncio.to_thread(self.ask, table, question, title, **overrides)

    def ask_many(self, items: Iterable[Any], *, concurrency: int = 2, progress: bool = True,
                 return_exceptions: bool = False) -> list[Answer | BaseException]:
        """Answer many questions, ``concurrency`` at a time, with a progress bar.

        ``items`` are ``(table, question)`` or ``(table, question, title)`` tuples or mappings
        with ``table``, ``question`` and optional ``title``/``question_id``. Answers come
        back in input order. With ``return_exceptions`` a failing question gives its
        exception in place of an answer instead of stopping the others.
        """
        jobs = [_job(item) for item in items]
        results: list[Answer | BaseException | None] = [None] * len(jobs)
        from tqdm import tqdm

        bar = tqdm(total=len(jobs), disable=not progress, desc="questions", unit="q", file=sys.stderr)

        def run(index: int) -> None:
            try:
                results[index] = self.ask(**jobs[index])
            except BaseException as error:  # noqa: BLE001 - reported per question
                if not return_exceptions:
                    raise
                results[index] = error
            finally:
                bar.update(1)

        try:
            with ThreadPoolExecutor(max_workers=max(1, concurrency)) as pool:
                for future in [pool.submit(run, i) for i in range(len(jobs))]:
                    future.result()
        finally:
            bar.close()
        return results  # type: ignore[return-value]

    def close(self) -> None:
        """Nothing to release but the thread pools of the model clients; kept for symmetry."""


def _job(item: Any) -> dict[str, Any]:
    if isinstance(item, Mapping):
        unknown = set(item) - {"table", "question", "title", "question_id"}
        if unknown:
            raise BinderError(f"ask_many items take table, question, title, question_id; not {sorted(unknown)}")
        return dict(item)
    if isinstance(item, (tuple, list)) and len(item) in (2, 3):
        return dict(zip(("table", "question", "title"), item))
    raise BinderError("ask_many items are (table, question[, title]) tuples or mappings")


_SHARED_SANDBOX: Any = None
_SHARED_LOCK = threading.Lock()


def shared_sandbox() -> Any:
    """One process-wide sandbox, warmed with the neural-call bridge."""
    global _SHARED_SANDBOX
    with _SHARED_LOCK:
        if _SHARED_SANDBOX is None:
            from sandbox import Sandbox

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


def is_chat_model(lm: LanguageModel) -> bool:
    return lm.capabilities.chat


def is_local_model(lm: LanguageModel) -> bool:
    """The embedded local model, or a replay of a run recorded with it."""
    return lm.capabilities.embedded


def program_identity(program: str) -> str:
    """Two programs are the same candidate when their ASTs are (formatting and comments ignored)."""
    try:
        return ast.dump(ast.parse(program))
    except (SyntaxError, ValueError, RecursionError):
        return program.strip()


class _Question:
    """The work for one question; kept apart from :class:`Binder` so questions can run concurrently."""

    def __init__(self, binder: Binder, settings: AskSettings, table: pd.DataFrame | str, question: str,
                 title: str | None, question_id: str | None):
        from binder_py.prompting import task_defaults
        from binder_py.tables import load_table, prepare_table

        if not isinstance(question, str) or not question.strip():
            raise BinderError("the question is empty: ask something about the table")
        self.binder, self.settings = binder, settings
        self.question = question.strip()
        self.title = title
        self.tags = {"question_id": question_id} if question_id else {}
        if isinstance(table, pd.DataFrame):
            df = prepare_table(table)
        else:
            df = load_table(table)
        self.original_table = df
        self.defaults = task_defaults(settings.task)
        lowercase = self.defaults.lowercase_cells if settings.lowercase is None else settings.lowercase
        self.lowercase = lowercase
        self.table = lowercase_text_cells(df) if lowercase else df
        self.usage = Usage()
        self.plan: Any = None  # binder_py.language.plan.NeuralPlan of the question's neural calls
        self.warnings: list[str] = []
        self.timings: dict[str, float] = {}
        self.started = time.perf_counter()

    # --- settings that depend on the model -------------------------------------------------
    def _n(self, lm: LanguageModel) -> int:
        if self.settings.n is not None:
            return self.settings.n
        return LOCAL_DEFAULT_N if is_local_model(lm) else self.defaults.n

    def _shots(self, lm: LanguageModel) -> int:
        if self.settings.num_shots is not None:
            return self.settings.num_shots
        return LOCAL_DEFAULT_SHOTS if is_local_model(lm) else self.defaults.num_shots

    def _say(self, message: str) -> None:
        if self.binder.progress:
            print(f"binder-py: {message}", file=sys.stderr, flush=True)

    @property
    def yes_no(self) -> bool:
        from binder_py.normalize import is_yes_no_question

        return self.settings.task == "tabfact" or is_yes_no_question(self.question)

    # --- the pipeline -----------------------------------------------------------------
    def answer(self) -> Answer:
        if self.settings.mode == "e2e":
            return self._answer_e2e()
        lm = self.binder.lm
        t0 = time.perf_counter()
        prompt = self._build_prompt(lm)
        n = self._n(lm)
        self._say(f"writing {n} candidate program(s) with {lm.name} ({prompt.prompt_tokens} prompt tokens)")
        completion = self._complete(lm, prompt.text, n=n, purpose="parse", messages=prompt.messages)
        self.timings["parse"] = time.perf_counter() - t0
        from binder_py.prompting import extract_program

        candidates = self._group([(extract_program(c.text), c.mean_logprob) for c in completion.choices])
        if not any(c.program.strip() for c in candidates):
            raise BinderError(f"the model {lm.name} returned no usable program "
                              f"({len(completion.choices)} completion(s), all empty); try another model or "
                              "a larger n")
        t1 = time.perf_counter()
        self._run(candidates)
        repairs = self._repair(lm, prompt, candidates)
        candidates.extend(repairs)
        self.timings["execute"] = time.perf_counter() - t1
        if self.plan is not None:
            self.usage += self.plan.usage
            self.warnings.extend(self.plan.warnings)
        for candidate in candidates:
            if candidate.run is not None:
                self.usage += candidate.run.usage
                self.warnings.extend(candidate.run.warnings)
        prompt_info = {"exemplar_ids": list(prompt.exemplar_ids), "dropped_exemplars": list(prompt.dropped_exemplars),
                       "table_rows_shown": prompt.table_rows_shown, "table_rows_total": prompt.table_rows_total,
                       "prompt_tokens": prompt.prompt_tokens, "lowercased_table": self.lowercase}
        if prompt.dropped_exemplars or prompt.table_rows_shown < prompt.table_rows_total:
            self.warnings.append(f"the prompt was fitted to {lm.name}'s context: dropped "
                                 f"{len(prompt.dropped_exemplars)} exemplar(s), showed {prompt.table_rows_shown} "
                                 f"of {prompt.table_rows_total} rows")
        return self._vote(candidates, prompt_info)

    def _build_prompt(self, lm: LanguageModel) -> Any:
        from binder_py.prompting import build_parse_prompt

        context = lm.context_window or 4096
        try:
            return build_parse_prompt(
                self.settings.task, self.table, self.question, title=self.title, mode=self.settings.mode,
                table_style=self.settings.table_style, selection=self.settings.selection,
                num_shots=self._shots(lm), count_tokens=lm.count_tokens, context_window=context,
                max_output_tokens=self.settings.max_tokens or self.defaults.max_tokens, lowercase=self.lowercase)
        except LMContextTooLong as error:  # pragma: no cover - the builder counts first
            raise BinderError(str(error)) from error

    def _request(self, lm: LanguageModel, prompt: str, *, n: int, temperature: float | None = None,
                 messages: Sequence[tuple[str, str]] | None = None) -> LMRequest:
        from binder_py.prompting import parse_request

        return parse_request(prompt, task=self.settings.task, chat=is_chat_model(lm), n=n,
                             temperature=self.settings.temperature if temperature is None else temperature,
                             max_tokens=self.settings.max_tokens, seed=self.settings.seed,
                             logprobs=self.settings.vote == "probability", messages=messages)

    def _complete(self, lm: LanguageModel, prompt: str, *, n: int, purpose: str,
                  temperature: float | None = None, messages: Sequence[tuple[str, str]] | None = None) -> Any:
        request = self._request(lm, prompt, n=n, temperature=temperature, messages=messages)
        try:
            completion = lm.complete(request, purpose=purpose, tags=self.tags)
        except LMContextTooLong as error:
            raise BinderError(f"the prompt does not fit {lm.name}'s context ({error}); use a model with a "
                              "longer context, fewer shots (--shots) or a smaller table") from error
        self.usage += completion.usage
        return completion

    def _group(self, programs: Sequence[tuple[str, float | None]], origin: str = "sample",
               first_order: int = 0) -> list[Candidate]:
        """Identical programs become one candidate that keeps its count (and sample positions)."""
        groups: dict[str, Candidate] = {}
        logprobs: dict[str, list[float]] = {}
        for offset, (program, logprob) in enumerate(programs):
            identity = program_identity(program)
            if identity in groups:
                existing = groups[identity]
                groups[identity] = replace(existing, count=existing.count + 1,
                                           sample_orders=existing.sample_orders + (first_order + offset,))
            else:
                groups[identity] = Candidate(program=program, count=1, origin=origin,
                                             sample_orders=(first_order + offset,))
            if logprob is not None:
                logprobs.setdefault(identity, []).append(logprob)
        out = []
        for identity, candidate in groups.items():
            values = logprobs.get(identity)
            out.append(replace(candidate, mean_logprob=sum(values) / len(values) if values else None))
        return out

    def _run(self, candidates: list[Candidate]) -> None:
        from tqdm import tqdm

        from binder_py.language import execute

        allow_neural = self.settings.mode == "binder"
        neural = self.binder.neural if allow_neural and any(_mentions_neural(c.program) for c in candidates) else None
        sandbox = self.binder.sandbox
        if neural is not None and self.settings.plan_neural and self.settings.share_neural_cache:
            self._plan(neural, candidates)

        def run_one(candidate: Candidate) -> None:
            from binder_py.language import NeuralCache

            cache = self.binder.neural_cache if self.settings.share_neural_cache else NeuralCache()
            candidate.run = execute(candidate.program, self.table, neural=neural, sandbox=sandbox, title=self.title,
                                    cache=cache, allow_neural=allow_neural, prefetch=self.settings.prefetch)

        bar = tqdm(total=len(candidates), desc="running programs", unit="prog", file=sys.stderr,
                   disable=not self.binder.progress, leave=False)
        with ThreadPoolExecutor(max_workers=min(self.settings.concurrency, max(1, len(candidates)))) as pool:
            futures = [pool.submit(run_one, c) for c in candidates]
            for future in futures:
                future.result()
                bar.update(1)
        bar.close()

    def _plan(self, neural: Any, candidates: list[Candidate]) -> None:
        """Answer the candidates' predictable f_col calls into the shared cache, several
        questions per prompt, before they run (binder_py.language.plan)."""
        from binder_py.language.plan import plan_neural_calls, supports_planning

        if not supports_planning(neural):
            return
        t0 = time.perf_counter()
        plan = plan_neural_calls([c.program for c in candidates], self.table, neural, self.binder.neural_cache,
                                 title=self.title)
        self.timings["plan"] = self.timings.get("plan", 0.0) + time.perf_counter() - t0
        self.plan = plan if self.plan is None else self.plan.merged(plan)

    def _succeeded(self, candidate: Candidate) -> bool:
        from binder_py.normalize import normalize_answer

        return candidate.ok and not normalize_answer(candidate.value, yes_no=self.yes_no).is_empty

    def _repair(self, lm: LanguageModel, prompt: Any, candidates: list[Candidate]) -> list[Candidate]:
        """One repair round (execution-guided decoding) when too few samples succeeded."""
        n = sum(c.count for c in candidates)
        k = self.settings.repair_below if self.settings.repair_below is not None else max(1, math.ceil(n / 4))
        succeeded = sum(c.count for c in candidates if self._succeeded(c))
        if succeeded >= k or self.settings.repair_attempts <= 0:
            return []
        failing = sorted((c for c in candidates if not self._succeeded(c)), key=lambda c: -c.count)
        failing = failing[: self.settings.repair_attempts]
        if not failing:
            return []
        self._say(f"{succeeded} of {n} program(s) succeeded; repairing {len(failing)}")
        from binder_py.prompting import build_repair_prompt, extract_program

        index_of = {id(c): i for i, c in enumerate(candidates)}
        known = {program_identity(c.program) for c in candidates}
        repaired: list[Candidate] = []
        order = n
        chat = is_chat_model(lm) and prompt.messages
        for candidate in failing:
            message = _failure_message(candidate)
            try:
                text = build_repair_prompt(prompt, candidate.program, message, count_tokens=lm.count_tokens,
                                           context_window=lm.context_window or None,
                                           max_output_tokens=self.settings.max_tokens or self.defaults.max_tokens)
            except BinderError as error:
                self.warnings.append(f"repair skipped: {error}")
                continue
            # a chat model sees its own program as its turn and the error as the user's reply
            turns = prompt.messages + (("assistant", candidate.program), ("user", repair_request(message))) \
                if chat else None
            completion = self._complete(lm, text, n=1, purpose="repair", temperature=0.0, messages=turns)
            program = extract_program(completion.text)
            if not program.strip() or program_identity(program) in known:
                continue
            known.add(program_identity(program))
            new = Candidate(program=program, count=1, origin="repair", sample_orders=(order,),
                            mean_logprob=completion.choices[0].mean_logprob if completion.choices else None,
                            repaired_from=index_of[id(candidate)])
            order += 1
            repaired.append(new)
        if repaired:
            self._run(repaired)
        return repaired

    def _vote(self, candidates: list[Candidate], prompt_info: dict[str, Any]) -> Answer:
        from binder_py.normalize import key_text, normalize_answer
        from binder_py.vote import TABFACT_ANSWER_WEIGHTS, VoteCandidate, vote

        strategy = self.settings.vote or {"wikitq": "program_biased", "tabfact": "answer_biased"}.get(
            self.settings.task, "majority")
        weights = self.settings.answer_weights
        if strategy == "answer_biased" and weights is None:
            weights = TABFACT_ANSWER_WEIGHTS
        voters = [VoteCandidate(value=c.value, count=c.count, mean_logprob=c.mean_logprob,
                                has_neural_calls=c.has_neural_calls, order=min(c.sample_orders), ok=c.ok,
                                sample_orders=c.sample_orders) for c in candidates]
        result = vote(voters, strategy=strategy, yes_no=self.yes_no, answer_weights=weights,
                      neural_weight=self.settings.neural_weight, drop_empty=self.settings.drop_empty,
                      drop_failed=self.settings.drop_failed)
        shares = {key_text(s.key): s for s in result.distribution}
        for candidate in candidates:
            normalized = normalize_answer(candidate.value, yes_no=self.yes_no)
            candidate.answer_key = key_text(normalized.key)
            voted = (candidate.ok or not self.settings.drop_failed) and (
                not normalized.is_empty or not self.settings.drop_empty)
            candidate.voted = bool(voted and candidate.answer_key in shares)
            if candidate.voted:
                share = shares[candidate.answer_key]
                candidate.votes = share.weight * candidate.count / max(1, share.count)
        value = result.value
        if self.settings.task == "tabfact" and value is not None:
            value = key_text(result.key) in ("yes", "true")
        self.timings["total"] = time.perf_counter() - self.started
        lm = self.binder.lm
        neural_name = None
        if self.settings.mode == "binder" and self.binder._neural_backend is not None:
            neural_name = getattr(self.binder._neural_backend, "name", None)
        if not result.distribution:
            self.warnings.append("no candidate produced an answer: every program failed or returned nothing "
                                 "(see the candidates' errors)")
        return Answer(question=self.question, value=value, confidence=result.confidence, candidates=candidates,
                      distribution=list(result.distribution), usage=self.usage, mode=self.settings.mode,
                      task=self.settings.task, title=self.title, table=self.original_table, prompt=prompt_info,
                      timings=dict(self.timings), warnings=_unique(self.warnings), lm=lm.name, neural=neural_name,
                      plan=self.plan)

    # --- end-to-end baseline ------------------------------------------------------------
    def _answer_e2e(self) -> Answer:
        from binder_py.prompting import build_e2e_prompt, e2e_request, parse_e2e_answer

        lm = self.binder.lm
        t0 = time.perf_counter()
        prompt = build_e2e_prompt(self.settings.task, self.table, self.question, self.title,
                                  table_style=self.settings.table_style, selection=self.settings.selection,
                                  num_shots=self._shots(lm), count_tokens=lm.count_tokens,
                                  context_window=lm.context_window or 4096, lowercase=self.lowercase)
        request = e2e_request(prompt.text, chat=is_chat_model(lm), seed=self.settings.seed)
        if self.settings.n is not None and self.settings.n > 1:
            request = replace(request, n=self.settings.n,
                              temperature=self.settings.temperature if self.settings.temperature is not None
                              else self.defaults.temperature)
        completion = lm.complete(request, purpose="e2e", tags=self.tags)
        self.usage += completion.usage
        self.timings["parse"] = time.perf_counter() - t0
        answers = [(parse_e2e_answer(c.text), c.mean_logprob) for c in completion.choices]
        candidates: list[Candidate] = []
        for order, (value, logprob) in enumerate(answers):
            candidates.append(Candidate(program=f"A: {completion.choices[order].text.strip()}", count=1,
                                        origin="e2e", sample_orders=(order,), mean_logprob=logprob,
                                        direct_value=value))
        info = {"exemplar_ids": list(prompt.exemplar_ids), "dropped_exemplars": list(prompt.dropped_exemplars),
                "table_rows_shown": prompt.table_rows_shown, "table_rows_total": prompt.table_rows_total,
                "prompt_tokens": prompt.prompt_tokens, "lowercased_table": self.lowercase}
        return self._vote(candidates, info)


def _mentions_neural(program: str) -> bool:
    from binder_py.language import parse_program

    try:
        return bool(parse_program(program).sites)
    except Exception:  # noqa: BLE001 - a broken program fails later, with its own message
        return False


def repair_request(error_message: str) -> str:
    """What a chat model is told after its program failed (the error, then a request for a fix)."""
    return (f"That program failed: {error_message}\nWrite a corrected program for the same question and table: "
            "only the code, no explanation, no blank lines.")


def _failure_message(candidate: Candidate) -> str:
    error = candidate.error
    if error is not None:
        where = f" (line {error.line})" if getattr(error, "line", None) else ""
        return f"{error.kind} error{where}: {error.message}"
    return "the program returned an empty result (None, an empty table or an empty list)"


def _unique(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))


__all__ = ["AskSettings", "Binder", "MODES", "VOTE_STRATEGIES", "lowercase_text_cells", "program_identity",
           "shared_sandbox"]
