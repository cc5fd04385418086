"""The import graph, computed from the code: no cycles, and no import goes back up the pipeline.

Every ``import``/``from ... import`` in ``binder_py`` and ``sandbox`` counts, including those
inside functions (a lazy import is still a dependency); only imports under
``if TYPE_CHECKING:`` are left out (they never run).
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("binder_py", "sandbox")

#: the layers, lowest first: a module may import its own layer and the ones below, never above
LAYERS: tuple[tuple[str, ...], ...] = (
    ("binder_py.errors", "binder_py.controls", "binder_py.lazy", "binder_py.safefiles", "binder_py.jsonfile", "binder_py.jsonable", "binder_py.lm",
     "binder_py.tables", "binder_py.total_rows", "binder_py.normalize", "sandbox"),
    ("binder_py.tasks", "binder_py.vote", "binder_py.calibration", "binder_py.datasets", "binder_py.evaluate"),
    ("binder_py.prompting", "binder_py.grammar"),
    # the language's syntax (parse, rewrite, column names) sits below what answers neural calls;
    # running a program (binder_py.language.execute) sits above it
    ("binder_py.language.program", "binder_py.language.rewrite", "binder_py.language.columns",
     "binder_py.language.messages", "binder_py.language.yes_no_text"),
    ("binder_py.neural", "binder_py.discriminate"),
    ("binder_py.language",),
    ("binder_py.answer", "binder_py.notebook", "binder_py.made_columns"),
    ("binder_py.pipeline",),
    ("binder_py.engines",),
    ("binder_py.ask", "binder_py.accessor", "binder_py.progress"),
    ("binder_py.runs", "binder_py.bench", "binder_py.views"),
    ("binder_py.cli", "binder_py.__main__", "binder_py"),
)


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.body:
                skipped.update(id(n) for n in ast.walk(child))
    return skipped


def imports_of(path: Path, modules: set[str]) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped = _type_checking_nodes(tree)
    this = module_name(path)
    package = this if path.name == "__init__.py" else this.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1] + ([base] if base else []))
            names = [f"{base}.{alias.name}" for alias in node.names]
        for name in names:
            while name and name not in modules:  # "pkg.mod.Class" -> "pkg.mod"
                name = name.rpartition(".")[0]
            if name and name != this:
                found.add(name)
    return found


def import_graph() -> dict[str, set[str]]:
    paths = [p for package in PACKAGES for p in (ROOT / package).rglob("*.py") if "__pycache__" not in p.parts]
    modules = {module_name(p) for p in paths}
    return {module_name(p): imports_of(p, modules) for p in paths}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        state[node] = 2
        stack.pop()
        return None

    for node in sorted(graph):
        if node not in state and (cycle := visit(node)):
            return cycle
    return None


def layer_of(module: str) -> int:
    best, best_len = -1, -1
    for index, layer in enumerate(LAYERS):
        for prefix in layer:
            # the root package names only its own __init__, not every module below it
            covers = module == prefix or (module.startswith(prefix + ".") and prefix != "binder_py")
            if covers and len(prefix) > best_len:
                best, best_len = index, len(prefix)
    assert best >= 0, f"{module} is in no layer: add it to LAYERS in {__file__}"
    return best


def test_the_finder_sees_cycles() -> None:
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_there_are_no_import_cycles() -> None:
    graph = import_graph()
    assert len(graph) > 50
    assert find_cycle(graph) is None, " -> ".join(find_cycle(graph) or [])


def test_no_import_goes_back_up_the_pipeline() -> None:
    upward = sorted(f"{module} (layer {layer_of(module)}) imports {target} (layer {layer_of(target)})"
                    for module, targets in import_graph().items() for target in targets
                    if layer_of(target) > layer_of(module))
    assert not upward, "\n".join(upward)
