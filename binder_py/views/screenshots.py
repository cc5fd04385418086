"""Regenerate the notebook view's screenshots in docs/NOTEBOOK.md::

    python -m binder_py.views.screenshots docs/img

Each example view (:data:`binder_py.views.examples.EXAMPLE_VIEWS`) is built by a real pipeline
run, rendered to HTML and photographed by headless Chromium as ``notebook-<view>.png``. The
answer view is shown with its first LM-made cell opened (what one click on it shows).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from binder_py.notebook import answer_html
from binder_py.views.browser import BrowserMissing, page, screenshot
from binder_py.views.examples import EXAMPLE_VIEWS

#: window height per view (pixels); the width is the same for all
HEIGHTS = {"answer": 780, "no-answer": 700, "tie": 860, "tables": 850}
WIDTH = 1000


def view_html(name: str) -> str:
    """The page of one example view, its first LM-made cell opened."""
    return page(answer_html(EXAMPLE_VIEWS[name]()).replace('<td class="lm"><details>', '<td class="lm"><details open>', 1))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m binder_py.views.screenshots", description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path, help="folder for the PNGs (docs/img)")
    parser.add_argument("--view", action="append", choices=sorted(EXAMPLE_VIEWS), help="only this view (repeatable)")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    try:
        with tempfile.TemporaryDirectory(prefix="binder-views-") as tmp:
            for name in args.view or list(EXAMPLE_VIEWS):
                source = Path(tmp) / f"{name}.html"
                source.write_text(view_html(name), encoding="utf-8")
                png = screenshot(source, args.out / f"notebook-{name}.png", WIDTH, HEIGHTS.get(name, 1100))
                print(f"{png} ({png.stat().st_size / 1024:.0f} KiB)")
    except BrowserMissing as error:
        print(f"screenshots: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
