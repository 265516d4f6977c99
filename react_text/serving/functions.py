"""A request's function tools as the engine's Tools, and the arguments the binder read as the JSON a
client takes back.

    {"type": "function", "function": {"name": "get_weather", "description": "...",
     "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}

becomes a `Tool` named `get_weather` whose signature is made from its parameter schema as an MCP
tool's is (`mcp.schema.Parameters`: `get_weather(city: str)`), so the tool list shows
`get_weather[city: str]`, the grammar types its input, and the one binder reads
`get_weather[Paris]`, `get_weather[city="Paris"]` and `get_weather[{"city": "Paris"}]` alike. The
bound arguments go back keyed as the schema names them, values as the binder converted them
(`"3"` for an integer is 3), optional ones the model left out not sent: `{"city": "Paris"}`.

A served tool is never run here: the client runs it and sends its result back. Made once per
distinct schema (cached), since a client sends the same tools with every request.
"""

from __future__ import annotations

import functools
import inspect
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from react_text.tools import Tool
from react_text.tools.binding.converting import plain
from react_text.tools.mcp.schema import Parameters

__all__ = ["Function", "arguments", "function", "functions"]


@dataclass(frozen=True, slots=True)
class Function:
    """One function tool of a request: the Tool the engine lists, parses and binds, and its schema's
    way back to JSON."""

    tool: Tool
    parameters: Parameters
    schema: Mapping[str, Any] = field(default_factory=dict, compare=False, hash=False)  # as the client sent it

    @property
    def name(self) -> str:
        return self.tool.name


def functions(specs: Sequence[Mapping[str, Any]]) -> tuple[Function, ...]:
    """The Functions of checked tool specs (`{"name", "description", "parameters"}` each); ValueError
    or TypeError naming what a spec gets wrong."""
    return tuple(
        function(
            spec["name"],
            spec.get("description") or "",
            json.dumps(spec.get("parameters") or {}, sort_keys=True, ensure_ascii=False),
        )
        for spec in specs
    )


@functools.lru_cache(maxsize=1024)
def function(name: str, description: str, schema: str) -> Function:
    """A Function from its name, description and parameter schema (as JSON text: the cache's key)."""
    decoded = json.loads(schema)
    parameters = Parameters.of(decoded)

    def unrun(*args: object, **kwargs: object) -> str:
        raise RuntimeError(f"{name} is run by the client that sent it, not by the server")

    unrun.__name__ = unrun.__qualname__ = name
    unrun.__signature__ = parameters.signature  # type: ignore[attr-defined]
    text = " ".join(description.split("\n\n")[0].split())  # its first paragraph, as for a Python function
    return Function(Tool(name, text, unrun), parameters, decoded if isinstance(decoded, dict) else {})


def arguments(chosen: Function, bound: inspect.BoundArguments) -> dict[str, Any]:
    """The arguments the binder read, as the JSON object the schema describes (keys as it names
    them; an optional argument the model left out is not sent)."""
    values = chosen.parameters.arguments(bound.args, bound.kwargs)
    return {key: _jsonable(value) for key, value in values.items()}


def _jsonable(value: object) -> Any:
    """A converted value as JSON takes it: tuples and sets as arrays, anything else JSON cannot
    hold as its text."""
    value = plain(value)
    if value is None or isinstance(value, str | bool | int | float):
        return value
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [_jsonable(v) for v in value]
    return str(value)
