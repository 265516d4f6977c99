"""The `react-text` command: argument parsing and printing, no logic of its own.

react-text run "What is 17 * 23 + 5?"                  the embedded local model
react-text run --model gpt-4o-mini "..."                any OpenAI-compatible server
react-text run --state run.json "..."; react-text resume run.json    a run kept, and gone on with
echo 'ACTION: add[2, 3]' | react-text parse             one reply's parse, as JSON

One module a command (run, resume, replay, eval, fetch, parse, mcp), each adding its parser and its
handler; the flags they share are `flags`, what the flags choose `choices`, the files they name
`files`, what they print `printing`. Models and tools are found by `evaluation.config`, tasks run
and are scored by `evaluation`. Whatever the user can get wrong (a file or module that is not
there, a bad flag value) is a ConfigError: one line on stderr and exit status 2, never a traceback.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence

from react_text.cli import eval as eval_command
from react_text.cli import fetch, mcp, parse, replay, resume, run
from react_text.cli.flags import Parser, package_version
from react_text.core.errors import ReactTextError
from react_text.observers.written import shown

__all__ = [
    "main",
]


def main(argv: Sequence[str] | None = None) -> int:
    args = _arguments().parse_args(argv)
    _quiet_sdk_logs()
    try:
        code: int = args.handler(args)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader went away (| head): stop quietly
        sys.stderr.close()
        return 0
    except ReactTextError as exc:
        print(f"react-text: {shown(str(exc))}", file=sys.stderr)
        return 2
    return code


def _quiet_sdk_logs() -> None:
    """The MCP SDK logs what it cannot read (a server's banner on stdout: "Failed to parse JSONRPC
    message", a pydantic traceback); with no handler set, Python prints that on stderr above the
    one line the session says (`mcp/sessions.py`: it exited before it answered). The command line
    is the application, so it sets the handler: those records go nowhere. A Python caller's own
    logging set-up is left as it is."""
    sdk = logging.getLogger("mcp")
    if not any(isinstance(h, logging.NullHandler) for h in sdk.handlers):
        sdk.addHandler(logging.NullHandler())


def _arguments() -> argparse.ArgumentParser:
    top = Parser(prog="react-text", description="ReAct agents over a plain-text protocol.")
    top.add_argument("--version", action="version", version=f"%(prog)s {package_version()}")
    commands = top.add_subparsers(required=True, metavar="COMMAND")
    for command in (run, resume, replay, eval_command, fetch, parse, mcp):
        command.add(commands)

    from react_text.serving import command as serving  # `react-text serve` (react_text.serving)

    serving.add_parser(commands)
    return top


if __name__ == "__main__":
    sys.exit(main())
