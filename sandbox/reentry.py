"""Library code during which no program code may run.

numpy's loops over object arrays call comparisons while holding the array's objects without a
reference: the pivot of an in-place ``a.sort()`` (also ``partition``, ``unique``), the running
maximum of ``argmax``/``np.maximum``, the keys of pandas' hash tables. Program code that ran inside
such a comparison and replaced the array's items freed an object the loop then used or wrote back
into the array (a use after free: red team 4, through comparisons a program class defined, now
refused at compile time). Red team 9 found comparisons that run program code without defining one:

* the comparisons pandas writes in Python (``Series``, ``DataFrame``, ``Index`` and the extension
  arrays through ``OpsMixin``; ``CategoricalDtype`` and the other dtypes) look at the other operand:
  ``df < d`` with ``d`` a program's ``collections.OrderedDict`` subclass calls ``d.keys()`` and
  ``d.values()``, which the class may override, and ``CategoricalDtype == x`` reads ``x.ordered``, a
  property the program may define;
* a hash pandas writes in Python: ``CategoricalDtype`` hashes the text of its categories, and a
  ``Counter``'s text calls its ``most_common()``; ``s.isin(v)`` keeps the objects of ``v`` in a hash
  table without a reference while it hashes the others, so a ``most_common`` that replaced the items
  of ``v`` left freed objects in the table, compared with next;
* the result of a pandas comparison is built with ``__finalize__``, which deep-copies the table's
  ``attrs`` (and ``Index.copy(deep=True)`` an index's names, a MultiIndex its levels):
  ``copy.deepcopy`` rebuilds an object of a class derived from an exception or a ``collections``
  class by calling the class, so it runs the program's ``__init__`` (or ``Counter.update``).

An object array of Series whose ``attrs`` held such an object, sorted, killed the worker with
SIGSEGV. :func:`install` wraps every comparison and hash written in Python of a class of pandas, numpy or
``collections`` (``collections.Counter``'s too) and the ``deepcopy`` those pandas modules call:
while one runs, :data:`REFUSED` holds a reason, and program code is refused with it
(:func:`sandbox.guards.guarded_args`, the first statement of every function and method a program
defines, and the program's calls and writes). Installed process-wide on import (the zygote, so
every worker, and ``unsafe-inprocess`` mode; not the caller's process in strict mode, which never
imports the guards); the zygote installs again after loading what pandas loads lazily.
"""
from __future__ import annotations

import contextvars
import copy
import functools
import importlib
import types
from collections.abc import Callable, Iterator
from typing import Any

#: why program code may not run now (None: it may)
REFUSED: contextvars.ContextVar[str | None] = contextvars.ContextVar("binder_program_code_refused", default=None)

_COMPARISON_REASON = (
    "a comparison or hash of library objects (pandas, collections.Counter) would run the program's own code "
    "(a method, property or __init__ of its class) in the middle of it, where numpy's sorts and loops and "
    "pandas' hash tables hold objects without a reference; compare plain values (numbers, text) or a key instead")
_COPY_REASON = (
    "pandas copies a table's attrs (and an index's names) on every operation, and copying this object would "
    "run the program's own code (a method or __init__ of its class) in the middle of that operation; keep "
    "plain values (text, numbers, lists, dicts) in attrs and names")

#: the rich comparisons (sandbox.policy.COMPARISON_METHODS, which a program class may not define) and the
#: hash, which pandas' hash tables call beside them (a CategoricalDtype hashes its categories' texts, and
#: a Counter's text comes from its most_common(), which a program class may override)
_COMPARISONS = ("__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__hash__")
_LIBRARIES = ("pandas", "numpy", "collections")
#: the pandas modules that call ``deepcopy`` on what a program may have put there
_COPYING_MODULES = ("pandas.core.generic", "pandas.core.indexes.base", "pandas.core.indexes.multi")
_MARK = "_binder_no_program_code"


def _quiet(fn: Callable[..., Any], reason: str) -> Callable[..., Any]:
    """``fn``, during which program code is refused with ``reason``."""
    @functools.wraps(fn)
    def quiet(*args: Any, **kwargs: Any) -> Any:
        token = REFUSED.set(reason)
        try:
            return fn(*args, **kwargs)
        finally:
            REFUSED.reset(token)

    setattr(quiet, _MARK, True)
    return quiet


def _classes() -> Iterator[type]:
    """Every class of the process (loaded so far), each once."""
    seen: set[int] = set()
    stack: list[type] = [object]
    while stack:
        cls = stack.pop()
        try:
            subclasses = type.__subclasses__(cls)
        except TypeError:
            continue
        for sub in subclasses:
            if id(sub) not in seen:
                seen.add(id(sub))
                stack.append(sub)
                yield sub


def install() -> None:
    for cls in list(_classes()):
        module = getattr(cls, "__module__", None)
        if not isinstance(module, str) or module.split(".", 1)[0] not in _LIBRARIES:
            continue
        for name in _COMPARISONS:
            method = cls.__dict__.get(name)
            if isinstance(method, types.FunctionType) and not getattr(method, _MARK, False):
                try:
                    setattr(cls, name, _quiet(method, _COMPARISON_REASON))
                except (TypeError, AttributeError):  # an immutable class: none of pandas' so far
                    pass
    for name in _COPYING_MODULES:
        module = importlib.import_module(name)
        if not getattr(getattr(module, "deepcopy", None), _MARK, False):
            module.deepcopy = _quiet(copy.deepcopy, _COPY_REASON)  # type: ignore[attr-defined]


install()
