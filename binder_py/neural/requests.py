"""Neural requests as plain data: cell display strings, row keys, and answer typing.

This module is imported by the TRUSTED worker-side bridge too, so it depends
only on pandas/numpy and the standard library.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from dataclasses import dataclass, field
from operator import itemgetter
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from binder_py.language.messages import rows_to_columns
from binder_py.neural.yesno import yes_no_series

KEY_SEPARATOR = " | "

#: answers (after strip + lower-case) that mean "the model does not know"
MISSING_ANSWERS = frozenset({"", "unknown", "n/a", "none", "-", "null", "nan", "<na>"})
#: cells that write no number (a table's "?" or "—" for a value it does not know), read as no number
#: (:mod:`binder_py.pipeline.text_numbers`, :mod:`binder_py.neural.comparisons`)
NO_NUMBER_CELLS = MISSING_ANSWERS | {"?", "—", "–", "tba", "tbd", "n.a."}
TRUE_ANSWERS = frozenset({"yes", "true"})
FALSE_ANSWERS = frozenset({"no", "false"})

# optional sign, optional currency sign, digits (with correct thousands commas) and
# decimals, optional trailing percent sign
_NUMBER = re.compile(
    r"^(?P<sign>[+-]?)\s*(?P<cur>[$€£¥])?\s*"
    r"(?P<num>(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?|\.\d+)"
    r"\s*(?P<pct>%)?$"
)

STRING_DTYPE = pd.StringDtype(storage="python", na_value=pd.NA)


# ---------------------------------------------------------------- cells and keys
def cell_text(value: Any) -> str:
    """How a cell is shown to a neural backend: integral numbers as ``12`` (not ``12.0``),
    missing values as the empty string, midnight timestamps as a date."""
    if value is None:
        return ""
    if isinstance(value, (bool, np.bool_)):
        return "true" if value else "false"
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        v = float(value)
        if math.isnan(v):
            return ""
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        if v.is_integer() and abs(v) < 1e16:
            return str(int(v))
        return repr(v)
    if isinstance(value, pd.Timestamp) or isinstance(value, dt.datetime):
        if pd.isna(value):
            return ""
        ts = pd.Timestamp(value)
        if ts.hour == ts.minute == ts.second == ts.microsecond == 0 and ts.nanosecond == 0:
            return ts.strftime("%Y-%m-%d")
        return str(ts)
    try:
        if value is pd.NA or value is pd.NaT or (not isinstance(value, (list, tuple, dict)) and pd.isna(value)):
            return ""
    except (TypeError, ValueError):
        pass
    text = str(value)
    return text.replace("\t", " ").replace("\r", " ").replace("\n", " ").strip()


def shown_key(key: str, limit: int = 60) -> str:
    """A row key as a warning shows it: quoted, and shortened past ``limit`` characters (a key holds
    whole cells, and a 100,000-character cell must not fill the screen)."""
    return repr(key if len(key) <= limit else key[: limit - 1] + "…")


def row_key(cells: list[str] | tuple[str, ...]) -> str:
    """A row's key: its context cells (display strings) joined with ``" | "`` in context
    column order (:func:`joined_cells`), lower-cased and stripped. Used by the oracle and by every cache."""
    return joined_cells([str(c).strip() for c in cells]).lower().strip()


def _escaped(cell: str) -> str:
    return cell.replace("\\", "\\\\").replace("|", "\\|")


def joined_cells(cells: list[str] | tuple[str, ...]) -> str:
    """Several cells as one text, joined with ``" | "``; when a cell holds ``|`` or a backslash, each
    such character is escaped with a backslash first, so that two different rows never join alike
    (``["a | b", "c"]`` and ``["a", "b | c"]``). One cell is its own text."""
    text = KEY_SEPARATOR.join(cells)
    # (counted at C speed: the separators are the only pipes of a row whose cells hold none)
    if len(cells) > 1 and (text.count("|") != len(cells) - 1 or "\\" in text):
        return KEY_SEPARATOR.join(map(_escaped, cells))
    return text


def keys_name_rows(request: NeuralRequest) -> bool:
    """Every key of ``request`` is its row's key (:func:`row_key`), for rows whose cells are display texts
    (stripped, as the bridge sends them): the cells joined, lower-cased, at C speed. A worker computes the
    keys it sends; one whose memory a program corrupted can send the keys of the table's rows beside cells
    of its own, which the caches must not file under those keys (red teams 9 and 10)."""
    if len(request.columns) == 1:
        return list(map(str.lower, map(itemgetter(0), request.rows))) == request.keys
    return [text.lower().strip() for text in map(joined_cells, request.rows)] == request.keys


def _lower(text: str) -> str:
    """``text.lower()``, as the very object ``text`` when lower-casing changes nothing (numbers,
    dates, lower-case text): a key then shares its display text's memory."""
    low = text.lower()
    return text if low == text else low


