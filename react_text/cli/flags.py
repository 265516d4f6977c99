"""What the commands take: the parser, the flags run and eval share, and the types of flag values.

A bad flag or value is one line on stderr and exit status 2, as every set-up mistake is, naming
the command whose --help says more.
"""

from __future__ import annotations

import argparse
import difflib
import os
import shlex
from typing import Any, NoReturn

from react_text import parser as parsing
from react_text.core.limits import Limits
from react_text.core.protocol import ACTION, THINK_OPEN
from react_text.core.sampling import check_temperature

__all__ = [
    "Parser",
    "mcp_flags",
    "model_flags",
    "module_flag",
    "package_version",
    "positive",
    "run_flags",
    "subcommand",
    "temperature",
    "tool_flags",
    "tool_names",
]


class Parser(argparse.ArgumentParser):
    """argparse, but a bad flag or value is one line on stderr (exit 2), as every set-up mistake is,
    not the whole usage block: `react-text eval: error: ... (see react-text eval --help)`.

    What a command does not take is refused by the command, not by `react-text` after it: the
    first flag it does not know is named (not the task that a value of that flag pushed along),
    with the closest flag of the command, or of another command that has it:
    `react-text run: error: no flag --temprature (--temperature is a flag of react-text eval, not
    of run) (see react-text run --help)`."""

    commands: Any = None  # the command's siblings (argparse's subparsers action), set by `subcommand`

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:
        parsed, extras = super().parse_known_args(args, namespace)
        if extras:  # argparse would hand them up, for `react-text` to refuse with its own help
            self.error(self._unknown(extras))
        return parsed, extras

    def _unknown(self, extras: list[str]) -> str:
        flag = next((e.split("=", 1)[0] for e in extras if e.startswith("-") and len(e) > 1), None)
        if flag is None:
            return f"unrecognized arguments: {shlex.join(extras)}"
        siblings: dict[str, argparse.ArgumentParser] = self.commands.choices if self.commands else {}
        others = [other for other in dict.fromkeys(siblings.values()) if other is not self]
        ranked = [(_likeness(flag, option), index, option, parser) for index, parser in enumerate([self, *others])
                  for option in _flags(parser)]  # fmt: skip
        likeness, _, close, parser = max(ranked, key=lambda r: (r[0], -r[1]), default=(0.0, 0, "", self))
        if likeness >= 0.75 and parser is self:
            return f"no flag {flag}: did you mean {close}?"
        if likeness >= 0.75:
            return f"no flag {flag} ({close} is a flag of {parser.prog}, not of {self.prog.rsplit(' ', 1)[-1]})"
        return f"no flag {flag}"


def _likeness(a: str, b: str) -> float:
    return difflib.SequenceMatcher(None, a, b).ratio()


def _flags(parser: argparse.ArgumentParser) -> list[str]:
    return [option for action in parser._actions for option in action.option_strings if option.startswith("--")]


