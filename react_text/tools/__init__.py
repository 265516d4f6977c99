"""Tools: plain functions listed from their signature (tool), run so that nothing escapes (running),
their inputs bound from the signature (binding), the built-in toolbox, the user's own modules
(importing), and tools from MCP servers (mcp)."""

from react_text.tokens.truncation import truncate
from react_text.tools.tool import Tool, as_tools, listing, tool

__all__ = ["Tool", "as_tools", "listing", "tool", "truncate"]
