"""The repair prompt: one more try after a program failed (the idea of execution-guided decoding).

The original prompt is continued with the failing program, its error as
Python comments and the marker line again, so the model writes a corrected
program right away (template ``prompts/templates/repair.txt``). The text has
no blank line, so the usual stop sequence (``"\\n\\n"``) still ends the answer.
"""

from __future__ import annotations

from binder_py.errors import BinderError
from binder_py.prompting.builder import BuiltPrompt, TokenCounter
from binder_py.prompting.defaults import MARKERS
from binder_py.prompting.templates import fill, load_template

__all__ = ["build_repair_prompt", "error_comment"]

DEFAULT_MAX_ERROR_CHARS = 600


def error_comment(error_message: str, max_chars: int = DEFAULT_MAX_ERROR_CHARS) -> str:
    """The error as ``# ``-comment lines without blank lines; long messages keep their start and end."""
    text = error_message.strip() or "(no error message)"
    if len(text) > max_chars:
        half = max(1, max_chars // 2)
        text = text[:half].rstrip() + "\n…\n" + text[-half:].lstrip()
    lines = [line.rstrip() for line in text.replace("\r", "").split("\n") if line.strip()]
    return "\n".join("# " + line for line in lines)


def _program_lines(program: str) -> str:
    return "\n".join(line.rstrip() for line in program.replace("\r", "").split("\n") if line.strip())


def build_repair_prompt(base: BuiltPrompt | str, failed_program: str, error_message: str, *,
                        marker: str | None = None, max_error_chars: int = DEFAULT_MAX_ERROR_CHARS,
                        count_tokens: TokenCounter | None = None, context_window: int | None = None,
                        max_output_tokens: int | None = None) -> str:
    """The original prompt + the failing program + its error + a request for a corrected program.

    ``marker`` defaults to ``base.marker`` (a :class:`BuiltPrompt`) or is read
    from the end of a plain prompt text. With ``count_tokens`` and
    ``context_window`` the result is checked against the context (reserving
    ``max_output_tokens``, default the base's or 512): the error is shortened
    first, then a :class:`BinderError` says it does not fit.
    """
    text = base.text if isinstance(base, BuiltPrompt) else base
    if marker is None:
        if isinstance(base, BuiltPrompt):
            marker = base.marker
        else:
            last = text.rstrip("\n").rsplit("\n", 1)[-1].strip()
            marker = last if last in MARKERS.values() else MARKERS["binder"]
    if not text.endswith("\n"):
        text += "\n"
    if max_output_tokens is None:
        max_output_tokens = base.max_output_tokens if isinstance(base, BuiltPrompt) else 512
    program = _program_lines(failed_program) or "# (the model wrote no program)"

    def render(limit: int) -> str:
        return fill(load_template("repair"), {"prompt": text, "program": program,
                                              "error": error_comment(error_message, limit), "marker": marker}) + "\n"

    prompt = render(max_error_chars)
    if count_tokens is None or context_window is None:
        return prompt
    budget = context_window - max_output_tokens
    if count_tokens(prompt) <= budget:
        return prompt
    prompt = render(min(max_error_chars, 120))
    if count_tokens(prompt) <= budget:
        return prompt
    raise BinderError(f"the repair prompt needs {count_tokens(prompt)} tokens plus {max_output_tokens} for the "
                      f"answer but the context window is {context_window} tokens; build the original prompt with "
                      "a larger max_output_tokens reserve (room for the repair) or skip the repair round")
