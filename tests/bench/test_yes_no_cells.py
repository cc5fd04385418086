"""The labelled yes/no cells of ``python -m binder_py.bench.yes_no_cells``, and its scoring with a scripted model."""

import math

from binder_py.bench.yes_no_cells import DATA, load_cells, score
from binder_py.lm import ScriptedLM
from binder_py.lm.types import Capabilities, Choice
from binder_py.neural.rowwise import RowwiseNeuralBackend


def test_both_files_of_labelled_cells_load_with_yes_and_no_in_every_call():
    sizes = {name: sum(len(cells) for cells in load_cells(name).values()) for name in DATA}
    assert sizes == {"yes_no_cells.jsonl": 108, "yes_no_cells_more.jsonl": 217}
    for name in DATA:
        for (question, column), cells in load_cells(name).items():
            labels = {gold for _, gold in cells}
            assert labels <= {"yes", "no"} and question.strip() and column.strip()
            assert all(value == value.lower() for value, _ in cells)  # as the pipeline sends them


def test_score_counts_right_answers_with_the_question_last_or_first():
    gold = {value: answer for cells in load_cells().values() for value, answer in cells}

    def answer(request, purpose):  # a model that knows every cell, wherever the question is
        row = [line for line in request.messages[-1][1].splitlines() if not line.startswith("Question: ")]
        value = row[0].split(": ", 1)[1]
        p = 0.9 if gold[value] == "yes" else 0.1
        return Choice(text="yes", top_logprobs=((("yes", math.log(p)), ("no", math.log(1 - p))),))

    lm = ScriptedLM(answer, capabilities=Capabilities(api="chat", logprobs=True, grammar=True, embedded=True))
    for question_first in (True, False):
        result = score(RowwiseNeuralBackend(lm, question_first=question_first), load_cells(), centred=True)
        yes = sum(answer == "yes" for cells in load_cells().values() for _, answer in cells)
        assert result["right"] == result["total"] == 108 and result["answered_yes"] == yes
