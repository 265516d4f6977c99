"""No import circles in react_text: the graph of which module imports which, read from the source,
has no cycle. Every import counts, wherever it is written: one inside a function (deferring an
import hides a circle, it does not break it) and one under `if TYPE_CHECKING:` (a circle of types is
a circle of design: two modules that need each other's names to be read are one module, or want a
protocol or a type one level down). A package's own `__init__` is not an edge of importing one of
its modules."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))
# the reader the docs' drawing of the graph uses too (docs/reference/layout.md)
from import_graph import PACKAGE, cycles, graph, modules
from import_graph import imports as _imports

__all__ = ["MODULES", "PACKAGE", "cycles", "graph"]  # what test_layout.py reads

MODULES = modules()


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
