"""A real MCP server for the tests, written with the SDK's MCPServer (FastMCP before 2.0).

    python demo.py                       stdio
    python demo.py --http PORT           streamable HTTP on 127.0.0.1:PORT/mcp
    python demo.py --pidfile FILE        write the process id to FILE first
    python demo.py --linger              stay up 60 s after stdin closes (a server only a signal stops)

Besides its tools, it keeps what the tests check against: how many sessions were opened
(handshakes) and the raw JSON arguments of each call, as they arrived on the wire.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import os
import time
from typing import Any, Literal

from mcp.server.mcpserver import Context, Image, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, EmbeddedResource, TextContent, TextResourceContents, ToolAnnotations

PNG = base64.b64decode(  # a 1x1 transparent PNG, repeated to weigh about 12 KB
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII="
)
seen: dict[str, Any] = {"handshakes": 0, "arguments": []}


async def observe(ctx: Any, call_next: Any) -> Any:
    if ctx.method in ("server/discover", "initialize"):
        seen["handshakes"] += 1
    if ctx.method == "tools/call" and ctx.params is not None:
        seen["arguments"].append(ctx.params.get("arguments"))
    return await call_next(ctx)


server = MCPServer("demo", middleware=[observe])
counter = 0


@server.tool()
def describe(
    name: str,
    age: int,
    height: float,
    member: bool,
    unit: Literal["m", "ft"] = "m",
    nickname: str | None = None,
) -> str:
    """Describe a person from several typed facts.

    This second paragraph is for people reading the code, not for the model's listing.
    """
    also = f", known as {nickname}" if nickname else ""
    return f"{name}{also}: {age} years, {height} {unit}, member: {member}"


@server.tool()
def count() -> int:
    """Add one to the counter of this server process and return it."""
    global counter
    counter += 1
    return counter


@server.tool()
def divide(a: float, b: float) -> float:
    """Divide a by b."""
    if b == 0:
        raise ToolError("cannot divide by zero")
    return a / b


@server.tool(name="get-weather")
def get_weather(city: str) -> str:
    """The weather in a city."""
    return f"Sunny in {city}, 21 C"


@server.tool(name="files.delete", annotations=ToolAnnotations(destructive_hint=True))
def files_delete(path: str) -> str:
    """Delete a file (it does not really)."""
    return f"deleted {path}"


@server.tool(name="files.read", annotations=ToolAnnotations(read_only_hint=True, destructive_hint=True))
def files_read(path: str) -> str:
    """Read a file (it does not really)."""
    return f"the text of {path}"


@server.tool()
def crash() -> str:
    """End this server's process at once, mid-call."""
    os._exit(3)


@server.tool()
def picture() -> Image:
    """A picture."""
    return Image(data=PNG * 180, format="png")


@server.tool()
def report() -> CallToolResult:
    """Structured content only, no text."""
    return CallToolResult(content=[], structured_content={"rows": 3, "ok": True, "names": ["a", "b"]})


@server.tool()
def nothing() -> CallToolResult:
    """No content at all."""
    return CallToolResult(content=[])


@server.tool()
def mixed() -> CallToolResult:
    """Text, an embedded text resource and an image, in that order."""
    image = Image(data=PNG, format="png").to_image_content()
    resource = EmbeddedResource(resource=TextResourceContents(uri="file:///notes.txt", text="the notes"))
    return CallToolResult(content=[TextContent(text="first"), resource, image])


@server.tool()
def arguments_seen(back: int = 1) -> str:
    """The raw JSON arguments of an earlier call (1: the call before this one)."""
    return json.dumps(seen["arguments"][-1 - back])


@server.tool()
def handshakes() -> int:
    """How many sessions were opened with this server process."""
    return int(seen["handshakes"])


@server.tool()
def environment(name: str) -> str:
    """The value of an environment variable in the server's process, or (unset)."""
    return os.environ.get(name, "(unset)")


@server.tool()
def header(name: str, ctx: Context) -> str:
    """The value of an HTTP request header, as the server received it."""
    return (ctx.headers or {}).get(name.lower(), "(none)")


SLEEPING = ""  # with --pidfile: the file the sleep tool writes when a call begins


@server.tool()
async def sleep(seconds: float) -> str:
    """Wait, then say so."""
    if SLEEPING:  # a test waits for the call to be under way before it interrupts the client
        with open(SLEEPING, "w") as handle:
            handle.write("sleeping")
    await asyncio.sleep(seconds)
    return f"slept {seconds}"


@server.tool()
def options(limit: int = 5, mode: Literal["fast", "slow"] | None = None, tags: list[str] | None = None) -> str:
    """Optional parameters only."""
    return f"limit={limit} mode={mode} tags={tags}"


if __name__ == "__main__":
    command = argparse.ArgumentParser()
    command.add_argument("--http", type=int, metavar="PORT")
    command.add_argument("--pidfile")
    command.add_argument("--linger", action="store_true")
    args = command.parse_args()
    SLEEPING = f"{args.pidfile}.sleeping" if args.pidfile else ""
    if args.pidfile:
        with open(args.pidfile, "w") as handle:
            handle.write(str(os.getpid()))
    if args.http:
        server.run("streamable-http", host="127.0.0.1", port=args.http)
    else:
        server.run()
        if args.linger:
            time.sleep(60)
