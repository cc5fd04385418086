"""Progress: messages on stderr in a terminal, tqdm's notebook bar over the stages in Jupyter,
one bar over the questions in ask_many, and nothing at all with progress=False."""

from __future__ import annotations

import io

import pytest
import tqdm.auto
import tqdm.std

import binder_py.ask
from binder_py.ask import Binder
from binder_py.pipeline import STAGES
from binder_py.views.examples import NEURAL_PROGRAM, PLAIN_PROGRAM, QUESTION, scripted_model, shirts

STAGE_NAMES = [stage.__name__ for stage in STAGES]


class RecordingBar(tqdm.std.tqdm):
    """A tqdm that stands in for the notebook bar: it records what it was told to show."""

    made: list[RecordingBar] = []

    def __init__(self, *args, **kwargs):
        kwargs["file"] = io.StringIO()
        self.postfixes: list[str] = []
        self.enabled = not kwargs.get("disable", False)  # close() sets .disable, so remember it here
        super().__init__(*args, **kwargs)
        RecordingBar.made.append(self)

    def set_postfix_str(self, s="", refresh=True):
        self.postfixes.append(s)
        super().set_postfix_str(s, refresh)


@pytest.fixture
def notebook(monkeypatch):
    RecordingBar.made = []
    monkeypatch.setattr(binder_py.ask, "in_notebook", lambda: True)
    monkeypatch.setattr(tqdm.auto, "tqdm", RecordingBar)
    return RecordingBar.made


def binder(**kwargs) -> Binder:
    return Binder(lm=scripted_model([NEURAL_PROGRAM] * 3 + [PLAIN_PROGRAM]), task="analyst", n=4,
                  plan_neural=False, **kwargs)


def test_a_terminal_gets_messages_on_stderr_by_default(capsys):
    answer = binder().ask(shirts(), QUESTION)
    err = capsys.readouterr().err
    assert answer.value == "pure cotton oxford shirt"
    assert "binder-py: writing 4 candidate program(s) with scripted-demo" in err


def test_a_log_keeps_the_run_bar_on_a_line_of_its_own(capsys):
    """stderr to a file (``2>&1 | tee log``): the bar over the programs was cleared by carriage
    returns without a line end, so the next line printed (the CLI's ``Question: ...``) followed it
    on the same line of the log."""
    binder().ask(shirts(), QUESTION)
    err = capsys.readouterr().err
    last = err.rsplit("running programs", 1)[1]
    assert "\n" in last and last.split("\n", 1)[0].rstrip().endswith("]")  # the bar's final state, ended
    assert err.endswith("\n")


@pytest.mark.parametrize("where", ["binder", "ask"])
def test_progress_false_shows_nothing(capsys, notebook, where):
    b = binder(progress=False) if where == "binder" else binder()
    b.ask(shirts(), QUESTION, **({"progress": False} if where == "ask" else {}))
    assert capsys.readouterr().err == ""
    assert not any(bar.enabled for bar in notebook)


def test_a_notebook_gets_one_bar_over_the_stages_and_no_stderr_messages(capsys, notebook):
    answer = binder().ask(shirts(), QUESTION)
    assert capsys.readouterr().err == ""
    assert len(notebook) == 1
    bar = notebook[0]
    assert bar.n == bar.total == len(STAGE_NAMES) and bar.enabled
    assert "writing 4 program(s) with scripted-demo" in bar.postfixes
    assert "running 2 program(s)" in bar.postfixes  # 4 samples, 2 distinct programs
    assert set(STAGE_NAMES) <= set(answer.timings)  # wrapped stages keep their names


def test_ask_many_shows_one_bar_over_the_questions(capsys, notebook):
    answers = binder().ask_many([(shirts(), QUESTION), (shirts(), QUESTION)], concurrency=1)
    assert [a.value for a in answers] == ["pure cotton oxford shirt"] * 2
    enabled = [bar for bar in notebook if bar.enabled]
    assert len(enabled) == 1 and enabled[0].desc == "questions" and enabled[0].n == 2
    assert "binder-py:" not in capsys.readouterr().err
