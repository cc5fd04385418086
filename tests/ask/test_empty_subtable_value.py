"""An f_val over a sub-table with no rows is not asked, not even by the plan that answers a
question's predictable calls up front (docs/LANGUAGE.md, "How a program runs")."""

from __future__ import annotations

import pandas as pd

from binder_py.ask import Binder
from binder_py.lm import ScriptedLM

FILMS = pd.DataFrame({"title": ["Inception", "Parasite", "Roma"], "year": [2010, 2019, 2018],
                      "director": ["Christopher Nolan", "Bong Joon-ho", "Alfonso Cuarón"]})
EMPTY = 'f_val("Which non-English film is the newest?", df[df["director"] == "nobody"][["title", "year"]])'


def test_a_planned_f_val_over_no_rows_is_not_asked_and_does_not_win():
    asked = []

    def respond(request, purpose):
        if purpose == "parse":
            return [EMPTY, EMPTY, 'df.sort_values("year")["title"].iloc[-1]']
        asked.append(request.prompt or request.messages[-1]["content"])
        return "Made-up film"
    answer = Binder(lm=ScriptedLM(respond), n=3, progress=False, cache=False).ask(
        FILMS, "which non-English film is the newest?")
    assert answer.value == "Parasite"
    assert not any("Which non-English film is the newest?" in prompt for prompt in asked)
