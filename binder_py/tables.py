"""Loading and preparing the tables that questions are asked about.

Two entry points:

* :func:`load_table` reads a user's file (CSV, TSV, Parquet, Excel) and returns a
  prepared DataFrame. Rows with nothing in them are skipped: blank lines of a CSV/TSV
  file, lines of separators alone (``,,,``, as spreadsheets export the empty rows under a
  table), and empty rows of a workbook's first sheet.
* :func:`prepare_table` validates and types a DataFrame that a user passes
  directly in Python (``binder_py`` calls it on every table before a program
  sees it).

Rules of :func:`prepare_table` (the "table contract" that programs can rely on)
-------------------------------------------------------------------------------

Column names
    * Every column name is a string. Integer names (``0, 1, 2`` as pandas
      gives for ``DataFrame([[...]])``) are converted to their decimal string
      (``"0", "1", "2"``). Any other kind of name (float, ``None``, tuple /
      MultiIndex, ...) is a :class:`TableError`; rename the columns first
      (``df.columns = [...]``).
    * Names are normalised with :func:`normalize_header`: stripped, and every
      run of whitespace (including newlines) becomes one space.
    * A name that is empty after normalisation becomes ``column_<i>`` with
      ``i`` its 1-based position (``column_<i>_2``, ... when another column has that name).
    * Duplicate names (after normalisation) are a :class:`TableError` naming
      the duplicates. (The WikiTQ loader makes them unique first with
      :func:`make_unique_headers`: ``name``, ``name_2``, ``name_3``, ...)

Rows / index
    * A table needs at least one column and at least one row.
    * The result has the default index ``0..n-1`` in the original row order.
      An unnamed integer index (e.g. after filtering rows) is renumbered; a
      named index or a non-integer index is a :class:`TableError` (call
      ``df.reset_index()`` to keep it as a column, or
      ``df.reset_index(drop=True)`` to drop it).

Column typing (deterministic, no guessing of dates)
    Only columns whose non-missing values are all ``str`` are typed; columns
    that are already numeric, boolean, datetime, ... are kept as they are.
    For a string column, each cell is stripped of surrounding whitespace; a
    cell is *empty* when it is ``""`` after stripping (``None``/NaN count as
    empty too). A non-empty cell is *numeric* when it matches::

        [+-]? ( digits | d{1,3}(,ddd)+ ) ( . digits )?      or   [+-]? . digits

    i.e. an optional sign, an integer part written either plainly or with
    comma thousands separators in groups of three, and an optional decimal
    part. An integer part with a leading zero followed by more digits
    (``"007"``, ``"-01"``) is *not* numeric (codes, zip codes and ids keep
    their spelling). No exponents, currency signs, percent signs, units,
    ``inf`` or ``nan``.

    * If the column has at least one non-empty cell and every non-empty cell
      is numeric, the column becomes numeric:

        - ``int64`` when there are no empty cells and every value is integral
          (``"3"``, ``"1,234"``, ``"2.0"``) and fits in int64;
        - otherwise ``float64``, with empty cells as ``NaN``.
        - If an integral value has more digits than a float keeps exactly (above
          10**15, e.g. a 20-digit id), the column stays a string column; a
          fractional value is read as the nearest float.

    * Otherwise the column stays a string column: every cell is the original
      text (not stripped), and missing values (``None``/NaN) become ``""``.
      Dates, times, percentages, currencies stay strings; programs can call
      ``pd.to_datetime`` / ``str.replace`` themselves.

    A column of ``decimal.Decimal`` values (as ``pd.read_sql`` gives a database's NUMERIC
    column; ``Decimal("NaN")`` and ``None`` are missing) is typed by the same rule, each value
    read as its fixed-point text (``Decimal("1.50")`` → ``"1.50"``; one whose exponent is beyond
    ±30 as its own text, ``"1E+20000000"``, which is not numeric): ``int64``/``float64``, or, as
    for text, a string column when an integral value has more digits than a float keeps. (Left as
    Decimal objects, ``df["price"] * 1.1`` was a TypeError and a sum answered
    ``"Decimal('3.75')"``.)

:func:`load_table` reads every cell as text (``dtype=str``, ``""`` for empty
cells, no ``NA`` guessing) and the header row exactly as written, then calls
:func:`prepare_table`; so files and DataFrames follow the same rules, with one exception: in a
column whose other filled cells are all numeric, the cells ``pd.read_csv`` would read as missing
(``N/A``, ``NA``, ``NaN``, ``NULL``, ``None``, ... :data:`MISSING_MARKERS`) are empty, so the
column is numeric with NaN there (as ``pd.read_csv`` gives it) instead of text whose ``max()`` is
``'N/A'``; any other column keeps them as written. A Parquet file's index is kept as columns (named
after its levels; an unnamed one, such as a time series' dates or years, as ``index``) unless it is
unnamed and only the row numbers 0, 1, 2, ... (other whole numbers may be ids or years). A workbook's or Parquet
file's column of dates reads as the dates (``2020-01-01``, not pandas' ``2020-01-01 00:00:00``)
when every filled cell is at midnight.

Limits (a table may come from someone else)
-------------------------------------------
A table file is refused with a :class:`TableError` before it is parsed when it is larger than
``max_bytes`` or its header row has more than ``max_columns`` fields, and after reading when a
cell holds more than ``max_cell_chars`` characters. The defaults (:class:`TableLimits`) are
100 MB, 1,000 columns and 100,000 characters; raise them with the environment variables
``BINDER_MAX_TABLE_BYTES``, ``BINDER_MAX_TABLE_COLUMNS`` and ``BINDER_MAX_CELL_CHARS`` or pass
``limits=TableLimits(...)`` to :func:`load_table`. The dataset readers apply the same limits.
"""

