"""The zygote's warm-up with a lazily loaded module this pandas/pyarrow does not have."""

from __future__ import annotations

from sandbox import zygote


def test_a_lazy_module_this_install_lacks_is_skipped(monkeypatch):
    """pandas 2 (which pyproject allows) has no pandas.core.methods.select, and a pyarrow-core build no
    pyarrow.acero: importing them stopped the warm-up, so every sandboxed program would have failed."""
    imported = []
    import importlib

    real = importlib.import_module

    def import_module(name, *args):
        imported.append(name)
        if name == "pandas.core.methods.select":
            raise ModuleNotFoundError(name)
        return real(name, *args)

    monkeypatch.setattr(importlib, "import_module", import_module)
    monkeypatch.setattr(zygote, "LAZY_MODULES", ("pandas.core.methods.select", "json"))
    zygote._warm_up()
    assert imported[:2] == ["pandas.core.methods.select", "json"]
