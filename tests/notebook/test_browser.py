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

import pytest

from binder_py.answer import Answer
from binder_py.notebook import answer_html
from binder_py.views.browser import BrowserMissing, dump_dom, find_browser, page
from binder_py.views.examples import EXAMPLE_VIEWS, NEURAL_PROGRAM
from tests.notebook.dom import Element, parse_dom

pytestmark = pytest.mark.slow

#: view -> (tag, class, text the element holds) that must be in its DOM
EXPECTED: dict[str, list[tuple[str, str, str]]] = {
    "answer": [("div", "value", "pure cotton oxford shirt"), ("div", "confidence", "75%"),
               ("td", "lm", "model: lm:scripted-demo"), ("td", "lm", "cached: no")],
    "no-answer": [("div", "value", "no answer"), ("div", "error", "KeyError: 'origin'"),
                  ("ul", "next", "Name the columns as the table does"), ("div", "counts", "2 written by repair")],
    "tie": [("div", "tie", "Tie: 3 answers got the same vote weight"), ("div", "confidence", "33%")],
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


@pytest.mark.parametrize("name", list(EXAMPLE_VIEWS))
def test_lm_made_columns_sit_beside_the_table_with_provenance(rendered, name):
    answer, view = rendered[name]
    made = answer.winner_columns()
    headers = [th.text for th in view.find_all("th", "lm")]
    if made is None:
        assert headers == []
        return
    assert headers == [c for c in made.columns if c not in answer.table.columns]
    cells = view.find_all("td", "lm")
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
