"""The house by job (STYLE.md, docs/reference/layout.md), held by the source itself: no import circle
(type-only ones included: the graph is test_imports.py's), no module over 500 lines, and backends
that know the engine only through its values: a backend (react_text/backends/*) imports, of the
engine, only core.types, core.errors, core.sampling and core.model_info, besides the modules of its
own package (its wire format, its transport)."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_imports import MODULES, PACKAGE, cycles, graph

MOST_LINES = 500
BACKENDS = "react_text.backends"
ENGINE_FOR_BACKENDS = frozenset(f"react_text.core.{name}" for name in ("types", "errors", "sampling", "model_info")) | {
    "react_text.core"
}


def _lines(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


def test_no_import_circle_type_only_included() -> None:
    assert cycles(graph()) == []


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_module_is_over_500_lines(module: str) -> None:
    lines = _lines(MODULES[module])
    assert lines <= MOST_LINES, f"{module} has {lines} lines (at most {MOST_LINES}: split it by job)"


def _backends() -> list[str]:
    return sorted(name for name in MODULES if name.startswith(f"{BACKENDS}."))


def _engine_imports(module: str, edges: dict[str, set[str]]) -> set[str]:
    """What `module` imports of the package outside its own package and the engine's values."""
    return {m for m in edges[module] if not m.startswith(f"{BACKENDS}.") and m not in ENGINE_FOR_BACKENDS}


@pytest.mark.parametrize("module", _backends())
def test_a_backend_imports_only_the_engines_values(module: str) -> None:
    assert _engine_imports(module, graph()) == set()


def test_the_rules_read_what_they_should(tmp_path: Path) -> None:
    """The checks can fail: a file over the limit is found long, a circle (a type-only one as well)
    is found, a backend that imports the parser is found out, and every module of the package and
    every backend is counted."""
    long = tmp_path / "long.py"
    long.write_text("x = 1\n" * (MOST_LINES + 1), encoding="utf-8")
    assert _lines(long) > MOST_LINES
    (tmp_path / "pkg").mkdir()
    for name, body in {
        "__init__": "",
        "a": "from pkg.b import B\n",
        "b": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.a import A\n",
    }.items():
        (tmp_path / "pkg" / f"{name}.py").write_text(body, encoding="utf-8")
    assert cycles(graph(tmp_path / "pkg")) == [["pkg.a", "pkg.b"]]
    assert _engine_imports("x", {"x": {"react_text.parser.guard", "react_text.core.types", f"{BACKENDS}.wire"}}) == {
        "react_text.parser.guard"
    }
    assert len(MODULES) == len(list(PACKAGE.rglob("*.py")))
    assert {f"{BACKENDS}.{name}" for name in ("local", "openai_api", "scripted", "wire")} <= set(_backends())


def test_the_layout_page_and_the_drawing_of_the_import_graph_agree() -> None:
    """docs/reference/layout.md lists every room of the package (a package, or a module at the top)
    and only those, and its drawing (made by the docs build from the source) draws each of them and
    every import between two rooms that this test's own reading of the graph finds."""
    from import_graph import LAYOUT, MARKER, drawn_page, order

    page = LAYOUT.read_text(encoding="utf-8")
    assert MARKER in page
    rooms_of_source = {"__init__.py"} | {
        f"{p.name}/" if p.is_dir() else p.name
        for p in PACKAGE.iterdir()
        if (p / "__init__.py").is_file() or (p.suffix == ".py" and p.name != "__init__.py")
    }
    assert set(order(page)) == rooms_of_source
    drawn = drawn_page(page)
    assert MARKER not in drawn and drawn.count("<rect ") == len(rooms_of_source)
    between = {
        (MODULES[a].relative_to(PACKAGE).parts[0], MODULES[b].relative_to(PACKAGE).parts[0])
        for a, targets in graph().items()
        for b in targets
    }
    between = {(a, b) for a, b in between if a != b and a != "__init__.py" and b != "__init__.py"}
    assert between, "the graph was not read"
    for a, b in between:
        shown = (f"{a}/" if (PACKAGE / a).is_dir() else a, f"{b}/" if (PACKAGE / b).is_dir() else b)
        assert f"<title>{shown[0]} imports {shown[1]}</title>" in drawn, shown


def test_the_package_imports_none_of_its_old_faces() -> None:
    """The modules kept at the top for imports written before 0.4 (limits.py, toolbox.py, ...) are
    two-line faces for users; the package itself imports the modules they name."""
    faces = {"react_text.limits", "react_text.toolbox", "react_text.trajectory", "react_text.corpus", "react_text.mcp"}
    assert faces <= set(MODULES)
    users = {a: sorted(targets & faces) for a, targets in graph().items() if a not in faces and targets & faces}
    assert users == {}
