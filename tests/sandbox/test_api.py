"""Contract behaviour: callbacks, worker_globals, errors, concurrency, lifecycle."""
import ast
import os
import signal
import threading
import time

import pandas as pd
import pytest

from sandbox import Limits, Outcome, Sandbox, SandboxUnavailable, run_program
from sandbox_testutil import wait_settled, zygote_children


def test_syntax_error_has_line(sb):
    o = sb.run("x = 1\ny = (\n")
    assert not o.ok and o.error.kind == "syntax" and o.error.line == 2


def test_runtime_error_has_line_and_type(sb):
    o = sb.run("a = 1\nb = 0\nc = a / b\n")
    assert o.error.kind == "runtime" and o.error.line == 3
    assert o.error.exception_type == "ZeroDivisionError"


def test_runtime_error_line_inside_function(sb):
    o = sb.run("def f(x):\n    return x['missing']\nf({})")
    assert o.error.line == 2 and o.error.exception_type == "KeyError"


def test_policy_error_has_line(sb):
    o = sb.run("x = 1\nimport os\n")
    assert o.error.kind == "policy" and o.error.line == 2 and "os" in o.error.message


def test_agg_allowlist_message(sb, df):
    o = sb.run('df.agg("sort_values")', variables={"df": df})
    assert o.error.kind == "policy" and "sort_values" in o.error.message and "allowed:" in o.error.message


def test_ast_module_program_keeps_lines(sb):
    tree = ast.parse("x = 1\n\n\ny = undefined_name\n")
    o = sb.run(tree, filename="<lm-program>")
    assert o.error.kind == "runtime" and o.error.line == 4
    assert isinstance(tree.body[0], ast.Assign)  # the caller's AST is not modified


def test_callbacks_roundtrip_plain_data(sb, df):
    seen = {}

    def f_col(question, column):
        seen["types"] = (type(question), type(column))
        return column.str.len()

    o = sb.run('df["n"] = f_col("how long?", df["b"])\ndf["n"].sum()', variables={"df": df},
               callbacks={"f_col": f_col})
    assert o.ok and o.value == 3
    assert seen["types"] == (str, pd.Series)
    assert o.timings.callback_ms > 0


def test_callback_error_is_raised_in_program(sb):
    def bad():
        raise ValueError("model unavailable")

    o = sb.run("try:\n    bad()\nexcept CallbackError as e:\n    r = str(e)\nr", callbacks={"bad": bad})
    assert o.ok and "model unavailable" in o.value
    o = sb.run("bad()", callbacks={"bad": bad})
    assert o.error.kind == "runtime" and o.error.exception_type == "CallbackError"


def test_callback_wait_does_not_count_against_wall(sb):
    o = sb.run("slow()\nslow()\n1", callbacks={"slow": lambda: time.sleep(0.4)},
               limits=Limits(wall_seconds=0.6, cpu_seconds=1))
    assert o.ok, o.error
    assert o.timings.callback_ms >= 800


def test_worker_globals(sb):
    o = sb.run("answer_base + ask(2)", worker_globals="escape_helpers:add_constant",
               callbacks={"ask": lambda x: x})
    assert o.ok and o.value == 42