def _column_codes(column: pd.Series) -> tuple[np.ndarray, list[str]]:
    """Every cell's code and the display text of each code, computing :func:`cell_text`
    once per distinct raw value (not once per row)."""
    if _mixed_objects(column):
        # mixed objects: equal-hashing values of different types (1, 1.0, True) may show
        # differently, so factorize their display texts instead of the raw values
        texts = np.asarray([cell_text(v) for v in column.tolist()], dtype=object)
        codes, uniques = pd.factorize(texts)
        return np.asarray(codes, dtype=np.int64), [str(u) for u in uniques]
    codes, uniques = pd.factorize(column, use_na_sentinel=False)
    return np.asarray(codes, dtype=np.int64), _display_texts(uniques)


def _mixed_objects(column: pd.Series) -> bool:
    return column.dtype == object and pd.api.types.infer_dtype(column, skipna=True) not in ("string", "empty")


def _display_texts(uniques: Any) -> list[str]:
    """:func:`cell_text` of each distinct value."""
    # tolist(): Python scalars (an arrow-backed array iterates one slow scalar at a time); a
    # cell that is exactly a str shows as cell_text shows it, without its chain of type checks
    values = uniques.tolist() if hasattr(uniques, "tolist") else list(uniques)
    return [v.replace("\t", " ").replace("\r", " ").replace("\n", " ").strip() if type(v) is str else cell_text(v)
            for v in values]


def distinct_context_rows(ctx: pd.DataFrame) -> tuple[list[list[str]], list[str]]:
    """``context_rows(ctx, distinct=True)[:2]``, without the row codes: what the parent needs
    to plan a request (the worker, which spreads the answers, computes the codes). For one
    column of a type that hashes as it shows, from the column's distinct values alone, so
    that a million-row column costs no row-sized array (``pd.unique`` and
    ``pd.factorize`` list the distinct values in the same order: first appearance)."""
    if ctx.shape[1] != 1 or len(ctx) == 0 or _mixed_objects(ctx.iloc[:, 0]):
        rows, keys, _ = context_rows(ctx, distinct=True)
        return rows, keys
    column = ctx.iloc[:, 0]
    # factorize the distinct values again (a small array): its uniques are of the very type
    # that factorizing the whole column gives (Timedelta, not datetime.timedelta, ...)
    distinct_values = pd.Series(pd.unique(column), dtype=column.dtype)
    texts = _display_texts(pd.factorize(distinct_values, use_na_sentinel=False)[1])
    rows_d, keys_d, _ = _distinct_by_key([[t] for t in texts])
    return rows_d, keys_d


def context_keys(ctx: pd.DataFrame) -> set[str]:
    """The keys of ``ctx``'s rows (:func:`row_key`), as :func:`distinct_context_rows` gives them, without
    the rows: for one column, from its distinct display texts with vectorised string methods."""
    if ctx.shape[1] != 1 or len(ctx) == 0 or _mixed_objects(ctx.iloc[:, 0]):
        return set(distinct_context_rows(ctx)[1])
    column = ctx.iloc[:, 0]
    if isinstance(column.dtype, pd.StringDtype) and column.dtype.storage == "pyarrow":
        return _arrow_text_keys(column)
    distinct_values = pd.Series(pd.unique(column), dtype=column.dtype)
    texts = pd.Series(_display_texts(pd.factorize(distinct_values, use_na_sentinel=False)[1]), dtype=object)
    return set(texts.str.strip().str.lower().str.strip())


#: the ASCII characters Python's str.strip() removes
_ASCII_SPACE = "".join(chr(c) for c in range(128) if chr(c).isspace())


