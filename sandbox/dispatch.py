"""Function-spec dispatch: what pandas/numpy may call on a program's behalf.

pandas turns a *function spec* into calls: ``df.agg("sum")`` runs
``getattr(df, "sum")()``, ``df.agg(["min", f])`` calls each item, ``s.map(f)``
calls ``f`` on every element, ``np.vectorize(f)`` wraps ``f``. A spec can hide
a name or a function in any container pandas understands (a dict, a Series,
an Index, an ndarray, a generator ...), so checking a few container types by
name leaves holes.

The mechanism here is an allow-list of *shapes* and of *what may be called*:

* every entry point that takes a spec (:data:`SPEC_PARAMS`: ``agg aggregate
  apply transform filter map applymap pipe combine pivot_table crosstab`` on
  frames, series, indexes, groupby, rolling, expanding and resample objects,
  plus ``pd.pivot_table``/``pd.crosstab``, ``np.vectorize``, ``np.frompyfunc``,
  ``np.piecewise``) is wrapped when a program obtains it, by attribute, item,
  iteration or call result;
* the wrapper rebuilds the spec from plain ``str``/``list``/``tuple``/``dict``/
  ``NamedAgg`` only (``pd.NamedAgg`` is a tuple before pandas 3, a class since), any other container (Series, Index, ndarray, set,
  generator, ...) is refused, and so is nesting deeper than
  :data:`MAX_SPEC_DEPTH`; pandas only ever sees the rebuilt spec;
* a string must pass the attribute-name rule (:mod:`sandbox.names`) *and* be in
  :data:`NAMES_CALLABLE_BY_STRING` (computations that call nothing back);
* a callable must be one the sandbox allows (:func:`sandbox.vetting.callable_problem`): a
  facade member, a sandbox builtin, a vetted class, a function or class the
  program defined, a public method, or a callable the trusted caller put in the
  namespace. (The values pandas hands a program function pass the value check on
  entry to the function: ``_binder_args_`` in :mod:`sandbox.policy`.)

``eval``/``query`` (string code) and ``plot``/``hist``/``boxplot`` (a plotting
backend named by a string) are not wrapped but refused by name.
"""
from __future__ import annotations

import inspect
import types
from typing import Any, Callable

import numpy as np
import pandas as pd

from .names import ENTRY_POINT_NAMES, check_attribute_name
from .outcome import PolicyError
from .vetting import callable_problem, module_of

#: Method names pandas may look up when a spec names them as a string: computations
#: that take no function and call nothing back.
NAMES_CALLABLE_BY_STRING = frozenset({
    "sum", "mean", "median", "min", "max", "count", "size", "nunique", "std", "var",
    "sem", "first", "last", "prod", "idxmin", "idxmax", "any", "all", "skew", "kurt",
    "quantile", "mode", "cumsum", "cumprod", "cummax", "cummin", "cumcount", "ngroup",
    "rank", "diff", "pct_change", "shift", "abs", "round", "nlargest", "nsmallest",
    "ohlc", "ffill", "bfill", "head", "tail", "describe", "value_counts", "unique",
})

#: Entry point name -> {parameter name: spec kind}. Kinds: ``agg`` (name, callable,
#: list/tuple/dict of them), ``map`` (callable, or a dict / Series used as a lookup
#: table), ``pipe`` (callable or (callable, keyword) pair), ``call`` (callable only).
SPEC_PARAMS: dict[str, dict[str, str]] = {
    "agg": {"func": "agg", "arg": "agg"},
    "aggregate": {"func": "agg", "arg": "agg"},
    "apply": {"func": "agg"},
    "transform": {"func": "agg", "arg": "agg"},  # (Resampler.transform names it arg)
    "filter": {"func": "agg"},
    "pivot_table": {"aggfunc": "agg"},
    "crosstab": {"aggfunc": "agg"},
    "map": {"arg": "map", "func": "map", "mapper": "map"},
    "applymap": {"func": "map"},
    "pipe": {"func": "pipe"},
    "combine": {"func": "call"},
}
assert set(SPEC_PARAMS) == ENTRY_POINT_NAMES, "sandbox.names.ENTRY_POINT_NAMES is out of date"
#: Entry points whose ``**kwargs`` are named aggregations ``name=(column, spec)``.
NAMED_AGG_ENTRY_POINTS = frozenset({"agg", "aggregate"})
#: Modules whose callables are wrapped when named like an entry point.
_DISPATCH_MODULES = ("pandas", "numpy")
MAX_SPEC_DEPTH = 8

