"""The notebook views, rendered by a real browser (headless Chromium from the distribution).

Every view in :data:`binder_py.views.examples.EXAMPLE_VIEWS` is built by a real pipeline run,
rendered into one page (a ``<section>`` per view) and loaded once in Chromium; each view's DOM
is then checked: generic checks derived from its answer (the vote bar has a segment per
answer, the winning program and its neural calls, the LM-made columns, the failing programs
with their errors), plus the lines of :data:`EXPECTED`. A new view is one entry in
EXAMPLE_VIEWS (and, if it has something particular to show, one line in EXPECTED).
"""

from __future__ import annotations

import html
from pathlib import Path

import pandas as pd
import pytest

from binder_py.answer import Answer, lm_made_columns
from binder_py.notebook import answer_html
from binder_py.views.browser import BrowserMissing, dump_dom, find_browser, page
from binder_py.views.examples import EXAMPLE_VIEWS, NEURAL_PROGRAM, TABLES_PROGRAM, orders_and_customers
from tests.notebook.dom import Element, parse_dom

pytestmark = pytest.mark.slow

#: view -> (tag, class, text the element holds) that must be in its DOM
EXPECTED: dict[str, list[tuple[str, str, str]]] = {
    "answer": [("div", "value", "pure cotton oxford shirt"), ("div", "confidence", "75%"),
               ("td", "lm", "model: lm:scripted-demo"), ("td", "lm", "cached: no")],
    "no-answer": [("div", "value", "no answer"), ("div", "error", "KeyError: 'origin'"),
                  ("ul", "next", "Name the columns as the table does"), ("div", "counts", "2 written by repair")],
    "tie": [("div", "tie", "Tie: 3 answers got the same vote weight"), ("div", "confidence", "33%")],
    "tables": [("div", "value", "Acme GmbH"), ("div", "confidence", "75%"), ("div", "question", "tables: orders, customers"),
               ("div", "call", "on customers.country"), ("div", "call", "on orders.product")],
}


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Answer, Element]]:
    try:
        find_browser()
    except BrowserMissing as missing:
        pytest.skip(str(missing))
    answers = {name: build() for name, build in EXAMPLE_VIEWS.items()}
    body = "".join(f'<section id="view-{name}">{answer_html(a)}</section>' for name, a in answers.items())
    path = Path(tmp_path_factory.mktemp("views")) / "views.html"
    path.write_text(page(body), encoding="utf-8")
    dom = parse_dom(dump_dom(path))
    return {name: (answer, dom.section(f"view-{name}")) for name, answer in answers.items()}


def has(view: Element, tag: str, css_class: str | None, text: str) -> bool:
    return any(text in element.text for element in view.find_all(tag, css_class))


@pytest.mark.parametrize("name", list(EXAMPLE_VIEWS))
def test_the_vote_bar_has_a_segment_per_answer(rendered, name):
    answer, view = rendered[name]
    bars = view.find_all("div", "votebar")
    if not answer.distribution:
        assert bars == []
        return
    assert len(bars) == 1
    segments = bars[0].find_all("span")
    assert len(segments) == len(answer.distribution)
    widths = [float(s.attrs["style"].split("width:")[1].split("%")[0]) for s in segments]
    assert sum(widths) == pytest.approx(100, abs=0.1)
    for share in answer.distribution:
        assert has(view, "table", "votes", str(share.display))


@pytest.mark.parametrize("name", list(EXAMPLE_VIEWS))
def test_the_program_and_its_neural_calls_or_the_errors_are_shown(rendered, name):
    answer, view = rendered[name]
    programs = " ".join(p.text for p in view.find_all("pre", "program"))
    winner = answer.winner
    if winner is not None:
        assert winner.program in programs
        marked = [m.text for pre in view.find_all("pre", "program") for m in pre.find_all("mark")]
        assert marked == [html.unescape(c.text) for c in winner.neural_calls if c.order >= 0] or not winner.neural_calls
        return
    failing = sorted(answer.candidates, key=lambda c: -c.count)[:3]
    errors = " ".join(e.text for e in view.find_all("div", "error"))
    for candidate in failing:
        assert candidate.program in programs
        assert candidate.error is not None and candidate.error.message in errors


def table_views(answer: Answer, view: Element) -> list[tuple[pd.DataFrame, Element]]:
    """Each of the answer's tables with the element that shows it (named tables by their name)."""
    boxes = view.find_all("div", "table")
    if not answer.tables:
        assert len(boxes) == 1
        return [(answer.table, boxes[0])]
    assert [box.attrs.get("data-table") for box in boxes] == list(answer.tables)
    return list(zip(answer.tables.values(), boxes))


@pytest.mark.parametrize("name", list(EXAMPLE_VIEWS))
def test_lm_made_columns_sit_beside_their_table_with_provenance(rendered, name):
    answer, view = rendered[name]
    winner = answer.winner
    calls = [c for c in winner.neural_calls if c.kind == "col"] if winner is not None else []
    for table, box in table_views(answer, view):
        headers = [th.text for th in box.find_all("th", "lm")]
        made = lm_made_columns(table, calls)
        if made is None:
            assert headers == []
            continue
        assert headers == [c for c in made.columns if c not in table.columns]
        cells = box.find_all("td", "lm")
        assert len(cells) == len(headers) * len(made)
        assert all(cell.find_all("details") for cell in cells if cell.text.strip() != "·")


@pytest.mark.parametrize("name", list(EXAMPLE_VIEWS))
def test_expected_content(rendered, name):
    _, view = rendered[name]
    missing = [line for line in EXPECTED.get(name, []) if not has(view, *line)]
    assert not missing, f"{name}: not in the DOM: {missing}"


def test_the_answer_view_marks_both_neural_calls(rendered):
    _, view = rendered["answer"]
    marks = [m.text for m in view.find_all("pre", "program")[0].find_all("mark")]
    assert marks == ['f_col("Is it in North America?", ["made in"])', 'f_col("No chemicals?", ["shirt"])']
    assert NEURAL_PROGRAM.splitlines()[1] in view.find_all("pre", "program")[0].text


def test_the_tables_view_shows_each_table_by_name_with_its_own_lm_made_column(rendered):
    answer, view = rendered["tables"]
    assert TABLES_PROGRAM.splitlines()[2] in view.find_all("pre", "program")[0].text
    marks = [m.text for m in view.find_all("pre", "program")[0].find_all("mark")]
    assert marks == ['f_col("Is the country in the EU?", customers["country"])',
                     'f_col("Is it perishable food?", orders["product"])']
    given = orders_and_customers()
    boxes = {box.attrs["data-table"]: box for box in view.find_all("div", "table")}
    assert list(boxes) == ["orders", "customers"]
    for name, question in (("orders", "Is it perishable food?"), ("customers", "Is the country in the EU?")):
        box = boxes[name]
        assert [code.text for code in box.find_all("code", "name")] == [name]
        assert [th.text for th in box.find_all("th", "lm")] == [question]
        assert [th.text for th in box.find_all("th") if "lm" not in th.classes] == list(given[name].columns)
        cells = box.find_all("td", "lm")
        assert len(cells) == len(given[name])
        assert all(f"{question}" in cell.text and "model: lm:scripted-demo" in cell.text for cell in cells)
    eu = [cell.find_all("summary")[0].text for cell in boxes["customers"].find_all("td", "lm")]
    assert eu == ["yes", "no", "yes", "no", "yes"]  # Germany, United Kingdom, Sweden, Canada, France
