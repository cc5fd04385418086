"""TRUSTED worker-side code (runs in the sandbox worker): the function every neural call site is
rewritten to.

The sandbox imports this module in the worker and calls
``worker_globals(callbacks, namespace)``; the mapping it returns is bound in the
program's globals. The bridge resolves a call's context to a sub-table, computes
row keys, sends only DISTINCT rows (kind ``col``) as plain data to the parent
callback ``binder_neural``, which answers in the order of the keys sent (looked up BY KEY in
the parent), spreads the answers from the keys to the context's rows and types them (see
:mod:`binder_py.neural.requests`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

import numpy as np
import pandas as pd

from binder_py.language.columns import column_key
from binder_py.language.messages import NeuralCallMessage, read_column_reply, rows_to_columns, wire_message
from binder_py.language.program import BRIDGE_NAME, CALLBACK_NAME
from binder_py.language.yes_no_text import YES_NO_COMPARE_NAME, compare_yes_no
from binder_py.neural.requests import context_rows, date_column, distinct_context_columns, type_column, type_value


class NeuralCallError(Exception):
    """A neural call was written wrongly (bad context, unknown column, non-text question)."""


_NO_COLUMN = object()


def _find_column(df: pd.DataFrame, name: Any) -> Any:
    """The column of ``df`` that ``name`` names (exactly, else the one equal but for case and surrounding
    spaces, else the one spelt alike but for case, runs of white space and underscores, as column literals
    elsewhere in a program), or :data:`_NO_COLUMN`."""
    try:
        if name in df.columns:
            return name
    except TypeError:  # an unhashable name names no column
        return _NO_COLUMN
    if isinstance(name, str):
        for key in (lambda c: c.strip().casefold(), column_key):  # the closer spelling first
            folded = [c for c in df.columns if isinstance(c, str) and key(c) == key(name)]
            if len(folded) == 1:
                return folded[0]
    return _NO_COLUMN


def _match_column(df: pd.DataFrame, name: Any) -> Any:
    column = _find_column(df, name)
    if column is not _NO_COLUMN:
        return column
    shown = ", ".join(repr(c) for c in df.columns)
    raise NeuralCallError(f"no column {name!r} in the table; its columns are: {shown}{_cell_hint(df, name)}")


def _text_columns(df: pd.DataFrame) -> Iterator[tuple[Any, pd.Series]]:
    """``(name, cells)`` of each column of ``df`` that may hold text."""
    for column in df.columns:
        cells = df[column]
        if cells.dtype == object or pd.api.types.is_string_dtype(cells.dtype):
            yield column, cells


def _holders(df: pd.DataFrame, value: Any) -> list[Any]:
    """The text columns of ``df`` that hold ``value`` as a cell."""
    holders = []
    for column, cells in _text_columns(df):
        try:
            if bool((cells == value).any()):
                holders.append(column)
        except (TypeError, ValueError):
            continue
    return holders


def _cell_hint(df: pd.DataFrame, name: Any) -> str:
    """When ``name`` is a cell of the table (``f_col(q, df["Director"].tolist())`` passed the cells, which
    a list context of f_col reads as column names): say so, and what to pass instead."""
    holders = _holders(df, name)
    if not holders:
        return ""
    column = holders[0]
    return (f"; {name!r} is a value in column {column!r}, not a column name: a list context names columns "
            f"(a list of cells such as df[{column!r}].tolist() is read as names), so to ask about cells pass "
            f"the column or a sub-table itself: df[{column!r}] or df[df[{column!r}] == {name!r}]")


_SCALARS = (bool, int, float, np.bool_, np.number, pd.Timestamp)


def _values_context(context: Any, table: Any) -> pd.DataFrame | None:
    """An f_val context of values the program computed, as a one-column table, or None when it is not
    one. Values are numbers, booleans, dates and texts that are cells of the table
    (``df["Make"].value_counts().idxmin()``, ``df[df.team == "x"]["year"].tolist()``); none of them may
    name a column (a name, or a list of names, is read as columns). The column is named after the table
    column that holds all the texts, else ``value``. No values (an empty list) are a table of no rows,
    which is not asked. Each text column's cells are read once, whatever the number of values."""
    many = isinstance(context, (list, tuple, pd.Index, np.ndarray))
    values = list(context) if many else [context]
    if not isinstance(table, pd.DataFrame):
        return None
    if not values:  # the values of no rows (a filter that matched none): not asked, as a sub-table of no rows
        return pd.DataFrame({"value": pd.Series([], dtype=object)})
    texts: set[str] = set()
    for value in values:
        if isinstance(value, str):
            texts.add(value)
        elif not isinstance(value, _SCALARS) or (isinstance(value, (float, np.floating)) and np.isnan(value)):
            return None
    if any(_find_column(table, value) is not _NO_COLUMN for value in dict.fromkeys(values)):
        return None
    name = "value"
    if texts:
        unheld, holders = set(texts), []
        for column, cells in _text_columns(table):
            try:
                held = set(cells.dropna().unique().tolist()) & texts
            except TypeError:  # cells that cannot be hashed (lists) hold no text
                continue
            unheld -= held
            if held == texts:
                holders.append(column)
        if unheld:
            return None  # a text no cell holds: a misspelt column, not a value
        if len(holders) == 1 and all(isinstance(v, str) for v in values):
            name = holders[0]
    return pd.DataFrame({str(name): pd.Series(values, dtype=object)})


