"""A chat completion request, checked: the JSON body becomes a `ChatRequest`, or an `Invalid` naming
the field it gets wrong (the endpoint answers it with a 400). Pure: no I/O, never raises.

    ChatRequest
      messages        Said (system, developer, user, or assistant text) | Called (assistant with
                      tool_calls) | Result (a tool's result, by tool_call_id)
      functions       the request's tools (functions.Function)
      choice          "auto" | "none" | "required" | "named" (then `named` is the function)
      parallel, stream, include_usage, max_tokens, temperature, seed, stop

Only what the endpoint acts on is read; other fields OpenAI defines (`user`, `metadata`, `store`,
`logit_bias`, ...) are accepted and left unused, and `n` above 1 is refused (one reply is read).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from react_text.core.sampling import SEEDS

from .functions import Function, functions

__all__ = ["Call", "Called", "ChatRequest", "Choice", "Invalid", "Result", "Said", "Turn", "read"]

Choice = Literal["auto", "none", "required", "named"]


@dataclass(frozen=True, slots=True)
class Invalid:
    """A request the endpoint cannot take: `param` names the field, as OpenAI's errors do."""

    param: str
    message: str
    code: str | None = None  # OpenAI's code for it, when it has one ("context_length_exceeded")


@dataclass(frozen=True, slots=True)
class Said:
    role: Literal["system", "user", "assistant"]  # a "developer" message is a system one
    text: str


@dataclass(frozen=True, slots=True)
class Call:
    id: str
    name: str
    arguments: str  # JSON text, as the client holds it


@dataclass(frozen=True, slots=True)
class Called:
    """An assistant message with tool_calls (and the text it came with, if any)."""

    text: str
    calls: tuple[Call, ...]


@dataclass(frozen=True, slots=True)
class Result:
    call_id: str
    text: str


Turn = Said | Called | Result


@dataclass(frozen=True, slots=True)
class ChatRequest:
    model: str
    messages: tuple[Turn, ...]
    functions: tuple[Function, ...] = ()
    choice: Choice = "auto"
    named: str | None = None
    parallel: bool = True
    stream: bool = False
    include_usage: bool = False
    max_tokens: int | None = None
    temperature: float | None = None
    seed: int | None = None
    stop: tuple[str, ...] = ()


class _Bad(Exception):
    def __init__(self, param: str, message: str) -> None:
        super().__init__(message)
        self.param, self.message = param, message


def read(body: object) -> ChatRequest | Invalid:
    """The request `body` (decoded JSON) holds, or what is wrong with it."""
    try:
        return _read(body)
    except _Bad as bad:
        return Invalid(bad.param, bad.message)


def _read(body: object) -> ChatRequest:
    if not isinstance(body, dict):
        raise _Bad("", "the request body must be a JSON object")
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise _Bad("model", "model is required: the model's name, as text")
    n = body.get("n")
    if n is not None and (isinstance(n, bool) or n != 1):  # JSON's true is not the number 1
        raise _Bad("n", "n must be 1: one reply is read for each request")
    tools = _tools(body.get("tools"))
    try:
        made = functions(tools)
    except (ValueError, TypeError) as exc:  # a name the protocol cannot carry, a schema the binder cannot read
        raise _Bad("tools", f"a tool cannot be served: {exc}") from None
    choice, named = _choice(body.get("tool_choice"), {f.name for f in made})
    options = body.get("stream_options")
    if options is not None and not isinstance(options, dict):
        raise _Bad("stream_options", "stream_options must be an object")
    return ChatRequest(
        model=model,
        messages=_messages(body.get("messages")),
        functions=made,
        choice=choice,
        named=named,
        parallel=_flag(body, "parallel_tool_calls", True),
        stream=_flag(body, "stream", False),
        include_usage=bool(options and options.get("include_usage") is True),
        max_tokens=_max_tokens(body),
        temperature=_temperature(body.get("temperature")),
        seed=_seed(body.get("seed")),
        stop=_stop(body.get("stop")),
    )


def _flag(body: Mapping[str, Any], key: str, default: bool) -> bool:
    value = body.get(key, default)
    if value is None:
        return default
    if not isinstance(value, bool):
        raise _Bad(key, f"{key} must be true or false")
    return value


def _tools(value: object) -> list[dict[str, Any]]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise _Bad("tools", "tools must be an array of function tools")
    found: list[dict[str, Any]] = []
    for i, item in enumerate(value):
        where = f"tools[{i}]"
        if not isinstance(item, dict) or item.get("type", "function") != "function":
            raise _Bad(f"{where}.type", 'each tool must be {"type": "function", "function": {...}}')
        spec = item.get("function")
        if not isinstance(spec, dict):
            raise _Bad(f"{where}.function", "a function tool needs its function: name, description, parameters")
        name = spec.get("name")
        if not isinstance(name, str) or not name or any(c.isspace() or c in "[]()" for c in name):
            raise _Bad(f"{where}.function.name", "a function's name is text without spaces, brackets or parentheses")
        if name in {f["name"] for f in found}:
            raise _Bad(f"{where}.function.name", f"two tools are named {name!r}")
        if not isinstance(spec.get("description") or "", str):
            raise _Bad(f"{where}.function.description", "a description is text")
        if not isinstance(spec.get("parameters") or {}, dict):
            raise _Bad(f"{where}.function.parameters", "parameters must be a JSON Schema object")
        found.append(spec)
    return found