def test_concurrent_runs_with_callbacks(sb, df):
    results = {}

    def go(i):
        results[i] = sb.run(f"double({i}) + len(df)", variables={"df": df},
                            callbacks={"double": lambda x: 2 * x})

    threads = [threading.Thread(target=go, args=(i,)) for i in range(20)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(results[i].ok and results[i].value == 2 * i + 3 for i in range(20)), results
    assert wait_settled(sb) <= sb.pool_size


def test_stdout_captured(sb):
    o = sb.run('print("a", 1)\nprint("b", end="")\n"x"')
    assert o.ok and o.stdout == "a 1\nb" and not o.stdout_truncated


def test_none_when_no_answer(sb):
    o = sb.run("x = 1")
    assert o.ok and o.value is None


def test_timings_present(sb):
    o = sb.run("sum(range(1000))")
    assert o.value == 499500 and o.timings.total_ms >= o.timings.run_ms >= 0
    assert o.timings.compile_ms > 0


def test_zygote_restarts_after_death():
    with Sandbox(Limits(wall_seconds=5), pool_size=1) as box:
        assert box.run("1").value == 1
        zpid = box.zygote_pid()
        os.kill(zpid, signal.SIGKILL)
        time.sleep(0.1)
        o = box.run("2")
        assert o.ok and o.value == 2
        assert box.zygote_pid() != zpid


def test_close_leaves_no_processes():
    box = Sandbox(pool_size=2)
    assert box.run("1").value == 1
    zpid = box.zygote_pid()
    assert wait_settled(box) == 2
    workers = zygote_children(zpid)
    box.close()
    for pid in [zpid] + workers:
        try:
            with open(f"/proc/{pid}/stat") as fh:
                state = fh.read().rsplit(")", 1)[1].split()[0]
            assert state == "Z", f"process {pid} still running"
        except FileNotFoundError:
            pass
    with pytest.raises(SandboxUnavailable):
        box.run("1")


def test_a_killed_parent_leaves_no_zygote_directory():
    # the parent made the zygote's directory (its socket's home); killed, it cannot remove it, so
    # the zygote does when it sees its stdin close
    import subprocess
    import sys

    code = ("from sandbox import Sandbox\nbox = Sandbox(pool_size=1)\nassert box.run('1').value == 1\n"
            "print(box._zygote.dir, flush=True)\nimport time\ntime.sleep(60)")
    parent = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True,
                              cwd=os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    directory = parent.stdout.readline().strip()
    assert directory and os.path.isdir(directory)
    parent.kill()
    parent.wait()
    deadline = time.monotonic() + 10
    while os.path.exists(directory) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not os.path.exists(directory)


def test_unsafe_inprocess_mode(df):
    box = Sandbox(mode="unsafe-inprocess")
    o = box.run('df.loc[0, "a"] = 5\nprint("hi")\nf(df["a"].sum())', variables={"df": df},
                callbacks={"f": lambda v: v + 1})
    assert o.ok and o.value == 11 and o.stdout == "hi\n"
    assert df.loc[0, "a"] == 1
    assert box.run("import os").error.kind == "policy"
    assert box.run('df.eval("1")', variables={"df": df}).error.kind == "policy"
    box.close()


def test_bad_mode():
    with pytest.raises(ValueError):
        Sandbox(mode="yolo")


def test_default_sandbox_run_program():
    o = run_program("21 * 2")
    assert isinstance(o, Outcome) and o.value == 42


def test_a_parent_gone_before_ready_leaves_no_traceback_and_no_directory(tmp_path):
    """The parent closed the zygote's stdout before it said READY (``binder-py eval`` killed in its
    first seconds): the zygote cleans up and leaves quietly, without a BrokenPipeError traceback."""
    import json
    import subprocess
    import sys

    import sandbox.launch as launch

    workdir = tmp_path / "zygote"
    workdir.mkdir(mode=0o700)
    proc = subprocess.Popen([sys.executable, "-I", "-c", launch._BOOT], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=workdir)
    proc.stdout.close()  # the reader goes away before READY
    cfg = {"sys_path": [launch._PACKAGE_ROOT, *sys.path], "socket": str(workdir / "zygote.sock"),
           "workdir": str(workdir), "pool_size": 1, "preload": [], "prefault": False}
    proc.stdin.write((json.dumps(cfg) + "\n").encode())
    proc.stdin.flush()
    try:
        proc.wait(timeout=120)
    finally:
        proc.stdin.close()
        if proc.poll() is None:
            proc.kill()
    stderr = proc.stderr.read().decode()
    assert "Traceback" not in stderr and "BrokenPipeError" not in stderr, stderr
    assert not workdir.exists()


def test_no_secret_of_the_parents_environment_reaches_the_zygote(monkeypatch, df):
    """A memory bug in a worker could read what the worker holds; an API key is not among it."""
    from sandbox import Sandbox
    from sandbox.launch import worker_environment

    monkeypatch.setenv("OPENAI_API_KEY", "sk-parent-secret-123")
    monkeypatch.setenv("SOME_SERVICE_TOKEN", "tok-parent-secret-456")
    monkeypatch.setenv("LC_ALL", "C.UTF-8")
    env = worker_environment(dict(os.environ))
    assert "OPENAI_API_KEY" not in env and "SOME_SERVICE_TOKEN" not in env
    assert env["LC_ALL"] == "C.UTF-8" and env["OMP_NUM_THREADS"] == "1"
    with Sandbox(pool_size=1) as box:
        assert box.run('df["a"].sum()', variables={"df": df}).ok
        with open(f"/proc/{box._zygote.proc.pid}/environ", "rb") as handle:
            seen = handle.read()
    assert b"sk-parent-secret-123" not in seen and b"tok-parent-secret-456" not in seen
    assert b"LC_ALL=C.UTF-8" in seen
