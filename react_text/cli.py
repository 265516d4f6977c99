"""The `react-text` command: argument parsing and printing, no logic of its own.

react-text run "What is 17 * 23 + 5?"                  the embedded local model
react-text run --model gpt-4o-mini "..."                any OpenAI-compatible server
echo 'ACTION: add[2, 3]' | react-text parse             one reply's parse, as JSON
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any, TextIO

from . import parser as parsing
from .episode import Approval
from .errors import ModelError, ReactTextError
from .limits import Limits
from .tools import Tool
from .trace import Tracer, parsed_dict, result_dict
from .types import Action, Final, ParseError, RunResult, Step

EXAMPLES_RUN = """examples:
  react-text run "What is 17 * 23 + 5?"
  react-text run --model gpt-4o-mini "What is 2 ** 20?"          (OPENAI_API_KEY set)
  react-text run --base-url http://127.0.0.1:8080/v1 --model local --api completion "..."
  react-text run --tools mytools --json "..."                    (functions in mytools.py)
  react-text run --mcp "python server.py" --mcp http://127.0.0.1:8000/mcp "..."   (tools from MCP servers)
"""
EXAMPLES_EVAL = """examples:
  react-text eval bench/tasks/suite.jsonl                         (the embedded model)
  react-text eval bench/tasks/suite.jsonl --zero-shot --no-grammar --out results.jsonl
  react-text eval tasks.jsonl --base-url http://127.0.0.1:8080/v1 --model local --concurrency 8
"""
EXAMPLES_FETCH = """examples:
  react-text fetch qwen2.5-0.5b
  react-text run --model qwen2.5-0.5b "What is 17 * 23 + 5?"
"""
EXAMPLES_PARSE = """examples:
  echo 'THOUGHT: x\\nACTION: add[2, 3]' | react-text parse
  react-text parse --parser naive < reply.txt
  react-text parse replies.jsonl                  one JSON line of output per reply
  react-text parse --compare                       the robustness scoreboard on tests/data/replies.jsonl
