"""The `react-text` command: argument parsing and printing, no logic of its own.

react-text run "What is 17 * 23 + 5?"                  the embedded local model
react-text run --model gpt-4o-mini "..."                any OpenAI-compatible server
echo 'ACTION: add[2, 3]' | react-text parse             one reply's parse, as JSON

Models and tools are found by `config`, tasks run and are scored by `evaluation`. Whatever the
user can get wrong (a file or module that is not there, a bad flag value) is a ConfigError: one
line on stderr and exit status 2, never a traceback.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import json
import logging
import os
import signal
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, NoReturn, TextIO

from react_text import parser as parsing
from react_text.core.episode import Approval
from react_text.core.errors import ConfigError, ReactTextError, set_up
from react_text.core.limits import Limits
from react_text.core.model_info import describe as describe_model
from react_text.core.model_info import no_grammar
from react_text.core.protocol import (
    ACTION,
    ACTION_LABEL,
    FINAL_LABEL,
    OBSERVATION_LABEL,
    THINK_OPEN,
    THOUGHT_LABEL,
    call,
)
from react_text.core.sampling import SEEDS, check_temperature
from react_text.core.types import Action, Actions, Final, ParseError, RunResult, Step, Usage
from react_text.evaluation import config, scripts
from react_text.evaluation.config import Choices
from react_text.observers import trace
from react_text.observers.trace import Tracer, parsed_dict, result_dict
from react_text.observers.written import json_text, shown
from react_text.prompting import Prompting
from react_text.tools.tool import Tool

__all__ = [
    "main",
]

_EXAMPLES_RUN = """examples:
  react-text run "What is 17 * 23 + 5?"
  react-text run --model gpt-4o-mini "What is 2 ** 20?"          (OPENAI_API_KEY set)
  react-text run --base-url http://127.0.0.1:8080/v1 --model local --grammar "..."   (llama.cpp)
  react-text run --tools ./mytools.py --json "..."                (the functions in mytools.py)
  react-text run --trace run.jsonl "..."   then   react-text run --script run.jsonl   (a replay)
  react-text run --mcp "python server.py" --mcp http://127.0.0.1:8000/mcp "..."   (tools from MCP servers)
"""
_EXAMPLES_EVAL = """examples:
  react-text eval bench/tasks/suite.jsonl                         (the embedded model)
  react-text eval bench/tasks/suite.jsonl --zero-shot --no-grammar --out results.jsonl
  react-text eval tasks.jsonl --model m --base-url http://127.0.0.1:8080/v1 --base-url http://127.0.0.1:8081/v1
  react-text eval tasks.jsonl --model m --base-url ... --out results.jsonl --resume   (after a crash)
  react-text eval bench/tasks/suite.jsonl --n 4 --temperature 0.8 --trajectories groups.jsonl   (GRPO groups)
"""
_EXAMPLES_FETCH = """examples:
  react-text fetch qwen2.5-0.5b
  react-text run --model qwen2.5-0.5b "What is 17 * 23 + 5?"
"""
_EXAMPLES_PARSE = f"""examples:
  printf '{THOUGHT_LABEL} x\\n{ACTION_LABEL} add[2, 3]\\n' | react-text parse
  react-text parse --parser naive < reply.txt
  react-text parse replies.jsonl                  one JSON line of output per reply
  echo '{ACTION_LABEL} unit converter[5 km]' | react-text parse --tools "unit converter,lookup"
  react-text parse --compare                       the robustness scoreboard on the bundled corpus
  react-text parse --corpus mine.jsonl --parser myparsers:read    your parser on your replies

