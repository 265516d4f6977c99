"""Built-in tools, safe by construction and usable offline.

    calculator[expression]   arithmetic, evaluated over the syntax tree (no eval), exponents bounded
    search[words]            the lines of the files under a root folder that hold the most of the
                             words (split at spaces and underscores), with their paths
    read[path]               one file under that root folder
    python_doc[name]         Python's documentation of a standard-library name (pydoc, offline)

The file tools never leave their root: `..`, absolute paths and symlinks that lead outside it are
refused. Nothing here shells out.
"""

from __future__ import annotations

import ast
import math
import operator
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import regex

from react_text.tools.tool import Tool, tool

__all__ = [
    "CalculatorError",
    "Files",
    "calculate",
    "calculator",
    "default_tools",
    "python_doc",
]

_BINARY: dict[type[ast.operator], Callable[[object, object], object]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_UNARY: dict[type[ast.unaryop], Callable[[Any], object]] = {
    ast.UAdd: operator.pos,
    ast.USub: operator.neg,
}
_FUNCTIONS: dict[str, Callable[..., object]] = {
    "sqrt": math.sqrt,
    "abs": abs,
    "round": round,
    "min": min,
    "max": max,
    "floor": math.floor,
    "ceil": math.ceil,
    "log": math.log,
}
_CONSTANTS = {"pi": math.pi, "e": math.e}
_THOUSANDS = regex.compile(r"(?<=\d),(?=\d{3}(?!\d))")
_WORD_SPLIT = regex.compile(r"[\W_]+")
_WORDS = regex.compile(r"[^\W_]+")
_MAX_BITS = 4096  # results larger than this many bits are refused (9**9**9 would never finish)
_MAX_LENGTH = 500  # characters of expression


class CalculatorError(ValueError):
    """An expression the calculator will not evaluate."""


def calculate(expression: str) -> str:
    """Evaluate arithmetic: + - * / // % **, parentheses, sqrt, abs, round, min, max, floor, ceil, log."""
    text = expression.strip().replace("^", "**").replace("×", "*").replace("÷", "/").rstrip("=").strip()
    if len(text) > _MAX_LENGTH:
        raise CalculatorError(f"expression longer than {_MAX_LENGTH} characters")
    try:
        with warnings.catch_warnings():  # "1abc" warns before it fails; the failure is what we report
            warnings.simplefilter("ignore", SyntaxWarning)
            tree = ast.parse(_drop_thousands_separators(text), mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:  # ValueError: a NUL byte
        raise CalculatorError(f"not arithmetic: {expression!r}") from exc
    try:
        value = _evaluate(tree.body)
    except (ArithmeticError, TypeError, ValueError, RecursionError) as exc:
        if isinstance(exc, CalculatorError):
            raise
        raise CalculatorError(f"{type(exc).__name__}: {exc}") from exc
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        value = int(value)
    if isinstance(value, float):
        return format(value, ".12g")  # 3.5 * 4.2 is 14.7, not 14.700000000000001
    return str(value)


def _drop_thousands_separators(text: str) -> str:
    """'1,234,567 + 1' has thousands separators; 'max(1,234)' has an argument list."""
    if any(ch.isalpha() for ch in text):
        return text
    return _THOUSANDS.sub("", text)


def _evaluate(node: ast.AST) -> object:
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float) and not isinstance(node.value, bool):
        return node.value
    if isinstance(node, ast.Name) and node.id in _CONSTANTS:
        return _CONSTANTS[node.id]
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _UNARY[type(node.op)](_evaluate(node.operand))
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left, right = _evaluate(node.left), _evaluate(node.right)
        if isinstance(node.op, ast.Pow):
            _check_power(left, right)
        result = _BINARY[type(node.op)](left, right)
        if isinstance(result, int) and result.bit_length() > _MAX_BITS:
            raise CalculatorError(f"result larger than {_MAX_BITS} bits")
        return result
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in _FUNCTIONS
        and not node.keywords
    ):
        args = [_evaluate(arg) for arg in node.args]
        if node.func.id == "round" and len(args) == 2 and not (isinstance(args[1], int) and abs(args[1]) <= 100):
            # round(7, -10**9) computes 10**(10**9): found by bench/fuzz.py
            raise CalculatorError("round takes at most 100 digits")
        return _FUNCTIONS[node.func.id](*args)
    raise CalculatorError(f"not allowed in arithmetic: {ast.unparse(node)!r}")


