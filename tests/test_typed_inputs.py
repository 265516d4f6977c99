"""Inputs typed by each tool's signature: under the grammar an input the grammar admits always
binds (drawn at random from the grammar, read by the parser, bound by the binder: never refused),
the grammar refuses what the tool cannot take, and every grammar compiles in llama.cpp (and in
xgrammar, where installed), tool names with spaces, hyphens, dots and CJK included."""

from __future__ import annotations

import dataclasses
import enum
import importlib.util
import inspect
import random
from typing import Any, Literal, TypedDict

import pytest
from grammar_strings import draw
from grammars import ebnf, gbnf

from react_text.core.types import Action
from react_text.grammar import gbnf as reading
from react_text.grammar.protocol import protocol_grammar
from react_text.parser import parse
from react_text.tools.binding import Refusal, bind
from react_text.tools.mcp import Parameters
from react_text.tools.tool import Tool, tool
from react_text.tools.toolbox import calculator

XGRAMMAR = importlib.util.find_spec("xgrammar") is not None


class Color(enum.Enum):
    RED = "red"
    DARK_BLUE = "dark blue"


class Point(TypedDict):
    x: int
    y: int


@dataclasses.dataclass
class Box:
    width: float
    label: str = ""


def add(a: int, b: float = 1.0) -> str:
    """Add."""
    return str(a + b)


def paint(color: Color, shade: Literal["light", "dark"] = "light", glossy: bool = False) -> str:
    """Paint."""
    return f"{color} {shade} {glossy}"


def where(p: Point) -> str:
    """Where."""
    return str(p)


def pack(box: Box, tags: list[str] | None = None, meta: dict[str, Any] | None = None) -> str:
    """Pack."""
    return str(box)


def now() -> str:
    """Now."""
    return ""


def search(query: str, limit: int | None = None) -> str:
    """Search."""
    return query


def echo(text: str) -> str:
    """Echo."""
    return text


def levels(n: Literal[1, 2, 3], strict: bool | None = None) -> str:
    """Levels."""
    return str(n)


def schema_tool(name: str, schema: dict[str, Any]) -> Tool:
    """A tool as react_text.tools.mcp makes one from an MCP server's input schema."""
    parameters = Parameters.of(schema)

    def call(**arguments: Any) -> str:
        return str(arguments)

    call.__signature__ = parameters.signature  # type: ignore[attr-defined]
    return Tool(name, "from a schema", call)


MCP_WEATHER = schema_tool(
    "get-weather",
    {
        "type": "object",
        "properties": {
            "city": {"type": "string"},
            "days": {"type": "integer"},
            "units": {"type": "string", "enum": ["metric", "imperial"]},
            "hourly": {"type": "boolean"},
        },
        "required": ["city"],
    },
)
MCP_NOTE = schema_tool(
    "files.write",
    {
        "type": "object",
        "properties": {"path": {"type": "string"}, "lines": {"type": "array", "items": {"type": "string"}}},
        "required": ["path", "lines"],
    },
)
TOOLS = [tool(f) for f in (add, paint, where, pack, now, search, echo, levels)]
TOOLS += [
    MCP_WEATHER,
    MCP_NOTE,
    calculator,
    dataclasses.replace(tool(search), name="web search"),
    dataclasses.replace(tool(echo), name="天气"),
]
GRAMMAR = protocol_grammar(TOOLS)


@pytest.mark.parametrize("number", range(len(TOOLS)), ids=[t.name for t in TOOLS])
def test_an_input_the_grammar_admits_always_binds(number: int) -> None:
    one = TOOLS[number]
    rng = random.Random(number)
    for _ in range(300):
        text = draw(GRAMMAR, f"in-{number}", rng)
        reply = f"THOUGHT: call it\nACTION: {one.name}[{text}]"
        assert reading.admits(GRAMMAR, reply), reply
        parsed = parse(reply, tools=[t.name for t in TOOLS])  # as the episode reads it
        assert isinstance(parsed, Action) and parsed.tool == one.name, (reply, parsed)
        bound = bind(one, parsed.input)
        assert not isinstance(bound, Refusal), (reply, bound.message if isinstance(bound, Refusal) else "")


