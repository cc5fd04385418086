"""The language-model requests of the parsing stage, built from a task's profile
(:mod:`binder_py.tasks`). End-to-end answers (mode ``e2e``) use one greedy sample
(:data:`E2E_DEFAULTS`).
"""

from __future__ import annotations

from collections.abc import Sequence


from binder_py.lm.types import LMRequest
from binder_py.tasks import task_profile

__all__ = ["E2E_DEFAULTS", "MARKERS", "marker_for", "parse_request", "e2e_request"]

#: The line after which the model writes its program, per mode.
MARKERS = {"binder": "NeuralPandas:", "python": "Pandas:"}


def marker_for(mode: str) -> str:
    from binder_py.errors import BinderError

    try:
        return MARKERS[mode]
    except KeyError:
        raise BinderError(f"mode {mode!r} does not write programs; program modes are: "
                          f"{', '.join(MARKERS)} (mode 'e2e' uses build_e2e_prompt)") from None


#: End-to-end answering: one greedy answer.
E2E_DEFAULTS = {"temperature": 0.0, "n": 1, "max_tokens": 256, "stop": ("\n\n",)}


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
    d = task_profile(task)
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
