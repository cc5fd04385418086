"""The characters binder-py never shows as they are (in a terminal, a markdown report): text from files and
models is untrusted, and these move the cursor, clear the screen, set the clipboard or reorder the text."""

from __future__ import annotations

__all__ = ["C1_AND_BIDI"]

#: DEL, the C1 controls (U+009B is a terminal's CSI) and the bidirectional marks, embeddings, overrides and
#: isolates (U+061C, U+200E/F, U+202A-E, U+2066-9), as the body of a regular-expression character class
C1_AND_BIDI = "\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