def resolve_context(context: Any, form: str, table: Any) -> pd.DataFrame:
    """A call's context as a DataFrame: a column name or list of names (of ``table``, the
    ``df``/``table`` the call site sees, handed over by the rewritten call), a Series, or a
    (sub-)table DataFrame; for ``f_val`` also values the program computed (:func:`_values_context`)."""
    if isinstance(context, pd.DataFrame):
        return _with_index_labels(context)
    if isinstance(context, pd.Series):
        name = context.name if context.name is not None else "value"
        return _with_index_labels(context.to_frame(name=str(name)))
    if form == "f_val":
        values = _values_context(context, table)
        if values is not None:
            return values
    if isinstance(context, str):
        names = [context]
    elif isinstance(context, (list, tuple, pd.Index)) and len(context) > 0:
        names = list(context)
    else:
        values_too = (", or (f_val) values the program computed: numbers, dates or cells of the table"
                      if form == "f_val" else "")
        raise NeuralCallError(
            f"the context of {form} must be a column name, a list of column names, a Series or a "
            f"DataFrame{values_too}, got {type(context).__name__}: {context!r}"[:300])
    if not isinstance(table, pd.DataFrame):
        raise NeuralCallError(f"{form} names columns, but df is not a table here (it is a "
                              f"{type(table).__name__}); pass the column or sub-table itself")
    for name in names:
        if isinstance(name, (pd.Series, pd.DataFrame, list, dict, set, np.ndarray)):
            raise NeuralCallError(
                f"a list context of {form} holds column names, not a {type(name).__name__}; for several "
                "columns give their names (['shirt', 'price']) or the sub-table (df[['shirt', 'price']])")
    return table[[_match_column(table, n) for n in names]]


def _names_table(context: Any, table: Any, filtered: list[Any]) -> Any:
    """The table a context of column names refers to: the table the call filters the rows of
    (``merged[f_col(q, ["country"])]``) when it is a DataFrame holding every named column, else ``df``."""
    if not filtered or not isinstance(filtered[0], pd.DataFrame) or filtered[0] is table:
        return table
    names = [context] if isinstance(context, str) else context if isinstance(context, (list, tuple)) else None
    if not names:
        return table
    if any(_find_column(filtered[0], name) is _NO_COLUMN for name in names):
        return table
    return filtered[0]


