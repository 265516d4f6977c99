"""The package's import graph, read from the source, and its drawing for docs/reference/layout.md.

    edges = graph()                 module -> the modules it imports (every import, wherever written)
    cycles(edges)                   one cycle through each circle (tests/test_imports.py: none)
    rooms(edges)                    the same, folded to the rooms of the layout page (core/, prompting.py, ...)
    draw(order(page), rooms(edges)) an SVG and a table; scripts/mkdocs_hooks.py puts them where the page
                                    says <!-- import-graph -->, so the drawing is made by every docs build

A room is a package (`core/`) or a module at the top (`prompting.py`), spelled as the page spells it.
"""

from __future__ import annotations

import ast
import html
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "react_text"
LAYOUT = ROOT / "docs" / "reference" / "layout.md"
MARKER = "<!-- import-graph -->"
_ROOM_LINE = re.compile(r"^react_text/(\S+)", re.MULTILINE)


def modules(package: Path = PACKAGE) -> dict[str, Path]:
    found = {}
    for path in sorted(package.rglob("*.py")):
        parts = list(path.relative_to(package.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def imports(tree: ast.AST) -> list[ast.Import | ast.ImportFrom]:
    """Every import, at any depth: in a function, under `if TYPE_CHECKING:`, anywhere."""
    return [node for node in ast.walk(tree) if isinstance(node, ast.Import | ast.ImportFrom)]


def _base(found: dict[str, Path], module: str, node: ast.ImportFrom) -> str:
    if node.level == 0:
        return node.module or ""
    parts = module.split(".")
    if found[module].name != "__init__.py":
        parts.pop()
    for _ in range(node.level - 1):
        parts.pop()
    return ".".join([*parts, *([node.module] if node.module else [])])


def graph(package: Path = PACKAGE) -> dict[str, set[str]]:
    """Which module imports which. A package's own `__init__` is not an edge of importing one of
    its modules."""
    found = modules(package)
    edges: dict[str, set[str]] = {name: set() for name in found}
    for module, path in found.items():
        for node in imports(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                edges[module].update(alias.name for alias in node.names if alias.name in found)
                continue
            base = _base(found, module, node)
            for alias in node.names:
                if f"{base}.{alias.name}" in found:
                    edges[module].add(f"{base}.{alias.name}")
                elif base in found:
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


def room(module: str, package: Path = PACKAGE) -> str:
    """`react_text.core.agent` -> `core/`, `react_text.prompting` -> `prompting.py`."""
    parts = module.split(".")
    if len(parts) == 1:
        return "__init__.py"
    return f"{parts[1]}/" if (package / parts[1]).is_dir() else f"{parts[1]}.py"


def rooms(edges: dict[str, set[str]]) -> dict[str, set[str]]:
    """The graph between rooms: a room imports another if one of its modules imports one of the other's."""
    folded: dict[str, set[str]] = {}
    for module, targets in edges.items():
        here = room(module)
        folded.setdefault(here, set()).update(room(t) for t in targets if room(t) != here)
    return folded


def order(page: str) -> list[str]:
    """The rooms in the order the layout page lists them (the order data flows)."""
    return list(dict.fromkeys(_ROOM_LINE.findall(page)))


def draw(ordered: list[str], edges: dict[str, set[str]]) -> str:
    """An SVG of the rooms in a column, in the page's order, with an arrow for each import: on the
    right an import of a room drawn further down, on the left one drawn further up; then the same
    as a table."""
    row, width, left = 30, 150, 230
    place = {name: i for i, name in enumerate(ordered)}
    height = row * len(ordered) + 20
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {2 * left + width} {height}" '
        f'role="img" aria-label="the import graph of react_text" style="max-width: 100%">',
        '<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="6" markerHeight="6" '
        'orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" fill="currentColor"/></marker></defs>',
    ]
    for source in ordered:
        for target in sorted(edges.get(source, ()), key=lambda t: place.get(t, len(ordered))):
            if target not in place:
                continue
            a, b = place[source], place[target]
            down = b > a
            x = left + width if down else left
            reach = (abs(b - a) * 14 + 10) * (1 if down else -1)
            y1, y2 = 22 + a * row, 22 + b * row
            colour = "#5c6bc0" if down else "#ef6c00"
            parts.append(
                f'<path d="M {x} {y1} C {x + reach} {y1}, {x + reach} {y2}, {x} {y2}" fill="none" '
                f'stroke="{colour}" stroke-opacity="0.6" marker-end="url(#arrow)" style="color: {colour}">'
                f"<title>{html.escape(source)} imports {html.escape(target)}</title></path>"
            )
    for name, i in place.items():
        y = 10 + i * row
        parts.append(
            f'<rect x="{left}" y="{y}" width="{width}" height="24" rx="4" fill="#fff" stroke="#555"/>'
            f'<text x="{left + width / 2}" y="{y + 16}" text-anchor="middle" font-family="monospace" '
            f'font-size="12" fill="#222">{html.escape(name)}</text>'
        )
    parts.append("</svg>")
    table = ["| room | imports |", "|---|---|"]
    later = len(place)
    for name in ordered:
        named = ", ".join(f"`{t}`" for t in sorted(edges.get(name, ()), key=lambda t: place.get(t, later)))
        table.append(f"| `{name}` | {named} |")
    return "\n".join(parts) + "\n\n" + "\n".join(table) + "\n"


def drawn_page(page: str) -> str:
    """The layout page with its drawing in place of the marker (the docs build's hook calls this)."""
    return page.replace(MARKER, draw(order(page), rooms(graph())))
