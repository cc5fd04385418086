"""Evaluated prompt prefixes kept on disk, so that a new process does not evaluate them again.

Within one worker, llama.cpp keeps each prompt kind's prefix (the parse instruction and exemplars,
the row-by-row neural demonstrations) evaluated in a slot. A new process — every ``binder-py ask``,
every notebook kernel, every test run — started with empty slots and evaluated those ~1,000–1,700
tokens again before its first answer (the 1.5B model: 15–25 s on two cores). llama.cpp can save a
slot's state (its tokens and their key/value cache) to a file and restore it in milliseconds.

The rule, per chat request whose turns before the last (its *prefix*: system turn and exemplar
turns) number two or more:

* first time a worker sees a prefix: when ``KEY.state`` exists, it is restored into a slot and the
  request is sent to that slot (only its new tokens are evaluated);
* otherwise, when an earlier process saw the prefix (``KEY.seen``, left by a request of a process
  started before this one), the prefix alone is evaluated in a slot, that slot is saved as
  ``KEY.state`` (written under a temporary name, then renamed), and the request is sent to it; a
  prefix seen in no earlier process only leaves ``KEY.seen``, so a prefix that holds one question
  (a repair's turns) is saved only when that question is asked again in a later process;
* later requests with the same prefix find it the usual way (llama.cpp picks the slot whose tokens
  share the longest prefix).

``KEY`` is the SHA-256 of the prefix turns. The directory is per model file, runtime version and
context size (:func:`binder_py.lm.local.prefix_states_dir`); at most :data:`MAX_STATES` states are
kept, the least recently used removed first. A state holds the prefix alone (an empty user turn and
one generated token after it): the fixed instruction and exemplars, or, for a question asked again in
a later process, that question's turns before the last, as the response cache in the same folder
holds them. A state
that fails to restore (another runtime build, a truncated file) is deleted and the prefix is
evaluated as before: the files only ever save time.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

__all__ = ["MAX_STATES", "PrefixStates", "prefix_key"]

#: saved prefix states kept per directory (a 1.5B-model prefix of 1,500 tokens is about 43 MB)
MAX_STATES = 12
SEEN_MARGIN_SECONDS = 2.0
#: a temporary file this old is a leftover of a worker killed while it saved
STALE_TEMPORARY_SECONDS = 3600
STATE_SUFFIX = ".state"
SEEN_SUFFIX = ".seen"

#: ``slot_action(slot, "save" | "restore", filename) -> ok``
SlotAction = Callable[[int, str, str], bool]
#: ``warm(prefix_messages, slot) -> the runtime's timings`` (evaluates the prefix in that slot)
Warm = Callable[[list[dict[str, str]], int], dict[str, Any]]


def prefix_key(messages: Sequence[Sequence[str]]) -> str | None:
    """The key of a request's prefix (its turns before the last), or None when it has fewer than two."""
    if len(messages) < 3:
        return None
    prefix = [[str(role), str(content)] for role, content in messages[:-1]]
    return hashlib.sha256(json.dumps(prefix, ensure_ascii=False).encode("utf-8")).hexdigest()


class PrefixStates:
    """Which slot a request's prefix is in, restoring or saving its state on disk (module docstring)."""

    def __init__(self, directory: Path, slots: int, *, max_states: int = MAX_STATES):
        self.directory = directory
        self.slots = max(1, slots)
        self.max_states = max_states
        self._placed: dict[str, int] = {}  # prefix key -> slot, in this process
        self._next = 0  # the next slot to place a prefix in (round robin)
        # a prefix is saved when a process started before this one saw it (with a margin: file times come
        # from a coarser clock than time.time(), and a worker takes seconds to load its model anyway)
        self._started = time.time() - SEEN_MARGIN_SECONDS
        self.restored = self.saved = 0

    def place(self, messages: Sequence[Sequence[str]], slot_action: SlotAction,
              warm: Warm) -> tuple[int | None, dict[str, Any]]:
        """The slot to send the request to (None: let llama.cpp choose), and the timings of the prefix's
        own evaluation when it was evaluated here to be saved (else empty)."""
        key = prefix_key(messages)
        if key is None or key in self._placed:
            return None, {}
        state = self.directory / (key + STATE_SUFFIX)
        slot = self._next % self.slots
        if state.is_file():
            if slot_action(slot, "restore", state.name):
                print(f"restored the prefix {key[:12]} into slot {slot}", file=sys.stderr)
                self._claim(key, slot)
                os.utime(state)  # recently used
                self.restored += 1
                return slot, {}
            state.unlink(missing_ok=True)  # another build's or a broken file: evaluate as before
        seen = self.directory / (key + SEEN_SUFFIX)
        try:
            earlier = seen.stat().st_mtime < self._started
        except OSError:
            earlier = False
        if not earlier:
            try:
                seen.touch(exist_ok=True)
            except OSError:
                pass
            return None, {}
        prefix = [{"role": str(role), "content": str(content)} for role, content in messages[:-1]]
        timings = warm(prefix, slot)
        self._claim(key, slot)
        temporary = f"{key}.{os.getpid()}.tmp"
        if not slot_action(slot, "save", temporary):  # (a full disk: whatever was written goes)
            (self.directory / temporary).unlink(missing_ok=True)
        else:
            try:
                os.replace(self.directory / temporary, state)
                self.saved += 1
                print(f"saved the prefix {key[:12]} ({timings.get('prompt_n', '?')} tokens evaluated) for later "
                      f"processes", file=sys.stderr)
                self._prune()
            except OSError:
                (self.directory / temporary).unlink(missing_ok=True)
        return slot, timings

    def _claim(self, key: str, slot: int) -> None:
        for other in [k for k, s in self._placed.items() if s == slot]:
            del self._placed[other]  # that prefix is no longer in this slot
        self._placed[key] = slot
        self._next = slot + 1

    def _prune(self) -> None:
        """Keep the :attr:`max_states` most recently used states (and remove stale temporary files)."""
        try:
            states = sorted(self.directory.glob("*" + STATE_SUFFIX), key=lambda p: p.stat().st_mtime, reverse=True)
        except OSError:
            return
        for old in states[self.max_states:]:
            old.unlink(missing_ok=True)
            (self.directory / (old.name[: -len(STATE_SUFFIX)] + SEEN_SUFFIX)).unlink(missing_ok=True)
        stale = time.time() - STALE_TEMPORARY_SECONDS
        for leftover in self.directory.glob("*.tmp"):  # a worker killed while it saved
            try:
                if leftover.stat().st_mtime < stale:
                    leftover.unlink()
            except OSError:
                pass