_ROUTINE_TYPES = frozenset({types.FunctionType, types.MethodType, types.BuiltinFunctionType})

# ------------------------------------------------------------ spec checking

def _describe(value: Any) -> str:
    t = type(value)
    return t.__name__ if t.__module__ == "builtins" else f"{t.__module__.split('.')[0]}.{t.__name__}"


def checked_callable(fn: Any, where: str) -> Any:
    """``fn`` if the sandbox allows calling it; PolicyError otherwise. (What a program
    function is called with is checked on entry: see ``_binder_args_`` in sandbox.policy.)"""
    problem = callable_problem(fn)
    if problem is not None:
        raise PolicyError(f"{where}: {_describe(fn)} {_short_repr(fn)} cannot be passed here: {problem}")
    return fn


def _short_repr(value: Any) -> str:
    try:
        text = repr(value)
    except Exception:  # noqa: BLE001
        return ""
    return text if len(text) <= 60 else text[:57] + "..."


def checked_name(name: Any, where: str) -> str:
    """A function name given as a string: the attribute rule, then the allow-list."""
    text = str(name)
    try:
        check_attribute_name(None, text)
    except PolicyError as exc:
        raise PolicyError(f"{where}: function name {text!r} is not allowed: {exc}") from None
    if text not in NAMES_CALLABLE_BY_STRING:
        raise PolicyError(
            f"{where}: function name {text!r} is not allowed as a string "
            f"(allowed: {', '.join(sorted(NAMES_CALLABLE_BY_STRING))}); pass a function instead"
        )
    return text


def _refuse_shape(spec: Any, where: str, what: str) -> PolicyError:
    return PolicyError(
        f"{where}: a {_describe(spec)} cannot be used as {what}; pass a function name, a function, "
        "or a list or dict of them"
    )


def _is_name(value: Any) -> bool:
    return type(value) is str or type(value) is np.str_


def checked_agg_spec(spec: Any, where: str, depth: int = 0) -> Any:
    """Rebuild an agg-like spec from plain containers, checking every name and callable."""
    if depth > MAX_SPEC_DEPTH:
        raise PolicyError(f"{where}: the function spec is nested more than {MAX_SPEC_DEPTH} levels deep")
    if _is_name(spec):
        return checked_name(spec, where)
    t = type(spec)
    if t is list or t is tuple:
        return t(checked_agg_spec(item, where, depth + 1) for item in spec)
    if t is dict:
        return {key: checked_agg_spec(value, where, depth + 1) for key, value in spec.items()}
    if callable(spec) and not isinstance(spec, (pd.Series, pd.Index, np.ndarray)):
        return checked_callable(spec, where)
    raise _refuse_shape(spec, where, "a function spec")


def checked_named_agg(value: Any, where: str) -> Any:
    """A named aggregation ``name=(column, spec)`` or ``pd.NamedAgg(column, spec)``."""
    if isinstance(value, pd.NamedAgg):  # a tuple before pandas 3, a class with args/kwargs since
        if isinstance(value, tuple):
            column, aggfunc = tuple.__getitem__(value, 0), tuple.__getitem__(value, 1)
            return pd.NamedAgg(column, checked_agg_spec(aggfunc, where, 1))
        return pd.NamedAgg(value.column, checked_agg_spec(value.aggfunc, where, 1),
                           *tuple(value.args), **dict(value.kwargs))
    if isinstance(value, tuple):  # pandas takes every 2-tuple here (subclasses too) as (column, spec)
        if len(value) != 2:
            raise PolicyError(f"{where}: a named aggregation must be (column, function), got {len(value)} items")
        column, spec = tuple.__getitem__(value, 0), tuple.__getitem__(value, 1)
        return (column, checked_agg_spec(spec, where, 1))
    return value  # a keyword argument forwarded to the aggregation function


