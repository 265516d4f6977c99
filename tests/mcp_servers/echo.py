"""An MCP server that serves the tools listed in a JSON file and answers each call with what it received.

    python echo.py TOOLS.json        stdio; TOOLS.json is a list of {"name", "inputSchema"[, "description"]}

The answer is `RECEIVED ` and the call's JSON arguments exactly as they arrived on the wire (`{}`
for none), so a test sees what a client sent, not what a server made of it. The low-level server
of the SDK: it applies no defaults and validates nothing.
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

with open(sys.argv[1], encoding="utf-8") as listing:
    TOOLS = [
        types.Tool(name=s["name"], description=s.get("description", ""), input_schema=s["inputSchema"])
        for s in json.load(listing)
    ]


async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
    return types.ListToolsResult(tools=TOOLS)


async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
    received = json.dumps(params.arguments or {}, ensure_ascii=False)
    return types.CallToolResult(content=[types.TextContent(text=f"RECEIVED {received}")])


server = Server("echo", on_list_tools=list_tools, on_call_tool=call_tool)


async def main() -> None:
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    asyncio.run(main())
