"""Sampling settings per task (Binder, appendix A.2, table 8) and the language-model requests built from them.

=========  ===========  =====  ==========  ======  =========  ==============
task       temperature  n      max_tokens  stop    num_shots  question label
=========  ===========  =====  ==========  ======  =========  ==============
wikitq     0.4          20     512         "\\n\\n"  14         ``Q:``
tabfact    0.6          50     512         "\\n\\n"  14         ``Statement:``
analyst    0.4          20     512         "\\n\\n"  14         ``Q:``
=========  ===========  =====  ==========  ======  =========  ==============

``top_p`` is 1.0 everywhere. ``analyst`` (not in the paper) uses the WikiTQ
settings, except that its tables are shown with their original letter case
(``lowercase_cells=False``; the paper lower-cases cells for WikiTQ and TabFact). End-to-end answers (mode ``e2e``) use one greedy sample
(:data:`E2E_DEFAULTS`). A task without an entry gets the ``wikitq`` settings.
"""

from __future__ import annotations

from collections.abc import Sequence

from dataclasses import dataclass, replace

from binder_py.lm.types import LMRequest

__all__ = ["TaskDefaults", "TASK_DEFAULTS", "E2E_DEFAULTS", "task_defaults", "MARKERS", "marker_for",
           "parse_request", "e2e_request"]

#: The line after which the model writes its program, per mode.
MARKERS = {"binder": "NeuralPandas:", "python": "Pandas:"}


def marker_for(mode: str) -> str:
    from binder_py.errors import BinderError

    try:
        return MARKERS[mode]
    except KeyError:
        raise BinderError(f"mode {mode!r} does not write programs; program modes are: "
                          f"{', '.join(MARKERS)} (mode 'e2e' uses build_e2e_prompt)") from None


@dataclass(frozen=True)
class TaskDefaults:
    task: str
    temperature: float = 0.4
    top_p: float = 1.0
    n: int = 20
    max_tokens: int = 512
    stop: tuple[str, ...] = ("\n\n",)
    num_shots: int = 14
    question_label: str = "Q:"
    #: what the end-to-end prompt asks for after ``A:``
    e2e_answer_format: str = "the answer; separate several values with \" | \""
    #: what the end-to-end prompt asks the model to do
    e2e_task: str = "answer the question"
    #: lower-case text cells of tables in prompts (paper format); the analyst
    #: prompt promises strings "exactly as entered", so it shows them as they are
    lowercase_cells: bool = True


TASK_DEFAULTS: dict[str, TaskDefaults] = {
    "wikitq": TaskDefaults("wikitq"),
    "tabfact": TaskDefaults("tabfact", temperature=0.6, n=50, question_label="Statement:",
                            e2e_answer_format="true if the statement is supported by the table, else false",
                            e2e_task="verify the statement"),
    "analyst": TaskDefaults("analyst", lowercase_cells=False),
}

#: End-to-end answering: one greedy answer.
E2E_DEFAULTS = {"temperature": 0.0, "n": 1, "max_tokens": 256, "stop": ("\n\n",)}


def task_defaults(task: str) -> TaskDefaults:
    """The settings of ``task`` (unknown tasks get the ``wikitq`` settings under their own name)."""
    return TASK_DEFAULTS.get(task) or replace(TASK_DEFAULTS["wikitq"], task=task)


#: where a chat model's program ends: the closing code fence (and the prose after it is never generated)
CHAT_STOP: tuple[str, ...] = ("\n```\n",)


def parse_request(prompt: str, *, task: str, chat: bool = False, n: int | None = None,
                  temperature: float | None = None, max_tokens: int | None = None,
                  seed: int | None = None, logprobs: bool = False,
                  messages: Sequence[tuple[str, str]] | None = None) -> LMRequest:
    """The request that samples candidate programs for a parse prompt.

    Completion models stop at the first blank line (``"\\n\\n"``). A chat model
    gets the prompt as one user message and stops at the end of its first code
    fence (:data:`CHAT_STOP`, ``"\\n```\\n"``: an opening fence carries a language
    tag, so only a closing one matches), not at a blank line (it may write a
    sentence and a blank line before the fence);
    :func:`binder_py.prompting.chat.extract_program` cuts its answer. ``messages``
    (:attr:`BuiltPrompt.messages`) gives a chat model the exemplars as turns instead of
    one user message holding ``prompt``.
    """
    d = task_defaults(task)
    kwargs = dict(n=d.n if n is None else n, temperature=d.temperature if temperature is None else temperature,
                  top_p=d.top_p, stop=CHAT_STOP if chat else d.stop, max_tokens=d.max_tokens if max_tokens is None else max_tokens,
                  seed=seed, logprobs=logprobs)
    if chat:
        return LMRequest(messages=tuple(messages) if messages else (("user", prompt),), **kwargs)
    return LMRequest(prompt=prompt, **kwargs)


def e2e_request(prompt: str, *, chat: bool = False, seed: int | None = None) -> LMRequest:
    """The request for an end-to-end answer prompt."""
    if chat:
        return LMRequest(messages=(("user", prompt),), seed=seed, **{**E2E_DEFAULTS, "stop": ()})
    return LMRequest(prompt=prompt, seed=seed, **E2E_DEFAULTS)