def checked_keyword_spec(value: Any, where: str, owner: Any) -> Any:
    """A keyword argument of an aggregation called without a spec, which pandas then reads as the spec:
    ``Series.agg(x=spec)`` is ``agg({"x": spec})`` (a tuple there is a list of specs), and
    ``SeriesGroupBy.agg(x=spec)`` (a resampled Series' too) names an output column per spec. Checked as a
    spec: forwarded as it was, ``s.agg(x="__dict__")`` handed the program the Series' ``__dict__`` (its
    manager, ``_mgr``, whose ``apply`` looks up any name on its blocks), and ``g.agg(x="__dir__")`` called
    a dunder method (red team 14). A frame's or frame groupby's named aggregations are
    ``(column, spec)`` pairs (:func:`checked_named_agg`)."""
    if isinstance(owner, pd.Series) or not isinstance(value, (tuple, pd.NamedAgg)):
        return checked_agg_spec(value, where, 1)
    return checked_named_agg(value, where)


def checked_map_arg(arg: Any, where: str) -> Any:
    """``map``'s argument: a lookup table (dict, Series) or an allowed callable."""
    if isinstance(arg, (dict, pd.Series)):
        return arg
    if isinstance(arg, (pd.Index, np.ndarray)) or not callable(arg):
        raise PolicyError(f"{where}: a {_describe(arg)} cannot be used as a mapping; pass a dict, "
                          "a Series or a function")
    return checked_callable(arg, where)


def checked_pipe_func(func: Any, where: str) -> Any:
    if type(func) is tuple and len(func) == 2 and type(func[1]) is str:
        return (checked_callable(func[0], where), func[1])
    if _is_name(func) or not callable(func) or isinstance(func, (pd.Series, pd.Index, np.ndarray)):
        raise _refuse_shape(func, where, "a pipe function")
    return checked_callable(func, where)


_CHECKERS: dict[str, Callable[[Any, str], Any]] = {
    "agg": checked_agg_spec,
    "map": checked_map_arg,
    "pipe": checked_pipe_func,
    "call": checked_callable,
}

# ---------------------------------------------------------- entry points

_SIGNATURES: dict[Any, inspect.Signature | None] = {}


def _signature(fn: Callable[..., Any]) -> inspect.Signature | None:
    key = (getattr(fn, "__func__", fn), hasattr(fn, "__self__"))  # a bound method's has no ``self``
    try:
        return _SIGNATURES[key]
    except (KeyError, TypeError):
        pass
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        sig = None
    try:
        _SIGNATURES[key] = sig
    except TypeError:
        pass
    return sig


