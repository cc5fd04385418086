"""A warning when the winning program orders numbers that the table holds as text.

Money, percentages and numbers with thousands commas stay text (:mod:`binder_py.tables`: the
analyst's cells are kept as written), and text orders character by character: over ``$1,234.50``,
``$987.00`` and ``$2,500.00``, ``df["Amount ($)"].max()`` answers ``$987.00``, and
``df.sort_values("Amount ($)")``, ``idxmax()``, ``nlargest`` or ``df["Amount ($)"] > "$500"`` pick rows
by the same order. Nothing fails, so nothing else reveals it (a sum of such cells joins them and is
refused: :mod:`binder_py.language.joined_text`).

Only the program's syntax tree is read (it is never run here). A column counts when it is a text
column of a table whose filled cells all read as numbers once a currency sign, a percent sign and
thousands commas are set aside, and whose order as text is not its order as numbers, unless the
program changes that column or table first (``df["amount"] = pd.to_numeric(...)``). Recognised:
``T["col"]`` or ``T.col`` (``T`` a table's name or a subscript of one, as in
:func:`binder_py.pipeline.literal_hints.column_of`) followed by ``max``, ``min``, ``idxmax``,
``idxmin``, ``argmax``, ``argmin``, ``nlargest``, ``nsmallest``, ``sort_values``, ``rank``,
``cummax`` or ``cummin``; ``T.sort_values(...)``, ``T.nlargest(n, ...)`` and ``T.nsmallest(n, ...)``
naming it; and ``<``, ``>``, ``<=``, ``>=`` between it and anything.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterable, Iterator, Mapping

import pandas as pd

from binder_py.answer import REORDER_NOTE
from binder_py.pipeline.literal_hints import column_of, literal_texts
from binder_py.neural.requests import parse_number
from binder_py.normalize import HEIGHT_TEXT
from binder_py.pipeline.literal_links import changed_columns

__all__ = ["WRITTEN_NUMBER", "amounts_written", "columns_read_unchanged", "distinct_texts", "numeric_conversion", "order_by_value", "table_name_of",
           "text_ordered_numbers", "value_order"]

#: a column's methods whose result follows its order
_ORDERING = frozenset({"max", "min", "idxmax", "idxmin", "argmax", "argmin", "nlargest", "nsmallest",
                       "sort_values", "rank", "cummax", "cummin"})
_ORDER_OPS = (ast.Lt, ast.Gt, ast.LtE, ast.GtE)
#: a number written as text: an optional sign and currency sign, digits (with thousands commas), decimals,
#: an optional percent sign
#: (ASCII digits only: "١٢" matched \d, its digits were then stripped and float("") failed the vote stage)
WRITTEN_NUMBER = re.compile(r"[-+]?\s*[$€£¥]?\s*([0-9]{1,3}(,[0-9]{3})+|[0-9]+)(\.[0-9]+)?\s*%?")
#: distinct cells read (the first ones, in table order)
MAX_VALUES = 5_000
#: a column is ordered by value (order_by_value) only when it has at most this many distinct cells: their
#: order is written into the program
MAX_ORDERED_VALUES = 200
#: an amount with a scale word: "$836.8 million", "$2.26 billion", "€1.2bn", "450 thousand"
_AMOUNT = re.compile(r"([$€£¥]?)\s*([0-9]{1,3}(?:,[0-9]{3})+|[0-9]+)(\.[0-9]+)?\s*"
                     r"(thousand|million|billion|trillion|k|m|bn|mn)?", re.IGNORECASE)
_SCALES = {"thousand": 1e3, "k": 1e3, "million": 1e6, "m": 1e6, "mn": 1e6, "billion": 1e9, "bn": 1e9,
           "trillion": 1e12}


def _amount(match: re.Match[str]) -> float:
    _, whole, fraction, scale = match.groups()
    return float(whole.replace(",", "") + (fraction or "")) * _SCALES.get((scale or "").lower(), 1.0)


#: a number with a unit after it: "6,650 km", "1.39 kg", "12 ft."
_MEASURE = re.compile(r"([0-9]{1,3}(?:,[0-9]{3})+|[0-9]+)(\.[0-9]+)?\s*([^\W\d_]+\.?)")


#: a duration or time written with colons: h:mm:ss, m:ss.ss, hh:mm (one shape per column, so that the
#: order holds whichever unit the first field is)
_CLOCK = re.compile(r"(\d+):(\d{2})(?::(\d{2}))?(\.\d+)?")
#: a duration written with units: "8h 10m", "45 min", "9.58 s"
_WITH_UNITS = re.compile(r"\d+\s*(h|hr|hrs|hours?)(\s*\d+\s*(m|min|mins|minutes?))?"
                         r"|\d+\s*(m|min|mins|minutes?)(\s*\d+\s*(s|sec|secs|seconds?))?"
                         r"|\d+(\.\d+)?\s*(s|sec|secs|seconds?)")
_DATE_LIKE = re.compile(r"[a-z]{3}|\d[-/.]\d", re.IGNORECASE)
_YEAR = re.compile(r"(?<!\d)\d{4}(?!\d)")


def text_ordered_numbers(program: str, tables: Mapping[str, pd.DataFrame]) -> list[str]:
    """One line per column of numbers held as text that ``program`` orders (module docstring), each
    starting "orders column ..."."""
    lines: list[str] = []
    for table_name, column, cells in columns_read_unchanged(program, tables, _ordered_columns):
        disorder = _disorder(cells)
        if disorder is not None:
            first, second = disorder
            conversion = numeric_conversion(table_name, column)
            lines.append(f"orders column {column!r} (a max, min, sort or <, >), whose numbers the table holds as "
                         f"text, so in text order: {first!r} before {second!r}; to order them as numbers convert the "
                         f"column first, e.g. {conversion}")
    return lines


def order_by_value(program: str, tables: Mapping[str, pd.DataFrame],
                   orders: dict[tuple[str, str], list[str] | None] | None = None) -> tuple[str, tuple[str, ...]] | None:
    """The program with each text column it orders whose cells write numbers, durations or dates in
    another order than their text's (:func:`value_order`) made an ordered categorical first —
    ``df['unit cost'] = pd.Categorical(df['unit cost'], categories=['$3.50', '$4.25', …, '$14.90'],
    ordered=True)`` — so that its max, min, sort, idxmax and ``<``/``>`` follow the values while its cells
    keep their text; and one note per column. None when it orders no such column (or changes it first).
    ``orders`` keeps each column's :func:`value_order` for the next program (the link stage reads every
    candidate against the same tables)."""
    read = columns_read_unchanged(program, tables, _ordered_columns)
    orders = {} if orders is None else orders
    lines: list[str] = []
    notes: list[str] = []
    for table_name, column, cells in read:
        if (table_name, column) not in orders:
            orders[(table_name, column)] = value_order(cells)
        order = orders[(table_name, column)]
        if order is None or len(order) > MAX_ORDERED_VALUES:
            continue
        where = f"{table_name}[{column!r}]"
        lines.append(f"{where} = pd.Categorical({where}, categories={order!r}, ordered=True)")
        shown = " < ".join(repr(cell) for cell in order[:3]) + (" < …" if len(order) > 3 else "")
        notes.append(f"{column!r} {REORDER_NOTE} ({shown}), not as text")
    if not lines:
        return None
    return "\n".join(lines) + "\n" + program, tuple(notes)


def columns_read_unchanged(program: str, tables: Mapping[str, pd.DataFrame],
                           reads: Callable[[ast.AST], Iterable[tuple[str, str]]]) -> list[tuple[str, str, pd.Series]]:
    """``(table name, column, its cells)`` for each distinct column ``reads`` finds in the program's syntax
    tree that is one column of a table the program does not change before (``df["amount"] =
    pd.to_numeric(...)``, ``df = df.assign(...)``: the cells are not the table's by then); none when the
    program does not parse."""
    try:
        tree = ast.parse(program)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    changed = changed_columns(tree, tables)
    found: list[tuple[str, str, pd.Series]] = []
    for table_name, column in dict.fromkeys(reads(tree)):
        table = tables.get(table_name)
        if (table is None or column not in table.columns or table_name in changed
                or (table_name, column) in changed or not isinstance(table[column], pd.Series)):
            continue  # (unknown, missing, changed first, or two columns of one name)
        found.append((table_name, column, table[column]))
    return found


def distinct_texts(column: pd.Series, limit: int) -> list[str] | None:
    """The column's distinct filled-or-blank cells, in table order, when it is a text column (every cell
    that is not missing is a str) with at most ``limit`` of them; None otherwise (numbers, booleans,
    mixed cells, too many)."""
    if pd.api.types.is_numeric_dtype(column.dtype) or pd.api.types.is_bool_dtype(column.dtype):
        return None
    distinct = column.dropna().unique()
    if len(distinct) > limit or not all(isinstance(v, str) for v in distinct):
        return None
    return list(distinct)


def value_order(column: pd.Series) -> list[str] | None:
    """The column's distinct cells in the order of the values they write, when every filled cell writes
    one kind of value — a number (a currency sign, a percent sign, thousands commas: ``$1,234.50``; a
    scale word: ``$836.8 million`` before ``$1.006 billion``; one unit for every cell: ``9 km`` before
    ``12 km``), a
    duration (``8h 10m``, ``1:19:56``), a height in feet and inches (``6'5"``, ``6–11`` after ``6–8``) or a date
    with its year (``March 3, 2015``, ``2012-07-19``) — and that
    order is not their order as text; empty cells first. None otherwise (a column of numbers or booleans, text, mixed
    kinds, more than :data:`MAX_VALUES` distinct cells)."""
    distinct = distinct_texts(column, MAX_VALUES)
    if distinct is None:
        return None
    cells = [v for v in distinct if v.strip()]
    if len(cells) < 2:
        return None
    values = _values(cells)
    if values is None:
        return None
    by_value = [cell for _, cell in sorted(zip(values, cells), key=lambda pair: (pair[0], pair[1]))]
    if by_value == sorted(cells):
        return None
    return [v for v in distinct if not v.strip()] + by_value


def amounts_written(cells: list[str]) -> list[float] | None:
    """Each cell's number when every cell writes an amount: a number as text (``$1,234.50``, ``12%``), an
    amount with a scale word (``$836.8 million``) or a measure in one unit for all of them (``6,650 km``);
    else None."""
    stripped = [cell.strip() for cell in cells]
    if all(WRITTEN_NUMBER.fullmatch(cell) for cell in stripped):
        return _written_numbers(stripped)
    amounts = [_AMOUNT.fullmatch(cell) for cell in stripped]
    if all(amounts):
        return [_amount(m) for m in amounts if m]
    measures = [_MEASURE.fullmatch(cell) for cell in stripped]
    if all(measures) and len({m.group(3).casefold() for m in measures if m}) == 1:  # one unit: "6,650 km"
        return [float(m.group(1).replace(",", "") + (m.group(2) or "")) for m in measures if m]
    return None


def _values(cells: list[str]) -> list[float] | None:
    """Each cell's value as a number (numbers, durations in seconds, dates in nanoseconds), when all the
    cells write values of one kind; else None."""
    stripped = [cell.strip() for cell in cells]
    amounts = amounts_written(stripped)
    if amounts is not None:
        return amounts
    try:
        clocks = [_CLOCK.fullmatch(cell) for cell in stripped]
        if all(clocks) and len({(m.group(3) is None, m.group(4) is None) for m in clocks if m}) == 1:
            return [_clock_seconds(m) for m in clocks if m]
        heights = [HEIGHT_TEXT.fullmatch(cell) for cell in stripped]  # a person's: 4 to 8 feet, under 12 inches
        if all(m and 4 <= int(m.group(1)) <= 8 and float(m.group(2)) < 12 for m in heights):
            return [int(m.group(1)) * 12 + float(m.group(2)) for m in heights if m]
        if all(_WITH_UNITS.fullmatch(cell.lower()) for cell in stripped):
            return [pd.to_timedelta(cell.lower()).total_seconds() for cell in stripped]
        if all(_DATE_LIKE.search(cell) and _YEAR.search(cell) for cell in stripped):  # (no year: a season's
            # "October 31" comes before its "January 4", which no calendar order knows)
            dates = pd.to_datetime(pd.Series(stripped), format="mixed", errors="raise")
            return [float(d.value) for d in dates]
    except (ValueError, TypeError, OverflowError):
        return None
    return None


def _written_numbers(cells: list[str]) -> list[float] | None:
    """Each cell's number when every cell is a number written as text (:data:`WRITTEN_NUMBER`, read by
    the reader typed answers use); else None."""
    if not all(WRITTEN_NUMBER.fullmatch(cell) for cell in cells):
        return None
    numbers = [parse_number(cell) for cell in cells]
    return None if any(n is None for n in numbers) else [float(n) for n in numbers]  # type: ignore[arg-type]


def _clock_seconds(match: re.Match[str]) -> float:
    first, second, third, fraction = match.groups()
    fields = [int(first), int(second)] + ([int(third)] if third is not None else [])
    seconds = 0.0
    for field in fields:
        seconds = seconds * 60 + field
    return seconds + (float(fraction) if fraction else 0.0)


def numeric_conversion(table_name: str, column: str) -> str:
    """The pandas expression that reads a column of numbers written as text (``$1,234.50``, ``12%``) as
    numbers: every character but digits, the point and the minus sign set aside."""
    return f"pd.to_numeric({table_name}[{column!r}].str.replace(r'[^0-9.\\-]', '', regex=True), errors='coerce')"


def _ordered_columns(tree: ast.AST) -> Iterator[tuple[str, str]]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            method, owner = node.func.attr, node.func.value
            found = column_of(owner)
            if found is not None and method in _ORDERING:
                yield found
            elif method in ("sort_values", "nlargest", "nsmallest") and table_name_of(owner) is not None:
                position = 0 if method == "sort_values" else 1
                named = [k.value for k in node.keywords if k.arg in ("by", "columns")]
                for argument in [*node.args[position:position + 1], *named]:
                    for column in literal_texts(argument):
                        yield table_name_of(owner), column  # type: ignore[misc]
        elif isinstance(node, ast.Compare) and any(isinstance(op, _ORDER_OPS) for op in node.ops):
            for side in (node.left, *node.comparators):
                found = column_of(side)
                if found is not None:
                    yield found


def table_name_of(node: ast.AST) -> str | None:
    """The table a DataFrame expression reads: ``T`` or a subscript of it (``df[mask]``, ``df[cols]``,
    ``df.loc[mask]``)."""
    while isinstance(node, ast.Subscript) or (isinstance(node, ast.Attribute) and node.attr in ("loc", "iloc")):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _disorder(column: pd.Series) -> tuple[str, str] | None:
    """Two cells in text order whose numbers are in the other order, when the column is text whose filled
    cells are all numbers written as text (with a sign, a percent sign or commas); else None."""
    if pd.api.types.is_numeric_dtype(column.dtype) or pd.api.types.is_bool_dtype(column.dtype):
        return None
    cells = sorted({v.strip() for v in column.dropna().unique()[:MAX_VALUES] if isinstance(v, str) and v.strip()})
    numbers = _written_numbers(cells) if len(cells) >= 2 else None
    if numbers is None:  # (a warning never fails a question)
        return None
    return next(((cells[i], cells[i + 1]) for i in range(len(cells) - 1) if numbers[i] > numbers[i + 1]), None)
