"""Helpers for test_attack35b_serve.py: one request to `app(ScriptedModel(replies))` through
httpx's ASGI transport, tools as clients send them, and streamed chunks added up as OpenAI's
clients add them up."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Any

import httpx

from react_text import ScriptedModel
from react_text.serving import app


def function(name: str, properties: dict[str, Any], required: tuple[str, ...] = (), **extra: Any) -> dict[str, Any]:
    schema = {"type": "object", "properties": properties, "required": list(required), **extra}
    return {"type": "function", "function": {"name": name, "parameters": schema}}


WEATHER = function("get_weather", {"city": {"type": "string"}}, ("city",))
USER = [{"role": "user", "content": "Weather in Paris?"}]


def call(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}


@dataclass
class Answer:
    status: int
    headers: httpx.Headers
    body: Any
    upstream: ScriptedModel

    @property
    def message(self) -> dict[str, Any]:
        return dict(self.body["choices"][0]["message"])

    @property
    def finish(self) -> str:
        return str(self.body["choices"][0]["finish_reason"])

    @property
    def arguments(self) -> list[Any]:
        return [json.loads(c["function"]["arguments"]) for c in self.message.get("tool_calls") or []]

    def prompt(self, call: int = 0) -> list[tuple[str, str]]:
        """The messages of the upstream's `call`-th request, after the instruction block."""
        messages = self.upstream.calls[call].prompt
        assert isinstance(messages, tuple)
        return [(m.role, m.content) for m in messages[1:]]


def ask(replies: list[Any], body: Any, headers: dict[str, str] | None = None, **options: Any) -> Answer:
    """`body` (a dict as JSON, bytes as they are) posted to a fresh endpoint over `replies`."""
    upstream = ScriptedModel(replies, **options.pop("model", {}))
    endpoint = app(upstream, **options)

    async def go() -> httpx.Response:
        transport = httpx.ASGITransport(app=endpoint, raise_app_exceptions=False)
        async with httpx.AsyncClient(transport=transport, base_url="http://endpoint") as client:
            if isinstance(body, bytes):
                sent = {"content-type": "application/json", **(headers or {})}
                return await client.post("/v1/chat/completions", content=body, headers=sent)
            return await client.post("/v1/chat/completions", json=body, headers=headers)

    response = asyncio.run(go())
    try:
        parsed: Any = response.json()
    except ValueError:
        parsed = response.text
    return Answer(response.status_code, response.headers, parsed, upstream)


def sse(text: str) -> list[dict[str, Any]]:
    """The JSON chunks of a server-sent event stream, up to [DONE] (which must end it)."""
    data = [line.removeprefix("data: ") for line in text.splitlines() if line.startswith("data: ")]
    assert data and data[-1] == "[DONE]", text[-200:]
    return [json.loads(d) for d in data[:-1]]


def assemble(chunks: list[Any]) -> tuple[str, dict[int, dict[str, str]], str | None, Any]:
    """Content, tool calls by index, finish_reason and usage, as OpenAI's clients rebuild them
    from chunks (pydantic models or dicts)."""
    calls: dict[int, dict[str, str]] = {}
    content, finish, usage = "", None, None
    for chunk in chunks:
        c = chunk if isinstance(chunk, dict) else chunk.model_dump()
        usage = c.get("usage") or usage
        for choice in c["choices"]:
            delta = choice["delta"]
            content += delta.get("content") or ""
            for tool in delta.get("tool_calls") or []:
                entry = calls.setdefault(tool["index"], {"id": "", "name": "", "arguments": ""})
                entry["id"] = tool.get("id") or entry["id"]
                fn = tool.get("function") or {}
                entry["name"] += fn.get("name") or ""
                entry["arguments"] += fn.get("arguments") or ""
            finish = choice.get("finish_reason") or finish
    return content, calls, finish, usage