def _guard_entry_point(fn: Callable[..., Any], name: str) -> Callable[..., Any]:
    params = SPEC_PARAMS[name]
    named_agg = name in NAMED_AGG_ENTRY_POINTS

    def guarded(*args: Any, **kwargs: Any) -> Any:
        sig = _signature(fn)
        if sig is None:
            raise PolicyError(f"{name}(): the sandbox cannot check the arguments of this function")
        try:
            bound = sig.bind(*args, **kwargs)
        except TypeError as exc:
            raise TypeError(f"{name}(): {exc}") from None
        arguments = bound.arguments
        # without a spec, pandas reads the keyword arguments as one (checked_keyword_spec)
        no_spec = all(arguments.get(p) is None for p in params if p in sig.parameters)
        for pname, pvalue in list(arguments.items()):
            kind = params.get(pname)
            if kind is not None and pvalue is None and no_spec:
                continue  # agg(None, x="sum") spells out "no spec": pandas reads the keywords, checked below
            if kind is not None:
                arguments[pname] = _CHECKERS[kind](pvalue, f"{name}()")
            elif sig.parameters[pname].kind is inspect.Parameter.VAR_KEYWORD and named_agg:
                owner = getattr(fn, "__self__", args[0] if args else None)
                arguments[pname] = {k: checked_keyword_spec(v, f"{name}()", owner) if no_spec
                                    else checked_named_agg(v, f"{name}()") for k, v in pvalue.items()}
        return fn(*bound.args, **bound.kwargs)

    guarded.__name__ = name
    guarded.__qualname__ = name
    guarded.__module__ = "sandbox.dispatch"
    return guarded


def guard_entry_point(value: Any, name: str = "") -> Any | None:
    """A guarded stand-in if ``value`` is a pandas/numpy spec-taking entry point, else None."""
    if type(value) not in _ROUTINE_TYPES:
        return None
    own = getattr(value, "__name__", None)
    if own in SPEC_PARAMS:
        key = own
    elif name in SPEC_PARAMS:
        key = name
    else:
        return None
    mod = module_of(value)
    if mod is None or not mod.startswith(_DISPATCH_MODULES):
        return None
    return _guard_entry_point(value, key)


# --------------------------------------------------------- numpy wrappers

def _vectorize(pyfunc: Any = np._NoValue, *args: Any, **kwargs: Any) -> Any:  # type: ignore[attr-defined]
    if pyfunc is np._NoValue:  # type: ignore[attr-defined]  # decorator form: np.vectorize(otypes=...)
        return lambda f: _vectorize(f, *args, **kwargs)
    return np.vectorize(checked_callable(pyfunc, "np.vectorize()"), *args, **kwargs)


def _frompyfunc(func: Any, /, nin: int, nout: int, **kwargs: Any) -> Any:
    return np.frompyfunc(checked_callable(func, "np.frompyfunc()"), nin, nout, **kwargs)


def _piecewise(x: Any, condlist: Any, funclist: Any, *args: Any, **kwargs: Any) -> Any:
    if type(funclist) not in (list, tuple):
        raise PolicyError("np.piecewise(): funclist must be a list of functions or constants")
    checked = [checked_callable(f, "np.piecewise()") if callable(f) else f for f in funclist]
    return np.piecewise(x, condlist, checked, *args, **kwargs)


#: Module-level functions a facade hands out only in guarded form.
MODULE_ENTRY_POINTS: dict[tuple[str, str], Callable[[], Callable[..., Any]]] = {
    ("pandas", "pivot_table"): lambda: _guard_entry_point(pd.pivot_table, "pivot_table"),
    ("pandas", "crosstab"): lambda: _guard_entry_point(pd.crosstab, "crosstab"),
    ("numpy", "vectorize"): lambda: _named(_vectorize, "vectorize"),
    ("numpy", "frompyfunc"): lambda: _named(_frompyfunc, "frompyfunc"),
    ("numpy", "piecewise"): lambda: _named(_piecewise, "piecewise"),
}


def _named(fn: Callable[..., Any], name: str) -> Callable[..., Any]:
    fn.__name__ = name
    fn.__qualname__ = name
    return fn


def guard_facade_members(module: str, members: dict[str, Any]) -> dict[str, Any]:
    """``members`` with every spec-taking entry point replaced by its guarded form."""
    out = dict(members)
    for (mod, name), make in MODULE_ENTRY_POINTS.items():
        if mod == module and name in out:
            out[name] = make()
    return out


__all__ = [
    "MAX_SPEC_DEPTH", "NAMES_CALLABLE_BY_STRING", "SPEC_PARAMS", "checked_agg_spec",
    "checked_callable", "checked_name", "guard_entry_point", "guard_facade_members",
]