from __future__ import annotations

import csv
import math
import numbers
import os
import re
from collections import Counter
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

import numpy as np
import pandas as pd

from binder_py.errors import TableError, env_whole_number

__all__ = [
    "ACCEPTED_EXTENSIONS",
    "TableLimits",
    "check_table_file",
    "is_row_numbers",
    "load_table",
    "prepare_table",
    "normalize_header",
    "make_unique_headers",
    "parse_number",
]

ACCEPTED_EXTENSIONS = (".csv", ".tsv", ".tab", ".parquet", ".pq", ".xlsx", ".xls")


def _env_int(name: str, default: int) -> int:
    return env_whole_number(name, default, TableError)


@dataclass(frozen=True)
class TableLimits:
    """How large a table file may be (see "Limits" above); :meth:`from_env` reads the overrides."""

    max_bytes: int = 100 * 1024 * 1024
    max_columns: int = 1_000
    max_cell_chars: int = 100_000

    @classmethod
    def from_env(cls) -> TableLimits:
        return cls(max_bytes=_env_int("BINDER_MAX_TABLE_BYTES", cls.max_bytes),
                   max_columns=_env_int("BINDER_MAX_TABLE_COLUMNS", cls.max_columns),
                   max_cell_chars=_env_int("BINDER_MAX_CELL_CHARS", cls.max_cell_chars))

    def check_size(self, path: Path, size: int) -> None:
        if size > self.max_bytes:
            raise TableError(f"{path}: {size:,} bytes is larger than the table limit of {self.max_bytes:,} bytes; "
                             "raise it with BINDER_MAX_TABLE_BYTES if the file is trusted")

    def check_columns(self, path: Path, columns: int) -> None:
        if columns > self.max_columns:
            raise TableError(f"{path}: {columns:,} columns is more than the limit of {self.max_columns:,}; "
                             "raise it with BINDER_MAX_TABLE_COLUMNS if the file is trusted")

    def check_cells(self, path: Path, rows: list[list[str]] | pd.DataFrame) -> None:
        if isinstance(rows, pd.DataFrame):
            longest = max((len(v) for i in range(rows.shape[1]) for v in rows.iloc[:, i].tolist()
                           if isinstance(v, str)), default=0)
        else:
            longest = max((len(cell) for row in rows for cell in row), default=0)
        if longest > self.max_cell_chars:
            raise TableError(f"{path}: a cell of {longest:,} characters is longer than the limit of "
                             f"{self.max_cell_chars:,}; raise it with BINDER_MAX_CELL_CHARS if the file is trusted")

    def check_header_line(self, path: Path, sep: str) -> None:
        """Count the fields of the first row without parsing the rest (the header sets the width), and
        refuse a file whose rows, filled out to that width, would hold more cells than the limit has bytes.

        pandas fills a short row out to the header's width, so a header of 1,000 fields over 50,000 rows
        holding one letter each (a 105 kB file) read as 50 million cells in 1.2 GB. A CSV within the limit
        whose rows are complete has fewer cells than bytes; the lines of the file (at least its rows)
        times the header's fields bound what pandas builds."""
        with open(path, encoding="utf-8-sig", errors="replace", newline="") as handle:
            line = handle.readline(self.max_bytes)
        width = line.count(sep) + 1
        if width > self.max_columns:
            try:
                fields = next(csv.reader([line], delimiter=sep), [])
            except csv.Error:
                fields = line.split(sep)
            self.check_columns(path, len(fields))
        self.check_filled(path, _line_count(path), width)

    def check_filled(self, path: Path, rows: int, width: int) -> None:
        """Refuse a delimited file whose rows, filled out to ``width``, make more cells than the limit
        allows, or many more than the file has bytes (the rows are mostly missing)."""
        size = path.stat().st_size
        self.check_cell_count(path, rows, width)
        if rows * width > FILL_FACTOR * size + width:
            raise TableError(f"{path}: its rows are far shorter than its widest row of {width:,} fields: filled out "
                             f"to that width, {rows:,} rows make {rows * width:,} cells from a file of {size:,} "
                             "bytes; complete the rows or remove the empty columns")

    def check_cell_count(self, path: Path, rows: int, columns: int) -> None:
        """Refuse a table of more cells than a table file within the size limit can hold (one byte a cell)."""
        if rows * columns > self.max_bytes:
            raise TableError(f"{path}: {rows:,} rows by {columns:,} columns is more cells than a table file within the "
                             f"limit of {self.max_bytes:,} bytes can hold; raise it with BINDER_MAX_TABLE_BYTES if "
                             "the file is trusted")

