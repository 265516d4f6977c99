"""The public surface is true: every module says what it exports, every exported name exists, every
name the README, the docs and the notebooks import is exported from where they import it, and the
exception tree drawn in errors.py is exactly the classes."""

from __future__ import annotations

import ast
import importlib
import json
import pkgutil
import re
from pathlib import Path

import pytest

import react_text
from react_text.core import errors

ROOT = Path(__file__).resolve().parent.parent
MODULES = sorted(
    [
        "react_text",
        *(info.name for info in pkgutil.walk_packages(react_text.__path__, "react_text.")),
    ]
)
PUBLIC = [name for name in MODULES if not any(part.startswith("_") for part in name.split("."))]
FENCE = re.compile(r"^```python[^\n]*\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)
DIRECTIVE = re.compile(r"^::: (react_text[\w.]*)", re.MULTILINE)
TREE_LINE = re.compile(r"^\s*(?:[│ ]*[├└]── )?(\w+Error)\b", re.MULTILINE)


@pytest.mark.parametrize("name", PUBLIC)
def test_every_public_module_declares_all(name: str) -> None:
    module = importlib.import_module(name)
    exported = getattr(module, "__all__", None)
    assert isinstance(exported, list), f"{name} has no __all__"
    missing = [item for item in exported if not hasattr(module, item)]
    assert missing == [], f"{name}.__all__ names what it does not define: {missing}"
    assert len(set(exported)) == len(exported), f"{name}.__all__ names something twice"


def _drawn_tree() -> dict[str, str | None]:
    """Each class drawn in errors.py's docstring, and the class it is drawn under."""
    doc = errors.__doc__ or ""
    parents: dict[str, str | None] = {}
    stack: list[tuple[int, str]] = []
    for line in doc.splitlines():
        found = TREE_LINE.match(line)
        if not found or (not any(mark in line for mark in ("├", "└")) and stack):
            continue
        depth = found.start(1)
        while stack and stack[-1][0] >= depth:
            stack.pop()
        parents[found.group(1)] = stack[-1][1] if stack else None
        stack.append((depth, found.group(1)))
    return parents


def _real_tree() -> dict[str, str | None]:
    for name in MODULES:  # every class that subclasses the root is defined by now
        importlib.import_module(name)
    found: dict[str, str | None] = {errors.ReactTextError.__name__: None}
    todo = [errors.ReactTextError]
    while todo:
        cls = todo.pop()
        for sub in cls.__subclasses__():
            assert sub.__module__ == "react_text.core.errors", f"{sub.__qualname__} is defined in {sub.__module__}"
            found[sub.__name__] = cls.__name__
            todo.append(sub)
    return found


def test_the_exception_tree_drawn_is_the_classes() -> None:
    assert _drawn_tree() == _real_tree()
    assert len(_real_tree()) <= 4  # STYLE.md: a small tree


def test_the_tree_reader_reads_a_tree() -> None:
    drawn = _drawn_tree()
    assert drawn["ReactTextError"] is None
    assert drawn["ContextLengthError"] == "ModelError"
    assert drawn["ConfigError"] == "ReactTextError"


def test_the_other_names_of_config_error_are_it() -> None:
    from react_text.backends.download import DownloadError
    from react_text.backends.local import MissingExtra

    assert MissingExtra is DownloadError is errors.TokenizerError is errors.ConfigError


def _imports(source: str) -> list[tuple[str, str]]:
    flags = ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
    tree = compile(source, "<block>", "exec", flags=flags, dont_inherit=True)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith("react_text"):
            found.extend((node.module or "", alias.name) for alias in node.names)
    return found


def _documented() -> list[tuple[str, str, str]]:
    """(where, module, name) for each name that the README, the docs and the notebooks import."""
    found = []
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]:
        text = page.read_text(encoding="utf-8")
        where = str(page.relative_to(ROOT))
        for block in FENCE.finditer(text):
            found.extend((where, module, name) for module, name in _imports(block.group(1)))
        for directive in DIRECTIVE.finditer(text):
            path = directive.group(1)
            if path not in MODULES:
                module, _, name = path.rpartition(".")
                found.append((where, module, name))
    for notebook in sorted((ROOT / "notebooks").glob("*.ipynb")):
        cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
        for cell in cells:
            if cell["cell_type"] == "code":
                lines = "".join(cell["source"]).splitlines()
                code = "\n".join(line for line in lines if not line.lstrip().startswith(("%", "!")))
                where = str(notebook.relative_to(ROOT))
                found.extend((where, module, name) for module, name in _imports(code))
    return found


def test_the_docs_import_something() -> None:
    documented = _documented()
    assert ("README.md", "react_text", "Agent") in documented
    assert any(module == "react_text.mcp" for _, module, _ in documented)


@pytest.mark.parametrize(("where", "module", "name"), sorted(set(_documented())))
def test_what_the_docs_import_is_exported_there(where: str, module: str, name: str) -> None:
    imported = importlib.import_module(module)
    if f"{module}.{name}" in MODULES:
        return  # a submodule
    assert name in getattr(imported, "__all__", ()), f"{where} imports {name} from {module}, which does not export it"
    assert hasattr(imported, name)


def test_the_old_name_of_task_result_warns_and_works() -> None:
    from react_text import evaluation

    with pytest.warns(DeprecationWarning, match="TaskResult"):
        old = evaluation.Outcome  # type: ignore[attr-defined]
    assert old is evaluation.TaskResult
    with pytest.raises(AttributeError, match="no attribute 'Nothing'"):
        _ = evaluation.Nothing  # type: ignore[attr-defined]


def test_the_layout_page_names_every_module() -> None:
    """docs/reference/layout.md draws the package: every module and subpackage has its line (a
    package's modules may be named on its line instead)."""
    root = Path(__file__).resolve().parent.parent
    page = (root / "docs" / "reference" / "layout.md").read_text(encoding="utf-8")
    package = root / "react_text"
    missing = []
    for path in sorted(package.glob("*.py")):
        if path.stem != "__init__" and f"react_text/{path.name}" not in page:
            missing.append(path.name)
    for sub in sorted(p for p in package.iterdir() if (p / "__init__.py").is_file()):
        line = next((ln for ln in page.splitlines() if f"react_text/{sub.name}/" in ln), None)
        if line is None:
            missing.append(f"{sub.name}/")
            continue
        block = page[page.index(line) :].split("\nreact_text/", 1)[0]
        missing += [
            f"{sub.name}/{m.stem}" for m in sorted(sub.glob("*.py")) if m.stem != "__init__" and m.stem not in block
        ]
    assert not missing, f"docs/reference/layout.md does not name: {', '.join(missing)}"
