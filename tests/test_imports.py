"""No import circles in react_text: the graph of which module imports which, read from the source,
has no cycle. Every import counts, wherever it is written: one inside a function (deferring an
import hides a circle, it does not break it) and one under `if TYPE_CHECKING:` (a circle of types is
a circle of design: two modules that need each other's names to be read are one module, or want a
protocol or a type one level down). A package's own `__init__` is not an edge of importing one of
its modules."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "react_text"


def _modules(package: Path = PACKAGE) -> dict[str, Path]:
    found = {}
    for path in sorted(package.rglob("*.py")):
        parts = list(path.relative_to(package.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


MODULES = _modules()


def _imports(tree: ast.AST) -> list[ast.Import | ast.ImportFrom]:
    """Every import, at any depth: in a function, under `if TYPE_CHECKING:`, anywhere."""
    return [node for node in ast.walk(tree) if isinstance(node, ast.Import | ast.ImportFrom)]


def _base(modules: dict[str, Path], module: str, node: ast.ImportFrom) -> str:
    if node.level == 0:
        return node.module or ""
    parts = module.split(".")
    if modules[module].name != "__init__.py":
        parts.pop()
    for _ in range(node.level - 1):
        parts.pop()
    return ".".join([*parts, *([node.module] if node.module else [])])


def graph(package: Path = PACKAGE) -> dict[str, set[str]]:
    modules = MODULES if package == PACKAGE else _modules(package)
    edges: dict[str, set[str]] = {name: set() for name in modules}
    for module, path in modules.items():
        for node in _imports(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                edges[module].update(alias.name for alias in node.names if alias.name in modules)
                continue
            base = _base(modules, module, node)
            for alias in node.names:
                if f"{base}.{alias.name}" in modules:
                    edges[module].add(f"{base}.{alias.name}")
                elif base in modules:
                    edges[module].add(base)
        edges[module].discard(module)
    return edges


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """One cycle through each strongly connected part of more than one module (Tarjan's)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    parts: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in sorted(edges[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            part = []
            while True:
                top = stack.pop()
                part.append(top)
                if top == node:
                    break
            if len(part) > 1:
                parts.append(sorted(part))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return parts


def test_react_text_has_no_import_circles() -> None:
    assert cycles(graph()) == []


def test_the_graph_is_read() -> None:
    edges = graph()
    assert "react_text.core.types" in edges["react_text.core.agent"]
    assert "react_text.tools.tool" in edges["react_text.tools"]  # from react_text.tools.tool import ...
    assert "react_text.tools.binding.binder" in edges["react_text.tools.binding"]
    assert "react_text" not in edges["react_text.core.agent"]  # the parent package is not an edge


def test_a_deferred_import_and_a_type_checking_one_count() -> None:
    tree = ast.parse(
        "import typing\nfrom typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .a import A\n"
        "if typing.TYPE_CHECKING:\n    from .c import C\nelse:\n    from .d import D\ndef f():\n    from .b import B\n"
    )
    found = sorted(node.module or "" for node in _imports(tree) if isinstance(node, ast.ImportFrom))
    assert found == ["a", "b", "c", "d", "typing"]


def test_a_circle_of_types_alone_is_found(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from pkg.b import B\n")
    (package / "b.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.a import A\n")
    (package / "c.py").write_text("from pkg import a\n")
    edges = graph(package)
    assert edges["pkg.b"] == {"pkg.a"}
    assert cycles(edges) == [["pkg.a", "pkg.b"]]


def test_a_cycle_is_found() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
