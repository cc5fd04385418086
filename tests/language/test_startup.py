"""Start-up of the exec path: the command line's early sandbox, lazy package attributes."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from binder_py.cli.early import OFF_SWITCH, command_of, start_sandbox_early


def test_the_command_is_read_only_from_the_binder_py_script():
    assert command_of(["/usr/bin/binder-py", "exec", "t.csv", "p.py"]) == "exec"
    assert command_of(["binder-py", "--help"]) is None
    assert command_of(["python", "exec"]) is None
    assert command_of([]) is None


def test_only_commands_that_run_programs_start_a_sandbox(monkeypatch):
    assert not start_sandbox_early(["binder-py", "data", "list"])
    monkeypatch.setenv(OFF_SWITCH, "0")
    assert not start_sandbox_early(["binder-py", "exec", "t.csv", "p.py"])


def test_a_sandbox_adopts_the_zygote_started_early():
    from sandbox import Sandbox
    from sandbox.launch import prestart, take_prestarted

    preload = ("binder_py.language.worker.bridge",)
    prestart(1, preload)
    early = take_prestarted(1, preload)
    assert early is not None and take_prestarted(1, preload) is None  # taken once
    early.close()
    prestart(1, preload)
    with Sandbox(pool_size=1, preload=preload) as box:
        assert take_prestarted(1, preload) is None  # the sandbox took it
        outcome = box.run("1 + 1")
        assert outcome.ok and outcome.value == 2


def test_importing_binder_py_loads_neither_the_pipeline_nor_the_lm_clients():
    code = ("import sys, binder_py\n"
            "print(sorted(m for m in ('binder_py.ask', 'binder_py.pipeline', 'binder_py.lm.client',"
            " 'binder_py.language.execute') if m in sys.modules))")
    root = str(Path(__file__).resolve().parents[2])  # this checkout's binder_py
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env=dict(os.environ, PYTHONPATH=root))
    assert out.stdout.strip() == "[]"


def test_an_exported_function_wins_over_its_module_of_the_same_name():
    import binder_py.language.execute  # noqa: F401 - the submodule first
    from binder_py.language import execute, rewrite

    assert callable(execute) and execute.__name__ == "execute"
    assert callable(rewrite) and rewrite.__name__ == "rewrite"



def test_a_command_that_ends_at_once_leaves_no_traceback_from_its_early_sandbox():
    """``binder-py exec --help`` (or a missing table) starts the zygote early and exits before the
    zygote has imported pandas; the parent removes the zygote's directory on the way out, and the
    zygote, still sharing the command's stderr, printed a FileNotFoundError traceback from chdir()
    or bind() a moment later. Here the directory goes at once, as the exit does at worst."""
    root = str(Path(__file__).resolve().parents[2])
    code = ("import shutil\n"
            "from sandbox.launch import Zygote\n"
            "zygote = Zygote(1, ())\n"
            "shutil.rmtree(zygote.dir)\n")  # then the exit closes its stdin without waiting for it
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=dict(os.environ, PYTHONPATH=root), timeout=120)
    # the zygote shares the pipes, so this returns when it has gone too
    assert out.returncode == 0
    assert out.stderr == "", out.stderr
