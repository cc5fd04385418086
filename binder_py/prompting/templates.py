"""Prompt templates: loading ``prompts/templates/*.txt`` and filling them safely.

Template files
--------------
* Lines starting with ``##`` are comments (documentation for whoever edits the
  file) and are removed when the file is loaded.
* One final newline (the one editors add) is removed; everything else is kept
  exactly, so the file shows the layout the model sees.
* ``{name}`` is a placeholder; ``{{`` and ``}}`` stand for literal braces.

Safe filling
------------
:func:`fill` scans **only the template** for placeholders and substitutes the
values in one pass. Values are inserted verbatim and never scanned again, so
table cells, titles, questions and programs may contain ``{``, ``}``, ``{0}``,
``{name}`` or backslashes without effect (``str.format`` would break on them).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import lru_cache
from importlib import resources

from binder_py.errors import BinderError

__all__ = ["load_template", "fill", "template_text"]

_PLACEHOLDER = re.compile(r"\{\{|\}\}|\{([A-Za-z_][A-Za-z0-9_]*)\}")


def template_text(raw: str) -> str:
    """Strip ``##`` comment lines and one final newline from a template file's text."""
    lines = [line for line in raw.splitlines(keepends=True) if not line.startswith("##")]
    text = "".join(lines)
    if text.endswith("\n"):
        text = text[:-1]
    return text


@lru_cache(maxsize=None)
def load_template(name: str) -> str:
    """The template ``prompts/templates/<name>.txt`` (``name`` without ``.txt``), comments removed."""
    path = resources.files("prompts") / "templates" / f"{name}.txt"
    try:
        raw = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        known = sorted(p.name[:-4] for p in (resources.files("prompts") / "templates").iterdir()
                       if p.name.endswith(".txt"))
        raise BinderError(f"prompt template {name!r} not found in prompts/templates/ "
                          f"(known: {', '.join(known) or 'none'}); reinstall binder-py") from None
    return template_text(raw)


def fill(template: str, values: Mapping[str, object]) -> str:
    """Substitute ``{name}`` placeholders of ``template`` with ``str(values[name])``.

    Values are never interpreted (braces in them are kept as they are). A
    placeholder without a value is a :class:`BinderError`.
    """

    def replace(match: re.Match[str]) -> str:
        token = match.group(0)
        if token == "{{":
            return "{"
        if token == "}}":
            return "}"
        name = match.group(1)
        if name not in values:
            raise BinderError(f"prompt template placeholder {{{name}}} has no value "
                              f"(given: {', '.join(sorted(values)) or 'none'})")
        return str(values[name])

    return _PLACEHOLDER.sub(replace, template)
