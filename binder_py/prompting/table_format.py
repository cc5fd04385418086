"""Tables as prompt text: the paper's ``CREATE TABLE`` format ("binder") or a pandas-style view.

``binder`` style (Binder, appendix A.1; Rajkumar et al. 2022)::

    CREATE TABLE 1998 world cup squad(
    \trow_id int,
    \tplayer text,
    \tcaps int)
    /*
    3 example rows:
    SELECT * FROM w LIMIT 3;
    row_id\tplayer\tcaps
    0\tzinedine zidane\t41
    ...
    */

When every row is shown the two header lines are ``All rows of the table:`` and
``SELECT * FROM w;``. Cells are separated by a tab (the paper uses a special
character). Column types come from the dtypes: ``int`` (integers), ``real``
(floats), ``text`` (strings, objects), and also ``bool`` and ``datetime``
(so a program knows it may use ``.dt``). ``row_id`` is the row's position
``0..n-1``, which is also ``df.index`` for a prepared table; a table with a column of its own
named ``row_id`` is shown without it (two ``row_id`` columns made ``df["row_id"]`` ambiguous).

``pandas`` style::

    # table: 1998 world cup squad
    # df: 12 rows × 3 columns; dtypes: 'player': str, 'club': str, 'caps': int64
    # df.head(3):
            player      club  caps
    0  zinedine zidane  juventus    41

Cell rules (both styles)
------------------------
* Text cells are lower-cased when ``lowercase`` (the paper lower-cases table
  contents; numbers, booleans and dates are written as Python shows them).
* Newlines (any line break), carriage returns and tabs inside a cell become one space.
* ``*/`` and ``/*`` inside a cell or a column name are written ``* /`` and ``/ *``: in ``binder`` style
  the table sits between ``/*`` and ``*/``, and a cell must not end it (or start another) early.
* A cell longer than ``max_cell_chars`` (default 100) is cut and ends with "…".
* Missing values are empty in ``binder`` style and ``NaN`` in ``pandas`` style.

Column names are never changed (not lower-cased, not truncated): the program
must write them exactly as shown.

Several tables (:class:`TablesText`) are rendered one after the other, each under its name
(``CREATE TABLE orders(`` … ``SELECT * FROM orders LIMIT 3;``, or ``# orders: 6 rows × 3
columns`` … ``# orders.head(3):``), with no blank line between them. Rows are cut fairly:
``render(k)`` shows the first ``min(k, rows)`` rows of every table, so a small table is shown
whole while the big ones share the room equally.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Literal

import pandas as pd

from binder_py.errors import BinderError

__all__ = ["TableStyle", "TableText", "TablesText", "format_table", "cell_text", "column_type"]

TableStyle = Literal["binder", "pandas"]
STYLES = ("binder", "pandas")
DEFAULT_MAX_CELL_CHARS = 100
#: tabs and every line break str.splitlines() knows (U+2028, \x85, \x0b ... besides CR and LF)
_SPACES = re.compile("[\r\n\t\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]+")


def column_type(dtype: object) -> str:
    """The ``CREATE TABLE`` type of a column: ``int``, ``real``, ``bool``, ``datetime`` or ``text``."""
    if pd.api.types.is_bool_dtype(dtype):
        return "bool"
    if pd.api.types.is_integer_dtype(dtype):
        return "int"
    if pd.api.types.is_float_dtype(dtype):
        return "real"
    if pd.api.types.is_datetime64_any_dtype(dtype):
        return "datetime"
    return "text"


def _is_missing(value: object) -> bool:
    if value is None or value is pd.NA or value is pd.NaT:
        return True
    try:
        return isinstance(value, float) and math.isnan(value)
    except TypeError:
        return False


def cell_text(value: object, *, lowercase: bool = True, max_chars: int | None = DEFAULT_MAX_CELL_CHARS,
              missing: str = "") -> str:
    """One cell as prompt text (see the module docstring for the rules)."""
    if _is_missing(value):
        return missing
    if hasattr(value, "item") and not isinstance(value, (str, bytes)) and getattr(value, "ndim", 1) == 0:
        try:
            value = value.item()  # numpy scalar -> Python
        except (ValueError, AttributeError):
            pass
    if isinstance(value, bool):
        text = str(value)
    elif isinstance(value, float):
        text = repr(value)
    elif isinstance(value, str):
        text = value.lower() if lowercase else value
    else:
        text = str(value)
    text = unfenced(_SPACES.sub(" ", text))
    if max_chars is not None and len(text) > max_chars:
        text = text[:max_chars] + "…"
    return text


def unfenced(text: str) -> str:
    """``text`` without the comment fences a table is written between (``*/`` → ``* /``, ``/*`` → ``/ *``)."""
    if "*/" not in text and "/*" not in text:
        return text
    return text.replace("*/", "* /").replace("/*", "/ *")


def _one_line(text: str) -> str:
    return _SPACES.sub(" ", text).strip()


class TableText:
    """A table prepared once and rendered with any number of rows (used to fit prompts).

    ``render(k)`` gives the text with the first ``k`` rows (``None``: all rows).
    """

    def __init__(self, df: pd.DataFrame, title: str | None = None, *, style: TableStyle = "binder",
                 lowercase: bool = True, max_cell_chars: int | None = DEFAULT_MAX_CELL_CHARS,
                 variable: str | None = None):
        if style not in STYLES:
            raise BinderError(f"unknown table style {style!r}; use one of: {', '.join(STYLES)}")
        if not isinstance(df, pd.DataFrame):
            raise BinderError(f"expected a pandas DataFrame as the table, got {type(df).__name__}")
        self.df = df
        self.title = _one_line(title) if title and title.strip() else "table"
        #: the name a program sees this table by, when it has one of its own (several tables)
        self.variable = variable
        self.style = style
        self.lowercase = lowercase
        self.max_cell_chars = max_cell_chars
        self.total_rows = len(df)
        self.columns = [str(c) for c in df.columns]
        missing = "" if style == "binder" else "NaN"
        self._cells = [
            [cell_text(v, lowercase=lowercase, max_chars=max_cell_chars, missing=missing) for v in df.iloc[:, j].tolist()]
            for j in range(df.shape[1])
        ]
        self._types = [column_type(df.dtypes.iloc[j]) for j in range(df.shape[1])]
        self._lines: list[str] | None = None

    def rows_for(self, max_rows: int | None) -> int:
        """How many rows ``render(max_rows)`` shows."""
        if max_rows is None:
            return self.total_rows
        return max(0, min(int(max_rows), self.total_rows))

    def rows_shown(self, max_rows: int | None) -> int:
        return self.rows_for(max_rows)

    @property
    def rows_in_all(self) -> int:
        return self.total_rows

    def render(self, max_rows: int | None = None) -> str:
        k = self.rows_for(max_rows)
        if self.style == "binder":
            return self._render_binder(k)
        return self._render_pandas(k)

    def _render_binder(self, k: int) -> str:
        # a table with its own row_id column is shown without the added one: two columns of one name,
        # the positions and the table's ids, made df["row_id"] ambiguous
        numbered = not any(str(name).strip().lower() == "row_id" for name in self.columns)
        if self._lines is None:
            self._lines = ["\t".join(([str(i)] if numbered else []) + [col[i] for col in self._cells])
                           for i in range(self.total_rows)]
        schema = ",\n".join((["\trow_id int"] if numbered else [])
                            + [f"\t{unfenced(name)} {typ}" for name, typ in zip(self.columns, self._types)])
        sql_name = self.variable or "w"
        if k >= self.total_rows:
            what = "the table" if self.variable is None else sql_name
            head = [f"All rows of {what}:", f"SELECT * FROM {sql_name};"]
        else:
            head = [f"{k} example row{'s' if k != 1 else ''}:", f"SELECT * FROM {sql_name} LIMIT {k};"]
        header = "\t".join((["row_id"] if numbered else []) + [unfenced(name) for name in self.columns])
        parts = [f"CREATE TABLE {self.title}(", schema + ")", "/*", *head, header, *self._lines[:k], "*/"]
        return "\n".join(parts)

    def _render_pandas(self, k: int) -> str:
        dtypes = ", ".join(f"{name!r}: {self.df.dtypes.iloc[j]}" for j, name in enumerate(self.columns))
        n, m = self.total_rows, len(self.columns)
        name = self.variable or "df"
        lines = [f"# table: {self.title}",
                 f"# {name}: {n} row{'s' if n != 1 else ''} × {m} column{'s' if m != 1 else ''}; dtypes: {dtypes}",
                 "# all rows:" if k >= n else f"# {name}.head({k}):"]
        shown = pd.DataFrame({j: col[:k] for j, col in enumerate(self._cells)}, index=range(k))
        shown.columns = self.columns
        lines.append(shown.to_string())
        return "\n".join(lines)


class TablesText:
    """Several tables by name, rendered one after the other with the same cap on rows.

    ``render(k)`` shows the first ``min(k, rows)`` rows of each table; ``total_rows`` is the
    largest table's row count (the cap that shows everything), ``rows_shown(k)`` and
    ``rows_in_all`` count rows over all tables. Each table's title is its name.
    """

    def __init__(self, tables: Mapping[str, pd.DataFrame], *, style: TableStyle = "binder",
                 lowercase: bool = True, max_cell_chars: int | None = DEFAULT_MAX_CELL_CHARS):
        if not tables:
            raise BinderError("no tables to show")
        self.parts = [TableText(df, name, style=style, lowercase=lowercase, max_cell_chars=max_cell_chars,
                                variable=name) for name, df in tables.items()]
        self.total_rows = max(part.total_rows for part in self.parts)
        self.rows_in_all = sum(part.total_rows for part in self.parts)

    def rows_shown(self, max_rows: int | None) -> int:
        return sum(part.rows_for(max_rows) for part in self.parts)

    def render(self, max_rows: int | None = None) -> str:
        return "\n".join(part.render(max_rows) for part in self.parts)


def format_table(df: pd.DataFrame, title: str | None = None, *, style: TableStyle = "binder",
                 max_rows: int | None = None, lowercase: bool = True,
                 max_cell_chars: int | None = DEFAULT_MAX_CELL_CHARS) -> str:
    """The table as prompt text with its first ``max_rows`` rows (``None``: all); see the module docstring."""
    return TableText(df, title, style=style, lowercase=lowercase, max_cell_chars=max_cell_chars).render(max_rows)
