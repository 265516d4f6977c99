"""`react-text resume FILE`: go on with a run whose state `react-text run --state FILE` kept.

react-text resume run.json --tools ./mytools.py                 after a crash: exactly where it was
react-text resume run.json --tools ./mytools.py --approve       the risky call it paused at (--ask-later)
react-text resume run.json --tools ./mytools.py --deny "over the limit"
react-text resume run.json --tools ./mytools.py --edit "40"     approved, with another input

The run is made again with the same flags (model, tools, budgets: a state saved with others is
refused in one line), its log replayed, then live; its output and exit status are run's.
"""

from __future__ import annotations

import argparse
from typing import Any

from react_text.cli.flags import mcp_flags, model_flags, run_flags, subcommand, tool_flags
from react_text.cli.run import execute, state_flags
from react_text.core.agent import Agent, Run
from react_text.core.commands import Approval
from react_text.core.streaming import Stream
from react_text.durable import Deny, Edit
from react_text.durable.keeping import load, replies_used
from react_text.observers.observing import Observer

__all__ = [
    "add",
]

_EXAMPLES = """examples:
  react-text run --state run.json --ask-later --tools ./mytools.py "..."   (exit status 3: a risky call waits)
  react-text resume run.json --tools ./mytools.py --approve
  react-text resume run.json --tools ./mytools.py --deny "not on a Friday"
  react-text resume run.json --script replies.txt          (a script plays on from the replies the run used)
"""


def add(commands: Any) -> None:
    """The resume command and its flags: run's, with the decision on a pending call."""
    resume = subcommand(
        commands,
        "resume",
        "go on with a run kept by run --state",
        "Go on with the run whose state FILE holds (react-text run --state FILE), from where it stopped: "
        "give the same model and tools flags as the run.",
        _EXAMPLES,
    )
    resume.add_argument("file", metavar="FILE", help="the run's state, as run --state FILE kept it")
    resume.add_argument("--run-id", metavar="ID", help="which run, when FILE (a folder or a .db file) keeps several")
    decision = resume.add_mutually_exclusive_group()
    decision.add_argument("--approve", action="store_true", help="run the risky call the run waits on")
    decision.add_argument("--deny", metavar="REASON", help="decline it; the model is told REASON")
    decision.add_argument("--edit", metavar="INPUT", help="run it with INPUT instead of the model's input")
    model_flags(resume, servers="one")
    run_flags(resume)
    tool_flags(resume)
    resume.add_argument("--json", action="store_true", help="print the whole RunResult as one JSON document")
    resume.add_argument("--trace", metavar="FILE", help="write every event after the resume to FILE as JSON lines")
    resume.add_argument("--yes", action="store_true", help="run risky tools without asking")
    state_flags(resume, resume=True)
    mcp_flags(resume)
    resume.set_defaults(handler=_resume)


def _resume(args: argparse.Namespace) -> int:
    # the store run --state kept (one file, a folder, a .db file); damaged or foreign: one line, exit 2
    _, state = load(args.file, args.run_id)
    args.state = args.file
    decision = _decision(args)

    def begin(agent: Agent, task: str, observer: Observer | None, live: bool) -> Run | Stream:
        if live:
            return agent.stream_resume(args.file, run_id=state.run_id, decision=decision, observer=observer)
        return agent.iter_resume(args.file, run_id=state.run_id, decision=decision, observer=observer)

    return execute(args, state.task, begin, played=replies_used(state))


def _decision(args: argparse.Namespace) -> Approval | None:
    if args.approve:
        return True
    if args.deny is not None:
        return Deny(args.deny)
    if args.edit is not None:
        return Edit(args.edit)
    return None
