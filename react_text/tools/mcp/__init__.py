"""Tools from MCP servers, for any text model: `pip install "react-text[mcp]"`.

    with mcp_tools("python server.py", "http://127.0.0.1:8000/mcp") as tools:
        Agent(model, tools=tools).run(task)

    async with mcp_tools("python server.py") as tools:
        await Agent(model, tools=tools).arun(task)

A server is a command line (stdio; split like a shell would, never run through one) or an http(s)
URL (streamable HTTP). Each server gets one session for the whole block, so a stateful server (a
browser, a shell, a counter) keeps its state from call to call; every session is closed on the
way out, whether the block ends, raises or is interrupted.

Each MCP tool becomes a `Tool` under its exact name (`get-weather`, `files.read`), its
description's first paragraph, and a signature made from its input schema, so the one binder
reads `get-weather[Oslo]` as it reads a Python function's input. Results: text content is joined,
structured content without text is shown as JSON, an `isError` result raises `ToolError` with the
server's words (the engine shows it as a tool error), and images, audio and other binary content
are refused in words. A tool whose annotations say `destructiveHint` (and not `readOnlyHint`) is
risky: it runs only when approved. One that says `readOnlyHint` is pure: a call the model repeats
is answered from the first one, while no tool with side effects has run since. One that says
`idempotentHint` (a repeat adds no effect, but the call has one: `set_x`, `reset`) is answered from
its last call only while no other tool with side effects has run since, and a pure tool's earlier
result no longer stands after it. Any other tool (a counter, a browser, a shell) runs every time
it is called.

Secrets: a stdio server gets only the SDK's default environment (HOME, PATH, ...) plus `env=`;
HTTP headers are sent to their server and appear in no repr, log line or error message.

The package, by job: `tools` (mcp_tools, the block and the Tools made in it), `schema` (an input
schema as a signature), `sessions` (one session a server, held by one task: see there why), and
`results` (what the model reads of a result).
"""

from react_text.tools.mcp.results import ToolError
from react_text.tools.mcp.schema import Parameters
from react_text.tools.mcp.sessions import Server
from react_text.tools.mcp.tools import MCPTools, from_cli, mcp_tools

__all__ = ["MCPTools", "Parameters", "Server", "ToolError", "from_cli", "mcp_tools"]