REFUSED = {
    "add": ["x", "2, 3, 4", "a=x", '{"c": 1}', ""],
    "paint": ["green", "red, medium", "red, light, maybe"],
    "where": ["1, 2", "{x: 1}"],
    "now": ["x", "1"],
    "levels": ["4", "one"],
    "get-weather": ['{"days": 3}', "Lima, three"],
    "calculator": ["two plus two", "import os", "2 + "],
}


@pytest.mark.parametrize("name", REFUSED)
def test_what_the_tool_cannot_take_is_refused(name: str) -> None:
    for text in REFUSED[name]:
        assert not reading.admits(GRAMMAR, f"THOUGHT: x\nACTION: {name}[{text}]"), text


@pytest.mark.parametrize("after", [False, True])
def test_every_typed_grammar_compiles_in_the_engines_and_they_agree(after: bool) -> None:
    text = protocol_grammar(TOOLS, after_cue=after)
    engines = [gbnf(text), ebnf(text)] if XGRAMMAR else [gbnf(text)]
    start = " " if after else "THOUGHT: "
    rng = random.Random(7)
    samples = []
    for number, one in enumerate(TOOLS):
        samples += [f"{start}x\nACTION: {one.name}[{draw(text, f'in-{number}', rng)}]" for _ in range(5)]
    samples += [f"{start}x\nACTION: {name}[{bad}]" for name, bads in REFUSED.items() for bad in bads]
    for sample in samples:
        expected = reading.admits(text, sample)
        for engine in engines:
            assert engine.accepts(sample) == expected, sample


def test_names_alone_keep_the_untyped_grammar() -> None:
    assert "in-0" not in protocol_grammar(["calculator"])
    assert inspect.signature(protocol_grammar).parameters["tool_names"]


def test_the_parser_alone_reads_names_with_spaces_and_cjk() -> None:
    for name in ("web search", "天气"):
        parsed = parse(f"THOUGHT: look\nACTION: {name}[capital of Peru]")
        assert isinstance(parsed, Action) and parsed.tool == name


# Issue 33: keyword calls in any order, a defaulted parameter in the middle left out (BFCL writes them so).
ANY_ORDER = {
    "paint": [
        "glossy=true, color=red",
        "shade=dark, color=red",
        "color=red, glossy=false",
        '{"glossy": true, "color": "red"}',
    ],
    "get-weather": [
        "units=metric, city=Lima",
        "hourly=true, city=Lima, days=3",
        '{"units": "imperial", "city": "Oslo"}',
    ],
    "files.write": ['lines=["a"], path=x.txt', '{"lines": [], "path": "x.txt"}'],
    "pack": ['meta={"k": 1}, box={"width": 2}', '{"tags": ["a"], "box": {"width": 2}}'],
}
NOT_ANY_ORDER = {
    "paint": ["glossy=true", "color=red, color=red", "shade=dark, glossy=true", '{"color": "red", "color": "red"}'],
    "get-weather": ["units=metric, days=3", "city=Lima, city=Oslo"],
}


@pytest.mark.parametrize("after", [False, True])
def test_keyword_calls_in_any_order_are_admitted_by_every_engine_and_bind(after: bool) -> None:
    text = protocol_grammar(TOOLS, after_cue=after)
    engines = [gbnf(text), ebnf(text)] if XGRAMMAR else [gbnf(text)]
    start = " " if after else "THOUGHT: "
    by_name = {t.name: t for t in TOOLS}
    for table, admitted in ((ANY_ORDER, True), (NOT_ANY_ORDER, False)):
        for name, inputs in table.items():
            for written in inputs:
                sample = f"{start}x\nACTION: {name}[{written}]"
                assert reading.admits(text, sample) is admitted, sample
                for engine in engines:
                    assert engine.accepts(sample) is admitted, sample
                if admitted:
                    bound = bind(by_name[name], written)
                    assert not isinstance(bound, Refusal), (written, bound)
