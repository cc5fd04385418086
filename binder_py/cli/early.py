"""The command line's early start: ``binder-py exec`` starts its sandbox's zygote before the
command has imported pandas and binder-py, so that the two processes import at the same time
(a zygote takes about as long to start as the command takes to import).

Called at the top of ``binder_py/__init__.py``; acts only in the ``binder-py`` console
script, for the commands listed in :data:`SANDBOX_COMMANDS`. Imports the standard library,
:mod:`binder_py.language.worker` (constants) and :mod:`sandbox.launch` only.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

from binder_py.language.worker import DEFAULT_POOL_SIZE, PRELOAD

#: command → (pool size, preload) of the sandbox it will make (``exec``: the one ``execute`` makes)
SANDBOX_COMMANDS = {"exec": (DEFAULT_POOL_SIZE, PRELOAD)}
SCRIPT_NAME = "binder-py"
#: ``BINDER_EARLY_SANDBOX=0`` turns the early start off (for the cold-start benchmark's comparison)
OFF_SWITCH = "BINDER_EARLY_SANDBOX"


def command_of(argv: Sequence[str]) -> str | None:
    """The sub-command of a ``binder-py`` command line (None for another program, or none given)."""
    if not argv or os.path.basename(argv[0]) != SCRIPT_NAME:
        return None
    return next((arg for arg in argv[1:] if not arg.startswith("-")), None)


def start_sandbox_early(argv: Sequence[str] | None = None) -> bool:
    """Start the zygote the command of ``argv`` (default: ``sys.argv``) will use; True if started."""
    config = SANDBOX_COMMANDS.get(command_of(sys.argv if argv is None else argv) or "")
    if config is None or not hasattr(os, "fork") or os.environ.get(OFF_SWITCH) == "0":
        return False
    from sandbox.launch import prestart

    prestart(*config)
    return True
