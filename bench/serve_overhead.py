"""The endpoint's own cost per request (react_text.serving), with an upstream that costs nothing.

    python bench/serve_overhead.py [--requests 2000]

Rows:
- translation: the pure work of one request in-process (checking the body, the instruction block
  and transcript, reading the reply, binding, the response JSON), no HTTP;
- through ASGI: one POST /v1/chat/completions through the Starlette app (httpx's ASGI transport,
  in-process), beside a bare Starlette route that returns the same JSON: the difference is what
  the endpoint adds to an ASGI app that does nothing;
for a first turn with 1 tool, and a fourth turn (three tool rounds in the history) with 10 tools.
Medians of rounds; 2 shared cores make single numbers noisy, so compare rows of one run.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
from typing import Any

import httpx
from starlette.applications import Starlette
from starlette.requests import Request as HttpRequest
from starlette.responses import JSONResponse
from starlette.routing import Route

from react_text.core.types import Reply, Request, Usage
from react_text.serving import app, requests, responses
from react_text.serving.exchange import exchange, plan
from react_text.serving.upstream import upstream

REPLY = Reply('THOUGHT: the weather first\nACTION: get_weather[{"city": "Paris"}]', Usage(400, 20), "stop")


class Free:
    """An upstream that answers at once, with the same reply."""

    api = "chat"
    name = "free"
    accepts_grammar = False

    def generate(self, request: Request) -> Reply:
        return REPLY

    async def agenerate(self, request: Request) -> Reply:
        return REPLY


def tool(i: int) -> dict[str, Any]:
    name = "get_weather" if i == 0 else f"tool_{i}"
    params = {"city": {"type": "string"}, "days": {"type": "integer"}, "units": {"enum": ["C", "F"]}}
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": f"Tool {i}.",
            "parameters": {"type": "object", "properties": params, "required": ["city"]},
        },
    }


def body(tools: int, rounds: int) -> dict[str, Any]:
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Weather?"},
    ]
    for r in range(rounds):
        call = {
            "id": f"c{r}",
            "type": "function",
            "function": {"name": "get_weather", "arguments": json.dumps({"city": f"City {r}"})},
        }
        messages += [
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": f"c{r}", "content": f"{r} C"},
        ]
    return {"model": "m", "messages": messages, "tools": [tool(i) for i in range(tools)]}


def translation(sent: dict[str, Any], n: int) -> float:
    found = upstream(Free())  # type: ignore[arg-type]
    started = time.perf_counter()
    for _ in range(n):
        chat = requests.read(json.loads(json.dumps(sent)))
        planned = plan(chat, found)  # type: ignore[arg-type]
        talk = exchange(planned, lambda i: f"call_{i}")  # type: ignore[arg-type]
        next(talk)
        try:
            talk.send(REPLY)
        except StopIteration as end:
            json.dumps(responses.completion(end.value, id="x", created=0, model="m"))
    return (time.perf_counter() - started) / n


async def through(asgi: Any, sent: dict[str, Any], n: int) -> float:
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=asgi), base_url="http://bench") as client:
        await client.post("/v1/chat/completions", json=sent)
        started = time.perf_counter()
        for _ in range(n):
            answer = await client.post("/v1/chat/completions", json=sent)
            answer.raise_for_status()
    return (time.perf_counter() - started) / n


async def answer(asgi: Any, sent: dict[str, Any]) -> dict[str, Any]:
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=asgi), base_url="http://bench") as client:
        made: dict[str, Any] = (await client.post("/v1/chat/completions", json=sent)).json()
    return made


def bare(canned: dict[str, Any]) -> Starlette:
    async def route(request: HttpRequest) -> JSONResponse:
        json.loads(await request.body())
        return JSONResponse(canned)

    return Starlette(routes=[Route("/v1/chat/completions", route, methods=["POST"])])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=5)
    n = parser.parse_args().requests
    rounds = parser.parse_args().rounds
    endpoint = app(Free())  # type: ignore[arg-type]
    print("| request | translation (in-process) | endpoint through ASGI | bare ASGI route | endpoint's own cost |")
    print("|---|---|---|---|---|")
    for label, sent in (("first turn, 1 tool", body(1, 0)), ("fourth turn, 10 tools", body(10, 3))):
        canned = asyncio.run(answer(endpoint, sent))
        pure = statistics.median(translation(sent, n) for _ in range(rounds))
        full = statistics.median(asyncio.run(through(endpoint, sent, n // 4)) for _ in range(rounds))
        base = statistics.median(asyncio.run(through(bare(canned), sent, n // 4)) for _ in range(rounds))
        print(
            f"| {label} | {pure * 1e6:,.0f} µs | {full * 1e6:,.0f} µs | {base * 1e6:,.0f} µs | {(full - base) * 1e6:,.0f} µs |"
        )


if __name__ == "__main__":
    main()
