"""Running the original evaluators, when they are on this machine (they are not vendored).

* ``official``: ppasupat/WikiTableQuestions ``evaluator.py`` under Python 2.7. Set ``WTQ_EVALUATOR`` to the
  file; Python 2.7 is found as ``$PYTHON2``, ``python2.7``/``python2`` on PATH, or pyenv's 2.7 install.
* ``binder``: xlang-ai/Binder's ``utils/evaluator.py`` (with ``utils/normalizer.py`` and ``utils/wtq/``).
  Set ``BINDER_REPO`` to a checkout. Its imports that judging never uses (fuzzywuzzy, the SQL helpers, the
  MMQA evaluator) are replaced by empty modules; recognizers-text-suite must be installed.

Each ``*_judgements`` function takes cases as dicts with ``question``, ``gold``, ``prediction``, ``gold_canon``
and returns one bool per case, or raises :class:`Unavailable` with the reason.
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import subprocess
import sys
import types
from collections.abc import Sequence
from pathlib import Path
from typing import Any


class Unavailable(Exception):
    """An original evaluator cannot run here; the message says what is missing."""


# A Python 2 program (our own): imports the original evaluator.py and judges JSON lines from stdin.
_PY2_HARNESS = r"""
import imp, json, sys
evaluator = imp.load_source('wtq_official_evaluator', sys.argv[1])
for line in sys.stdin:
    case = json.loads(line)
    canon = case.get('gold_canon')
    if canon is None:
        target = evaluator.to_value_list(case['gold'])
    else:
        target = evaluator.to_value_list(case['gold'], canon)
    predicted = evaluator.to_value_list(case['prediction'])
    sys.stdout.write('1\n' if evaluator.check_denotation(target, predicted) else '0\n')
"""


def python2() -> str:
    """A Python 2.7 interpreter, or :class:`Unavailable`."""
    candidates = [os.environ.get("PYTHON2", "")]
    candidates += [shutil.which(name) or "" for name in ("python2.7", "python2")]
    candidates += sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/2.7*/bin/python2.7")))
    for candidate in filter(None, candidates):
        try:
            out = subprocess.run([candidate, "-c", "import sys; print(sys.version_info[0])"], capture_output=True,
                                 text=True, timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            continue
        if out.returncode == 0 and out.stdout.strip() == "2":
            return candidate
    raise Unavailable("no Python 2.7 interpreter (set PYTHON2; Debian 12 has no python2 package, pyenv can "
                      "build 2.7.18)")


def official_judgements(cases: Sequence[dict[str, Any]]) -> list[bool]:
    """The original official evaluator's judgement of each case."""
    path = os.environ.get("WTQ_EVALUATOR")
    if not path or not Path(path).is_file():
        raise Unavailable("set WTQ_EVALUATOR to ppasupat/WikiTableQuestions' evaluator.py (not vendored)")
    payload = "".join(json.dumps({"gold": c["gold"], "prediction": c["prediction"],
                                  "gold_canon": c.get("gold_canon")}) + "\n" for c in cases)
    done = subprocess.run([python2(), "-c", _PY2_HARNESS, path], input=payload, capture_output=True, text=True,
                          timeout=3600)
    if done.returncode != 0:
        raise RuntimeError(f"the original official evaluator failed: {done.stderr[-2000:]}")
    lines = done.stdout.split()
    if len(lines) != len(cases):
        raise RuntimeError(f"{len(lines)} judgements for {len(cases)} cases")
    return [line == "1" for line in lines]


def _binder_evaluator() -> Any:
    repo = os.environ.get("BINDER_REPO")
    if not repo or not (Path(repo) / "utils" / "evaluator.py").is_file():
        raise Unavailable("set BINDER_REPO to a checkout of xlang-ai/Binder (not vendored)")
    try:
        import recognizers_suite  # noqa: F401
    except ImportError as error:
        raise Unavailable(f"recognizers-text-suite is not importable ({error})") from None
    stubs = {"fuzzywuzzy": {"fuzz": None}, "utils.sql.extraction_from_sql": {},
             "utils.sql.all_keywords": {"ALL_KEY_WORDS": ()}, "utils.mmqa.evaluator": {"acc": None}}
    for name, attributes in stubs.items():
        module = types.ModuleType(name)
        module.__dict__.update(attributes)
        sys.modules.setdefault(name, module)
    if "utils" in sys.modules and not str(getattr(sys.modules["utils"], "__file__", "")).startswith(str(repo)):
        raise Unavailable("another module named 'utils' is already imported")
    sys.path.insert(0, str(repo))
    try:
        from utils.evaluator import Evaluator  # type: ignore[import-not-found]
    finally:
        sys.path.remove(str(repo))
    return Evaluator()


def binder_judgements(cases: Sequence[dict[str, Any]]) -> list[bool]:
    """Binder's own ``eval_ex_match`` (semantic mode) on each case, as its execution script calls it."""
    evaluator = _binder_evaluator()
    return [bool(evaluator.evaluate(list(c["prediction"]), list(c["gold"]), dataset="wikitq",
                                    question=c["question"])) for c in cases]