def _choice(value: object, names: set[str]) -> tuple[Choice, str | None]:
    if value is None or value == "auto":
        return "auto", None
    if value in ("none", "required"):
        if value == "required" and not names:
            raise _Bad("tool_choice", 'tool_choice "required" needs tools')
        return ("none" if value == "none" else "required"), None
    if isinstance(value, dict) and value.get("type") == "function" and isinstance(value.get("function"), dict):
        name = value["function"].get("name")
        if name not in names:
            raise _Bad("tool_choice", f"tool_choice names {name!r}, which is not one of the tools")
        return "named", str(name)
    raise _Bad("tool_choice", 'tool_choice must be "auto", "none", "required" or {"type": "function", ...}')


def _messages(value: object) -> tuple[Turn, ...]:
    if not isinstance(value, list) or not value:
        raise _Bad("messages", "messages must be a non-empty array")
    made: list[Turn] = []
    for i, message in enumerate(value):
        where = f"messages[{i}]"
        if not isinstance(message, dict):
            raise _Bad(where, "each message must be an object")
        role = message.get("role")
        if role in ("system", "developer", "user"):
            made.append(Said("user" if role == "user" else "system", _text(message.get("content"), where)))
        elif role == "assistant":
            made.append(_assistant(message, where))
        elif role == "tool":
            call_id = message.get("tool_call_id")
            if not isinstance(call_id, str):
                raise _Bad(f"{where}.tool_call_id", "a tool message needs the tool_call_id it answers")
            made.append(Result(call_id, _text(message.get("content"), where)))
        else:
            raise _Bad(f"{where}.role", "role must be system, developer, user, assistant or tool")
    return tuple(made)


def _assistant(message: Mapping[str, Any], where: str) -> Said | Called:
    content = message.get("content")
    text = "" if content is None else _text(content, where)
    calls = message.get("tool_calls")
    if not calls:
        return Said("assistant", text)
    if not isinstance(calls, list):
        raise _Bad(f"{where}.tool_calls", "tool_calls must be an array")
    made: list[Call] = []
    for j, call in enumerate(calls):
        at = f"{where}.tool_calls[{j}]"
        function = call.get("function") if isinstance(call, dict) else None
        if not isinstance(call, dict) or not isinstance(call.get("id"), str) or not isinstance(function, dict):
            raise _Bad(at, "a tool call needs its id and function (name, arguments)")
        name, arguments = function.get("name"), function.get("arguments", "{}")
        if not isinstance(name, str) or not name:
            raise _Bad(f"{at}.function.name", "a tool call names its function")
        if isinstance(arguments, dict):  # some clients send the object itself
            arguments = json.dumps(arguments, ensure_ascii=False)
        if not isinstance(arguments, str):
            raise _Bad(f"{at}.function.arguments", "arguments must be a JSON string")
        made.append(Call(call["id"], name, arguments))
    return Called(text, tuple(made))


def _text(content: object, where: str) -> str:
    """A message's content as text: a string, or the text parts of an array joined."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts: list[str] = []
        for k, part in enumerate(content):
            if not isinstance(part, dict) or part.get("type") not in ("text", "input_text"):
                raise _Bad(f"{where}.content[{k}]", "only text content is taken (this model reads text)")
            if not isinstance(part.get("text"), str):
                raise _Bad(f"{where}.content[{k}].text", "a text part holds text")
            parts.append(part["text"])
        return "\n".join(parts)
    raise _Bad(f"{where}.content", "content must be text or an array of text parts")


def _max_tokens(body: Mapping[str, Any]) -> int | None:
    for key in ("max_completion_tokens", "max_tokens"):
        value = body.get(key)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise _Bad(key, f"{key} must be a whole number, 1 or more")
        return value
    return None


def _temperature(value: object) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 2:
        raise _Bad("temperature", "temperature must be a number from 0 to 2")
    return float(value)


def _seed(value: object) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value not in SEEDS:
        raise _Bad("seed", f"seed must be a whole number from 0 to {SEEDS[-1]}")
    return value


def _stop(value: object) -> tuple[str, ...]:
    if value is None:
        return ()
    items: Sequence[object] = [value] if isinstance(value, str) else value if isinstance(value, list) else [None]
    if len(items) > 4 or not all(isinstance(s, str) and s for s in items):
        raise _Bad("stop", "stop must be text or an array of at most 4 non-empty texts")
    return tuple(str(s) for s in items)
