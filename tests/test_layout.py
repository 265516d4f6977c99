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