A corpus is JSON lines, one reply a line: {{"text": "...", "expected": {{"kind": "action", "tool":
"lookup", "input": "cats"}}}} (or {{"kind": "final", "answer": "..."}}, or {{"kind": "error"}}), with
optional "id", "category" (a scoreboard row), "source", "mode" ("chat", or "completion": {THOUGHT_LABEL}
is put back before the reply) and "tools" (the registered tool names). --parser module:function
names any function from a reply's text to a reading: a react_text Parsed value or a dict like
"expected" (raising is an error reading); give it several times to compare several. The
scoreboard shows the peers' real parsers (LangChain, LlamaIndex, smolagents, crewAI) when they
are installed, and the pip command for each that is not.
"""


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


class _Parser(argparse.ArgumentParser):
    """argparse, but a bad flag or value is one line on stderr (exit 2), as every set-up mistake is,
    not the whole usage block: `react-text eval: error: ... (see react-text eval --help)`."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _arguments() -> argparse.ArgumentParser:
    top = _Parser(prog="react-text", description="ReAct agents over a plain-text protocol.")
    top.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    commands = top.add_subparsers(required=True, metavar="COMMAND")

    run = _command(
        commands,
        "run",
        "run an agent on a task",
        "Run an agent on TASK and print each step as it happens.",
        _EXAMPLES_RUN,
    )
    run.add_argument(
        "task", metavar="TASK", nargs="?", help="the task or question, in quotes (with --script TRACE: the trace's)"
    )
    _model_flags(run, servers="one")
    _run_flags(run)
    _tool_flags(run)
    run.add_argument("--json", action="store_true", help="print the whole RunResult as one JSON document")
    run.add_argument("--trace", metavar="FILE", help="write every event to FILE as JSON lines, as it happens")
    run.add_argument("--yes", action="store_true", help="run risky tools without asking")
    _mcp_flags(run)
    run.set_defaults(handler=_run)

    replay = _command(
        commands,
        "replay",
        "show a recorded run again",
        "Print the steps of a trace written by `react-text run --trace FILE`.",
        'examples:\n  react-text run --trace run.jsonl "What is 2 + 2?"\n  react-text replay run.jsonl\n',
    )
    replay.add_argument("trace", metavar="FILE")
    replay.set_defaults(handler=_replay)

    evaluate = _command(
        commands,
        "eval",
        "run a file of tasks and score the answers",
        "Run every task of TASKS (JSON Lines: id, task, answer, tools), many at once against servers, "
        "and print a results table.",
        _EXAMPLES_EVAL,
    )
    evaluate.add_argument("tasks", metavar="TASKS", help="a .jsonl file of tasks")
    _model_flags(evaluate, servers="many")
    _run_flags(evaluate)
    evaluate.add_argument("--root", metavar="DIR", help="folder for the file tools (default: docs/ beside TASKS)")
    evaluate.add_argument(
        "--concurrency",
        type=_positive,
        help="episodes at once (default: 4 per server; the in-process model runs one at a time)",
    )
    evaluate.add_argument("--out", metavar="FILE", help="write one JSON line per task to FILE as each one finishes")
    evaluate.add_argument(
        "--resume", action="store_true", help="keep the results already in --out FILE and run only the other tasks"
    )
    evaluate.add_argument(
        "--trace", metavar="DIR", help="write a trace per task to DIR/ID.jsonl (an id's odd characters escaped)"
    )
    evaluate.add_argument(
        "--trajectories",
        metavar="FILE",
        help="write one JSON line per episode to FILE: token ids, loss mask, log-probabilities, reward "
        "(a server is asked for the ids it sampled)",
    )
    evaluate.add_argument(
        "--n",
        type=_positive,
        default=1,
        metavar="N",
        help="episodes per task, each with its own seed (a group for GRPO; default: 1)",
    )
    evaluate.add_argument(
        "--seed",
        type=int,
        metavar="S",
        help="the seed of a task's first episode, 0 to 2**32 - 2; episode k is sent S + k "
        "(default: 0 with --n, else the model's own)",
    )
    evaluate.add_argument(
        "--temperature",
        type=_temperature,
        metavar="T",
        help="sampling temperature (default: 0, greedy; a group of --n episodes needs more to differ)",
    )
    evaluate.add_argument(
        "--ray",
        nargs="?",
        const="",
        metavar="ADDRESS",
        help="run the episodes on Ray workers (the ray extra): a cluster's address (auto, ray://host:10001), "
        "or none for $RAY_ADDRESS else a local cluster; a worker that dies costs only its episodes, run again",
    )
    evaluate.add_argument("--workers", type=_positive, help="with --ray: how many workers (default: one per CPU)")
    _module_flag(evaluate, "add the public functions of a module (a name on the path, or a file) to every task's tools")
    _mcp_flags(evaluate)
    evaluate.set_defaults(handler=_eval)

    fetch = _command(
        commands,
        "fetch",
        "download a stronger local model (needs a network)",
        "Download a GGUF model to ~/.cache/react-text/models; then use it with --model NAME.",
        _EXAMPLES_FETCH,
    )
    fetch.add_argument("name", choices=sorted(_known_models()), metavar="NAME", help="one of: %(choices)s")
    fetch.set_defaults(handler=_fetch)

    parse = _command(
        commands,
        "parse",
        "parse one model reply from stdin",
        "Read one model reply on stdin (or FILE) and print how it parses, as JSON.",
        _EXAMPLES_PARSE,
    )
    parse.add_argument(
        "file",
        nargs="?",
        metavar="FILE",
        help="read the reply from FILE instead of stdin; a .jsonl file holds many replies ({'text': ...} a line)",
    )
    parse.add_argument("--strict", action="store_true", help="accept only the canonical form (= --parser strict)")
    parse.add_argument(
        "--parser",
        action="append",
        default=[],
        metavar="NAME|MODULE:FUNCTION",
        help=f"which parser reads: {', '.join(sorted(parsing.PARSERS))} (default tolerant), or your own"
        " function from text to a reading; with --compare, each one given is scored too",
    )
    parse.add_argument(
        "--tools",
        type=_names,
        default=(),
        metavar="NAME,...",
        help=f"the registered tool names (so '{ACTION_LABEL} unit converter[5 km]' reads as tool 'unit converter');"
        ' a .jsonl line\'s own "tools" field wins',
    )
    parse.add_argument(
        "--compare",
        action="store_true",
        help="score every parser, and the peers' that are installed, on a corpus (FILE, --corpus, or the"
        " bundled one) and print the scoreboard",
    )
    parse.add_argument("--corpus", metavar="FILE", help="the corpus to score on (implies --compare; format below)")
    parse.add_argument(
        "--peers",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="with --compare, score the peers' parsers that are installed (default on; they take seconds to import)",
    )
    parse.set_defaults(handler=_parse)

    mcp = _command(
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
    _mcp_flags(mcp_list, servers=False)
    mcp_list.set_defaults(handler=_mcp_list)
    return top


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("react-text")
    except PackageNotFoundError:  # run from a checkout that is not installed
        return "unknown"


def _command(commands: Any, name: str, summary: str, description: str, examples: str) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = commands.add_parser(
        name,
        help=summary,
        description=description,
        epilog=examples,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    return parser


def _model_flags(command: argparse.ArgumentParser, *, servers: str) -> None:
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
        "--threads", type=_positive, help="threads of the in-process model (default: the cores less one)"
    )
    command.add_argument(
        "--script",
        metavar="FILE",
        help="play the replies of a trace (.jsonl: with its settings, unless flags change them) or of a text "
        "file (replies between lines of ---) instead of calling a model"
        + ("; for eval also a folder of ID.jsonl traces (eval --trace DIR), one a task" if servers == "many" else ""),
    )


def _run_flags(command: argparse.ArgumentParser) -> None:
    """Budgets and prompt choices, shared by run and eval (unset: as the model recommends)."""
    from react_text.backends import local  # light: llama.cpp is imported only when a model is made

    defaults = Limits()
    command.add_argument("--max-steps", type=_positive, help=f"model calls allowed a run (default {defaults.steps})")
    command.add_argument("--max-tokens", type=_positive, help="tokens allowed over a whole run (default: no limit)")
    command.add_argument(
        "--reply-tokens",
        type=_positive,
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
    command.add_argument(
        "--max-actions", type=_positive, help="with --parallel: the most actions of one reply that run"
    )
    command.add_argument("--parser", choices=sorted(parsing.PARSERS), help="how replies are read (default tolerant)")


def _tool_flags(command: argparse.ArgumentParser) -> None:
    _module_flag(command, "add the public functions of a module (a name on the path, or a file: ./mytools.py) as tools")
    command.add_argument("--root", metavar="DIR", help="add the search and read tools over the files under DIR")


def _module_flag(command: argparse.ArgumentParser, says: str) -> None:
    command.add_argument("--tools", metavar="MODULE", action="append", help=says)


def _mcp_flags(command: argparse.ArgumentParser, *, servers: bool = True) -> None:
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


def _mcp_list(args: argparse.Namespace) -> int:
    from react_text.tools.mcp import from_cli
    from react_text.tools.tool import listing

    with contextlib.ExitStack() as stack:
        with set_up():
            found = stack.enter_context(from_cli([args.server], args.mcp_env, args.mcp_header))
        print(shown(listing(found)))  # the server's names and descriptions
    return 0


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a positive whole number, not {text}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive whole number, not {text}")
    return value


def _model_recipe(args: argparse.Namespace, base_url: str | None) -> Callable[[], Any]:
    """How the model flags (`_model_flags`, `_run_flags`) make the model at `base_url`, for run
    and eval alike: a recipe to call, which travels to a Ray worker (eval --ray) by pickle."""
    return functools.partial(
        config.model,
        args.model,
        base_url=base_url,
        api=args.api,
        stream=args.stream,
        grammar=args.grammar,
        threads=args.threads,
        server=args.server,
        temperature=getattr(args, "temperature", None),  # eval's flag; run samples at the model's default
        think=args.think,
        token_ids=getattr(args, "trajectories", None) is not None,  # eval --trajectories asks a server for its ids
    )


def _refuse_unused(args: argparse.Namespace, model: Any = None, prompting: Prompting | None = None) -> None:
    """A flag that would do nothing in this run is refused at once, saying what to add or leave out.
    The flags alone say so for --script and --no-grammar (before a model is made or loaded); the
    model and the settled prompting (a trace's settings included), for the rest.

    --think changes only the grammar (a free <think> block may come first): a server is sent the
    grammar only when asked. --threads sets the in-process model's threads: a server runs its own.
    --max-actions caps the actions of one reply, which only --parallel runs."""
    if args.think and args.script:
        raise ConfigError("--think does nothing with --script (its replies are played as they are): leave it out")
    if args.think and args.grammar is False:
        raise ConfigError("--think works under the grammar, which --no-grammar turns off: leave one of them out")
    if args.threads is not None and args.script:
        raise ConfigError("--threads sets the in-process model's threads, and --script plays replies: leave it out")
    actions = getattr(args, "max_actions", None) is not None
    if actions and not args.script and getattr(args, "parallel", None) is not True:  # no trace to make it parallel
        raise ConfigError(_ACTIONS_ALONE)
    if model is None or prompting is None:
        return
    info = describe_model(model)
    if args.think and no_grammar(info, prompting.grammar):
        raise ConfigError(
            f"--think lets the model think in a {THINK_OPEN} block before the protocol, under the grammar, "
            "and a server is sent the grammar only with --grammar: add --grammar (or leave --think out)"
        )
    if args.threads is not None and not info.in_process:
        raise ConfigError("--threads sets the in-process model's threads, and a server runs its own: leave it out")
    if actions and not prompting.parallel:
        raise ConfigError(_ACTIONS_ALONE)


_ACTIONS_ALONE = (
    "--max-actions caps the actions of one reply that run, which only --parallel runs: "
    "add --parallel (or leave --max-actions out)"
)


def _temperature(text: str) -> float:
    try:
        return check_temperature(float(text))
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a finite number, 0 or more, not {text}") from None


def _choices(args: argparse.Namespace) -> Choices:
    """What the flags choose (what they leave unset comes from a trace, else the model)."""
    limits = {
        name: value
        for name, value in (
            ("steps", args.max_steps),
            ("tokens", args.max_tokens),
            ("reply_tokens", args.reply_tokens),
            ("actions", getattr(args, "max_actions", None)),
        )
        if value is not None
    }
    prompt: dict[str, Any] = {}
    if args.zero_shot:
        prompt["example"] = None
    for name in ("grammar", "act_first", "instructions_in", "parallel"):
        if getattr(args, name, None) is not None:
            prompt[name] = getattr(args, name)
    return Choices(
        limits=limits,
        prompting=prompt,
        parser=args.parser,
        root=getattr(args, "root", None),
        modules=tuple(getattr(args, "tools", None) or ()),
        mcp=tuple(getattr(args, "mcp", None) or ()),
    )


def _read(path: str) -> str:
    try:
        return Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}") from exc


# --- parse ----------------------------------------------------------------------------------------


def _parse(args: argparse.Namespace) -> int:
    if args.compare or args.corpus:
        from react_text.evaluation import corpus, peers

        if args.file and args.corpus:
            raise ConfigError(f"give the corpus once: {args.file} or --corpus {args.corpus}")
        cases = corpus.load(args.corpus or args.file or corpus.bundled())
        if args.tools:
            cases = [case if case.tools else replace(case, tools=args.tools) for case in cases]
        own = [spec for spec in args.parser if spec not in parsing.PARSERS]
        parsers, notes = peers.contenders(own, with_peers=args.peers)
        print(shown(corpus.scoreboard(corpus.score(cases, parsers), notes=notes)))
        return 0
    if len(args.parser) > 1:
        raise ConfigError("give one --parser to read with (or --compare to score several)")
    read = _reader("strict" if args.strict else (args.parser or ["tolerant"])[0])
    if args.file and args.file.endswith(".jsonl"):
        for number, line in enumerate(_read(args.file).splitlines(), 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                text = row["text"]
                if not isinstance(text, str):  # {"text": 5}, {"text": null}: no reply
                    raise TypeError("text is not text")
                names = _row_tools(row.get("tools"), args.tools)
            except (ValueError, KeyError, TypeError, AttributeError, RecursionError):
                raise ConfigError(
                    f'{args.file}:{number}: not a reply line ({{"text": ..., "tools": [names]}})'
                ) from None
            print(json_text({"id": row.get("id"), **read(text, names)}))
        return 0
    text = _read(args.file) if args.file else sys.stdin.read()
    reading = read(text, args.tools)
    print(json_text(reading, indent=2))
    return 1 if reading["kind"] == "error" else 0


def _names(text: str) -> tuple[str, ...]:
    return tuple(name.strip() for name in text.split(",") if name.strip())


def _row_tools(value: object, default: tuple[str, ...]) -> tuple[str, ...]:
    if value is None:
        return default
    if not (isinstance(value, list) and all(isinstance(name, str) for name in value)):
        raise TypeError("tools is not a list of names")
    return tuple(value)


def _reader(name: str) -> Callable[[str, tuple[str, ...]], dict[str, Any]]:
    """The parser named (a built-in, or the user's module:function) as text and names -> the JSON shown."""
    if name in parsing.PARSERS:
        builtin = parsing.PARSERS[name]
        return lambda text, names: parsed_dict(builtin(text, tools=names))
    from react_text.evaluation import corpus, peers

    own = peers.user(name)

    def read(text: str, names: tuple[str, ...]) -> dict[str, Any]:
        got = own(text, tools=names)
        try:
            return parsed_dict(got) if isinstance(got, Action | Final | ParseError) else corpus.as_reading(got)
        except ValueError as exc:
            raise ConfigError(f"--parser {name} read the reply as {str(got)[:60]}, which {exc}") from None

    return read


# --- run ------------------------------------------------------------------------------------------


def _run(args: argparse.Namespace) -> int:
    _writes_no_input([("--trace", args.trace)], _sources_read(args))
    _refuse_unused(args)
    choices = _choices(args)
    task = args.task
    count_tokens = None
    if args.script:
        script = scripts.script(args.script)
        choices = choices.over(script.choices)
        model = script.model(api=args.api, grammar=args.grammar)
        count_tokens = script.count_tokens()
        task = task if task is not None else script.task
    else:
        model = _model_recipe(args, args.base_url)()
    _refuse_unused(args, model, config.settle(model, choices)[1])
    if task is None:
        raise ConfigError('give the task, in quotes: react-text run "What is 17 * 23 + 5?"')
    if not task.strip():
        raise ConfigError("the task is empty: give a question, in quotes")
    tools = config.tools(root=choices.root, modules=choices.modules)
    if not (choices.mcp or args.mcp_env or args.mcp_header):
        return _run_with(args, task, model, tools, choices, count_tokens)
    from react_text.tools.mcp import from_cli

    with contextlib.ExitStack() as stack:
        with set_up():  # entering starts the servers and lists their tools (two with one name...)
            found = stack.enter_context(from_cli(list(choices.mcp), args.mcp_env, args.mcp_header))
        return _run_with(args, task, model, [*tools, *found], choices, count_tokens)


def _run_with(
    args: argparse.Namespace,
    task: str,
    model: Any,
    tools: Sequence[Tool],
    choices: Choices,
    count_tokens: Callable[[str], int] | None,
) -> int:
    agent = config.agent(model, tools, choices, approve=_approver(args.yes), count_tokens=count_tokens)
    paint = _Paint.for_stream(sys.stdout)
    tracer = Tracer(args.trace) if args.trace else None
    if tracer:
        tracer.start(task, config.describe(agent, root=choices.root, modules=choices.modules, mcp=choices.mcp))
    try:
        run = agent.iter_steps(task, observer=tracer.observer if tracer else None)
        for step in run:
            if tracer:
                tracer.step(step)
            if not args.json:
                _print_step(step, sys.stdout, agent.limits.tokens, paint)
        result = run.result
        if tracer:
            tracer.end(result, context_window=trace.window(agent.limits, model))
    finally:
        if tracer:
            tracer.close()
    if args.json:
        print(json_text(result_dict(result), indent=2))
    else:
        _print_end(result, sys.stdout, paint)
    return 0 if result.stop_reason == "final" else 1


def _approver(assume_yes: bool) -> Callable[[Tool, Action], Approval]:
    """Ask on a terminal before a risky tool runs; without one, decline unless --yes."""

    def approve(t: Tool, action: Action) -> Approval:
        if assume_yes:
            return True
        if not sys.stdin.isatty():
            print(f"declined {shown(call(t.name, action.input))}: no terminal to ask (use --yes)", file=sys.stderr)
            return False
        asked = f"Run the risky tool {shown(call(t.name, action.input))}? [y]es, [n]o, [q]uit: "
        answer = input(asked).strip().lower()
        return "stop" if answer.startswith("q") else answer.startswith("y")

    return approve


def _replay(args: argparse.Namespace) -> int:
    paint = _Paint.for_stream(sys.stdout)
    steps: list[Step] = []
    budget: int | None = None
    code = 1
    for event in trace.read(args.trace):
        if event["event"] == "run_start":
            model = event.get("model")
            named = f"{model.get('name')} ({model.get('api')})" if isinstance(model, dict) else model
            budget = (event.get("limits") or {}).get("tokens", event.get("max_tokens"))
            print(paint.dim(shown(f"task: {event.get('task')}  ·  model: {named}")))
        elif event["event"] == "step":
            steps.append(trace.step_from(event))
            _print_step(steps[-1], sys.stdout, budget, paint)
        elif event["event"] == "run_end":
            usage = Usage(event["usage"]["prompt_tokens"], event["usage"]["completion_tokens"])
            result = RunResult(
                event["answer"], event["stop_reason"], tuple(steps), usage, (), event["forced"], event["error"]
            )
            _print_end(result, sys.stdout, paint)
            code = 0 if result.stop_reason == "final" else 1
    return code


def _known_models() -> list[str]:
    from react_text.backends.download import MODELS

    return list(MODELS)


def _fetch(args: argparse.Namespace) -> int:
    from react_text.backends.download import fetch_model

    def progress(done: int, total: int | None) -> None:
        share = f" of {total / 1e6:.0f} MB" if total else ""
        sys.stderr.write(f"\r{done / 1e6:.0f} MB{share}")

    path = fetch_model(args.name, progress if sys.stderr.isatty() else None)
    print(f"\n{path}")
    return 0


class _Paint:
    """ANSI colour on a terminal (unless NO_COLOR is set), plain text otherwise."""

    def __init__(self, on: bool) -> None:
        self.on = on

    @classmethod
    def for_stream(cls, stream: TextIO) -> _Paint:
        return cls(stream.isatty() and "NO_COLOR" not in os.environ and os.environ.get("TERM") != "dumb")

    def _wrap(self, code: str, text: str) -> str:
        return f"\033[{code}m{text}\033[0m" if self.on else text

    def dim(self, text: str) -> str:
        return self._wrap("2", text)

    def bold(self, text: str) -> str:
        return self._wrap("1", text)

    def label(self, name: str, colour: str) -> str:
        codes = {"thought": "36", "action": "33", "observation": "32", "final": "1;35", "error": "31"}
        return self._wrap(codes[colour], name)


def _print_step(step: Step, out: TextIO, max_tokens: int | None, paint: _Paint) -> None:
    parsed = step.parsed
    budget = f"{step.total_usage.total_tokens}" + (f"/{max_tokens}" if max_tokens else "")
    forced = " (forced)" if step.forced else ""
    out.write(paint.dim(f"── step {step.number}{forced} · {budget} tokens · {step.seconds:.2f}s") + "\n")
    if parsed.thought:
        out.write(f"{paint.label(THOUGHT_LABEL, 'thought')} {shown(parsed.thought)}\n")
    if isinstance(parsed, Action):
        out.write(f"{paint.label(ACTION_LABEL, 'action')} {shown(call(parsed.tool, parsed.input))}\n")
    elif isinstance(parsed, Actions):
        for action in parsed.actions:
            out.write(f"{paint.label(ACTION_LABEL, 'action')} {shown(call(action.tool, action.input))}\n")
    elif isinstance(parsed, Final):
        out.write(f"{paint.label(FINAL_LABEL, 'final')} {shown(parsed.answer)}\n")
    else:
        out.write(f"{paint.label(f'UNREADABLE ({parsed.reason}):', 'error')} {step.reply.strip()[:200]!r}\n")
    if step.cut.strip():
        out.write(paint.dim(f"(cut a made-up observation: {step.cut.strip()[:80]!r})") + "\n")
    if isinstance(parsed, Actions) and step.observation is not None:
        out.write(paint.label(shown(step.observation), "observation") + "\n")
    elif step.observation is not None:
        out.write(f"{paint.label(OBSERVATION_LABEL, 'observation')} {shown(step.observation)}\n")
    out.flush()


def _print_end(result: RunResult, out: TextIO, paint: _Paint) -> None:
    usage = result.usage
    forced = " (forced answer)" if result.forced else ""
    out.write(
        paint.dim(
            f"── {result.stop_reason}{forced} · {_plural(len(result.steps), 'step')} · {usage.prompt_tokens} prompt + "
            f"{usage.completion_tokens} completion = {usage.total_tokens} tokens"
        )
        + "\n"
    )
    if result.error:
        out.write(f"stopped: {shown(result.error)}\n")
    if result.answer is not None:
        out.write(paint.bold(shown(result.answer)) + "\n")


def _eval(args: argparse.Namespace) -> int:
    from react_text.evaluation import episodes as evaluation

    tasks = evaluation.load(args.tasks)
    _eval_writes_no_input(args, tasks)
    _refuse_unused(args)
    choices = _choices(args)
    models: Any = None
    if args.script:  # the traces' settings and tools' sources, where the flags give none
        models, recorded = scripts.scripts(args.script, {t.id: t.task for t in tasks})
        choices = choices.over(recorded)
    root = Path(choices.root) if choices.root else Path(args.tasks).parent / "docs"
    if any(name in ("search", "read") for t in tasks for name in t.tools) and not root.is_dir():
        raise ConfigError(f"the file tools need a folder: {root} is not one (give --root DIR)")
    extra: list[Tool] = [t for spec in choices.modules for t in config.module_tools(spec)]
    if not choices.mcp:
        for names in {t.tools for t in tasks}:
            evaluation.toolset(names, root, extra)  # an unknown tool name is an error before anything runs
    recipes: Any = None  # with --ray: how each worker builds the models (models do not travel)
    if args.ray is not None and (choices.mcp or args.mcp_env or args.mcp_header):
        raise ConfigError("--ray takes no --mcp: an MCP session cannot travel to a worker (use --module tools)")
    if args.workers and args.ray is None:
        raise ConfigError("--workers goes with --ray")
    if args.seed is not None and not (args.seed in SEEDS and args.seed + args.n - 1 in SEEDS):
        raise ConfigError(
            f"--seed must be from 0 to {SEEDS[-1]} less --n - 1 (2**32 - 2 is the last seed), not {args.seed}"
        )
    if args.script:
        recipes = models
        probe = models(tasks[0]) if tasks else scripts.Script(()).model()
        concurrency = args.concurrency or 4
    else:
        urls = args.base_url or [None]
        recipes = [_model_recipe(args, url) for url in urls]
        models = [recipes[0]()] if args.ray is not None else [make() for make in recipes]
        probe = models[0]
        concurrency = 1 if config.is_in_process(probe) else args.concurrency or 4 * len(models)
    limits, prompting = config.settle(probe, choices)
    _refuse_unused(args, probe, prompting)
    if args.resume and not args.out:
        raise ConfigError("--resume needs --out FILE: the results to keep")
    done = evaluation.resume(args.out) if args.resume else []
    known = {t.id for t in tasks}
    done = [o for o in done if o.id in known and o.sample < args.n]
    if args.n > 1 and not args.temperature and not args.script:
        print(
            f"note: --n {args.n} at temperature 0: a task's episodes will be alike (give --temperature)",
            file=sys.stderr,
        )
    if args.trace:
        Path(args.trace).mkdir(parents=True, exist_ok=True)
    ray = recipes if args.ray is not None else None
    settings = _EvalSettings(tasks, done, root, models, concurrency, limits, prompting, choices, ray)
    if not (choices.mcp or args.mcp_env or args.mcp_header):
        return _eval_with(args, settings, extra)
    from react_text.tools.mcp import from_cli

    with from_cli(list(choices.mcp), args.mcp_env, args.mcp_header) as found:
        return _eval_with(args, settings, [*extra, *found])


def _eval_writes_no_input(args: argparse.Namespace, tasks: Sequence[Any]) -> None:
    """Refuse, before anything is written, an output of eval that is one of its inputs: the task
    file, the script (or a file of its folder), a --tools module file, or another output."""
    inputs = [("the task file", args.tasks), *_sources_read(args)]
    folder = Path(args.script) if args.script else None
    if folder is not None and _looked_up(folder.is_dir):
        with contextlib.suppress(OSError):  # a folder it cannot list: scripts.scripts says so
            inputs += [("a script of --script", str(p)) for p in sorted(folder.iterdir()) if _looked_up(p.is_file)]
    outputs = [("--out", args.out), ("--trajectories", args.trajectories)]
    if args.trace:
        if folder is not None and _same_file(Path(args.trace), folder):
            raise ConfigError(f"--trace {args.trace} is the folder --script plays: its traces would be written over")
        names = [f"{t.id}#{k}" if args.n > 1 else t.id for t in tasks for k in range(args.n)]
        outputs += [("--trace", str(Path(args.trace) / scripts.trace_name(name))) for name in names]
    _writes_no_input(outputs, inputs)


def _sources_read(args: argparse.Namespace) -> list[tuple[str, str]]:
    """The files a command reads besides its main input: --script, and --tools modules that are files."""
    found = [("the script", args.script)] if args.script else []
    return found + [("the module of --tools", m) for m in (args.tools or ()) if _looked_up(Path(m).is_file)]


def _looked_up(check: Callable[[], bool]) -> bool:
    """`path.is_file()` or `.is_dir()`; False for a name the system cannot look up (too long, say)."""
    try:
        return check()
    except (OSError, ValueError):
        return False


def _writes_no_input(outputs: Sequence[tuple[str, str | None]], inputs: Sequence[tuple[str, str]]) -> None:
    """ConfigError when an output file is an input (or another output): a slip of the tab key
    (`eval tasks.jsonl --out tasks.jsonl`) would destroy what the command reads. Paths are
    compared resolved (symbolic links followed), and as files (device and inode: a hard link) when
    they exist; each path is looked up once, so a folder of a thousand traces costs a thousand."""
    seen: dict[object, tuple[str, str]] = {}
    for what, given in inputs:
        for key in _file_keys(given):
            seen.setdefault(key, (what, given))
    for flag, path in outputs:
        if not path:
            continue
        keys = _file_keys(path)
        clash = next((seen[key] for key in keys if key in seen), None)
        if clash is not None:
            what, other = clash
            raise ConfigError(f"{flag} {path} is {what} ({other}): it would be written over; give another file")
        for key in keys:
            seen.setdefault(key, (flag, path))


def _file_keys(path: str) -> list[object]:
    """What names a file whatever the path: its resolved path, and its device and inode if it exists."""
    keys: list[object] = []
    with contextlib.suppress(OSError, RuntimeError, ValueError):  # too long a name, a symbolic link loop
        keys.append(Path(path).resolve())
    with contextlib.suppress(OSError, ValueError):
        found = os.stat(path)
        keys.append((found.st_dev, found.st_ino))
    return keys


def _same_file(a: Path, b: Path) -> bool:
    return bool(set(_file_keys(str(a))) & set(_file_keys(str(b))))


def _close_in_process(models: Any) -> None:
    """Stop and free an in-process model before the interpreter shuts down (after Ctrl-C, its
    thread would otherwise run on in native code while the interpreter is torn down around it).
    A second Ctrl-C does not interrupt this: the model stops at its next token."""
    in_process = [m for m in models if config.is_in_process(m)] if isinstance(models, list) else []
    if not in_process:
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        for model in in_process:
            model.close()
    finally:
        signal.signal(signal.SIGINT, previous)


@dataclass(frozen=True, slots=True)
class _EvalSettings:
    tasks: list[Any]
    done: list[Any]
    root: Path
    models: Any
    concurrency: int
    limits: Limits
    prompting: Prompting
    choices: Choices  # the parser, and where the tools came from (for the traces)
    ray: Any = None  # the recipes, when the episodes run on Ray


def _eval_with(args: argparse.Namespace, settings: _EvalSettings, extra: Sequence[Tool]) -> int:
    from react_text.evaluation import episodes as evaluation

    tasks, done, root = settings.tasks, settings.done, settings.root
    for names in {t.tools for t in tasks}:
        evaluation.toolset(names, root, extra)  # an unknown or clashing name: an error before anything runs
    outcomes = list(done)
    progress = _Progress(len(tasks) * args.n, len(done), sys.stderr)
    try:
        out = open(args.out, "a" if args.resume else "w", encoding="utf-8") if args.out else None  # noqa: SIM115
    except OSError as exc:
        raise ConfigError(f"cannot write {args.out}: {exc.strerror}") from exc
    if args.trajectories:
        try:
            Path(args.trajectories).open("a" if args.resume else "w", encoding="utf-8").close()
        except OSError as exc:
            raise ConfigError(f"cannot write {args.trajectories}: {exc.strerror}") from exc

    options = evaluation.Options(
        root=root,
        limits=settings.limits,
        prompting=settings.prompting,
        parser=config.parser_named(settings.choices.parser),
        traces=Path(args.trace) if args.trace else None,
        tools=tuple(extra),
        modules=settings.choices.modules,
        mcp=settings.choices.mcp,
        trajectories=Path(args.trajectories) if args.trajectories else None,
        n=args.n,
        seed=args.seed,
    )

    def episodes() -> Any:
        if settings.ray is None:
            return evaluation.aevaluate(tasks, settings.models, options, concurrency=settings.concurrency, done=done)
        from react_text.evaluation import cluster

        return cluster.aevaluate(
            tasks,
            settings.ray,
            options,
            address=args.ray or None,
            workers=args.workers,
            concurrency=settings.concurrency,
            done=done,
        )

    async def run_all() -> None:
        async for outcome in episodes():
            outcomes.append(outcome)
            if out:
                out.write(evaluation.as_json(outcome) + "\n")
                out.flush()
            progress.update(outcome)

    try:
        asyncio.run(run_all())
    finally:
        _close_in_process(settings.models)
        progress.close()
        if out:
            out.close()
    order = {t.id: n for n, t in enumerate(tasks)}
    outcomes.sort(key=lambda o: (order[o.id], o.sample))
    print(shown(evaluation.table(outcomes)))  # the answers and ids as a model and a task file wrote them
    return 0 if all(o.ok for o in outcomes) else 1


class _Progress:
    """How far an eval has got: a bar redrawn in place on a terminal, one line a task when piped."""

    def __init__(self, total: int, done: int, out: TextIO) -> None:
        self.total = total
        self.done = done
        self.right = 0
        self.out = out
        self.live = out.isatty()
        self.started = time.monotonic()
        self.first = done
        if done:
            out.write(f"{done} of {total} tasks already done: running the other {total - done}\n")

    def update(self, outcome: Any) -> None:
        self.done += 1
        self.right += outcome.ok
        if not self.live:
            mark = "✓" if outcome.ok else "✗"
            self.out.write(
                f"[{self.done}/{self.total}] {mark} {shown(outcome.id)} · {outcome.stop_reason} · "
                f"{_plural(outcome.steps, 'step')} · {outcome.seconds:.2f}s\n"
            )
            self.out.flush()
            return
        elapsed = time.monotonic() - self.started
        rate = (self.done - self.first) / elapsed if elapsed > 0 else 0.0
        left = f" · {(self.total - self.done) / rate:.0f}s left" if rate and self.done < self.total else ""
        width = 30
        filled = width * self.done // max(self.total, 1)
        bar = "█" * filled + "░" * (width - filled)
        ran = self.done - self.first
        self.out.write(f"\r{bar} {self.done}/{self.total} · {self.right}/{ran} right · {rate:.1f} tasks/s{left}\033[K")
        self.out.flush()

    def close(self) -> None:
        if self.live and self.done > self.first:
            self.out.write("\n")
            self.out.flush()


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


if __name__ == "__main__":
    sys.exit(main())
