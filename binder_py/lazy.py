"""Package attributes imported on first use (PEP 562), so that importing a package does not
import everything it re-exports: the command line and the sandbox's zygote load only what
they use."""

from __future__ import annotations

import importlib
import sys
import types
from collections.abc import Callable, Mapping
from typing import Any


class _Package(types.ModuleType):
    """A package whose exported names win over its submodules of the same name: importing
    ``pkg.execute`` (the module) must not replace ``pkg.execute`` (the function it exports), as
    the import system does by setting the attribute; the eager ``from .execute import execute``
    this replaces left the function there too."""

    _lazy_exports: Mapping[str, str] = {}

    def __setattr__(self, name: str, value: Any) -> None:
        if (name in self._lazy_exports and isinstance(value, types.ModuleType)
                and value.__name__ == f"{self.__name__}.{name}"):
            return  # the submodule: the package's attribute stays the exported object
        super().__setattr__(name, value)


def lazy_exports(package: str, namespace: dict[str, Any], exports: Mapping[str, str]
                 ) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package``: ``exports`` maps a name to the module that
    defines it; the first look-up imports that module and binds the name in ``namespace``."""
    module = sys.modules[package]
    module.__class__ = _Package
    module._lazy_exports = dict(exports)  # type: ignore[attr-defined]

    def __getattr__(name: str) -> Any:
        source = exports.get(name)
        if source is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(source), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(exports))

    return __getattr__, __dir__