#: a delimited file's rows, filled out to the header's width, may hold this many cells per byte of the file
#: (complete rows hold fewer than one: every cell ends with a separator or a newline)
FILL_FACTOR = 4


def _line_count(path: Path) -> int:
    """The lines of a text file (a last line without a newline counts), read in blocks."""
    count, last = 0, b"\n"
    with open(path, "rb") as handle:
        while block := handle.read(1 << 20):
            count += block.count(b"\n")
            last = block[-1:]
    return count + (last != b"\n")


_WHITESPACE = re.compile(r"\s+")
_NUMBER = re.compile(
    r"""^[+-]?
        (?: (?: 0 | [1-9]\d{0,2}(?:,\d{3})+ | [1-9]\d* ) (?:\.\d+)?
          | \.\d+ )$""",
    re.VERBOSE,
)


def is_row_numbers(index: pd.Index) -> bool:
    """Whether an index is only the row numbers 0, 1, 2, ...: any other holds labels (years, ids, dates, a
    grouped answer's keys, the row numbers a filtered table kept, which cannot be told from ids)."""
    if isinstance(index, pd.RangeIndex):
        return index.start == 0 and index.step == 1
    return pd.api.types.is_integer_dtype(index.dtype) and bool((index.to_numpy() == np.arange(len(index))).all())


def normalize_header(name: object) -> str:
    """Strip a column name and collapse every run of whitespace (newlines too) to one space."""
    return _WHITESPACE.sub(" ", str(name)).strip()


def make_unique_headers(names: list[str]) -> list[str]:
    """Make duplicate names unique deterministically: ``a, a, a`` -> ``a, a_2, a_3``.

    A generated name that already exists is skipped (``a, a, a_2`` ->
    ``a, a_3, a_2``). Empty names are left as they are (see :func:`prepare_table`).
    """
    taken = set(names)
    seen: Counter[str] = Counter()
    result = []
    for name in names:
        seen[name] += 1
        if seen[name] == 1:
            result.append(name)
            continue
        k = seen[name]
        candidate = f"{name}_{k}"
        while candidate in taken:
            k += 1
            candidate = f"{name}_{k}"
        seen[name] = k
        taken.add(candidate)
        result.append(candidate)
    return result


def parse_number(text: str) -> int | float | None:
    """Parse one cell by the numeric rule of :func:`prepare_table`; ``None`` when not numeric."""
    text = text.strip()
    if not _NUMBER.match(text):
        return None
    plain = text.replace(",", "")
    if "." in plain:
        value = float(plain)
        return value
    return int(plain)


# --------------------------------------------------------------------------- prepare


def _column_names(columns: pd.Index) -> list[str]:
    if isinstance(columns, pd.MultiIndex):
        raise TableError(
            "the table has multi-level (MultiIndex) column names; flatten them to strings first, e.g. "
            "df.columns = [' '.join(map(str, c)) for c in df.columns]")
    names = []
    for position, name in enumerate(columns):
        if isinstance(name, str):
            names.append(name)
        elif isinstance(name, numbers.Integral) and not isinstance(name, bool):
            names.append(str(int(name)))
        else:
            raise TableError(
                f"column {position + 1} has a non-string name {name!r} ({type(name).__name__}); "
                "column names must be strings (integers are converted): rename the columns, "
                "e.g. df.columns = ['name', 'year', ...]")
    names = [normalize_header(n) for n in names]
    given = set(names)
    names = [n or _free_name(f"column_{i + 1}", given) for i, n in enumerate(names)]
    duplicates = [n for n, c in Counter(names).items() if c > 1]
    if duplicates:
        shown = ", ".join(repr(n) for n in duplicates[:10])
        raise TableError(
            f"the table has duplicate column names: {shown} (after trimming whitespace); "
            "rename the columns so that every name is different")
    return names


def _free_name(name: str, taken: set[str]) -> str:
    """``name`` for an unnamed column, or ``name_2``, ``name_3``, ... when a named column has it (an unnamed
    second column beside one named ``column_2`` was refused as a duplicate of a name the file has once)."""
    free, n = name, 1
    while free in taken:
        n += 1
        free = f"{name}_{n}"
    return free


def _is_missing(value: object) -> bool:
    if value is None or value is pd.NA or value is pd.NaT:
        return True
    return isinstance(value, float) and math.isnan(value)


