"""Yes/no neural answers row by row, read three ways, with the row turn both ways, side by side in one run.

    python -m binder_py.bench.yes_no_cells --lm local:1.5b [--lm local:0.5b ...] [--json OUT]

Asks labelled cells through :class:`~binder_py.neural.rowwise.RowwiseNeuralBackend`, one ``f_col``
call per question (cells lower-cased as the pipeline sends them):

* ``yes_no_cells.jsonl``: 108 cells, 18 yes/no questions × 6 cells, 53 of them yes; general knowledge,
  none from a bench or evaluation table;
* ``yes_no_cells_more.jsonl``: 217 more, written later the same way: 101 whose calls hold one or two
  yes rows among five to seven (twenty-fourth session), 98 in 16 calls of 6–7 (twenty-sixth session,
  written before any run), and 18 of longer text (reviews, match notes, flight statuses).

Each file is read at ``p > 0.5``; centred on the call's rows as the pipeline reads them
(:mod:`binder_py.neural.yes_scores`); and calibrated (``p`` above the question's content-free
prior). Then again centred with the question after the cells (``question_first=False``; the
pipeline's turn puts it first), for the side-by-side comparison of the two turns. The model's
response cache is a fresh file per model, so the later passes re-read the rows' responses and the
calibrated one sends only the content-free requests. Prints, per model and file, the accuracy of
each pass, how many cells each answered yes, and the questions where the centred reading differs
from the plain one.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from collections import defaultdict
from importlib import resources
from pathlib import Path
from typing import Any

from binder_py.lm import lm_from_spec
from binder_py.neural.requests import NeuralRequest, row_key
from binder_py.neural.rowwise import RowwiseNeuralBackend
from binder_py.neural.yes_scores import decide_call

DATA = ("yes_no_cells.jsonl", "yes_no_cells_more.jsonl")


def load_cells(name: str = DATA[0]) -> dict[tuple[str, str], list[tuple[str, str]]]:
    """(question, column) → [(cell, gold yes/no)] of the file ``name``, in file order."""
    text = resources.files("binder_py.bench").joinpath("data", name).read_text(encoding="utf-8")
    groups: dict[tuple[str, str], list[tuple[str, str]]] = defaultdict(list)
    for line in text.splitlines():
        if line.strip():
            item = json.loads(line)
            groups[(item["question"], item["column"])].append((item["value"].lower(), item["answer"]))
    return dict(groups)


def score(backend: RowwiseNeuralBackend, groups: dict[tuple[str, str], list[tuple[str, str]]], *,
          centred: bool = False) -> dict[str, Any]:
    """Right answers of ``backend`` on every question's cells: read at 0.5 (a scored answer's own text),
    or ``centred`` on the call's rows as the pipeline reads them."""
    right = yes = total = 0
    by_question: dict[str, int] = {}
    for (question, column), cells in groups.items():
        rows = [[value] for value, _ in cells]
        answers = backend.answer(NeuralRequest("col", question, [column], rows, [row_key(r) for r in rows])).answers
        answers = decide_call(answers)[0] if centred else {key: str(value) for key, value in answers.items()}
        got = sum(answers[row_key([value])] == gold for value, gold in cells)
        by_question[question] = got
        right += got
        yes += sum(answers[row_key([value])] == "yes" for value, _ in cells)
        total += len(cells)
    return {"right": right, "total": total, "accuracy": round(right / total, 3), "answered_yes": yes,
            "right_by_question": by_question}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m binder_py.bench.yes_no_cells", description=__doc__)
    parser.add_argument("--lm", action="append", help="an embedded model (local, local:0.5b); repeatable")
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args(argv)
    results = []
    for spec in args.lm or ["local"]:
        with tempfile.TemporaryDirectory() as cache_dir:
            model = lm_from_spec(spec, cache=True, cache_path=Path(cache_dir) / "lm.sqlite", log=False)
            for name in DATA:
                groups = load_cells(name)
                plain = score(RowwiseNeuralBackend(model, calibrate=False), groups)
                centred = score(RowwiseNeuralBackend(model, calibrate=False), groups, centred=True)
                calibrated = score(RowwiseNeuralBackend(model, calibrate=True), groups)
                question_last = score(RowwiseNeuralBackend(model, question_first=False), groups, centred=True)
                differ = {q: (plain["right_by_question"][q], centred["right_by_question"][q])
                          for q in plain["right_by_question"]
                          if plain["right_by_question"][q] != centred["right_by_question"][q]}
                result = {"lm": model.name, "cells": name, "at 0.5": plain,
                          "centred on the call (the pipeline's reading)": centred, "calibrated": calibrated,
                          "centred, the question after the cells": question_last,
                          "questions that differ (at 0.5, centred: right of the call's cells)": differ}
                results.append(result)
                print(json.dumps(result, indent=1))
    if args.json:
        args.json.write_text(json.dumps(results, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
