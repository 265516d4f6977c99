"""`react-text replay`: the steps of a trace written by `react-text run --trace FILE`, printed again."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from react_text.cli.flags import subcommand
from react_text.cli.printing import Paint, print_end, print_step
from react_text.core.types import RunResult, Step, Usage
from react_text.observers import trace
from react_text.observers.written import shown

__all__ = [
    "add",
]


def add(commands: Any) -> None:
    """The replay command."""
    replay = subcommand(
        commands,
        "replay",
        "show a recorded run again",
        "Print the steps of a trace written by `react-text run --trace FILE`.",
        'examples:\n  react-text run --trace run.jsonl "What is 2 + 2?"\n  react-text replay run.jsonl\n',
    )
    replay.add_argument("trace", metavar="FILE")
    replay.set_defaults(handler=_replay)


def _replay(args: argparse.Namespace) -> int:
    paint = Paint.for_stream(sys.stdout)
    steps: list[Step] = []
    budget: int | None = None
    code = 1
    last: dict[str, Any] = {}
    ended = False
    for event in trace.read(args.trace):
        last = event
        if event["event"] == "run_start":
            model = event.get("model")
            named = f"{model.get('name')} ({model.get('api')})" if isinstance(model, dict) else model
            budget = (event.get("limits") or {}).get("tokens", event.get("max_tokens"))
            print(paint.dim(shown(f"task: {event.get('task')}  ·  model: {named}")))
        elif event["event"] == "step":
            steps.append(trace.step_from(event))
            print_step(steps[-1], sys.stdout, budget, paint)
        elif event["event"] == "run_end":
            usage = Usage(event["usage"]["prompt_tokens"], event["usage"]["completion_tokens"])
            result = RunResult(
                event["answer"], event["stop_reason"], tuple(steps), usage, (), event["forced"], event["error"]
            )
            print_end(result, sys.stdout, paint)
            code = 0 if result.stop_reason == "final" else 1
            ended = True
    if not ended:
        if last.get("event") == "reply":  # what the model said, though the run never read it
            print(paint.dim(shown(f"(a reply it never read: {str(last.get('text'))[:200]!r})")))
        print(f"react-text: {shown(_cut_short(args.trace, len(steps), last))}", file=sys.stderr)
    return code


_DOING = {  # what a run was doing when its trace stops, by the last event written
    "run_start": "before its first request",
    "request": "while waiting for the model's reply",
    "reply": "with a reply it never read into a step",
    "step": "before its next request",
    "model_error": "after a model error",
}


def _cut_short(path: str, steps: int, last: dict[str, Any]) -> str:
    """Why a trace with no run_end ends where it does, in words."""
    where = f"after step {steps}" if steps else "before its first step"
    doing = _DOING.get(str(last.get("event")), f"after a {last.get('event')} event")
    return (
        f"{path} has no run_end: its run was cut short (Ctrl-C, or a crash) {where}, {doing}; "
        "the steps above are all it recorded"
    )
