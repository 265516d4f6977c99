"""The endpoint on a real port for a test (uvicorn in a thread of the test's process), tool specs,
and a small upstream that records how many of its calls overlapped."""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from react_text.core.types import Reply, Request, Usage

pytest.importorskip("starlette", reason='the endpoint needs pip install "react-text[serve]"')
uvicorn = pytest.importorskip("uvicorn", reason='the endpoint needs pip install "react-text[serve]"')


@contextlib.contextmanager
def serving(asgi: Any) -> Iterator[str]:
    """`asgi` listening on 127.0.0.1 (a free port) until the block ends; yields its /v1 URL."""
    server = uvicorn.Server(uvicorn.Config(asgi, host="127.0.0.1", port=0, log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the endpoint did not start")
        time.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def function(
    name: str, properties: dict[str, Any], required: tuple[str, ...] = (), description: str = ""
) -> dict[str, Any]:
    """A tool as an OpenAI client sends it."""
    schema = {"type": "object", "properties": properties, "required": list(required)}
    return {"type": "function", "function": {"name": name, "description": description, "parameters": schema}}


WEATHER = function("get_weather", {"city": {"type": "string"}}, ("city",), "The weather in a city.")
ADD = function("add", {"a": {"type": "integer"}, "b": {"type": "integer"}}, ("a", "b"), "Add two whole numbers.")


@dataclass
class SlowModel:
    """An async upstream whose every call takes `seconds` and answers with its request's last
    message; it records how many calls were in progress at once, at most."""

    seconds: float = 0.2
    api: str = "chat"
    name: str = "slow"
    accepts_grammar: bool = False
    calls: list[Request] = field(default_factory=list)
    running: int = 0
    most: int = 0

    def generate(self, request: Request) -> Reply:
        raise AssertionError("the endpoint awaits agenerate")

    async def agenerate(self, request: Request) -> Reply:
        self.calls.append(request)
        self.running += 1
        self.most = max(self.most, self.running)
        try:
            await asyncio.sleep(self.seconds)
        finally:
            self.running -= 1
        last = request.prompt[-1].content if isinstance(request.prompt, tuple) else request.prompt
        return Reply(f"THOUGHT: echo\nFINAL: {last.removeprefix('QUESTION: ')}", Usage(10, 5), "stop")
