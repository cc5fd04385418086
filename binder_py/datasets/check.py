"""Checking a data directory: which benchmark files are present, their counts, what is missing."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from binder_py.datasets.tabfact import MAX_EXAMPLES_BYTES
from binder_py.errors import BinderError
from binder_py.jsonfile import read_json
from binder_py.safefiles import contained_path

SOURCES = """\
Where to get the data (put both folders under one directory, e.g. ../shared/data next to the repository,
or point --data-dir / BINDER_DATA at it):

  wikitq/   WikiTableQuestions v1.0.2: github.com/ppasupat/WikiTableQuestions (release 1.0.2; CC BY-SA 4.0).
            Needed: data/random-split-1-dev.tsv, data/pristine-unseen-tables.tsv, csv/20x-csv/*.tsv,
            page/20x-page/*.json; optional tagged/data/pristine-unseen-tables.tagged (targetCanon, official
            evaluator on test).
            Program-unsolvable subsets of dev (ids, one per line), in squall/:
              random-split-1-dev.missing-squall.ids   625 dev ids with no SQUALL SQL (ids of
                  random-split-1-dev.tsv that are not an 'nt' id of SQUALL's data/squall.json,
                  github.com/tzshi/squall, CC BY-SA 4.0)
              random-split-1-dev.binder-unsolvable.ids  1,251 dev ids not in the 'sql_solvable_ids' list of
                  Binder's datasets/wikitq_sql_unsolvable.py (github.com/xlang-ai/Binder)
            The shared folder's wikitq/README.md describes how these were derived.
  tabfact/  TabFact small test: github.com/wenhuchen/Table-Fact-Checking (MIT).
            Needed: tokenized_data/small_test_examples.json (tokenized_data/test_examples.json restricted to
            the 298 table ids of data/small_test_id.json) and data/all_csv/<table id> for those tables.
"""


@dataclass
class Check:
    dataset: str
    item: str
    ok: bool
    detail: str
    required: bool = True


def _count_lines(path: Path, header: bool) -> int:
    with open(path, encoding="utf-8", errors="replace") as f:  # a data directory may come from someone else
        n = sum(1 for line in f if line.strip())
    return n - 1 if header else n


def _inside(root: Path, relative: str) -> Path | None:
    """``root / relative`` when it stays inside ``root`` (symlinks followed), else None."""
    try:
        return contained_path(root, relative, what="data check")
    except (BinderError, OSError, ValueError):  # ValueError: a NUL in the name
        return None


def check_data_dir(root: Path) -> list[Check]:
    """Checks of ``root/wikitq`` and ``root/tabfact`` (files present, counts as expected)."""
    checks: list[Check] = []
    w = root / "wikitq"
    wikitq_files = [
        ("data/random-split-1-dev.tsv", True, 2831, True),
        ("data/pristine-unseen-tables.tsv", True, 4344, True),
        ("tagged/data/pristine-unseen-tables.tagged", True, 4344, False),
        ("squall/random-split-1-dev.missing-squall.ids", False, 625, True),
        ("squall/random-split-1-dev.binder-unsolvable.ids", False, 1251, True),
    ]
    if not w.is_dir():
        checks.append(Check("wikitq", "wikitq/", False, f"folder {w} not found"))
    else:
        for rel, header, expected, required in wikitq_files:
            path = w / rel
            if not path.is_file():
                checks.append(Check("wikitq", rel, False, "missing", required))
                continue
            n = _count_lines(path, header)
            checks.append(Check("wikitq", rel, n == expected, f"{n} rows (expected {expected})", required))
        contexts: set[str] = set()
        for rel in ("data/random-split-1-dev.tsv", "data/pristine-unseen-tables.tsv"):
            if (w / rel).is_file():
                lines = (w / rel).read_text(encoding="utf-8", errors="replace").splitlines()[1:]
                contexts |= {line.split("\t")[2] for line in lines if line.count("\t") >= 3}
        if contexts:
            # a context names csv/<folder>/<file>.csv; one of another form, or one that leads outside the
            # folder (an IndexError and a look at other files, before), counts as a table not present
            tables = [_inside(w, c[:-4] + ".tsv") for c in contexts]
            pages = [_inside(w, str(Path("page", Path(c).parts[1].replace("-csv", "-page"), Path(c).stem + ".json")))
                     if len(Path(c).parts) == 3 else None for c in contexts]
            have_t = sum(p is not None and p.is_file() for p in tables)
            have_p = sum(p is not None and p.is_file() for p in pages)
            checks.append(Check("wikitq", "csv/*/*.tsv tables", have_t == len(tables),
                                f"{have_t} of {len(tables)} referenced tables present"))
            checks.append(Check("wikitq", "page/*/*.json titles", have_p == len(pages),
                                f"{have_p} of {len(pages)} page files present", False))
    t = root / "tabfact"
    if not t.is_dir():
        checks.append(Check("tabfact", "tabfact/", False, f"folder {t} not found"))
    else:
        path = t / "tokenized_data/small_test_examples.json"
        if not path.is_file():
            checks.append(Check("tabfact", "tokenized_data/small_test_examples.json", False, "missing"))
        else:
            try:
                data = read_json(path, dict, max_bytes=MAX_EXAMPLES_BYTES, what="TabFact examples file")
                n = sum(len(v[0]) for v in data.values())
                checks.append(Check("tabfact", "tokenized_data/small_test_examples.json", n == 1998,
                                    f"{n} statements over {len(data)} tables (expected 1998 over 298)"))
                found = [_inside(t / "data/all_csv", k) for k in data]
                have = sum(p is not None and p.is_file() for p in found)
                checks.append(Check("tabfact", "data/all_csv/ tables", have == len(data),
                                    f"{have} of {len(data)} referenced tables present"))
            except (BinderError, ValueError, TypeError, IndexError, KeyError, AttributeError) as error:
                checks.append(Check("tabfact", "tokenized_data/small_test_examples.json", False,
                                    f"unreadable ({error})"))
    return checks