def subcommand(commands: Any, name: str, summary: str, description: str, examples: str) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = commands.add_parser(
        name,
        help=summary,
        description=description,
        epilog=examples,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    if isinstance(parser, Parser):
        parser.commands = commands
    return parser


def model_flags(command: argparse.ArgumentParser, *, servers: str) -> None:
    command.add_argument(
        "--model",
        default=os.environ.get("REACT_TEXT_MODEL"),
        help="model name on an OpenAI-compatible server, or a .gguf file to run in-process "
        "(default: the embedded SmolLM2-135M-Instruct)",
    )
    if servers == "many":
        command.add_argument(
            "--base-url",
            action="append",
            help="server URL; give it again for more servers: episodes are spread over them, each episode "
            "staying on one (default: $OPENAI_BASE_URL, used only when --model names a server model)",
        )
    else:
        command.add_argument(
            "--base-url", help="server URL (default: $OPENAI_BASE_URL, used only when --model names a server model)"
        )
    command.add_argument("--api", choices=["chat", "completion"], help="chat messages or a completion transcript")
    command.add_argument("--stream", action="store_true", help="stream replies from a server")
    command.add_argument(
        "--threads", type=positive, help="threads of the in-process model (default: the cores less one)"
    )
    command.add_argument(
        "--script",
        metavar="FILE",
        help="play the replies of a trace (.jsonl: with its settings, unless flags change them) or of a text "
        "file (replies between lines of ---) instead of calling a model"
        + ("; for eval also a folder of ID.jsonl traces (eval --trace DIR), one a task" if servers == "many" else ""),
    )


def run_flags(command: argparse.ArgumentParser) -> None:
    """Budgets and prompt choices, shared by run and eval (unset: as the model recommends)."""
    from react_text.backends import local  # light: llama.cpp is imported only when a model is made

    defaults = Limits()
    command.add_argument("--max-steps", type=positive, help=f"model calls allowed a run (default {defaults.steps})")
    command.add_argument("--max-tokens", type=positive, help="tokens allowed over a whole run (default: no limit)")
    command.add_argument(
        "--reply-tokens",
        type=positive,
        help=f"reply allowance per call (default: as the model recommends: {local.REPLY_TOKENS} for the embedded "
        f"and other in-process models, {defaults.reply_tokens} for a server's)",
    )
    command.add_argument("--zero-shot", action="store_true", help="leave the worked example out of the prompt")
    command.add_argument(
        "--instructions-in", choices=["system", "user"], help="where the instructions go (default system)"
    )
    command.add_argument(
        "--grammar",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="constrain decoding to the protocol (default: on for the in-process model, off on a server; "
        "--grammar sends it in the field of --server, else of what the server says it is, else llama.cpp's)",
    )
    command.add_argument(
        "--server",
        choices=["llama.cpp", "vllm", "sglang", "ollama", "openai"],
        help="what the server at --base-url is, so a grammar (--grammar) goes where it takes one (llama.cpp: grammar, "
        "vllm: structured_outputs, sglang: ebnf; ollama and openai take none)",
    )
    command.add_argument(
        "--think",
        action="store_true",
        help=f"under the grammar (on for the in-process model; on a server, with --grammar), the model may think "
        f"in a free {THINK_OPEN} block before the protocol; refused where no grammar is sent, since it changes "
        "only the grammar (a server's own reasoning parser, where it has one, starts the grammar after the thinking)",
    )
    command.add_argument(
        "--act-first",
        action=argparse.BooleanOptionalAction,
        default=None,
        help=f"under the grammar, the first reply must be an {ACTION} (default: as the model recommends)",
    )
    command.add_argument(
        "--parallel",
        action=argparse.BooleanOptionalAction,
        default=None,
        help=f"the model may write several independent {ACTION} lines in one reply; they run at once "
        f"(at most --max-actions, default {defaults.actions})",
    )
    command.add_argument("--max-actions", type=positive, help="with --parallel: the most actions of one reply that run")
    command.add_argument("--parser", choices=sorted(parsing.PARSERS), help="how replies are read (default tolerant)")


def tool_flags(command: argparse.ArgumentParser) -> None:
    module_flag(command, "add the public functions of a module (a name on the path, or a file: ./mytools.py) as tools")
    command.add_argument("--root", metavar="DIR", help="add the search and read tools over the files under DIR")


def module_flag(command: argparse.ArgumentParser, says: str) -> None:
    command.add_argument("--tools", metavar="MODULE", action="append", help=says)


def mcp_flags(command: argparse.ArgumentParser, *, servers: bool = True) -> None:
    if servers:
        command.add_argument(
            "--mcp",
            action="append",
            default=[],
            metavar="SERVER",
            help="add the tools of an MCP server: a command line (in quotes) or an http(s) URL; repeatable",
        )
    command.add_argument(
        "--mcp-env",
        action="append",
        default=[],
        metavar="NAME[=VALUE]",
        help="an environment variable for MCP servers started as commands (NAME alone passes this one's value)",
    )
    command.add_argument(
        "--mcp-header",
        action="append",
        default=[],
        metavar="'NAME: VALUE'",
        help="an HTTP header for an MCP server URL",
    )


def positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a positive whole number, not {text}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive whole number, not {text}")
    return value


def temperature(text: str) -> float:
    try:
        return check_temperature(float(text))
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a finite number, 0 or more, not {text}") from None


def tool_names(text: str) -> tuple[str, ...]:
    return tuple(name.strip() for name in text.split(",") if name.strip())


def package_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("react-text")
    except PackageNotFoundError:  # run from a checkout that is not installed
        return "unknown"