def _arrow_text_keys(column: pd.Series) -> set[str]:
    """:func:`context_keys` of an Arrow-backed text column: its ASCII values with Arrow's string kernels
    (the same replacements, Python's ASCII white space, ASCII lower-casing), the others as
    :func:`distinct_context_rows` makes them; 4–5× faster on 100,000 distinct values."""
    import pyarrow as pa
    import pyarrow.compute as pc

    values = pc.unique(pa.array(column.array))
    ascii_mask = pc.fill_null(pc.string_is_ascii(values), False)
    texts = pc.replace_substring_regex(pc.filter(values, ascii_mask), r"[\t\r\n]", " ")
    keys = set(pc.ascii_lower(pc.utf8_trim(texts, characters=_ASCII_SPACE)).to_pylist())
    others = [v for v in pc.filter(values, pc.invert(ascii_mask)).to_pylist() if v is not None]
    keys |= {row_key([text]) for text in _display_texts(others)}
    if values.null_count:  # a missing cell's key, as the rows show it
        keys |= set(distinct_context_rows(column[column.isna()].iloc[:1].to_frame())[1])
    return keys


def _distinct_by_key(representatives: list[list[str]]) -> tuple[list[list[str]], list[str], np.ndarray]:
    """The representatives' distinct keys in order of first appearance, each with its first
    row, and each representative's position among them."""
    key_index: dict[str, int] = {}
    rows_d: list[list[str]] = []
    keys_d: list[str] = []
    raw_to_key = np.empty(len(representatives), dtype=np.int64)
    for code, row in enumerate(representatives):
        key = row_key(row)
        index = key_index.get(key)
        if index is None:
            index = key_index[key] = len(keys_d)
            rows_d.append(row)
            keys_d.append(key)
        raw_to_key[code] = index
    return rows_d, keys_d, raw_to_key


def context_rows(ctx: pd.DataFrame, distinct: bool = True) -> tuple[list[list[str]], list[str], np.ndarray]:
    """A context's rows as display strings with their keys, computed per distinct row.

    Returns ``(rows, keys, codes)``. With ``distinct`` (what kind ``col`` sends) ``rows``
    and ``keys`` hold one entry per distinct KEY, in order of first appearance, and
    ``codes[i]`` is the position of row ``i``'s key in them. Without, they hold every
    row in order (``codes`` maps rows to the distinct keys all the same). The result
    equals computing ``cell_text``/``row_key`` row by row, in a time that grows with the
    number of distinct rows (plus a vectorised pass over the rows)."""
    n, width = len(ctx), ctx.shape[1]
    if width == 0 or n == 0:
        rows = [[] for _ in range(n)]
        keys = [row_key(r) for r in rows]
        if distinct:
            return rows[:1], keys[:1], np.zeros(n, dtype=np.int64)
        return rows, keys, np.zeros(n, dtype=np.int64)
    per_column = [_column_codes(ctx.iloc[:, j]) for j in range(width)]
    combined = per_column[0][0]
    if width == 1:
        # one column: its codes are the row codes, and code c's row is its c-th display text
        # (no pass over the rows needed, and no row-sized temporaries: this is the common case)
        representatives = list(map(list, zip(per_column[0][1])))
    else:
        for codes, texts in per_column[1:]:  # codes of the row tuple, kept below n * n per step
            combined, _ = pd.factorize(combined * max(1, len(texts)) + codes)
            combined = np.asarray(combined, dtype=np.int64)
        # pd.factorize numbers values in order of first appearance, so the running maximum of
        # the codes steps up (by one) exactly at each code's first row: O(n), no sort
        steps = np.maximum.accumulate(combined)
        first = np.flatnonzero(np.diff(steps, prepend=-1))
        del steps
        representatives = [[texts[codes[position]] for codes, texts in per_column] for position in first.tolist()]
    if width == 1:
        raw_keys = _unfolded_keys(per_column[0][1])
        if raw_keys is not None:
            if distinct:
                return representatives, raw_keys, combined
            every = combined.tolist()
            return [list(representatives[c]) for c in every], [raw_keys[c] for c in every], combined
    rows_d, keys_d, raw_to_key = _distinct_by_key(representatives)
    row_codes = raw_to_key[combined]
    if distinct:
        return rows_d, keys_d, row_codes
    every = combined.tolist()
    return [list(representatives[c]) for c in every], [keys_d[k] for k in row_codes.tolist()], row_codes


