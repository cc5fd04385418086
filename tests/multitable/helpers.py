"""Helpers of the several-table tests: a neural backend function and a scripted model."""

from __future__ import annotations

from binder_py.lm import ScriptedLM


EU = {"germany": "yes", "united kingdom": "no", "sweden": "yes"}


def in_eu(request):
    """A neural backend function: kind col answers the EU question for each distinct row."""
    if request.kind == "col":
        return {key: EU.get(key.lower(), "unknown") for key in request.keys}
    return "Nordic Foods"


def scripted(programs: list[str], seen: list | None = None) -> ScriptedLM:
    """A model that writes ``programs`` and records each program-writing request in ``seen``."""
    def respond(request, purpose):
        if seen is not None:
            seen.append((purpose, request))
        return programs
    return ScriptedLM(respond)
