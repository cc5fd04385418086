"""A server named without ``?ctx=`` has no known context window; the prompt is fitted to an assumed
4,096 tokens. Refusing a wide table then said "the context window is 4096 tokens; use a model with a
longer context window", though the model's window may be far larger: the message (and the warning
of a prompt cut to fit) now says the window was assumed and how to give the real one."""

from __future__ import annotations

import pandas as pd
import pytest

from binder_py.ask import Binder
from binder_py.errors import BinderError
from binder_py.lm import ScriptedLM


def wide_table(columns: int) -> pd.DataFrame:
    return pd.DataFrame({f"measure {i}": [i, i + 1] for i in range(columns)})


def test_a_prompt_refused_for_an_assumed_window_says_how_to_give_the_real_one():
    unknown = ScriptedLM(lambda request, purpose: "df.shape[1]", context_window=0)
    with pytest.raises(BinderError) as refused:
        Binder(lm=unknown, n=1, progress=False, cache=False).ask(wide_table(1500), "how many columns?")
    assert "4,096 tokens were assumed" in str(refused.value) and "?ctx=N" in str(refused.value)
    known = ScriptedLM(lambda request, purpose: "df.shape[1]", context_window=4096)
    with pytest.raises(BinderError) as refused:
        Binder(lm=known, n=1, progress=False, cache=False).ask(wide_table(1500), "how many columns?")
    assert "assumed" not in str(refused.value)


def test_a_prompt_cut_for_an_assumed_window_says_so_and_a_known_window_runs_whole():
    table = pd.DataFrame({"city": [f"city number {i} of a long list" for i in range(400)], "year": range(400)})
    unknown = ScriptedLM(lambda request, purpose: "df.shape[0]", context_window=0)
    answer = Binder(lm=unknown, n=1, progress=False, cache=False).ask(table, "how many cities?")
    assert answer.value == 400
    assert any(w.startswith("the prompt was fitted to scripted's context") and "4,096 tokens were assumed" in w
               for w in answer.warnings), answer.warnings
    given = ScriptedLM(lambda request, purpose: "df.shape[0]", context_window=32_768)
    answer = Binder(lm=given, n=1, progress=False, cache=False).ask(table, "how many cities?")
    assert not any("fitted to" in w for w in answer.warnings), answer.warnings