def _with_index_labels(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with the levels of an index that holds labels as its first columns, its rows still
    indexed as before: the labels of ``df.groupby("country")["sales"].sum()``,
    ``df["country"].value_counts()`` or ``df.set_index("name")["age"]`` are what the numbers are
    about, and the model was asked about the numbers alone. An index holds labels when a level has a
    name or is not whole numbers (an unnamed integer index is row numbers: ``df[df.price > 10]``
    keeps the table's); a level named like a column and holding its values is that column, not sent
    twice, and one holding other values is sent as ``NAME (index)``."""
    index = frame.index
    if all(name is None for name in index.names) and pd.api.types.is_integer_dtype(index.dtype):
        return frame
    taken = {str(c) for c in frame.columns}
    levels, names = [], []
    for position in range(index.nlevels):
        name = index.names[position]
        level = index.get_level_values(position)
        label = str(name) if name is not None else ("index" if index.nlevels == 1 else f"level_{position}")
        if label in taken:
            same = [c for c in frame.columns if str(c) == label]
            values = level.to_series().reset_index(drop=True)
            if len(same) == 1 and frame[same[0]].reset_index(drop=True).equals(values):
                continue  # df.set_index("name", drop=False): the column itself, not sent twice
            label = f"{label} (index)"  # df.groupby("year")["year"].count(): the years, beside their counts
        taken.add(label)
        levels.append(level)
        names.append(label)
    if not levels:
        return frame
    labels = pd.DataFrame({name: np.asarray(level, dtype=object) if level.dtype == object else level.array
                           for name, level in zip(names, levels)}, index=index)
    return pd.concat([labels, frame], axis=1)


_TEXT_OR_NONE = frozenset({str, type(None)})


def _typed(answers: list[Any], as_dates: bool) -> pd.Series:
    """The f_col typing rules (:func:`type_column`), or a ``datetime64`` column of the ISO texts the parent
    wrote when the program reads the column as dates (:func:`date_column`)."""
    return date_column(answers) if as_dates else type_column(answers)


def _type_distinct(answers: list[Any], as_dates: bool = False) -> tuple[np.ndarray, pd.Series]:
    """``(codes, typed)``: ``typed`` types each distinct answer once (:func:`_typed`) and
    ``typed.iloc[codes[i]]`` is answer ``i`` typed. Answers are told apart by type and value
    (``1``, ``1.0`` and ``True`` are hashed alike but typed differently)."""
    if set(map(type, answers)) <= _TEXT_OR_NONE:  # the usual case: text never equals None, factorize at C speed
        codes, uniques = pd.factorize(np.asarray(answers, dtype=object), use_na_sentinel=False)
        # (factorize shows None as NaN among the uniques: it was None)
        return np.asarray(codes, dtype=np.int64), _typed([u if type(u) is str else None for u in uniques], as_dates)
    index: dict[tuple[type, Any], int] = {}
    try:
        codes = [index.setdefault((type(a), a), len(index)) for a in answers]
    except TypeError:  # an unhashable answer (a list): type every answer
        return np.arange(len(answers), dtype=np.int64), _typed(answers, as_dates)
    return np.asarray(codes, dtype=np.int64), _typed([a for _t, a in index], as_dates)


def make_bridge(neural: Callable[..., Any], dedup: bool = True) -> Callable[..., Any]:
    """The bridge function. ``dedup=False`` sends every row of an ``f_col`` context, repeated
    values included (the original Binder's behaviour, for benchmarks); answers are the same."""
    def binder_neural_call(site: int, form: str, *args: Any) -> Any:
        if form in ("qa_map", "qa_ans"):
            table, question, columns = args
            if not isinstance(table, pd.DataFrame):
                raise NeuralCallError(f"the first argument of {form} must be a DataFrame, got "
                                      f"{type(table).__name__}")
            if columns is None:
                ctx = table
            else:
                names = [columns] if isinstance(columns, str) else list(columns)
                ctx = table[[_match_column(table, n) for n in names]]
            kind = "col" if form == "qa_map" else "val"
        else:
            question, context, table, *filtered = args
            kind = "col" if form == "f_col" else "val"
            ctx = resolve_context(context, form, _names_table(context, table, filtered))
        if ctx.shape[1] == 0:  # a model asked about rows with no cells answers anyway, from nothing
            raise NeuralCallError(f"the context of {form} has no columns; give the columns the question "
                                  "is about, e.g. ['name'] or df[['name', 'year']]")
        if not isinstance(question, str) or not question.strip():
            raise NeuralCallError(f"the question of {form} must be non-empty text, got {question!r}"[:300])
        question = question.strip()
        # display strings and keys are computed once per distinct row, not once per row
        columns_sent = [str(c) for c in ctx.columns]
        if kind == "col":
            # the distinct rows go column by column, as they cross the boundary: no list or tuple per row
            cells, keys, codes = distinct_context_columns(ctx)
            sent_keys = keys
            if not dedup:
                every_row, sent_keys = context_rows(ctx, distinct=False)[:2]
                cells = rows_to_columns(every_row, len(columns_sent))
                del every_row
            wire = wire_message(site, "col", question, columns_sent, cells, sent_keys, len(ctx))
            # what is sent is freed before the answers arrive, and the answers before the column is built:
            # the column's few lasting objects are then not allocated among the many short-lived ones of a
            # large request (Python's allocator could not give back memory they share pages with)
            del cells
            # the parent answers in the order of the keys sent, having looked each one up by its key
            answers, as_dates = read_column_reply(neural(wire))
            del wire
            if not isinstance(answers, list) or len(answers) != len(sent_keys):
                raise NeuralCallError(f"the neural backend answered {form} with {type(answers).__name__}, "
                                      f"not one answer per row sent")
            # typed once per distinct answer, then spread to the keys and the rows (the same Series as
            # typing every row: a column's type depends on the set of answer kinds, not on counts)
            key_answers = answers if sent_keys is keys else list(map(dict(zip(sent_keys, answers)).get, keys))
            del answers, keys, sent_keys
            answer_codes, typed = _type_distinct(key_answers, as_dates)
            del key_answers
            by_key = typed.array.take(answer_codes)  # one per distinct key: no row-sized index temporary
            series = pd.Series(by_key.take(codes), index=ctx.index, name=question)
            if form == "qa_map":
                out = table.copy()
                out[question] = series
                return out
            return series
        rows, keys, codes = context_rows(ctx, distinct=True)
        all_codes = codes.tolist()
        distinct_rows = list(map(tuple, rows))
        message = NeuralCallMessage(site, "val", question, tuple(columns_sent),
                                    tuple(map(distinct_rows.__getitem__, all_codes)),
                                    tuple(map(keys.__getitem__, all_codes)), len(ctx))
        return type_value(neural(message.to_wire()))

    return binder_neural_call


def worker_globals(callbacks: Mapping[str, Callable[..., Any]], namespace: Mapping[str, Any]) -> dict[str, Any]:
    """Called by the sandbox in the worker: ``{BRIDGE_NAME: bridge, YES_NO_COMPARE_NAME: compare_yes_no}``
    for the program's globals."""
    neural = callbacks.get(CALLBACK_NAME)
    if neural is None:
        def neural(payload: Any) -> Any:  # noqa: ARG001
            raise NeuralCallError("this program makes neural calls, but no neural backend is configured")
    return {BRIDGE_NAME: make_bridge(neural), YES_NO_COMPARE_NAME: compare_yes_no}


def worker_globals_no_dedup(callbacks: Mapping[str, Callable[..., Any]],
                            namespace: Mapping[str, Any]) -> dict[str, Any]:
    """:func:`worker_globals` whose bridge sends repeated rows too (the original Binder)."""
    bound = worker_globals(callbacks, namespace)
    neural = callbacks.get(CALLBACK_NAME)
    if neural is not None:
        bound[BRIDGE_NAME] = make_bridge(neural, dedup=False)
    return bound


#: what the sandbox imports in the worker (``module:function``), derived from the functions themselves
WORKER_GLOBALS_SPEC = f"{worker_globals.__module__}:{worker_globals.__qualname__}"
WORKER_GLOBALS_NO_DEDUP_SPEC = f"{worker_globals_no_dedup.__module__}:{worker_globals_no_dedup.__qualname__}"
