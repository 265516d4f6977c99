"""`react-text run`: an agent on a task, each step printed as it happens.

react-text run "What is 17 * 23 + 5?"                  the embedded local model
react-text run --model gpt-4o-mini "..."                any OpenAI-compatible server

On a terminal the replies are printed as they are written (`agent.stream`); `--no-stream` prints
whole steps, as a pipe always gets them unless `--stream` is given. The trace is the same either way.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Callable, Sequence
from typing import Any

from react_text.cli.choices import choices_of, model_recipe, refuse_unused
from react_text.cli.files import sources_read, writes_no_input
from react_text.cli.flags import mcp_flags, model_flags, run_flags, subcommand, tool_flags
from react_text.cli.printing import Live, Paint, print_end, print_step
from react_text.core.episode import Approval
from react_text.core.errors import ConfigError, set_up
from react_text.core.protocol import call
from react_text.core.types import Action
from react_text.evaluation import config, scripts
from react_text.evaluation.config import Choices
from react_text.observers import trace
from react_text.observers.trace import Tracer, result_dict
from react_text.observers.written import json_text, shown
from react_text.tools.tool import Tool

__all__ = [
    "add",
]

_EXAMPLES_RUN = """examples:
  react-text run "What is 17 * 23 + 5?"
  react-text run --model gpt-4o-mini "What is 2 ** 20?"          (OPENAI_API_KEY set)
  react-text run --base-url http://127.0.0.1:8080/v1 --model local --grammar "..."   (llama.cpp)
  react-text run --tools ./mytools.py --json "..."                (the functions in mytools.py)
  react-text run --trace run.jsonl "..."   then   react-text run --script run.jsonl   (a replay)
  react-text run --mcp "python server.py" --mcp http://127.0.0.1:8000/mcp "..."   (tools from MCP servers)
"""


def add(commands: Any) -> None:
    """The run command and its flags."""
    run = subcommand(
        commands,
        "run",
        "run an agent on a task",
        "Run an agent on TASK and print each step as it happens.",
        _EXAMPLES_RUN,
    )
    run.add_argument(
        "task", metavar="TASK", nargs="?", help="the task or question, in quotes (with --script TRACE: the trace's)"
    )
    model_flags(run, servers="one")
    run_flags(run)
    tool_flags(run)
    run.add_argument("--json", action="store_true", help="print the whole RunResult as one JSON document")
    run.add_argument("--trace", metavar="FILE", help="write every event to FILE as JSON lines, as it happens")
    run.add_argument("--yes", action="store_true", help="run risky tools without asking")
    run.add_argument(
        "--no-stream",
        action="store_true",
        help="print whole steps, not the replies as they are written (the default on a terminal, and with --stream)",
    )
    mcp_flags(run)
    run.set_defaults(handler=_run)


def _run(args: argparse.Namespace) -> int:
    writes_no_input([("--trace", args.trace)], sources_read(args))
    refuse_unused(args)
    choices = choices_of(args)
    task = args.task
    count_tokens = None
    if args.script:
        script = scripts.script(args.script)
        choices = choices.over(script.choices)
        model = script.model(api=args.api, grammar=args.grammar)
        count_tokens = script.count_tokens()
        task = task if task is not None else script.task
    else:
        model = model_recipe(args, args.base_url)()
    refuse_unused(args, model, config.settle(model, choices)[1])
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
    paint = Paint.for_stream(sys.stdout)
    tracer = Tracer(args.trace) if args.trace else None
    if tracer:
        tracer.start(task, config.describe(agent, root=choices.root, modules=choices.modules, mcp=choices.mcp))
    try:
        observer = tracer.observer if tracer else None
        live = not (args.json or args.no_stream) and (args.stream or sys.stdout.isatty())
        run = (
            Live(agent.stream(task, observer=observer), sys.stdout, agent.limits.tokens, paint)
            if live
            else agent.iter_steps(task, observer=observer)
        )
        for step in run:
            if tracer:
                tracer.step(step)
            if not (args.json or live):
                print_step(step, sys.stdout, agent.limits.tokens, paint)
        result = run.result
        if tracer:
            tracer.end(result, context_window=trace.window(agent.limits, model))
    finally:
        if tracer:
            tracer.close()
    if args.json:
        print(json_text(result_dict(result), indent=2))
    else:
        print_end(result, sys.stdout, paint)
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
