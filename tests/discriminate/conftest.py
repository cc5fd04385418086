"""A scripted model that answers multiple-choice prompts with label log-probabilities."""

from __future__ import annotations

import math
import re
from collections.abc import Callable

import pytest

from binder_py.lm.scripted import ScriptedLM
from binder_py.lm.types import Capabilities, Choice, LMRequest

LOGPROBS = Capabilities(api="chat", logprobs=True, grammar=True)


def request_body(request: LMRequest) -> str:
    return request.prompt if request.prompt is not None else "\n".join(text for _, text in request.messages)


def shown_options(request: LMRequest) -> dict[str, str]:
    """Label -> option text, as listed in a choice prompt (multi-line options joined by newlines)."""
    body = request_body(request).split("\nOptions:\n", 1)[1].split("\n\nAnswer with one letter", 1)[0]
    options: dict[str, list[str]] = {}
    current = None
    for line in body.splitlines():
        match = re.match(r"^([A-Z])\.(?: (.*))?$", line)
        if match:
            current = match.group(1)
            options[current] = [match.group(2)] if match.group(2) is not None else []
        elif current is not None:
            options[current].append(line[4:])
    return {label: "\n".join(lines) for label, lines in options.items()}


def judged_option(request: LMRequest) -> str | None:
    """The one option of a pointwise (yes/no) prompt, else None."""
    body = request_body(request)
    if "\nProgram:\n" not in body:
        return None
    return body.split("\nProgram:\n", 1)[1].rsplit("\n\nDoes this program answer", 1)[0]


def preference_lm(prefer: Callable[[str], float], *, capabilities: Capabilities = LOGPROBS,
                  noise_tokens: tuple[tuple[str, float], ...] = (("The", -6.0),)) -> ScriptedLM:
    """A model that likes options by ``prefer(option text)``.

    Multiple choice: label log-probabilities are softmax(prefer) over the shown options.
    Pointwise: P(yes) = sigmoid(prefer(option)), the rest on "No".
    """

    def respond(request: LMRequest, purpose: str) -> Choice:
        judged = judged_option(request)
        if judged is not None:
            z = prefer(judged)
            yes = -math.log1p(math.exp(-z))
            no = -math.log1p(math.exp(z))
            alternatives = tuple(sorted((("Yes", yes), ("No", no)) + noise_tokens, key=lambda t: -t[1]))
            return Choice(text=alternatives[0][0], top_logprobs=(alternatives[: request.top_logprobs or 3],))
        options = shown_options(request)
        raw = {label: prefer(text) for label, text in options.items()}
        top = max(raw.values())
        norm = top + math.log(sum(math.exp(v - top) for v in raw.values()))
        alternatives = sorted(((label, v - norm) for label, v in raw.items()), key=lambda t: -t[1])
        alternatives = (alternatives + list(noise_tokens))[: request.top_logprobs or len(alternatives)]
        best = alternatives[0][0]
        return Choice(text=best, finish_reason="length", token_logprobs=((best, alternatives[0][1]),),
                      top_logprobs=(tuple(alternatives),))

    return ScriptedLM(respond, capabilities=capabilities)


@pytest.fixture
def make_preference_lm():
    return preference_lm
