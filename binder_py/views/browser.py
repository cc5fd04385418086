"""A headless Chromium from the distribution's packages: render an HTML file's DOM, or a screenshot."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

#: the names Chromium goes by (Debian: chromium; Ubuntu's snap: chromium-browser; Google's build)
BROWSER_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
#: flags for a headless run as root in a container, without a GPU
HEADLESS_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--mute-audio",
                  "--no-first-run", "--disable-dev-shm-usage")


class BrowserMissing(RuntimeError):
    """No Chromium on this machine."""


def find_browser() -> str:
    """The path of an installed Chromium, else :class:`BrowserMissing` saying how to install one."""
    for name in BROWSER_NAMES:
        path = shutil.which(name)
        if path:
            return path
    raise BrowserMissing(f"no headless browser found (looked for {', '.join(BROWSER_NAMES)}); "
                         "install one with: apt-get install -y chromium")


def page(fragment: str, title: str = "binder-py answer") -> str:
    """A whole HTML document around a view's fragment (what a notebook cell would hold)."""
    return (f'<!doctype html><html><head><meta charset="utf-8"><title>{title}</title></head>'
            f'<body style="margin:16px;background:#fff">{fragment}</body></html>')


def _run(args: list[str], timeout: float) -> str:
    with tempfile.TemporaryDirectory(prefix="binder-chromium-") as profile:
        done = subprocess.run([find_browser(), *HEADLESS_FLAGS, f"--user-data-dir={profile}", *args],
                              capture_output=True, text=True, timeout=timeout, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"chromium exited with {done.returncode}: {done.stderr.strip()[-500:]}")
    return done.stdout


def dump_dom(path: Path, timeout: float = 60.0) -> str:
    """The DOM of the HTML file at ``path`` after Chromium has parsed and laid it out."""
    return _run(["--dump-dom", path.resolve().as_uri()], timeout)


def screenshot(path: Path, png: Path, width: int = 1000, height: int = 1200, timeout: float = 60.0) -> Path:
    """A PNG of the HTML file at ``path`` in a ``width`` × ``height`` window."""
    _run([f"--screenshot={png.resolve()}", f"--window-size={width},{height}", path.resolve().as_uri()], timeout)
    if not png.exists():
        raise RuntimeError(f"chromium wrote no screenshot at {png}")
    return png