def _type_string_column(values: list[object]) -> pd.Series | None:
    """Numeric Series for an all-string column that passes the numeric rule, else ``None``."""
    parsed: list[int | float | None] = []
    any_value = False
    for value in values:
        if _is_missing(value) or not value.strip():  # type: ignore[union-attr]
            parsed.append(None)
            continue
        number = parse_number(value)  # type: ignore[arg-type]
        if number is None:
            return None
        any_value = True
        parsed.append(number)
    if not any_value:
        return None
    has_empty = any(v is None for v in parsed)
    integral = all(v is None or isinstance(v, int) or float(v).is_integer() for v in parsed)
    if integral and not has_empty:
        ints = [int(v) for v in parsed]  # type: ignore[arg-type]
        if all(-(2**63) <= v < 2**63 for v in ints):
            return pd.Series(ints, dtype="int64")
    floats = []
    for v in parsed:
        if v is None:
            floats.append(np.nan)
            continue
        if isinstance(v, int) and abs(v) > 10**15 and (abs(v) >= 2**1024 or int(float(v)) != v):
            return None  # would lose digits (or not fit a float at all): keep the text
        f = float(v)
        floats.append(f)
    return pd.Series(floats, dtype="float64")


def prepare_table(df: pd.DataFrame) -> pd.DataFrame:
    """Validate a table and type its columns; returns a new DataFrame (see the module docstring).

    Raises :class:`~binder_py.errors.TableError` for: not a DataFrame, no
    columns, no rows, non-string column names (integers are converted),
    duplicate column names, a named or non-integer index.
    """
    if not isinstance(df, pd.DataFrame):
        raise TableError(f"expected a pandas DataFrame as the table, got {type(df).__name__}; "
                         "build one with pd.DataFrame(...) or load a file with binder_py.tables.load_table(path)")
    if df.shape[1] == 0:
        raise TableError("the table has no columns; give a table with a header row and at least one column")
    names = _column_names(df.columns)
    if df.shape[0] == 0:
        raise TableError("the table has no rows; give a table with at least one data row under the header")
    index = df.index
    if not isinstance(index, pd.RangeIndex) or index.start != 0 or index.step != 1:
        if isinstance(index, pd.MultiIndex) or any(n is not None for n in index.names):
            raise TableError(
                f"the table has a named index ({', '.join(str(n) for n in index.names)}); call "
                "df.reset_index() to keep it as a column, or df.reset_index(drop=True) to drop it")
        if not pd.api.types.is_integer_dtype(index.dtype):
            raise TableError(
                "the table has a non-integer row index; call df.reset_index() to keep it as a column, "
                "or df.reset_index(drop=True) to drop it")
    columns: dict[str, pd.Series] = {}
    for position, name in enumerate(names):
        column = df.iloc[:, position]
        values = column.tolist()
        is_text = pd.api.types.is_string_dtype(column.dtype) or column.dtype == object
        if column.dtype == object and any(isinstance(v, Decimal) for v in values) \
                and all(_is_missing(v) or isinstance(v, Decimal) for v in values):
            values = [None if _is_missing(v) or v.is_nan() else _decimal_text(v) for v in values]
        if is_text and all(_is_missing(v) or isinstance(v, str) for v in values):
            typed = _type_string_column(values)
            if typed is None:
                typed = pd.Series(["" if _is_missing(v) else v for v in values], dtype=str)
            columns[name] = typed
        else:
            columns[name] = column.reset_index(drop=True)
    result = pd.DataFrame(columns)
    result.index = pd.RangeIndex(len(result))
    return result


def _decimal_text(value: Decimal) -> str:
    """A Decimal as fixed-point text (at most 30 places for a tiny one), or as its own text when that would
    be huge (``1E+20000000``)."""
    if not value.is_finite() or value.adjusted() > 30:
        return str(value)
    return format(value, "f") if value.adjusted() >= -30 else format(value, ".30f")  # (1E-40: 0 to 30 places)


# --------------------------------------------------------------------------- load


