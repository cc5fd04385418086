"""Vetted stand-ins for the modules programs may import.

A program never sees a real module object: ``import pandas as pd`` binds a
:class:`Facade` exposing an allowlist of members. Members that take a function
spec (``pd.pivot_table``, ``pd.crosstab``, ``np.vectorize``, ``np.frompyfunc``,
``np.piecewise``) are handed out in their guarded form (:mod:`sandbox.dispatch`).
"""
from __future__ import annotations

import collections
import datetime
import math
import re
import statistics
from typing import Any

import numpy as np
import pandas as pd

from . import codes, repeats  # noqa: F401 - register their stand-ins and member guards before _build
from .dispatch import guard_facade_members
from .rawmemory import guard_member, stand_in
from .vetting import register_handed_out


class Facade:
    """A read-only namespace standing in for a module."""

    __slots__ = ("_facade_name", "_facade_members")

    def __init__(self, name: str, members: dict[str, Any]) -> None:
        object.__setattr__(self, "_facade_name", name)
        object.__setattr__(self, "_facade_members", dict(members))

    def __getattr__(self, name: str) -> Any:
        members = object.__getattribute__(self, "_facade_members")
        try:
            return members[name]
        except KeyError:
            modname = object.__getattribute__(self, "_facade_name")
            raise AttributeError(
                f"module {modname!r} has no attribute {name!r} in the sandbox"
            ) from None

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("sandbox modules are read-only")

    def __delattr__(self, name: str) -> None:
        raise AttributeError("sandbox modules are read-only")

    def __dir__(self) -> list[str]:
        return sorted(object.__getattribute__(self, "_facade_members"))

    def __repr__(self) -> str:
        return f"<sandbox module {object.__getattribute__(self, '_facade_name')!r}>"

    def facade_has(self, name: str) -> bool:
        return name in object.__getattribute__(self, "_facade_members")


def _pick(module: Any, names: list[str]) -> dict[str, Any]:
    """The named members; a class or function handed out only in guarded form (``np.ndarray``,
    ``np.repeat``: :mod:`sandbox.rawmemory`) as its stand-in."""
    members = {n: getattr(module, n) for n in names if hasattr(module, n)}
    return {n: (stand_in(v) or v) if isinstance(v, type) else (guard_member(v) or v) for n, v in members.items()}


PANDAS_NAMES = [
    "DataFrame", "Series", "Index", "MultiIndex", "RangeIndex", "Categorical",
    "CategoricalDtype", "Timestamp", "Timedelta", "Period", "Interval",
    "DateOffset", "NamedAgg", "Grouper", "NaT", "NA",
    "to_numeric", "to_datetime", "to_timedelta", "concat", "merge", "merge_asof",
    "merge_ordered", "isna", "isnull", "notna", "notnull", "cut", "qcut",
    "unique", "get_dummies", "from_dummies", "date_range", "bdate_range",
    "period_range", "timedelta_range", "interval_range", "pivot", "pivot_table",
    "crosstab", "melt", "wide_to_long", "factorize", "json_normalize",
    "array",
]

NUMPY_NAMES = [
    "nan", "inf", "pi", "e", "newaxis",
    "array", "asarray", "arange", "linspace", "zeros", "ones", "full", "empty",
    "zeros_like", "ones_like", "full_like", "where", "select", "piecewise",
    "isnan", "isinf", "isfinite", "isnat", "isclose", "allclose", "array_equal",
    "mean", "median", "sum", "prod", "min", "max", "amin", "amax", "std", "var",
    "average", "percentile", "quantile", "nanmean", "nanmedian", "nansum",
    "nanmax", "nanmin", "nanstd", "nanvar", "nanpercentile", "nanquantile",
    "cumsum", "cumprod", "diff", "ptp", "count_nonzero", "argmax", "argmin",
    "argsort", "sort", "unique", "bincount", "histogram", "digitize",
    "searchsorted", "isin", "in1d", "intersect1d", "union1d", "setdiff1d",
    "abs", "absolute", "sign", "round", "around", "rint", "floor", "ceil",
    "trunc", "sqrt", "square", "power", "exp", "log", "log10", "log2", "log1p",
    "sin", "cos", "tan", "arcsin", "arccos", "arctan", "arctan2", "degrees",
    "radians", "hypot", "mod", "fmod", "remainder", "floor_divide", "divide",
    "true_divide", "multiply", "add", "subtract", "negative", "reciprocal",
    "maximum", "minimum", "fmax", "fmin", "clip", "nan_to_num",
    "logical_and", "logical_or", "logical_not", "logical_xor", "all", "any",
    "concatenate", "stack", "vstack", "hstack", "column_stack", "reshape",
    "transpose", "ravel", "repeat", "tile", "flip", "roll", "nonzero",
    "flatnonzero", "argwhere", "corrcoef", "cov", "polyfit", "polyval",
    "interp", "dot", "outer", "cross", "vectorize", "frompyfunc",
    "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float16", "float32", "float64", "bool_", "object_", "str_", "datetime64",
    "timedelta64", "integer", "floating", "number", "ndarray", "dtype",
]

RE_NAMES = [
    "compile", "match", "search", "fullmatch", "findall", "finditer", "sub",
    "subn", "split", "escape", "IGNORECASE", "I", "MULTILINE", "M", "DOTALL",
    "S", "VERBOSE", "X", "ASCII", "A", "UNICODE", "U", "Pattern", "Match", "error",
]

DATETIME_NAMES = ["date", "datetime", "time", "timedelta", "timezone", "MINYEAR", "MAXYEAR"]
COLLECTIONS_NAMES = ["Counter", "defaultdict", "OrderedDict", "deque"]
STATISTICS_NAMES = [
    "mean", "median", "median_low", "median_high", "mode", "multimode", "stdev",
    "pstdev", "variance", "pvariance", "fmean", "geometric_mean", "harmonic_mean",
    "quantiles", "StatisticsError",
]
MATH_NAMES = [n for n in dir(math) if not n.startswith("_")]


def _build() -> dict[str, Facade]:
    facades = {
        "pandas": Facade("pandas", guard_facade_members("pandas", _pick(pd, PANDAS_NAMES))),
        "numpy": Facade("numpy", guard_facade_members("numpy", _pick(np, NUMPY_NAMES))),
        "re": Facade("re", _pick(re, RE_NAMES)),
        "math": Facade("math", _pick(math, MATH_NAMES)),
        "datetime": Facade("datetime", _pick(datetime, DATETIME_NAMES)),
        "collections": Facade("collections", _pick(collections, COLLECTIONS_NAMES)),
        "statistics": Facade("statistics", _pick(statistics, STATISTICS_NAMES)),
    }
    return facades


FACADES: dict[str, Facade] = _build()
ALLOWED_MODULES = tuple(sorted(FACADES))
register_handed_out(lambda: [v for name in FACADES for v in facade_members(name).values()])


def facade_members(name: str) -> dict[str, Any]:
    return object.__getattribute__(FACADES[name], "_facade_members")