def _unfolded_keys(texts: list[str]) -> list[str] | None:
    """The keys of one column's distinct display texts when no two fold together (then its codes
    are already the key codes), else None; ``texts`` itself when every text is its own key.
    :func:`row_key` of one cell: display texts are stripped already, so the key is the lower-cased
    text (lower() makes no whitespace)."""
    keys = list(map(_lower, texts))
    if len(dict.fromkeys(keys)) != len(keys):
        return None
    # texts that are their own keys (lower-case cells: every WikiTQ table) are sent once, as both
    return texts if keys == texts else keys


def distinct_context_columns(ctx: pd.DataFrame) -> tuple[list[list[str]], list[str], np.ndarray]:
    """:func:`context_rows` (``distinct=True``) column by column: ``(cells, keys, codes)`` with
    ``cells[j][i]`` column ``j`` of distinct row ``i``. For one column whose distinct values have
    distinct keys (the common case) no list per row is made: its display texts are the cells
    (the worker's bridge then holds 10,000 lists fewer for 10,000 distinct values)."""
    if ctx.shape[1] == 1 and len(ctx) > 0:
        codes, texts = _column_codes(ctx.iloc[:, 0])
        keys = _unfolded_keys(texts)
        if keys is not None:
            return [texts], keys, codes
    rows, keys, codes = context_rows(ctx, distinct=True)
    return rows_to_columns(rows, ctx.shape[1]), keys, codes


def normalize_key(key: str) -> str:
    """Normalise a key written by hand (e.g. in an oracle file) the way :func:`row_key` does: the cells
    are what an unescaped ``|`` separates (``\\|`` is a ``|`` inside a cell)."""
    cells, cell, text, i = [], [], str(key), 0
    while i < len(text):
        if text[i] == "\\" and i + 1 < len(text) and text[i + 1] in "\\|":
            cell.append(text[i + 1])
            i += 2
            continue
        if text[i] == "|":
            cells.append("".join(cell))
            cell = []
        else:
            cell.append(text[i])
        i += 1
    cells.append("".join(cell))
    return row_key(cells)


# ---------------------------------------------------------------- requests
@dataclass
class NeuralRequest:
    """One neural call as data.

    ``rows`` are the context rows as display strings; for ``kind == "col"`` they are
    DISTINCT (one per key); for ``kind == "val"`` they are every row of the context in
    order. ``keys[i]`` is the key of ``rows[i]``. A row is a sequence of text: the rows of a
    program's own call arrive from the sandbox as tuples and are not copied into lists (100,000
    of them cost about 0.08 s: ``python -m binder_py.bench.worker_cost --parts fcol``).
    """

    kind: str  # "col" | "val"
    question: str
    columns: list[str]
    rows: list[Sequence[str]]
    keys: list[str]
    site: int | None = None
    title: str | None = None
    meta: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "question": self.question, "columns": list(self.columns),
                "rows": [list(r) for r in self.rows], "keys": list(self.keys), "site": self.site,
                "title": self.title}

    def subset(self, keys: list[str]) -> NeuralRequest:
        """The same request restricted to ``keys`` (kind ``col``)."""
        wanted = set(keys)
        pairs = [(r, k) for r, k in zip(self.rows, self.keys) if k in wanted]
        return NeuralRequest(self.kind, self.question, list(self.columns), [p[0] for p in pairs],
                             [p[1] for p in pairs], self.site, self.title, dict(self.meta))


# ---------------------------------------------------------------- typing
def classify(answer: Any) -> tuple[str, Any]:
    """One raw answer → (``"na"|"bool"|"num"|"str"``, value)."""
    if answer is None:
        return "na", None
    if isinstance(answer, (bool, np.bool_)):
        return "bool", bool(answer)
    if isinstance(answer, (int, np.integer)):
        return "num", int(answer)
    if isinstance(answer, (float, np.floating)):
        v = float(answer)
        if math.isnan(v):
            return "na", None
        return "num", v
    try:
        if answer is pd.NA or answer is pd.NaT:
            return "na", None
    except TypeError:
        pass
    text = str(answer).strip()
    low = text.lower().rstrip(".").strip() if text not in {".", "-"} else text
    if low in MISSING_ANSWERS:
        return "na", None
    if low in TRUE_ANSWERS:
        return "bool", True
    if low in FALSE_ANSWERS:
        return "bool", False
    number = parse_number(text)
    if number is not None:
        return "num", number
    return "str", text


