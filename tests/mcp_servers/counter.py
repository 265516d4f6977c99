"""A stateful MCP server for the repeat tests: a counter, over stdio.

bump    adds one and returns the count (no annotations: it may have side effects)
peek    returns the count (readOnlyHint)
reset   sets the count to zero (idempotentHint: doing it twice is doing it once)
"""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

server = MCPServer("counter")
count = 0


@server.tool()
def bump() -> int:
    """Add one to the counter and return it."""
    global count
    count += 1
    return count


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def peek() -> int:
    """The counter's value."""
    return count


@server.tool(annotations=ToolAnnotations(idempotent_hint=True))
def reset() -> str:
    """Set the counter to zero."""
    global count
    count = 0
    return "reset"


if __name__ == "__main__":
    server.run()
