"""`react-text run`: an agent on a task, each step printed as it happens.

react-text run "What is 17 * 23 + 5?"                  the embedded local model
react-text run --model gpt-4o-mini "..."                any OpenAI-compatible server

On a terminal the replies are printed as they are written (`agent.stream`); `--no-stream` prints
whole steps, as a pipe always gets them unless `--stream` is given. The trace is the same either way.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

from react_text.cli.choices import choices_of, model_recipe, refuse_unused
from react_text.cli.files import sources_read, writes_no_input
from react_text.cli.flags import mcp_flags, model_flags, run_flags, subcommand, tool_flags
from react_text.cli.printing import Live, Paint, print_end, print_step
from react_text.core.agent import Agent, Run
from react_text.core.episode import Approval
from react_text.core.errors import ConfigError, set_up
from react_text.core.protocol import call
from react_text.core.streaming import Stream
from react_text.core.types import Action
from react_text.evaluation import config, scripts
from react_text.evaluation.config import Choices
from react_text.observers import trace
from react_text.observers.observing import Observer
from react_text.observers.trace import Tracer, result_dict
from react_text.observers.written import json_text, shown
from react_text.tools.tool import Tool

__all__ = [
    "add",
    "execute",
    "state_flags",
]

_EXAMPLES_RUN = """examples:
  react-text run "What is 17 * 23 + 5?"
  react-text run --model gpt-4o-mini "What is 2 ** 20?"          (OPENAI_API_KEY set)
  react-text run --base-url http://127.0.0.1:8080/v1 --model local --grammar "..."   (llama.cpp)
  react-text run --tools ./mytools.py --json "..."                (the functions in mytools.py)
  react-text run --trace run.jsonl "..."   then   react-text run --script run.jsonl   (a replay)
  react-text run --mcp "python server.py" --mcp http://127.0.0.1:8000/mcp "..."   (tools from MCP servers)
  react-text run --state run.json --ask-later --tools ./mytools.py "..."   then   react-text resume run.json --approve
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
    state_flags(run)
    mcp_flags(run)
    run.set_defaults(handler=_run)


def _run(args: argparse.Namespace) -> int:
    if args.ask_later and not args.state:
        raise ConfigError("--ask-later keeps the run waiting in its state file: give --state FILE too")
    return execute(args, args.task, lambda agent, task, observer, live: _begun(agent, task, observer, live, args.state))


def _begun(agent: Agent, task: str, observer: Observer | None, live: bool, state: str | None) -> Run | Stream:
    if live:
        return agent.stream(task, observer=observer, state=state)
    return agent.iter_steps(task, observer=observer, state=state)


# how the run starts, afresh or resumed: its steps, or (live: printed as written) its events
Begin = Callable[[Agent, str, Observer | None, bool], Run | Stream]


def execute(args: argparse.Namespace, task: str | None, begin: Begin, *, played: int = 0) -> int:
    """Run (or resume, as `begin` starts it) the agent the flags make on `task`, printing each step;
    `played`: the replies of a --script the resumed run has used already. The exit status: 0 for
    a final answer, 3 when the run awaits an approval (--ask-later), else 1."""
    outputs = [("--trace", args.trace)] + ([("--state", args.state)] if args.state else [])
    writes_no_input(outputs, sources_read(args))
    if args.ask_later and args.yes:
        raise ConfigError("--ask-later waits for a decision on each risky call and --yes runs them: leave one out")
    refuse_unused(args)
    choices = choices_of(args)
    count_tokens = None
    if args.script:
        script = scripts.script(args.script)
        choices = choices.over(script.choices)
        args.yes = args.yes or _approved_by_yes(script.start)
        script = dataclasses.replace(script, replies=script.replies[played:])
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
        return _run_with(args, task, model, tools, choices, count_tokens, begin)
    from react_text.tools.mcp import from_cli

    with contextlib.ExitStack() as stack:
        with set_up():  # entering starts the servers and lists their tools (two with one name...)
            found = stack.enter_context(from_cli(list(choices.mcp), args.mcp_env, args.mcp_header))
        return _run_with(args, task, model, [*tools, *found], choices, count_tokens, begin)


def _run_with(
    args: argparse.Namespace,
    task: str,
    model: Any,
    tools: Sequence[Tool],
    choices: Choices,
    count_tokens: Callable[[str], int] | None,
    begin: Begin,
) -> int:
    approve = _approver(args.yes, later=args.ask_later)
    agent = config.agent(model, tools, choices, approve=approve, count_tokens=count_tokens)
    paint = Paint.for_stream(sys.stdout)
    tracer = Tracer(args.trace) if args.trace else None
    if tracer:
        described = config.describe(agent, root=choices.root, modules=choices.modules, mcp=choices.mcp)
        tracer.start(task, {**described, "approve": "yes" if args.yes else "ask"})
    try:
        observer = tracer.observer if tracer else None
        # printed as written: on a terminal, or piped with --stream (a durable run and resume too)
        live = not (args.json or getattr(args, "no_stream", False)) and (args.stream or sys.stdout.isatty())
        begun = begin(agent, task, observer, live)
        run: Run | Live = Live(begun, sys.stdout, agent.limits.tokens, paint) if isinstance(begun, Stream) else begun
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
    if result.stop_reason == "awaiting_approval":
        said = shown(result.error or "").removeprefix("awaiting approval of ")
        print(
            f"paused at {said}: decide with react-text resume {args.state} --approve | --deny REASON | --edit INPUT",
            file=sys.stderr if args.json else sys.stdout,
        )
        return 3
    return 0 if result.stop_reason == "final" else 1


def _approved_by_yes(start: Mapping[str, Any]) -> bool:
    """Whether the traced run approved its risky calls with --yes (its run_start's `approve`; a trace
    written before it was recorded says nothing: ask, as then). Said on stderr, since the risky
    tools of the replay then run without asking too."""
    if start.get("approve") != "yes":
        return False
    print("risky tools run without asking: the traced run was approved with --yes", file=sys.stderr)
    return True


def state_flags(command: argparse.ArgumentParser, *, resume: bool = False) -> None:
    """--state FILE and --ask-later (run), or --ask-later alone (resume: the state is its FILE)."""
    if not resume:
        command.add_argument(
            "--state",
            metavar="FILE",
            help="keep the run's state in FILE, saved after every step and before every tool call "
            "(react-text resume FILE goes on from it)",
        )
    command.add_argument(
        "--ask-later",
        action="store_true",
        help="at a risky tool call, stop (exit status 3, the call printed) instead of asking on the terminal; "
        "react-text resume FILE --approve or --deny REASON decides it",
    )


def _approver(assume_yes: bool, *, later: bool = False) -> Callable[[Tool, Action], Approval | Literal["later"]]:
    """Ask on a terminal before a risky tool runs; without one, decline unless --yes; "later"
    with --ask-later (the run stops, its state saved, until react-text resume decides)."""

    def approve(t: Tool, action: Action) -> Approval | Literal["later"]:
        if assume_yes:
            return True
        if later:
            return "later"
        if not sys.stdin.isatty():
            print(f"declined {shown(call(t.name, action.input))}: no terminal to ask (use --yes)", file=sys.stderr)
            return False
        asked = f"Run the risky tool {shown(call(t.name, action.input))}? [y]es, [n]o, [q]uit: "
        answer = input(asked).strip().lower()
        return "stop" if answer.startswith("q") else answer.startswith("y")

    return approve
