"""`react-text mcp list`: an MCP server's tools, listed as the model would see them."""

from __future__ import annotations

import argparse
import contextlib
from typing import Any

from react_text.cli.flags import mcp_flags, subcommand
from react_text.core.errors import set_up
from react_text.observers.written import shown

__all__ = [
    "add",
]


def add(commands: Any) -> None:
    """The mcp command (mcp list)."""
    mcp = subcommand(
        commands,
        "mcp",
        "look at the tools of an MCP server",
        "Start or reach an MCP server and print its tools as the model would see them.",
        'examples:\n  react-text mcp list "python server.py"\n  react-text mcp list http://127.0.0.1:8000/mcp\n',
    )
    mcp_list = mcp.add_subparsers(required=True, metavar="ACTION").add_parser(
        "list", help="print the tool listing the model would see"
    )
    mcp_list.add_argument("server", metavar="SERVER", help="a command line (in quotes) or an http(s) URL")
    mcp_flags(mcp_list, servers=False)
    mcp_list.set_defaults(handler=_mcp_list)


def _mcp_list(args: argparse.Namespace) -> int:
    from react_text.tools.mcp import from_cli
    from react_text.tools.tool import listing

    with contextlib.ExitStack() as stack:
        with set_up():
            found = stack.enter_context(from_cli([args.server], args.mcp_env, args.mcp_header))
        print(shown(listing(found)))  # the server's names and descriptions
    return 0
