"""No import circles in react_text: the graph of which module imports which, read from the source,
has no cycle. An import inside a function counts (deferring an import hides a circle, it does not
break it); one under `if TYPE_CHECKING:` does not (it never runs). A package's own `__init__` is not
an edge of importing one of its modules."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "react_text"


def _modules() -> dict[str, Path]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


MODULES = _modules()


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(tree: ast.AST) -> list[ast.Import | ast.ImportFrom]:
    """Every import that can run, at any depth, except the body of `if TYPE_CHECKING:`."""
    found: list[ast.Import | ast.ImportFrom] = []
    todo = [tree]
    while todo:
        node = todo.pop()
        if isinstance(node, ast.If) and _is_type_checking(node):
            todo.extend(node.orelse)
            continue
        if isinstance(node, ast.Import | ast.ImportFrom):
            found.append(node)
        todo.extend(ast.iter_child_nodes(node))
    return found


def _base(module: str, node: ast.ImportFrom) -> str:
    if node.level == 0:
        return node.module or ""
    parts = module.split(".")
    if MODULES[module].name != "__init__.py":
        parts.pop()
    for _ in range(node.level - 1):
        parts.pop()
    return ".".join([*parts, *([node.module] if node.module else [])])


def graph() -> dict[str, set[str]]:
    edges: dict[str, set[str]] = {name: set() for name in MODULES}
    for module, path in MODULES.items():
        for node in _imports(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                edges[module].update(alias.name for alias in node.names if alias.name in MODULES)
                continue
            base = _base(module, node)
            for alias in node.names:
                if f"{base}.{alias.name}" in MODULES:
                    edges[module].add(f"{base}.{alias.name}")
                elif base in MODULES:
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


def test_a_deferred_import_counts_and_type_checking_does_not() -> None:
    tree = ast.parse(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .a import A\ndef f():\n    from .b import B\n"
    )
    assert sorted(node.module or "" for node in _imports(tree) if isinstance(node, ast.ImportFrom)) == ["b", "typing"]


def test_a_cycle_is_found() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
