from __future__ import annotations

import os
from pathlib import Path

import pytest

from react_text.tools.running import run_text
from react_text.tools.toolbox import CalculatorError, Files, calculate, calculator


@pytest.mark.parametrize(
    ("expression", "value"),
    [
        ("17 * 23 + 5", "396"),
        ("(17 + 25) * 3", "126"),
        ("1234 * 5678", "7006652"),
        ("10 / 4", "2.5"),
        ("10 / 2", "5"),
        ("2 ^ 10 - 24", "1000"),
        ("-3 ** 2", "-9"),
        ("sqrt(144) + abs(-2)", "14"),
        ("1,234,567 + 1", "1234568"),
        ("17 × 3 =", "51"),
        ("round(2 / 3, 2)", "0.67"),
        ("3.5 * 4.2", "14.7"),
        ("1 / 3", "0.333333333333"),
        ("pi * 0", "0"),
    ],
)
def test_calculator(expression: str, value: str) -> None:
    assert calculate(expression) == value


@pytest.mark.parametrize(
    "expression",
    [
        "__import__('os').system('true')",
        "open('/etc/passwd')",
        "(1).__class__",
        "[x for x in range(10)]",
        "9 ** 9 ** 9",
        "2 ** 100000",
        "10 ** 999 * 10 ** 999 * 10 ** 999 * 10 ** 999 * 10 ** 999",
        "lambda: 1",
        "True + 1",
        "'a' * 10",
        "1 +",
        "x" * 600,
        "1 / 0",
        "sqrt(-1)",
        "\x00",
        "(" * 400 + ")" * 400,
        "round(7, -999999999)",
        "round(7, 2.5)",
    ],
)
def test_calculator_refuses(expression: str) -> None:
    with pytest.raises(CalculatorError):
        calculate(expression)


def test_calculator_tool_reports_errors_as_observations() -> None:
    assert run_text(calculator, "9 ** 9 ** 9").startswith("The tool calculator failed with CalculatorError")


@pytest.fixture
def root(tmp_path: Path) -> Path:
    docs = tmp_path / "docs"
    (docs / "sub").mkdir(parents=True)
    (docs / "a.txt").write_text("The train ticket costs 89 euros.\nNothing else.\n")
    (docs / "sub" / "b.md").write_text("A hotel night costs 145 euros.\n")
    (tmp_path / "secret.txt").write_text("the password is hunter2\n")
    os.symlink(tmp_path / "secret.txt", docs / "link.txt")
    return docs


def test_search_and_read(root: Path) -> None:
    files = Files(root)
    assert files.search("hotel costs") == "sub/b.md:1: A hotel night costs 145 euros."
    assert files.read("a.txt").startswith("The train ticket")
    assert files.search("zebra") == "no line holds any of: zebra"
    assert files.search("train_ticket") == "a.txt:1: The train ticket costs 89 euros."  # as small models write it
    assert files.search("costs euros") == (
        "a.txt:1: The train ticket costs 89 euros.\nsub/b.md:1: A hotel night costs 145 euros."
    )  # ties are all listed; weaker matches are not


@pytest.mark.parametrize("path", ["../secret.txt", "/etc/passwd", "sub/../../secret.txt", "link.txt"])
def test_file_tools_stay_inside_their_root(root: Path, path: str) -> None:
    with pytest.raises(PermissionError):
        Files(root).read(path)


def test_search_skips_symlinks_out(root: Path) -> None:
    assert "hunter2" not in Files(root).search("password")


def test_calculator_refuses_without_warnings() -> None:
    with pytest.raises(CalculatorError):
        calculate("1abc + 2")  # a SyntaxWarning before the SyntaxError; warnings are errors here


def test_python_doc_reads_the_standard_library_offline() -> None:
    from react_text.tools.toolbox import python_doc

    assert "Serialize ``obj`` to a JSON formatted ``str``" in python_doc("json.dumps")
    assert "Return the number of items in a container." in python_doc("len")


@pytest.mark.parametrize("name", ["antigravity", "this", "requests", "os.system(1)", "__import__('os')"])
def test_python_doc_refuses_what_it_should_not_import(name: str) -> None:
    from react_text.tools.toolbox import python_doc

    with pytest.raises((LookupError, ValueError)):
        python_doc(name)
