"""The backends' layering: a backend knows the core's types and errors (and, where it must, the sampling
checks and the model description), and the wire format it speaks; none of the protocol, the
grammar, the guard, the limits, the prompt style or the token account. What it needs of the
protocol, the engine hands it with each request (`Request.rules`: the engine decides, the backend
sends). Read from the source (every import, at any depth, lazy ones too), so an import added
anywhere under react_text/backends fails here, naming the module and the line."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import react_text

ROOT = Path(react_text.__file__).parent
BACKENDS = ROOT / "backends"
ALLOWED = frozenset(
    {"react_text.core.types", "react_text.core.errors", "react_text.core.sampling", "react_text.core.model_info"}
)
MODULES = sorted(BACKENDS.rglob("*.py"))


def imported(path: Path, source: str | None = None) -> list[tuple[int, str]]:
    """Every react_text module `path` imports (absolute or relative), with its line; `source`: its
    text, when it is not the file's."""
    module = ".".join(path.relative_to(ROOT.parent).with_suffix("").parts)
    package = module.removesuffix(".__init__") if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    text = path.read_text(encoding="utf-8") if source is None else source
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1] + ([base] if base else []))
            found += [(node.lineno, _module(base, alias.name)) for alias in node.names]
    return [(line, name) for line, name in found if name == "react_text" or name.startswith("react_text.")]


def _module(base: str, name: str) -> str:
    """`from base import name`: the module base.name when it is one (a submodule), else base."""
    below = ROOT.parent.joinpath(*f"{base}.{name}".split("."))
    return f"{base}.{name}" if below.with_suffix(".py").is_file() or (below / "__init__.py").is_file() else base


def refused(name: str) -> bool:
    return not (name in ALLOWED or name == "react_text.backends" or name.startswith("react_text.backends."))


def test_there_are_backends_to_check() -> None:
    names = {p.relative_to(BACKENDS).as_posix() for p in MODULES}
    assert {"local.py", "scripted.py", "openai_api/base.py", "wire/replies.py", "identify.py"} <= names


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.relative_to(BACKENDS).as_posix())
def test_a_backend_imports_only_what_it_may(path: Path) -> None:
    wrong = [f"line {line}: {name}" for line, name in imported(path) if refused(name)]
    assert not wrong, f"{path.relative_to(BACKENDS.parent)} imports what a backend may not: {wrong}"


@pytest.mark.parametrize(
    ("source", "bad"),
    [
        ("from react_text.grammar import protocol\n", True),
        ("def f():\n    from react_text.tokens.meter import encoding\n", True),  # a lazy import counts
        ("import react_text.parser.guard\n", True),
        ("from react_text import prompting\n", True),
        ("from react_text.core import limits\n", True),
        ("from ...core import protocol\n", True),  # relative, from react_text/backends/x/y.py
        ("from react_text.core import protocol, types\n", True),
        ("from react_text.core import types, errors\n", False),
        ("from react_text.core.types import Request\n", False),
        ("from react_text.backends import wire\n", False),
        ("from . import wire\n", False),
        ("import json\n", False),
    ],
)
def test_the_check_itself_finds_what_it_should(source: str, bad: bool) -> None:
    """The oracle: each kind of import written by hand, as if in a file where a backend would be."""
    names = [name for _, name in imported(BACKENDS / "x" / "y.py", source)]
    assert any(refused(n) for n in names) is bad, names
