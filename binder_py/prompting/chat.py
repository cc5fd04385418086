"""Chat models and the program in a model's answer.

A chat model gets the same prompt text as one user message
(:func:`as_chat_messages`). Its answer, like a completion model's, goes
through :func:`extract_program`.
"""

from __future__ import annotations

import ast
import re
import textwrap

from binder_py.prompting.defaults import MARKERS
from binder_py.tasks import PROFILES

__all__ = ["as_chat_messages", "extract_program"]

_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[^\n]*\n(.*?)(?:```|\Z)", re.DOTALL)
_PYTHON_TAGS = {"python", "py", "python3", "pandas"}
_PROSE = re.compile(r"[A-Za-z]{2,}[,;:]? +[A-Za-z]{2,}")
_LEADING_LABELS = tuple(sorted({*MARKERS.values(), "Program:", "Binder:", *(p.question_label for p in PROFILES.values())}))


def as_chat_messages(prompt: str, *, system: str | None = None) -> tuple[tuple[str, str], ...]:
    """The prompt as chat messages: one user message (after an optional system message)."""
    messages = (("user", prompt),)
    return ((("system", system),) + messages) if system else messages


def _parses(code: str) -> bool:
    try:
        ast.parse(code)
    except (SyntaxError, ValueError):
        return False
    return True


def _looks_like_prose(line: str) -> bool:
    stripped = line.strip()
    return bool(stripped) and not stripped.startswith("#") and not _parses(stripped) and bool(_PROSE.search(stripped))


def extract_program(text: str) -> str:
    """The program in a model's answer.

    * **Fenced** (a chat model's markdown): the content of the first code
      fence tagged ``python``/``py``/``python3``/``pandas``, else of the first
      fence (an unclosed fence runs to the end); blank lines inside it are
      removed (programs have none).
    * **Unfenced**: leading blank lines are skipped and the text is cut at the
      first blank line (the stop sequence ``"\\n\\n"``).
    * Leading echoed lines ``NeuralPandas:``/``Pandas:``/``Program:``/``Q: ...``/
      ``Statement: ...`` are removed (code after a marker on the same line is kept).
    * The code is dedented. While it does not parse, a last (then a first) line
      that looks like prose (words, does not parse on its own) is removed.
      A program that still does not parse is returned as it is, so running
      it reports the syntax error.
    """
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    fences = list(_FENCE.finditer(text))
    if fences:
        chosen = next((m for m in fences if m.group(1).lower() in _PYTHON_TAGS), fences[0])
        lines = [line for line in chosen.group(2).split("\n") if line.strip()]
    else:
        lines = text.split("\n")
        lines = _drop_leading(lines)
        if "" in [line.strip() for line in lines]:
            lines = lines[:[line.strip() for line in lines].index("")]
    lines = _drop_leading(lines)
    code = textwrap.dedent("\n".join(line.rstrip() for line in lines)).strip("\n")
    lines = code.split("\n") if code else []
    while lines and not _parses("\n".join(lines)):
        if len(lines) > 1 and _looks_like_prose(lines[-1]):
            lines.pop()
        elif len(lines) > 1 and _looks_like_prose(lines[0]):
            lines.pop(0)
        else:
            break
    return textwrap.dedent("\n".join(lines)).strip("\n")


def _drop_leading(lines: list[str]) -> list[str]:
    """Skip leading blank lines and echoed labels/markers (keeping code after a marker on its line)."""
    lines = list(lines)
    while lines:
        first = lines[0].strip()
        if not first:
            lines.pop(0)
            continue
        label = next((m for m in _LEADING_LABELS if first.startswith(m)), None)
        if label is None:
            break
        rest = first[len(label):].strip()
        if label in MARKERS.values() or label in ("Program:", "Binder:"):
            lines[0:1] = [rest] if rest else []
        else:
            lines.pop(0)  # an echoed question line
    return lines
