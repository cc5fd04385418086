"""A protocol declares what callers use: code reads a backend's, a model's or an engine's members
directly (or narrows with isinstance on a protocol), never by probing with getattr/hasattr and a
default. This test finds such probes on the objects the protocols describe."""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2] / "binder_py"
#: names that hold objects typed by our protocols (NeuralBackend, LanguageModel, Engine, ...)
PROTOCOL_HOLDERS = {"backend", "neural", "lm", "model", "runner", "engine", "store", "cache", "binder"}


def probes(tree: ast.AST) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("getattr", "hasattr")
                and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant)):
            target = node.args[0]
            name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", None)
            if name in PROTOCOL_HOLDERS:
                found.append((node.lineno, f"{node.func.id}({name}, {node.args[1].value!r})"))
    return found


def test_the_finder_sees_a_probe() -> None:
    assert probes(ast.parse('x = getattr(backend, "combine_tables", False)')) == [
        (1, "getattr(backend, 'combine_tables')")]
    assert probes(ast.parse('x = getattr(row, "name", None)')) == []


def test_no_protocol_member_is_probed() -> None:
    found = [f"{path.relative_to(ROOT.parent)}:{line}: {text}"
             for path in sorted(ROOT.rglob("*.py"))
             for line, text in probes(ast.parse(path.read_text(encoding="utf-8")))]
    assert not found, "read these through the protocol instead:\n" + "\n".join(found)
