"""The one escaper for text read from run directories that goes into a report or a plot.

A recorded value (a model name, a mode, a subset, a run's folder name) may come from someone
else. :func:`markdown_text` makes it plain text in a markdown table cell that is also safe as
HTML: newlines become spaces (no new rows, headings or paragraphs), ``&``, ``<`` and ``>``
become entities (no raw HTML), and every markdown-significant character is backslash-escaped
(no links, images, emphasis, code spans or cell breaks). :func:`plot_label` makes a value plain
text for matplotlib (``$`` would start mathtext).
"""

from __future__ import annotations

import re

from binder_py.controls import C1_AND_BIDI

__all__ = ["markdown_text", "plot_label"]

_HTML = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}
_MARKDOWN = re.compile(r"([\\`*_\[\]|~])")
_NEWLINES = re.compile(r"[\r\n\u2028\u2029\x0b\x0c\x85]+")
#: the C0 controls but tab and the newlines above, and DEL, C1 and the bidirectional controls
_CONTROL = re.compile(f"[\x00-\x08\x0e-\x1f{C1_AND_BIDI}]")


def markdown_text(value: object) -> str:
    """``str(value)`` as literal text inside a markdown table cell (and inside HTML)."""
    text = _CONTROL.sub("", _NEWLINES.sub(" ", str(value)))
    text = _MARKDOWN.sub(r"\\\1", text)
    return "".join(_HTML.get(ch, ch) for ch in text)


#: a plot label is cut to this many characters (a label of a million characters is laid out in full)
MAX_PLOT_LABEL = 80


def plot_label(value: object) -> str:
    """``str(value)`` as literal text in a matplotlib label (``$`` escaped, one line, at most
    :data:`MAX_PLOT_LABEL` characters and an ellipsis)."""
    text = _NEWLINES.sub(" ", str(value))
    if len(text) > MAX_PLOT_LABEL:
        text = text[:MAX_PLOT_LABEL - 1] + "…"
    return text.replace("$", r"\$")
