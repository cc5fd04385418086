"""Text from programs, tables and models, made safe to print on a terminal.

A program's answer, what it prints, its error messages, table cells and model answers are
untrusted text. Printed as they are, their control characters drive the terminal: ``"41\\r42"``
shows as ``42``, ``"\\x1b[2J"`` clears the screen, ``"\\x1b]52;c;..."`` writes the clipboard of
many terminal emulators, and bidirectional overrides (U+202E) show text reversed. So the
commands that print such text (``exec``, ``ask``) write every control character as an escape:
C0 controls except newline and tab, DEL, C1 controls and the bidirectional formatting characters.
"""

from __future__ import annotations

import re

from binder_py.controls import C1_AND_BIDI

#: C0 controls but tab and newline; DEL, the C1 controls and the bidirectional controls (C1_AND_BIDI)
_SHOWN = re.compile(f"[\x00-\x08\x0b-\x1f{C1_AND_BIDI}]")
#: in JSON text (``json.dumps`` already escapes the C0 controls): the rest, only ever inside strings
_JSON_SHOWN = re.compile(f"[{C1_AND_BIDI}]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def terminal_text(text: object) -> str:
    """``str(text)`` with every control character written as a Python-style escape (``\\x1b``)."""
    return _SHOWN.sub(_escape, str(text))


def terminal_json(text: str) -> str:
    """JSON text (from ``json.dumps``) with DEL, C1 and bidirectional controls written as ``\\uXXXX``
    escapes: the same JSON value, nothing left for a terminal to act on."""
    return _JSON_SHOWN.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
