"""Tools from MCP servers, for any text model: `mcp_tools` (the `mcp` extra).

A public face kept for imports written before 0.4: the code lives in `react_text.tools.mcp`."""

from react_text.tools.mcp import *  # noqa: F403
from react_text.tools.mcp import __all__ as __all__