def _check_power(base: object, exponent: object) -> None:
    if not isinstance(base, int | float) or not isinstance(exponent, int | float):
        raise CalculatorError("powers take numbers")
    if abs(base) > 1 and abs(exponent) * math.log2(abs(base)) > _MAX_BITS:
        raise CalculatorError(f"{base} ** {exponent} is larger than {_MAX_BITS} bits")


calculator = tool(calculate, name="calculator", pure=True)


class Files:
    """Search and read text files under `root`, and nowhere else."""

    def __init__(self, root: str | Path, *, max_hits: int = 20, max_file_bytes: int = 2_000_000) -> None:
        self.root = Path(root).resolve()
        self.max_hits = max_hits
        self.max_file_bytes = max_file_bytes

    def _inside(self, relative: str) -> Path:
        candidate = Path(relative.strip().strip("\"'"))
        if candidate.is_absolute() or ".." in candidate.parts:
            raise PermissionError(f"{relative!r} is outside the folder {self.root.name}/")
        resolved = (self.root / candidate).resolve()
        if not resolved.is_relative_to(self.root):
            raise PermissionError(f"{relative!r} leads outside the folder {self.root.name}/")
        return resolved

    def read(self, path: str) -> str:
        """Read one text file, by its path inside the folder."""
        target = self._inside(path)
        if not target.is_file():
            raise FileNotFoundError(f"no file {path!r}")
        return target.read_bytes()[: self.max_file_bytes].decode("utf-8", errors="replace")

    def search(self, words: str) -> str:
        """Find the lines that hold the most of the given words; lists path:line: text."""
        wanted = {w.casefold() for w in _WORD_SPLIT.split(words) if w}
        if not wanted:
            raise ValueError("give one or more words to search for")
        best = 0
        hits: list[str] = []
        for path in sorted(self.root.rglob("*")):
            if path.is_symlink() or not path.is_file() or not path.resolve().is_relative_to(self.root):
                continue
            try:
                text = path.read_bytes()[: self.max_file_bytes].decode("utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            for number, line in enumerate(text.splitlines(), 1):
                found = set(_WORDS.findall(line.casefold())) & wanted
                if not found or len(found) < best:
                    continue
                if len(found) > best:  # a better match: the weaker ones go
                    best, hits = len(found), []
                if len(hits) < self.max_hits:
                    hits.append(f"{path.relative_to(self.root)}:{number}: {line.strip()[:200]}")
        return "\n".join(hits) if hits else f"no line holds any of: {words}"

    def tools(self) -> list[Tool]:
        return [tool(self.search, name="search", pure=True), tool(self.read, name="read", pure=True)]


# Standard-library modules whose import does something (opens a browser, prints, starts a GUI).
_NOT_IMPORTED = frozenset({"antigravity", "this", "turtle", "turtledemo", "tkinter", "idlelib", "lib2to3", "__main__"})


def python_doc(name: str) -> str:
    """Python's documentation of a standard-library module, function or class, e.g. json.dumps."""
    import builtins
    import importlib
    import pydoc
    import sys

    parts = name.strip().strip("`'\"").removesuffix("()").split(".")
    if not all(part.isidentifier() for part in parts):
        raise ValueError(f"not a Python name: {name!r}")
    top, rest = parts[0], parts[1:]
    obj: object
    if top in _NOT_IMPORTED:
        raise LookupError(f"{top!r} is not documented here (importing it does something)")
    if top in sys.stdlib_module_names:
        obj = importlib.import_module(top)
    elif hasattr(builtins, top):
        obj = getattr(builtins, top)
    else:
        raise LookupError(f"{top!r} is neither a standard-library module nor a builtin")
    for part in rest:
        obj = getattr(obj, part)  # an AttributeError says what is missing
    text = pydoc.render_doc(obj, renderer=pydoc.plaintext)  # type: ignore[attr-defined]
    lines = [line for line in text.splitlines() if line.strip()]
    return "\n".join(lines[:60])


_pydoc_tool = tool(python_doc, name="python_doc", pure=True)


def default_tools(root: str | Path | None = None) -> list[Tool]:
    """The calculator and Python's documentation, plus the file tools when a root folder is given."""
    return [calculator, _pydoc_tool, *(Files(root).tools() if root is not None else [])]
