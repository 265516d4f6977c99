import os
import tempfile

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

app = MCPServer("attack")
state = {"n": 0}


@app.tool(name="get-weather")
def get_weather(city: str, days: int = 1) -> str:
    """Weather for a city.

    Second paragraph not shown."""
    return f"{city}: sunny x{days}"


@app.tool(name="files.count")
def count() -> str:
    """Count calls in this session."""
    state["n"] += 1
    return str(state["n"])


@app.tool(annotations=ToolAnnotations(destructiveHint=True))
def wipe(path: str) -> str:
    """Delete a path."""
    with open(os.path.join(tempfile.gettempdir(), "react-text-attack-wiped.log"), "a") as log:
        log.write(path + "\n")
    return "wiped"


@app.tool()
def leak(x: str) -> str:
    """Show the environment."""
    return " ".join(sorted(os.environ))


@app.tool()
def die(x: str) -> str:
    """Crash the server."""
    os._exit(1)


@app.tool()
def boom(x: str) -> str:
    """Fail."""
    raise ValueError(f"bad {x}")


if __name__ == "__main__":
    app.run()
