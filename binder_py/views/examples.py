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
    "Is the country in the EU?": lambda cell: "yes" if cell.lower() in {"germany", "sweden", "france"} else "no",
    "Is it perishable food?": lambda cell: "yes" if any(w in cell.lower() for w in ("fresh", "strawberries",
                                                                                   "cheese")) else "no",
}

#: the several-tables view: two named tables, a join, and a neural call on each table
ORDERS_CSV = """order_id,customer_id,product,amount
101,1,fresh salmon,420
102,2,office chairs,1300
103,1,basmati rice,95
104,3,strawberries,310
105,4,steel bolts,870
106,2,goat cheese,260
107,3,printer paper,140
108,5,fresh basil,55
"""
CUSTOMERS_CSV = """customer_id,name,country
1,Acme GmbH,Germany
2,Blue Sky Ltd,United Kingdom
3,Nordic Foods AB,Sweden
4,Maple Leaf Inc,Canada
5,Le Petit Marché,France
"""
TABLES_QUESTION = "which customer in the EU spent the most on perishable food?"
TABLES_PROGRAM = ('eu = customers[f_col("Is the country in the EU?", customers["country"])]\n'
                  'food = orders[f_col("Is it perishable food?", orders["product"])]\n'
                  'food.merge(eu, on="customer_id").groupby("name")["amount"].sum().idxmax()')
#: a join without the neural calls: the biggest spender overall
TABLES_PLAIN_PROGRAM = 'orders.merge(customers, on="customer_id").groupby("name")["amount"].sum().idxmax()'


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


def orders_and_customers() -> dict[str, pd.DataFrame]:
    return {"orders": pd.read_csv(io.StringIO(ORDERS_CSV)), "customers": pd.read_csv(io.StringIO(CUSTOMERS_CSV))}


def ask(programs: list[str], repairs: list[str] | None = None, *,
        tables: pd.DataFrame | dict[str, pd.DataFrame] | None = None, question: str = QUESTION) -> Answer:
    """One question through the pipeline with :func:`scripted_model` (default: the shirts table
    and :data:`QUESTION`; ``tables`` a mapping asks over several named tables)."""
    # no question-level plan: every call then carries its own prompt and output (the view's provenance)
    binder = Binder(lm=scripted_model(programs, repairs), task="analyst", n=len(programs), plan_neural=False,
                    prefetch=False, progress=False)
    try:
        return binder.ask(shirts() if tables is None else tables, question,
                          title=None if isinstance(tables, dict) else "shirts")
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


def tables_view() -> Answer:
    """Two named tables: three of four programs filter each table with a neural call and join
    them; the fourth joins without the calls."""
    return ask([TABLES_PROGRAM] * 3 + [TABLES_PLAIN_PROGRAM], tables=orders_and_customers(), question=TABLES_QUESTION)


#: view name -> how to build its answer
EXAMPLE_VIEWS: dict[str, Callable[[], Answer]] = {
    "answer": answer_view,
    "no-answer": no_answer_view,
    "tie": tie_view,
    "tables": tables_view,
}
