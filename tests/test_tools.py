from __future__ import annotations

import pytest

from react_text import tool
from react_text.budget import counter
from react_text.prompting import render
from react_text.tools import Tool, arguments, as_text, call, listing, truncate


def lookup(item: str) -> str:
    """Return the price of one item.

    Prices are in euros."""
    return item


def add(a: float, b: float) -> float:
    """Add two numbers."""
    return a + b


def test_tool_from_a_plain_function() -> None:
    made = tool(lookup)
    assert (made.name, made.params, made.description) == (
        "lookup",
        ("item",),
        "Return the price of one item.",
    )
    assert made.form == "lookup[item]"


def test_decorator_form_with_options() -> None:
    @tool(risky=True, timeout=3, name="rm")
    def remove(path: str) -> str:
        """Remove a file."""
        return path

    assert isinstance(remove, Tool)
    assert (remove.name, remove.risky, remove.timeout) == ("rm", True, 3)


def test_listing() -> None:
    assert listing([tool(lookup), tool(add)]) == (
        "- lookup[item]: Return the price of one item.\n- add[a, b]: Add two numbers."
    )


@pytest.mark.parametrize("text", ["2, 3", "[2, 3]", '{"a": 2, "b": 3}', " 2 ,3 "])
def test_several_parameters_from_text(text: str) -> None:
    assert arguments(tool(add), text) == [2.0, 3.0]
    assert call(tool(add), text) == "5.0"


def test_bad_argument_is_an_observation() -> None:
    assert call(tool(add), "two, three") == render(
        "corrections/tool_error",
        tool="add",
        error_type="ValueError",
        error="could not convert string to float: 'two'",
    )


@pytest.mark.parametrize(
    ("value", "text"),
    [
        ("x", "x"),
        (3, "3"),
        (2.5, "2.5"),
        (None, "None"),
        ({"a": [1, "é"]}, '{"a": [1, "é"]}'),
        ((1, 2), "[1, 2]"),
    ],
)
def test_results_converted_to_text(value: object, text: str) -> None:
    assert as_text("t", value) == text


def test_bytes_refused_clearly() -> None:
    assert as_text("t", b"\x00\x01") == render("corrections/tool_bad_result", tool="t", kind="bytes (2 bytes)")


def test_object_without_text_form_refused() -> None:
    assert as_text("t", object()) == render("corrections/tool_bad_result", tool="t", kind="object")


def test_truncate_keeps_short_text() -> None:
    assert truncate("short", 100, counter("x")) == "short"


def test_truncate_huge_text_cheaply() -> None:
    text = "a " * 5_000_000
    out = truncate(text, 50, counter("x"))
    assert len(out) < 1000
    assert "tokens cut from the middle" in out


def test_wrong_number_of_inputs_says_what_the_tool_takes() -> None:
    assert call(tool(add), "2") == render(
        "corrections/tool_error", tool="add", error_type="ValueError", error="add[a, b] takes 2 inputs, got 1"
    )
