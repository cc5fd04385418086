"""The building blocks of proposed programs, each with its Binder-Python text and its pandas meaning.

A :class:`ProposedCode` is zero or more **filters**, one line each, then one
**final** expression (the answer)::

    df = df[df["made in"] == "Canada"]
    df = df[f_col("Is it made in north america?", ["made in"])]
    df.sort_values("sales", ascending=False)["shirt"].iloc[0]

Every literal (column name, cell value, question) is written with :func:`repr`,
so any column name or cell — quotes, backslashes, unicode, keywords — gives valid
Python, and the program is valid Binder-Python (docs/LANGUAGE.md). ``apply`` /
``mask`` compute the same thing with pandas directly, so the proposer can check a
step on the table (does a filter keep some rows but not all? does the final
expression give an answer?) without running code; a neural filter's rows are
unknown until the model answers (``mask`` is ``None``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal, Union

import pandas as pd

__all__ = ["ValueFilter", "NeuralFilter", "Filter", "Count", "Aggregate", "Superlative", "Select", "Neighbour", "Final",
           "ProposedCode", "python_literal"]

Comparison = Literal["==", ">", "<", ">=", "<="]
AggregateName = Literal["sum", "mean", "max", "min"]
Position = Literal["all", "first", "last"]


def python_literal(value: Any) -> str:
    """Python source for a cell value (numpy scalars become Python numbers)."""
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        value = value.item()
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        return repr(int(value))
    return repr(value)


def _col(name: str) -> str:
    return f"df[{name!r}]"


@dataclass(frozen=True)
class ValueFilter:
    """Keep rows whose ``column`` compares with ``value``: ``df = df[df["c"] >= 3]``."""

    column: str
    op: Comparison
    value: Any

    @property
    def code(self) -> str:
        return f"df = df[{_col(self.column)} {self.op} {python_literal(self.value)}]"

    def describe(self) -> str:
        words = {"==": "is", ">": "is more than", "<": "is less than", ">=": "is at least", "<=": "is at most"}
        return f"rows whose {self.column} {words[self.op]} {python_literal(self.value)}"

    def mask(self, df: pd.DataFrame) -> pd.Series:
        series = df[self.column]
        value = self.value
        result = {"==": series == value, ">": series > value, "<": series < value,
                  ">=": series >= value, "<=": series <= value}[self.op]
        return result.fillna(False).astype(bool)


@dataclass(frozen=True)
class NeuralFilter:
    """Keep rows the model says yes for: ``df = df[f_col("Is it …?", ["c"])]`` (rows unknown here)."""

    question: str
    column: str

    @property
    def code(self) -> str:
        return f"df = df[f_col({self.question!r}, [{self.column!r}])]"

    def describe(self) -> str:
        return f"rows where, looking at {self.column}, the answer to {self.question!r} is yes"

    def mask(self, df: pd.DataFrame) -> None:
        return None


Filter = Union[ValueFilter, NeuralFilter]


@dataclass(frozen=True)
class Count:
    """How many rows: ``len(df)``."""

    @property
    def code(self) -> str:
        return "len(df)"

    def describe(self) -> str:
        return "the number of rows"

    def apply(self, df: pd.DataFrame) -> Any:
        return len(df)


@dataclass(frozen=True)
class Aggregate:
    """``df["c"].sum()`` / ``.mean()`` / ``.max()`` / ``.min()`` of a numeric column."""

    column: str
    func: AggregateName

    @property
    def code(self) -> str:
        return f"{_col(self.column)}.{self.func}()"

    def describe(self) -> str:
        word = {"sum": "total", "mean": "average", "max": "largest", "min": "smallest"}[self.func]
        return f"the {word} {self.column}"

    def apply(self, df: pd.DataFrame) -> Any:
        return getattr(df[self.column], self.func)()


@dataclass(frozen=True)
class Superlative:
    """The ``answer`` of the row with the largest (smallest) ``by``, idxmax-style, written as a sort."""

    by: str
    answer: str
    largest: bool

    @property
    def code(self) -> str:
        return f"df.sort_values({self.by!r}, ascending={not self.largest})[{self.answer!r}].iloc[0]"

    def describe(self) -> str:
        return f"the {self.answer} with the {'highest' if self.largest else 'lowest'} {self.by}"

    def apply(self, df: pd.DataFrame) -> Any:
        return df.sort_values(self.by, ascending=not self.largest)[self.answer].iloc[0]


@dataclass(frozen=True)
class Select:
    """The answer column: all its values, or the first/last row's."""

    answer: str
    position: Position = "all"

    @property
    def code(self) -> str:
        suffix = {"all": "", "first": ".iloc[0]", "last": ".iloc[-1]"}[self.position]
        return f"{_col(self.answer)}{suffix}"

    def describe(self) -> str:
        return {"all": f"every {self.answer}", "first": f"the {self.answer} in the first row",
                "last": f"the {self.answer} in the last row"}[self.position]

    def apply(self, df: pd.DataFrame) -> Any:
        series = df[self.answer]
        return {"all": lambda: series, "first": lambda: series.iloc[0], "last": lambda: series.iloc[-1]}[
            self.position]()


@dataclass(frozen=True)
class Neighbour:
    """The ``answer`` of the row just before (``offset=-1``) or after (``+1``) the row whose ``column`` is ``value``.

    ``df[df["team"].shift(-1) == "x"]["team"].iloc[0]`` is the row whose *next* row is x,
    i.e. the one before x.
    """

    column: str
    value: Any
    answer: str
    offset: Literal[-1, 1]

    @property
    def code(self) -> str:
        return (f"df[{_col(self.column)}.shift({self.offset}) == {python_literal(self.value)}]"
                f"[{self.answer!r}].iloc[0]")

    def describe(self) -> str:
        where = "just before" if self.offset < 0 else "just after"
        return f"the {self.answer} of the row {where} the one whose {self.column} is {python_literal(self.value)}"

    def apply(self, df: pd.DataFrame) -> Any:
        return df[df[self.column].shift(self.offset) == self.value][self.answer].iloc[0]


Final = Union[Count, Aggregate, Superlative, Select, Neighbour]


def _is_answer(value: Any) -> bool:
    if isinstance(value, pd.Series):
        return len(value) > 0 and bool(value.notna().any())
    if value is None or value is pd.NA:
        return False
    return not (isinstance(value, float) and math.isnan(value))


@dataclass(frozen=True)
class ProposedCode:
    """Filters then a final expression."""

    final: Final
    filters: tuple[Filter, ...] = ()

    @property
    def code(self) -> str:
        return "\n".join([f.code for f in self.filters] + [self.final.code])

    def describe(self) -> str:
        """The program in words (what a small model is shown with ``show="text"``)."""
        if not self.filters:
            return self.final.describe()
        kept = " and ".join(f.describe().removeprefix("rows ") for f in self.filters)
        return f"among the rows {kept}: {self.final.describe()}"

    def with_filter(self, extra: Filter) -> ProposedCode:
        return ProposedCode(self.final, self.filters + (extra,))

    def known_rows(self, table: pd.DataFrame) -> pd.DataFrame:
        """The table after the filters that can be computed here (neural ones are skipped)."""
        df = table
        for f in self.filters:
            mask = f.mask(df)
            if mask is not None:
                df = df[mask]
        return df

    def answers_on(self, table: pd.DataFrame) -> bool:
        """The final expression gives a non-empty answer on the known rows (neural filters skipped)."""
        try:
            return _is_answer(self.final.apply(self.known_rows(table)))
        except (IndexError, KeyError, TypeError, ValueError):
            return False