"""


def main(argv: Sequence[str] | None = None) -> int:
    args = _arguments().parse_args(argv)
    try:
        code: int = args.handler(args)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader went away (| head): stop quietly
        sys.stderr.close()
        return 0
    except ReactTextError as exc:
        print(f"react-text: {exc}", file=sys.stderr)
        return 2
    return code


def _arguments() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="react-text", description="ReAct agents over a plain-text protocol.")
    top.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    commands = top.add_subparsers(required=True, metavar="COMMAND")

    run = _command(
        commands,
        "run",
        "run an agent on a task",
        "Run an agent on TASK and print each step as it happens.",
        EXAMPLES_RUN,
    )
    run.add_argument("task", metavar="TASK", help="the task or question, in quotes")
    _model_flags(run)
    _run_flags(run)
    run.add_argument("--instructions-in", choices=["system", "user"], default="system")
    run.add_argument("--tools", metavar="MODULE", help="add the public functions of a Python module as tools")
    run.add_argument("--root", metavar="DIR", help="add the search and read tools over the files under DIR")
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
        "Run every task of TASKS (JSON Lines: id, task, answer, tools) and print a results table.",
        EXAMPLES_EVAL,
    )
    evaluate.add_argument("tasks", metavar="TASKS", help="a .jsonl file of tasks")
    _model_flags(evaluate)
    _run_flags(evaluate)
    evaluate.add_argument("--root", metavar="DIR", help="folder for the file tools (default: docs/ beside TASKS)")
    evaluate.add_argument("--concurrency", type=_positive, default=4, help="tasks at once against a server (default 4)")
    evaluate.add_argument("--out", metavar="FILE", help="write one JSON line of results per task to FILE")
    evaluate.add_argument(
        "--parser", choices=sorted(parsing.PARSERS), default="tolerant", help="how replies are read (default tolerant)"
    )
    evaluate.set_defaults(handler=_eval)

    fetch = _command(
        commands,
        "fetch",
        "download a stronger local model (needs a network)",
        "Download a GGUF model to ~/.cache/react-text/models; then use it with --model NAME.",
        EXAMPLES_FETCH,
    )
    fetch.add_argument("name", choices=sorted(_known_models()), metavar="NAME", help="one of: %(choices)s")
    fetch.set_defaults(handler=_fetch)

    parse = _command(
        commands,
        "parse",
        "parse one model reply from stdin",
        "Read one model reply on stdin (or FILE) and print how it parses, as JSON.",
        EXAMPLES_PARSE,
    )
    parse.add_argument(
        "file",
        nargs="?",
        metavar="FILE",
        help="read the reply from FILE instead of stdin; a .jsonl file holds many replies ({'text': ...} a line)",
    )
    parse.add_argument("--strict", action="store_true", help="accept only the canonical form (= --parser strict)")
    parse.add_argument(
        "--parser", choices=sorted(parsing.PARSERS), default="tolerant", help="which parser reads (default tolerant)"
    )
    parse.add_argument(
        "--compare",
        action="store_true",
        help="score every parser on a corpus (FILE, default tests/data/replies.jsonl) and print the scoreboard",
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


def _model_flags(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--model",
        default=os.environ.get("REACT_TEXT_MODEL"),
        help="model name on an OpenAI-compatible server, or a .gguf file to run in-process "
        "(default: the embedded SmolLM2-135M-Instruct)",
    )
    command.add_argument(
        "--base-url", help="server URL (default: $OPENAI_BASE_URL, used only when --model names a server model)"
    )
    command.add_argument("--api", choices=["chat", "completion"], help="chat messages or a completion transcript")
    command.add_argument("--stream", action="store_true", help="stream replies from a server")
    command.add_argument(
        "--script",
        metavar="FILE",
        help="play the replies of a trace (.jsonl) or of a text file (replies between lines of ---) "
        "instead of calling a model",
    )


def _run_flags(command: argparse.ArgumentParser) -> None:
    """Budgets and prompt choices, shared by run and eval (unset: as the model recommends)."""
    defaults = Limits()
    command.add_argument("--max-steps", type=_positive, help=f"model calls allowed a run (default {defaults.steps})")
    command.add_argument("--max-tokens", type=_positive, default=None, help="tokens allowed over a whole run")
    command.add_argument(
        "--reply-tokens", type=_positive, help=f"reply allowance per call (default {defaults.reply_tokens})"
    )
    command.add_argument("--zero-shot", action="store_true", help="leave the worked example out of the prompt")
    command.add_argument(
        "--grammar",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="constrain decoding to the protocol (default: when the model takes a grammar; "
        "--grammar for a llama.cpp server)",
    )
    command.add_argument(
        "--act-first",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="under the grammar, the first reply must be an ACTION (default: as the model recommends; "
        "on for the embedded model)",
    )


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
    from .mcp import from_cli
    from .tools import listing

    with from_cli([args.server], args.mcp_env, args.mcp_header) as found:
        print(listing(found))
    return 0


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive whole number, not {text}")
    return value


# --- parse ----------------------------------------------------------------------------------------


def _parse(args: argparse.Namespace) -> int:
    if args.compare:
        from . import corpus

        path = args.file or os.path.join("tests", "data", "replies.jsonl")
        if not os.path.exists(path):
            raise ModelError(f"no corpus at {path}: give a corpus file (JSON lines with text and expected)")
        print(corpus.scoreboard(corpus.score(corpus.load(path), parsing.PARSERS)))
        return 0
    read = parsing.PARSERS["strict" if args.strict else args.parser]
    if args.file and args.file.endswith(".jsonl"):
        with open(args.file, encoding="utf-8") as handle:
            rows = [json.loads(line) for line in handle if line.strip()]
        for row in rows:
            print(json.dumps({"id": row.get("id"), **parsed_dict(read(row["text"]))}, ensure_ascii=False))
        return 0
    if args.file:
        with open(args.file, encoding="utf-8") as handle:
            text = handle.read()
    else:
        text = sys.stdin.read()
    parsed = read(text)
    print(json.dumps(parsed_dict(parsed), ensure_ascii=False, indent=2))
    return 1 if isinstance(parsed, ParseError) else 0


# --- run ------------------------------------------------------------------------------------------


def _run(args: argparse.Namespace) -> int:
    if not (args.mcp or args.mcp_env or args.mcp_header):
        return _run_with(args, ())
    from .mcp import from_cli

    with from_cli(args.mcp, args.mcp_env, args.mcp_header) as found:
        return _run_with(args, found)


def _run_with(args: argparse.Namespace, mcp_tools: Sequence[Tool]) -> int:
    from .loop import Agent
    from .toolbox import default_tools

    model = _model(args)
    tool_list: list[Any] = default_tools(args.root)
    if args.tools:
        tool_list += _module_tools(args.tools)
    tool_list += mcp_tools
    agent = _configured(Agent(model, tools=tool_list, approve=_approver(args.yes)), args)
    agent = replace(agent, prompting=replace(agent.prompting, instructions_in=args.instructions_in))
    paint = Paint.for_stream(sys.stdout)
    tracer = Tracer(args.trace) if args.trace else None
    if tracer:
        agent = replace(agent, model=tracer.model(agent.model))
        tracer.event(
            "run_start", task=args.task, model=repr(model), max_steps=agent.limits.steps, max_tokens=agent.limits.tokens
        )
    try:
        run = agent.iter_steps(args.task)
        for step in run:
            if tracer:
                tracer.step(step)
            if not args.json:
                _print_step(step, sys.stdout, agent.limits.tokens, paint)
        result = run.result
        if tracer:
            tracer.end(result)
    finally:
        if tracer:
            tracer.close()
    if args.json:
        print(json.dumps(result_dict(result), ensure_ascii=False, indent=2))
    else:
        _print_end(result, sys.stdout, paint)
    return 0 if result.stop_reason == "final" else 1


def _configured(agent: Any, args: argparse.Namespace) -> Any:
    """The agent with the limits and prompt choices the flags name (the rest as the model recommends)."""
    limits = {
        name: value
        for name, value in (("steps", args.max_steps), ("tokens", args.max_tokens), ("reply_tokens", args.reply_tokens))
        if value is not None
    }
    prompt: dict[str, Any] = {}
    if args.zero_shot:
        prompt["example"] = None
    if args.grammar is not None:
        prompt["grammar"] = args.grammar
    if args.act_first is not None:
        prompt["act_first"] = args.act_first
    return replace(agent, limits=replace(agent.limits, **limits), prompting=replace(agent.prompting, **prompt))


def _approver(assume_yes: bool) -> Callable[[Tool, Action], Approval]:
    """Ask on a terminal before a risky tool runs; without one, decline unless --yes."""

    def approve(t: Tool, action: Action) -> Approval:
        if assume_yes:
            return True
        if not sys.stdin.isatty():
            print(f"declined {t.name}[{action.input}]: no terminal to ask (use --yes)", file=sys.stderr)
            return False
        answer = input(f"Run the risky tool {t.name}[{action.input}]? [y]es, [n]o, [q]uit: ").strip().lower()
        return "stop" if answer.startswith("q") else answer.startswith("y")

    return approve


def _replay(args: argparse.Namespace) -> int:
    from . import trace
    from .types import Usage

    paint = Paint.for_stream(sys.stdout)
    steps: list[Step] = []
    code = 1
    for event in trace.read(args.trace):
        if event["event"] == "run_start":
            print(paint.dim(f"task: {event['task']}  ·  model: {event['model']}"))
        elif event["event"] == "step":
            steps.append(trace.step_from(event))
            _print_step(steps[-1], sys.stdout, event.get("max_tokens"), paint)
        elif event["event"] == "run_end":
            usage = Usage(event["usage"]["prompt_tokens"], event["usage"]["completion_tokens"])
            result = RunResult(
                event["answer"], event["stop_reason"], tuple(steps), usage, (), event["forced"], event["error"]
            )
            _print_end(result, sys.stdout, paint)
            code = 0 if result.stop_reason == "final" else 1
    return code


def _known_models() -> list[str]:
    from .download import MODELS

    return list(MODELS)


def _fetch(args: argparse.Namespace) -> int:
    from .download import fetch_model

    def progress(done: int, total: int | None) -> None:
        share = f" of {total / 1e6:.0f} MB" if total else ""
        sys.stderr.write(f"\r{done / 1e6:.0f} MB{share}")

    path = fetch_model(args.name, progress if sys.stderr.isatty() else None)
    print(f"\n{path}")
    return 0


def _model(args: argparse.Namespace) -> Any:
    if args.script:
        from . import trace
        from .backends.scripted import ScriptedModel

        if args.script.endswith(".jsonl"):
            return ScriptedModel(trace.replies(args.script), api=args.api or "chat")
        with open(args.script, encoding="utf-8") as handle:
            replies = [r.strip("\n") for r in handle.read().split("\n---\n")]
        return ScriptedModel(replies, api=args.api or "chat")
    from .download import MODELS, resolve

    if args.model in MODELS and not args.base_url:
        local = resolve(args.model)
        if local is None:
            raise ModelError(f"{args.model} is not downloaded yet: react-text fetch {args.model}")
        args.model = str(local)
    if args.model is None or args.model.endswith(".gguf"):
        if args.base_url:
            raise ModelError("--base-url needs --model NAME (the model's name on that server)")
        from .backends.local import LocalModel

        return LocalModel(args.model, api=args.api or "completion")
    from .backends.openai_api import OpenAIChat, OpenAICompletion

    backend = OpenAICompletion if args.api == "completion" else OpenAIChat
    return backend(args.model, base_url=args.base_url or os.environ.get("OPENAI_BASE_URL"), stream=args.stream)


def _module_tools(name: str) -> list[Tool | Callable[..., object]]:
    sys.path.insert(0, os.getcwd())
    try:
        module = importlib.import_module(name.removesuffix(".py"))
    except ImportError as exc:
        raise ModelError(f"could not import the tools module {name!r}: {exc}") from exc

    def defined_here(value: object) -> bool:
        fn = value.fn if isinstance(value, Tool) else value
        return getattr(fn, "__module__", None) == module.__name__

    found = [
        value
        for key, value in vars(module).items()
        if not key.startswith("_") and (isinstance(value, Tool) or callable(value)) and defined_here(value)
    ]
    if not found:
        raise ModelError(f"the module {name!r} defines no public functions to use as tools")
    return found


class Paint:
    """ANSI colour on a terminal (unless NO_COLOR is set), plain text otherwise."""

    def __init__(self, on: bool) -> None:
        self.on = on

    @classmethod
    def for_stream(cls, stream: TextIO) -> Paint:
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


def _print_step(step: Step, out: TextIO, max_tokens: int | None, paint: Paint) -> None:
    parsed = step.parsed
    budget = f"{step.total_usage.total_tokens}" + (f"/{max_tokens}" if max_tokens else "")
    forced = " (forced)" if step.forced else ""
    out.write(paint.dim(f"── step {step.number}{forced} · {budget} tokens · {step.seconds:.2f}s") + "\n")
    if parsed.thought:
        out.write(f"{paint.label('THOUGHT:', 'thought')} {parsed.thought}\n")
    if isinstance(parsed, Action):
        out.write(f"{paint.label('ACTION:', 'action')} {parsed.tool}[{parsed.input}]\n")
    elif isinstance(parsed, Final):
        out.write(f"{paint.label('FINAL:', 'final')} {parsed.answer}\n")
    else:
        out.write(f"{paint.label(f'UNREADABLE ({parsed.reason}):', 'error')} {step.reply.strip()[:200]!r}\n")
    if step.cut.strip():
        out.write(paint.dim(f"(cut a made-up observation: {step.cut.strip()[:80]!r})") + "\n")
    if step.observation is not None:
        out.write(f"{paint.label('OBSERVATION:', 'observation')} {step.observation}\n")
    out.flush()


def _print_end(result: RunResult, out: TextIO, paint: Paint) -> None:
    usage = result.usage
    forced = " (forced answer)" if result.forced else ""
    out.write(
        paint.dim(
            f"── {result.stop_reason}{forced} · {len(result.steps)} steps · {usage.prompt_tokens} prompt + "
            f"{usage.completion_tokens} completion = {usage.total_tokens} tokens"
        )
        + "\n"
    )
    if result.error:
        out.write(f"stopped: {result.error}\n")
    if result.answer is not None:
        out.write(paint.bold(result.answer) + "\n")


def _eval(args: argparse.Namespace) -> int:
    from pathlib import Path

    from . import evaluation

    tasks = evaluation.load(args.tasks)
    model = _model(args)
    local = getattr(model, "stats", None) is not None  # an in-process model: one task at a time
    root = Path(args.root) if args.root else Path(args.tasks).parent / "docs"
    from .loop import Agent

    configured = _configured(Agent(model), args)
    outcomes = []
    out = open(args.out, "w", encoding="utf-8") if args.out else None  # noqa: SIM115 - closed below
    try:
        progress = evaluation.evaluate(
            tasks,
            model,
            root=root,
            concurrency=1 if local else args.concurrency,
            limits=configured.limits,
            prompting=configured.prompting,
            parser=parsing.PARSERS[args.parser],
        )
        for done, outcome in enumerate(progress, 1):
            outcomes.append(outcome)
            if out:
                out.write(evaluation.as_json(outcome) + "\n")
                out.flush()
            mark = "✓" if outcome.ok else "✗"
            end = "\r" if sys.stderr.isatty() and done < len(tasks) else "\n"
            sys.stderr.write(f"[{done}/{len(tasks)}] {mark} {outcome.id}{' ' * 20}{end}")
    finally:
        if out:
            out.close()
    print(evaluation.table(outcomes))
    return 0 if all(o.ok for o in outcomes) else 1


if __name__ == "__main__":
    sys.exit(main())
