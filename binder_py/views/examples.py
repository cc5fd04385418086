"""The notebook view's example answers, each from a real run of the pipeline: a scripted model
writes the programs and answers the neural calls (its prompts and outputs are real), the
sandbox runs them, the vote decides.

:data:`EXAMPLE_VIEWS` names each view; the browser test and the screenshot command read it, so
a new view is one entry here.
"""

from __future__ import annotations

import io
import re
from collections.abc import Callable

import pandas as pd

from binder_py.answer import Answer
from binder_py.ask import Binder
from binder_py.lm import LMRequest, ScriptedLM
from binder_py.neural.answer_types import question_of

SHIRTS_CSV = """shirt,made in,price,sales
organic cotton tee,Mexico,25,1200
polyester performance tee,China,18,3400
pure cotton oxford shirt,United States,45,2100
wrinkle-free dress shirt (formaldehyde resin finish),Canada,39,2600
linen summer shirt,Portugal,52,800
100% cotton flannel shirt,Canada,35,1900
bamboo viscose polo,Vietnam,30,1500
acrylic knit shirt,United States,28,2900
"""
QUESTION = "which is the best-selling shirt made in North America and with no chemicals?"
NEURAL_PROGRAM = ('df = df[f_col("Is it in North America?", ["made in"]) & f_col("No chemicals?", ["shirt"])]\n'
                  'df.sort_values("sales", ascending=False)["shirt"].iloc[0]')
PLAIN_PROGRAM = 'df.sort_values("sales", ascending=False)["shirt"].iloc[0]'
DEAREST_PROGRAM = 'df.sort_values("price", ascending=False)["shirt"].iloc[0]'
BROKEN_PROGRAMS = ('df[df["origin"] == "north america"].sort_values("sales")["shirt"].iloc[-1]',
                   'df[df["chemicals"] == "no"]["shirt"].iloc[0]')

#: what the scripted model answers for each neural question, from the row's first cell
NEURAL_ANSWERS: dict[str, Callable[[str], str]] = {
    "Is it in North America?": lambda cell: "yes" if cell.lower() in {"mexico", "united states", "canada"} else "no",
    "No chemicals?": lambda cell: "no" if any(w in cell.lower() for w in ("formaldehyde", "polyester", "viscose",
                                                                          "acrylic")) else "yes",
}


def shirts() -> pd.DataFrame:
    return pd.read_csv(io.StringIO(SHIRTS_CSV))


def answer_neural_prompt(prompt: str) -> str:
    """The scripted model's reply to a one-question row-by-row prompt (the QA-map format)."""
    block = prompt.rsplit("Give a database as shown below:", 1)[1]
    question = question_of(re.search(r'Q: Answer question "(.*)" row by row\.', block).group(1))  # type: ignore[union-attr]
    rows = block.split("/*", 1)[1].split("*/", 1)[0].strip().splitlines()[1:]
    lines = []
    for line in rows:
        cells = line.split("\t")
        lines.append("\t".join(cells + [NEURAL_ANSWERS[question](cells[1])]))
    return "\n".join(lines) + "\n*/"


def scripted_model(programs: list[str], repairs: list[str] | None = None) -> ScriptedLM:
    """A model that samples ``programs``, answers repair requests from ``repairs`` in turn, and
    answers neural calls with :data:`NEURAL_ANSWERS`."""
    pending = list(repairs or [])

    def respond(request: LMRequest, purpose: str) -> str | list[str]:
        if purpose == "neural":
            return answer_neural_prompt(request.prompt or request.messages[-1][1])  # type: ignore[index]
        if purpose == "repair":
            return pending.pop(0) if pending else ""
        return programs

    return ScriptedLM(respond, name="scripted-demo")


def ask(programs: list[str], repairs: list[str] | None = None) -> Answer:
    # no question-level plan: every call then carries its own prompt and output (the view's provenance)
    binder = Binder(lm=scripted_model(programs, repairs), task="analyst", n=len(programs), plan_neural=False,
                    prefetch=False, progress=False)
    try:
        return binder.ask(shirts(), QUESTION, title="shirts")
    finally:
        binder.close()


def answer_view() -> Answer:
    """Three of four programs agree, through two neural calls."""
    return ask([NEURAL_PROGRAM] * 3 + [PLAIN_PROGRAM])


def no_answer_view() -> Answer:
    """Every program fails, the repairs too."""
    return ask([BROKEN_PROGRAMS[0]] * 3 + [BROKEN_PROGRAMS[1]],
               repairs=['df[df["made in"] == "north america"]["shirt"].iloc[0]', 'df["no chemicals"].max()'])


def tie_view() -> Answer:
    """Three programs, three answers, one vote each."""
    return ask([NEURAL_PROGRAM, PLAIN_PROGRAM, DEAREST_PROGRAM])


#: view name -> how to build its answer (several tables: to come with multi-table questions)
EXAMPLE_VIEWS: dict[str, Callable[[], Answer]] = {
    "answer": answer_view,
    "no-answer": no_answer_view,
    "tie": tie_view,
}
