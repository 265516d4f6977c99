from __future__ import annotations

import dataclasses
import enum
import inspect
import re
import time
from pathlib import Path
from typing import Any, Literal

import pytest

from react_text import Agent, ScriptedModel, tool
from react_text.budget import counter
from react_text.prompting import render
from react_text.tools import Tool, as_text, call, listing, truncate


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


def test_a_tool_built_directly_takes_several_parameters() -> None:
    made = Tool("add", "Add two numbers.", add)
    assert made.params == ("a", "b")
    assert made.form == "add[a: float, b: float]"
    assert call(made, "2, 3") == "5.0"
    _, result = run(["ACTION: add[2, 3]", "FINAL: 5"], [made])
    assert result.steps[0].observation == "5.0"


def run(replies: list[str], tools: list[Any]):  # type: ignore[no-untyped-def]
    model = ScriptedModel(replies)
    return model, Agent(model, tools=tools).run("task")


def untyped(x, y):  # type: ignore[no-untyped-def]
    return x


def later(x: Undefined) -> str:  # type: ignore[name-defined]  # noqa: F821 - the annotation that cannot be resolved
    return "never"


@pytest.mark.parametrize(
    ("build", "error", "words"),
    [
        (lambda: Tool("two words", "", lookup), ValueError, "tool name"),
        (lambda: Tool("", "", lookup), ValueError, "tool name"),
        (lambda: Tool("x" * 65, "", lookup), ValueError, "tool name"),
        (lambda: Tool("lookup", None, lookup), TypeError, "description"),
        (lambda: Tool("lookup", "", "not a function"), TypeError, "callable"),
        (lambda: Tool("lookup", "", lookup, risky="yes"), TypeError, "risky"),
        (lambda: Tool("lookup", "", lookup, timeout=0), ValueError, "timeout"),
        (lambda: Tool("max", "", max), TypeError, "cannot read the parameters"),
        (lambda: Tool("later", "", later), TypeError, "cannot resolve the annotation 'Undefined'"),
    ],
)
def test_a_broken_tool_is_refused_when_made(build: Any, error: type[Exception], words: str) -> None:
    with pytest.raises(error, match=re.escape(words)):
        build()


def test_an_unresolvable_return_annotation_does_not_matter() -> None:
    def shout(text: str) -> Undefined:  # type: ignore[name-defined]  # noqa: F821
        return text.upper()

    assert call(tool(shout), "hi") == "HI"


def test_replacing_a_field_keeps_what_was_derived_and_is_cheap() -> None:
    made = tool(add)
    changed = dataclasses.replace(made, timeout=5.0)
    assert changed.shape is made.shape  # derived once per function
    assert changed == Tool("add", "Add two numbers.", add, timeout=5.0)
    assert hash(changed) == hash(Tool("add", "Add two numbers.", add, timeout=5.0))


def test_an_async_tool_is_run_to_completion() -> None:
    async def fetch(url: str, retries: int = 1) -> str:
        return f"{url} {retries}"

    assert call(tool(fetch), "example.org, 2") == "example.org 2"
    assert call(tool(fetch, timeout=5), "example.org") == "example.org 1"


class Mode(enum.Enum):
    FAST = "fast"
    SAFE = "safe"


class Level(enum.Enum):
    LOW = 1
    HIGH = 2


def search(query: str, limit: int = 5) -> str:
    """Search the notes."""
    return query


def greet(name: str, greeting: str = "Hello") -> str:
    return greeting


def every(
    path: Path,
    mode: Mode,
    level: Level,
    unit: Literal["c", "f"] = "c",
    ratio: float = 0.5,
    count: int | None = None,
    verbose: bool = False,
    tags: list[str] | None = None,
    table: dict[str, int] | None = None,
    anything: Any = None,
    *rest: int,
    **options: str,
) -> str:
    return ""


def now() -> str:
    """The time."""
    return "12:00"


def test_the_listing_shows_what_binding_accepts() -> None:
    assert listing([tool(lookup), tool(add), tool(search), tool(greet), tool(now), tool(untyped)]) == (
        "- lookup[item]: Return the price of one item.\n"
        "- add[a: float, b: float]: Add two numbers.\n"
        "- search[query, limit=5]: Search the notes.\n"
        '- greet[name, greeting="Hello"]\n'
        "- now[]: The time.\n"
        "- untyped[x, y]"
    )
    assert tool(every).form == (
        'every[path, mode: "fast" | "safe", level: LOW | HIGH, unit: "c" | "f" = "c", ratio=0.5, '
        "count: int | null = null, verbose=false, tags: list[str] | null = null, "
        "table: dict[str, int] | null = null, anything: any = null, *rest: int, **options]"
    )


def test_the_instruction_block_lists_the_forms() -> None:
    block = Agent(ScriptedModel([]), tools=[search, add]).instructions()
    assert "- search[query, limit=5]: Search the notes.\n- add[a: float, b: float]: Add two numbers." in block


@pytest.mark.parametrize("text", ["2, 3", "[2, 3]", '{"a": 2, "b": 3}', " 2 ,3 ", "a=2, b=3", "2, b=3"])
def test_several_parameters_from_text(text: str) -> None:
    assert call(tool(add), text) == "5.0"


def test_an_input_the_tool_cannot_take_is_refused_without_running_it() -> None:
    ran: list[object] = []

    def record(a: float, b: float) -> str:
        ran.append((a, b))
        return "ran"

    assert call(tool(record, name="add"), "two, three") == render(
        "corrections/bad_input",
        tool="add",
        problem='a takes a number, not "two"; b takes a number, not "three"',
        form="add[a: float, b: float]",
    )
    assert call(tool(record, name="add"), "2") == render(
        "corrections/bad_input", tool="add", problem="b is missing", form="add[a: float, b: float]"
    )
    assert ran == []


def test_a_tool_that_raises_is_an_observation() -> None:
    assert call(tool(lookup, name="boom", description=""), "x") == "x"

    def boom(x: str) -> str:
        raise KeyError(x)

    assert call(tool(boom), "x") == render("corrections/tool_error", tool="boom", error_type="KeyError", error="'x'")


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


def test_a_tool_bind_is_cheap() -> None:
    made = tool(search)
    call(made, "warm, 1")
    for text in ("cats, 3", '{"query": "cats", "limit": 3}', 'query="cats", limit=3'):
        started = time.perf_counter()
        for _ in range(200):
            call(made, text)
        assert (time.perf_counter() - started) / 200 < 0.002, text  # measured: tens of microseconds


def test_inspect_signature_is_not_recomputed_per_call(monkeypatch: pytest.MonkeyPatch) -> None:
    made = dataclasses.replace(tool(add), timeout=None)
    calls: list[object] = []
    real = inspect.signature

    def spy(*args: Any, **kwargs: Any) -> inspect.Signature:
        calls.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(inspect, "signature", spy)
    for _ in range(3):
        assert call(dataclasses.replace(made, timeout=None), "1, 2") == "3.0"
    assert calls == []
