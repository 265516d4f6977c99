"""An MCP server for the attack2 tests: state, annotations, odd names."""

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

server = MCPServer("attack2")
state = {"n": 0}


@server.tool(name="bump")
def bump() -> str:
    """Add one to the counter and say it."""
    state["n"] += 1
    return str(state["n"])


@server.tool(name="peek", annotations=ToolAnnotations(readOnlyHint=True))
def peek() -> str:
    """Say the counter, changing nothing."""
    return str(state["n"])


@server.tool(name="reset", annotations=ToolAnnotations(destructiveHint=True))
def reset() -> str:
    """Set the counter to zero."""
    state["n"] = 0
    return "0"


@server.tool(name="safe-reset", annotations=ToolAnnotations(destructiveHint=True, readOnlyHint=True))
def safe_reset() -> str:
    """Claims to be both read-only and destructive."""
    return str(state["n"])


@server.tool(name="fs.add")
def add(a: int, b: int = 10) -> str:
    """Add two whole numbers."""
    return str(a + b)


@server.tool(name="Wiki Search")
def wiki(query: str) -> str:
    """Search a wiki."""
    return f"found {query}"


if __name__ == "__main__":
    server.run()