def parse_number(text: str) -> int | float | None:
    """``"1,234"`` → 1234, ``"$12"`` → 12, ``"12.5%"`` → 12.5 (the percent sign is dropped,
    the value is kept as written), ``"-3"`` → -3; anything else → None."""
    m = _NUMBER.match(text.strip())
    if not m:
        return None
    num = m.group("num").replace(",", "")
    value: int | float = float(num) if "." in num else int(num)
    if m.group("sign") == "-":
        value = -value
    return value


def date_column(texts: list[Any], index: pd.Index | None = None, name: Any = None) -> pd.Series:
    """The ISO 8601 texts the parent wrote for an ``f_col`` column the program reads through ``.dt``
    (``None``: NaT) as a ``datetime64`` Series."""
    return pd.Series(pd.to_datetime(pd.Series(texts, dtype=object), format="ISO8601").array, index=index, name=name)


def _common_type(kinds: list[str]) -> str:
    present = {k for k in kinds if k != "na"}
    if not present:
        return "none"
    if present == {"bool"}:
        return "bool"
    if present == {"num"}:
        return "num"
    return "str"


def type_column(answers: list[Any], index: pd.Index | None = None, name: Any = None) -> pd.Series:
    """Type a list of raw answers (one per row) as a Series — the f_col typing rules.

    * every non-missing answer yes/no/true/false → ``yesno`` (:mod:`binder_py.neural.yesno`: a
      nullable boolean mask that also compares equal to 'yes'/'no', as the original's programs
      expect; NA kept);
    * every non-missing answer a number → ``Int64`` when all are integral, else ``Float64``;
    * otherwise ``string`` (the stripped answer text; yes/no/number answers keep their text);
    * every answer missing → ``yesno`` full of NA (a filter with it selects nothing).
    """
    classified = [classify(a) for a in answers]
    kind = _common_type([k for k, _ in classified])
    if kind in ("bool", "none"):
        values = [v if k == "bool" else pd.NA for k, v in classified]
        return yes_no_series(values, index=index, name=name)
    if kind == "num":
        nums = [v for k, v in classified if k == "num"]
        integral = all(isinstance(v, int) or float(v).is_integer() for v in nums)
        dtype = "Int64" if integral and all(abs(v) < 2**63 for v in nums) else "Float64"
        values = [(int(v) if dtype == "Int64" else float(v)) if k == "num" else pd.NA for k, v in classified]
        return pd.Series(values, index=index, name=name, dtype=dtype)
    values = [_as_text(a) if k != "na" else pd.NA for (k, _), a in zip(classified, answers)]
    return pd.Series(values, index=index, name=name, dtype=STRING_DTYPE)


def _as_text(answer: Any) -> str:
    if isinstance(answer, str):
        return answer.strip()
    return cell_text(answer)


def split_list_answer(answer: Any) -> list[Any] | None:
    """An f_val answer that holds several values: a list/tuple, or text with ``|`` separators."""
    if isinstance(answer, (list, tuple)):
        return list(answer)
    if isinstance(answer, str) and "|" in answer:
        return [part.strip() for part in answer.split("|")]
    return None


def type_value(answer: Any) -> Any:
    """Type an f_val answer: one scalar (bool, int, float, str, or None for unknown), or a
    list typed by the column rules (all yes/no → bools, all numbers → numbers, else strings)."""
    parts = split_list_answer(answer)
    if parts is not None:
        parts = [p for p in parts if classify(p)[0] != "na"]
        if not parts:
            return None
        series = type_column(parts)
        return [None if pd.isna(v) else plain_scalar(v) for v in series.tolist()]
    kind, value = classify(answer)
    if kind == "na":
        return None
    if kind == "num" and isinstance(value, float) and value.is_integer() and isinstance(answer, str) \
            and "." not in answer:
        return int(value)
    if kind == "str":
        return _as_text(answer)
    return value


def plain_scalar(value: Any) -> Any:
    """A numpy scalar as the Python scalar it holds (anything else as it is)."""
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        return float(value)
    return value