#: how files that are not text begin, and what they are: an .xlsx renamed .csv was refused with "save it as
#: UTF-8", which its reader cannot do to a workbook
_MAGIC = ((b"PK\x03\x04", "an Excel workbook (.xlsx) or another zip archive", ".xlsx"),
          (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", "an old Excel workbook (.xls)", ".xls"),
          (b"PAR1", "a Parquet file", ".parquet"))


def _not_text(path: Path) -> str:
    """Why a delimited file could not be read as UTF-8 text, and what to do."""
    with open(path, "rb") as handle:
        start = handle.read(8)
    for magic, kind, suffix in _MAGIC:
        if start.startswith(magic):
            return (f"the file is {kind}, not {path.suffix} text; if it is, give it the extension {suffix} "
                    "(binder-py reads a file by its extension)")
    return "the file is not UTF-8 text; save it as UTF-8 (CSV UTF-8 in spreadsheet programs)"


def _read_delimited(path: Path, sep: str) -> pd.DataFrame:
    _check_other_delimiter(path, sep)
    try:
        raw = pd.read_csv(path, sep=sep, dtype=str, keep_default_na=False, header=None,
                          skip_blank_lines=True, encoding="utf-8-sig")
    except pd.errors.EmptyDataError:
        raise TableError(f"{path}: the file is empty; give a table with a header row and at least one data row") from None
    except UnicodeDecodeError:
        raise TableError(f"{path}: {_not_text(path)}") from None
    except pd.errors.ParserError as error:
        detail = str(error).strip().splitlines()[-1] if str(error).strip() else "malformed rows"
        raise TableError(
            f"{path}: cannot parse the file as {'TSV' if sep == chr(9) else 'CSV'} ({detail}); check that every row "
            "has the same number of fields and that quotes are balanced") from None
    return _header_from_first_row(_without_empty_rows(raw), path)


#: the delimiters a file with none of the expected one in its header probably used instead
_OTHER_DELIMITERS = {";": "semicolons", "\t": "tabs", ",": "commas", "|": "vertical bars"}


def _check_other_delimiter(path: Path, sep: str) -> None:
    """A file whose header row has no ``sep`` at all, while it and the next row both hold another
    delimiter (a spreadsheet's semicolon "CSV" in many locales, a tab-separated export named .csv)
    would load as one column named 'a;b;c', or fail to parse on a decimal comma: refuse it with
    what to do, rather than guess the delimiter (and, for semicolons, whether a comma is a decimal
    or a thousands separator)."""
    with open(path, encoding="utf-8-sig", errors="replace", newline="") as handle:
        header = handle.readline(1 << 20)
        first = handle.readline(1 << 20)
    if sep in header:
        return
    for other, name in _OTHER_DELIMITERS.items():
        if other != sep and other in header and other in first:
            kind = "TSV (tab-separated)" if sep == "\t" else "CSV (comma-separated)"
            hint = ("rename it to .tsv, " if other == "\t" else "rename it to .csv, " if other == "," else
                    "save it with commas as the separator, ")
            raise TableError(
                f"{path}: the header row has no {'tab' if sep == chr(9) else 'comma'}, and it and the next row "
                f"are separated by {name}; binder-py reads {path.suffix} files as {kind}: {hint}or read it with "
                f"pandas (e.g. pd.read_csv(path, sep={other!r}{', decimal=' + repr(',') if other == ';' else ''})) "
                "and pass the DataFrame")


def _header_from_first_row(raw: pd.DataFrame, path: Path) -> pd.DataFrame:
    if raw.shape[0] == 0 or raw.shape[1] == 0:
        raise TableError(f"{path}: the file has no header row; the first row must hold the column names")
    header = ["" if _is_missing(v) else str(v) for v in raw.iloc[0].tolist()]
    body = raw.iloc[1:].reset_index(drop=True)
    body.columns = header
    if body.shape[0] == 0:
        raise TableError(f"{path}: the table has a header but no data rows; add at least one row")
    return body


#: an .xlsx file is a zip archive of XML: its members may unpack to at most this many times the size limit
XLSX_UNPACKED_FACTOR = 10
#: ... and to at most this many times the file's size (Excel's and openpyxl's workbooks, even of one repeated
#: cell, compress 8 to 13 times; an archive of repeated XML 400 times and more) ...
XLSX_COMPRESSION_RATIO = 100
#: ... unless it unpacks to at most this many bytes
XLSX_SMALL_UNPACKED = 10 * 1024 * 1024


def _check_xlsx_extent(path: Path, limits: TableLimits) -> None:
    """Refuse a workbook whose first sheet would make a table larger than a CSV file within the size
    limit could (``limits.max_bytes`` cells, ``limits.max_columns`` columns), before pandas builds it.

    The file size says little: the archive's XML may unpack to a thousand times its size, and pandas
    fills every row up to the last row that holds a value and every row out to the widest one, so two
    cells, ``A1`` and ``ALL1048576``, make a billion. One streaming pass over the cells (openpyxl's own
    parser, as pandas reads them) finds the extent without building anything."""
    import zipfile

    with zipfile.ZipFile(path) as archive:
        unpacked = sum(member.file_size for member in archive.infolist())
    if unpacked > limits.max_bytes * XLSX_UNPACKED_FACTOR:
        raise TableError(f"{path}: the workbook unpacks to {unpacked:,} bytes, more than {XLSX_UNPACKED_FACTOR} times "
                         f"the table limit of {limits.max_bytes:,} bytes; raise it with BINDER_MAX_TABLE_BYTES if "
                         "the file is trusted")
    size = path.stat().st_size
    if unpacked > max(XLSX_SMALL_UNPACKED, XLSX_COMPRESSION_RATIO * size):
        # what is not cells costs too: openpyxl parses every string of the shared-string table (a 170 kB
        # workbook of two cells unpacked to 68 MB of strings, 75 s and 0.5 GB) and every empty cell
        raise TableError(f"{path}: the workbook's {size:,} bytes unpack to {unpacked:,}, more than "
                         f"{XLSX_COMPRESSION_RATIO} times its size (workbooks compress about 10 times): the file is "
                         "crafted or damaged; save the sheet as CSV if it is trusted")
    import openpyxl
    from openpyxl.worksheet._reader import WorkSheetParser

    book = openpyxl.load_workbook(path, read_only=True, data_only=True, keep_links=False)
    try:
        sheet = book.worksheets[0]
        rows = width = 0
        with sheet._get_source() as source:
            parser = WorkSheetParser(source, sheet._shared_strings, data_only=True, epoch=book.epoch,
                                     date_formats=book._date_formats, timedelta_formats=book._timedelta_formats)
            for number, cells in parser.parse():
                filled = [cell["column"] for cell in cells if cell["value"] not in (None, "")]
                if not filled:
                    continue
                rows, width = max(rows, number), max(width, max(filled))
                limits.check_columns(path, width)
                if rows * width > limits.max_bytes:
                    raise TableError(f"{path}: the first sheet spans {rows:,} rows by {width:,} columns, more cells "
                                     f"than a table file within the limit of {limits.max_bytes:,} bytes can hold; "
                                     "raise it with BINDER_MAX_TABLE_BYTES if the file is trusted")
    finally:
        book.close()
    if rows * width > FILL_FACTOR * unpacked + width:  # rows of a cell or two under a wide first row
        raise TableError(f"{path}: filled out to its widest row of {width:,} cells, the first sheet's {rows:,} rows "
                         f"make {rows * width:,} cells from {unpacked:,} bytes of workbook; complete the rows or "
                         "remove the empty columns")


def _read_excel(path: Path, limits: TableLimits) -> pd.DataFrame:
    try:
        if path.suffix.lower() == ".xlsx":
            _check_xlsx_extent(path, limits)
        raw = pd.read_excel(path, sheet_name=0, header=None, dtype=str, keep_default_na=False)
    except ImportError as error:
        package = "xlrd" if path.suffix.lower() == ".xls" else "openpyxl"
        raise TableError(f"{path}: reading {path.suffix} files needs the '{package}' package ({error}); "
                         f"install it (pip install {package}) or save the sheet as CSV") from None
    except TableError:
        raise
    except Exception as error:  # openpyxl/zipfile raise many different types on garbled files
        raise TableError(f"{path}: cannot read the file as an Excel workbook ({type(error).__name__}: {error}); "
                         "check the file or save the sheet as CSV") from None
    raw = _without_empty_rows(raw)
    if raw.shape[0] < 2:  # nothing, or one row (a cover sheet's title) and nothing under it
        _refuse_first_sheet(path, empty=raw.empty)
    return _header_from_first_row(raw, path)


def _without_empty_rows(raw: pd.DataFrame) -> pd.DataFrame:
    """``raw`` (cells read as text, an empty cell ``""``) without its rows that hold nothing: a blank
    first row of a sheet made the header column_1, column_2, ... and numbers text, and a CSV file's
    ``,,,`` lines (a spreadsheet's empty rows under the table) were rows of NaN that counted in
    ``len(df)`` and made a column of whole numbers floats."""
    return raw[~(raw.isna() | (raw == "")).all(axis=1)].reset_index(drop=True)


def _refuse_first_sheet(path: Path, *, empty: bool) -> None:
    """A workbook whose first sheet holds no table (nothing, or one row): name its sheets (only the first
    is read) when it has others. A cover sheet with only a title was refused with "the table has a
    header but no data rows", which sent its reader looking for rows the table on the next sheet has."""
    try:
        sheets = [str(name) for name in pd.ExcelFile(path).sheet_names]
    except Exception:  # noqa: BLE001 - read once already; the message then names no sheets
        sheets = []
    if len(sheets) < 2:
        if empty:
            raise TableError(f"{path}: the sheet is empty; give a table with a header row and at least one data row")
        raise TableError(f"{path}: the table has a header but no data rows; add at least one row")
    state = "is empty" if empty else "holds one row and nothing under it"
    raise TableError(
        f"{path}: the first sheet ({sheets[0]!r}) {state}, and binder-py reads only the first sheet of a "
        f"workbook (this one has {', '.join(repr(s) for s in sheets)}): move the table to the first sheet, "
        f"save that sheet as CSV, or read it with pandas (pd.read_excel(path, sheet_name={sheets[1]!r})) and "
        "pass the DataFrame")


def _check_parquet_extent(path: Path, limits: TableLimits) -> None:
    """Refuse a Parquet file whose table is larger than a CSV file within the size limit could hold,
    from its footer, before reading it: run-length and dictionary encoding make a 45 kB file of
    10 million rows."""
    import pyarrow.parquet as pq

    import pyarrow as pa

    source = pq.ParquetFile(path)
    nested = [f.name for f in source.schema_arrow if pa.types.is_nested(f.type)]
    if nested:  # a table's cells are flat; a list of one repeated long text decodes into gigabytes
        raise TableError(f"{path}: column {nested[0]!r} holds lists or records, not values; flatten the table "
                         "(one value a cell) and save it again, or save it as CSV")
    metadata = source.metadata
    limits.check_columns(path, metadata.num_columns)
    limits.check_cell_count(path, metadata.num_rows, metadata.num_columns)


#: Parquet is decoded this many rows at a time, each batch's text counted before the next is read
PARQUET_BATCH_ROWS = 4096


def _read_parquet_table(path: Path, limits: TableLimits) -> pd.DataFrame:
    """The file as pandas reads it, decoded a batch at a time, refused as soon as its text passes what a CSV file
    within the size limit holds (``limits.max_bytes``) or a value passes the cell limit (as UTF-8 bytes).

    A dictionary-encoded column stores a value once and each row's index into the dictionary: 300 rows of one
    value of a million characters made a 463-byte file that pandas decoded into 1.2 GB before the cell limit
    was checked. Text columns are read as dictionaries here (nothing expanded) and their decoded size is
    counted from the indices."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    schema = pq.ParquetFile(path).schema_arrow
    texts = [f.name for f in schema if pa.types.is_string(f.type) or pa.types.is_large_string(f.type)
             or pa.types.is_binary(f.type) or pa.types.is_large_binary(f.type)]
    source = pq.ParquetFile(path, read_dictionary=texts)
    longest = 4 * limits.max_cell_chars  # a character is at most 4 bytes of UTF-8
    total, batches = 0, []
    for batch in source.iter_batches(batch_size=PARQUET_BATCH_ROWS):
        for column in batch.columns:
            if pa.types.is_dictionary(column.type):
                lengths = pc.binary_length(column.dictionary) if len(column.dictionary) else pa.array([], pa.int64())
                if len(lengths) and (pc.max(lengths).as_py() or 0) > longest:
                    limits.check_cells(path, [[column.dictionary[pc.index(lengths, pc.max(lengths)).as_py()].as_py()]])
                total += (pc.sum(pc.take(lengths, column.indices)).as_py() or 0) if len(column) else 0
            else:  # numbers, dates, ...: 8 bytes a cell, where a CSV file spends one or more
                total += column.nbytes // 8
        if total > limits.max_bytes:
            raise TableError(f"{path}: the Parquet file decodes to more than {limits.max_bytes:,} bytes, more than a table "
                             "file within the limit can hold; raise it with BINDER_MAX_TABLE_BYTES if the file is trusted")
        batches.append(batch)
    table = pa.Table.from_batches(batches, schema=batches[0].schema) if batches else source.read()
    table = table.replace_schema_metadata(schema.metadata)
    return table.to_pandas()


def _read_parquet(path: Path, limits: TableLimits) -> pd.DataFrame:
    try:
        _check_parquet_extent(path, limits)
        df = _read_parquet_table(path, limits)
    except ImportError as error:
        raise TableError(f"{path}: reading Parquet needs 'pyarrow' ({error}); install it (pip install pyarrow) "
                         "or save the table as CSV") from None
    except TableError:
        raise
    except Exception as error:
        raise TableError(f"{path}: cannot read the file as Parquet ({type(error).__name__}: {error}); "
                         "check the file or save the table as CSV") from None
    named = [name for name in df.index.names if name is not None]
    if named:  # a named index (df.set_index("name").to_parquet(...)) holds data: keep it as columns
        if any(name in df.columns for name in named):
            raise TableError(f"{path}: the index {named} has the name of a column; rename one of them")
        df = df.reset_index(level=named)
    if not named and not is_row_numbers(df.index):
        # an unnamed index of labels (a time series' dates, row names, years, ids) holds data too; only the
        # row numbers 0, 1, 2, ... are dropped
        if "index" in df.columns:
            raise TableError(f"{path}: the table has an unnamed index of labels and a column named 'index'; name "
                             "the index (df.index.name = ...) or rename the column")
        df = df.reset_index()
    if df.columns.duplicated().any():
        raise TableError(f"{path}: duplicate column names {sorted(set(df.columns[df.columns.duplicated()]))}; "
                         "rename the columns so that every name is different")
    # Parquet is typed already; read it as text like the other formats so the same typing rules apply.
    as_text = {}
    for name in df.columns:
        column = df[name]
        as_text[name] = ["" if _is_missing(v) else (v if isinstance(v, str) else _cell_text(v)) for v in column.tolist()]
    result = pd.DataFrame(as_text, columns=list(df.columns), dtype=object)
    result.columns = list(df.columns)
    return result


_AT_MIDNIGHT = re.compile(r"\d{4}-\d{2}-\d{2} 00:00:00")


def _dates_without_midnight(raw: pd.DataFrame) -> pd.DataFrame:
    """A workbook's or Parquet file's date column reads as the dates (``2020-01-01``), as the
    spreadsheet shows them, not as pandas writes a date's timestamp (``2020-01-01 00:00:00``) in
    every cell: a column whose filled cells are all timestamps at midnight loses the time. A
    column with one time of day keeps every cell as it is."""
    out = raw
    for position in range(raw.shape[1]):
        cells = raw.iloc[:, position]
        filled = [c for c in cells.tolist() if isinstance(c, str) and c != ""]
        if filled and all(_AT_MIDNIGHT.fullmatch(c) for c in filled):
            if out is raw:
                out = raw.copy()
            out.isetitem(position, [c[:10] if isinstance(c, str) and c else c for c in cells.tolist()])
    return out


def _cell_text(value: object) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def check_table_file(path: str | os.PathLike[str]) -> Path:
    """``path`` when it names a table file :func:`load_table` can try (an accepted extension, a file that
    exists and is not empty), else a :class:`~binder_py.errors.TableError` saying what to fix; nothing is
    read, so many files are checked before any is used."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in ACCEPTED_EXTENSIONS:
        reader = _PANDAS_READERS.get(suffix)
        fix = (f"convert it to CSV (pd.{reader}.to_csv('table.csv', index=False)) or, in Python, pass the "
               f"DataFrame pd.{reader} gives" if reader else "rename the file or convert it to CSV")
        raise TableError(
            f"{path}: unknown table format {suffix or '(no extension)'!r}; accepted extensions are "
            f"{', '.join(ACCEPTED_EXTENSIONS)} ({fix})")
    if not path.exists():
        raise TableError(f"{path}: no such file; check the path")
    if path.is_dir():
        raise TableError(f"{path}: is a directory, not a table file")
    if path.stat().st_size == 0:
        raise TableError(f"{path}: the file is empty; give a table with a header row and at least one data row")
    return path


def load_table(path: str | os.PathLike[str], *, limits: TableLimits | None = None) -> pd.DataFrame:
    """Read a table file and return it prepared by :func:`prepare_table`.

    Accepted extensions (case-insensitive): ``.csv`` (comma-separated),
    ``.tsv``/``.tab`` (tab-separated), ``.parquet``/``.pq``, ``.xlsx``/``.xls``
    (first sheet). The first row (for Parquet: the column names) is the
    header, read exactly as written. Every cell is read as text (empty cells
    are ``""``) and then typed by :func:`prepare_table`. Duplicate column
    names are an error (rename them in the file).

    ``limits`` (default :meth:`TableLimits.from_env`) bounds the file size, the number of columns
    and the cell length. Raises :class:`~binder_py.errors.TableError` with a message saying what to fix.
    """
    path = check_table_file(path)
    suffix = path.suffix.lower()
    limits = limits or TableLimits.from_env()
    limits.check_size(path, path.stat().st_size)
    if suffix == ".csv":
        limits.check_header_line(path, ",")
        raw = _read_delimited(path, ",")
    elif suffix in (".tsv", ".tab"):
        limits.check_header_line(path, "\t")
        raw = _read_delimited(path, "\t")
    elif suffix in (".parquet", ".pq"):
        raw = _dates_without_midnight(_read_parquet(path, limits))
    else:
        raw = _dates_without_midnight(_read_excel(path, limits))
    limits.check_columns(path, raw.shape[1])
    limits.check_cells(path, raw)
    names = [normalize_header(n) for n in raw.columns]
    duplicates = sorted(n for n, c in Counter(names).items() if c > 1 and n)
    if duplicates:
        raise TableError(
            f"{path}: duplicate column names {', '.join(repr(n) for n in duplicates)}; "
            "rename the columns in the file so that every name is different")
    try:
        return prepare_table(_blank_missing_markers(raw))
    except TableError as error:
        raise TableError(f"{path}: {error}") from None


#: formats binder-py does not read whose table pandas reads (renaming such a file, as the message for an
#: unknown extension said, reads JSON as CSV)
_PANDAS_READERS = {".json": "read_json(path)", ".jsonl": "read_json(path, lines=True)",
                   ".ndjson": "read_json(path, lines=True)", ".feather": "read_feather(path)",
                   ".xlsm": "read_excel(path)", ".ods": "read_excel(path)"}


#: the cells pandas' ``read_csv`` reads as missing by default (``keep_default_na``), less the empty one
MISSING_MARKERS = frozenset({"#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND", "1.#QNAN",
                             "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null"})


def _has_marker(column: pd.Series) -> bool:
    """Whether a cell of ``column`` is one of :data:`MISSING_MARKERS` (vectorised for a text column)."""
    # (a missing cell, None or NaN, reads as missing, not as the text "None" or "nan")
    texts = column if isinstance(column.dtype, pd.StringDtype) else column.astype("str")
    return bool(texts.str.strip().isin(MISSING_MARKERS).any())


def _blank_missing_markers(raw: pd.DataFrame) -> pd.DataFrame:
    """A file's column of numbers with some cells marked missing (``N/A``, ``NaN``, ``NULL``, as
    spreadsheets and other tools write them) reads as numbers with those cells empty (NaN), as
    ``pd.read_csv`` reads it: kept as text, its ``max()`` compared text and answered ``'N/A'``. A
    column with any other text keeps every cell as written (a country column's ``NA`` stays)."""
    blanked: dict[int, pd.Series] = {}
    for position in range(raw.shape[1]):
        column = raw.iloc[:, position]
        # a column with no marker (nearly every one) costs one vectorised pass, not a parse per cell
        if not _has_marker(column):
            continue
        values = column.tolist()
        if not all(isinstance(v, str) for v in values):
            continue
        cells = [v.strip() for v in values]
        markers = [c in MISSING_MARKERS for c in cells]
        numbers = [bool(c) and not m and parse_number(c) is not None for c, m in zip(cells, markers)]
        if any(markers) and any(numbers) and all(m or n or not c for c, m, n in zip(cells, markers, numbers)):
            blanked[position] = pd.Series(["" if m else v for v, m in zip(values, markers)], index=raw.index)
    if not blanked:
        return raw
    out = raw.copy()
    for position, series in blanked.items():
        out.isetitem(position, series)
    return out
