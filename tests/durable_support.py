"""What the durable-run tests share: tools that record their effects, scripts, the agent, and a
child process that runs or resumes one run and may be killed (SIGKILL) at a chosen point.

    python tests/durable_support.py STATE sync|async [--kill-at-save N] [--kill-in TOOL] [--later]

The child runs the script's task with its state in STATE, or resumes STATE when it is there (the
model given the replies the log has not used), and prints its result as one JSON line. The tools'
effects are appended to the file named by REACT_TEXT_EFFECTS, one line each, so a test sees every
effect of every process. --kill-at-save N kills the process right after its Nth save (a step
boundary, or an intent saved before a tool call); --kill-in TOOL kills it inside TOOL's call, after
its effect.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import os
import signal
import sys
from pathlib import Path
from typing import Any

if __name__ == "__main__":  # run as a script: the package from the worktree
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from react_text import Agent, Limits, Prompting, ScriptedModel, tool
from react_text.core.commands import Failed, Replied
from react_text.core.types import RunResult
from react_text.durable import FileStore, RunState, Store

KILL_IN: str | None = None  # set in the child: the tool that kills the process inside its call
EFFECTS: list[str] = []  # in-process: what the tools with effects did, in order


def effect(text: str) -> None:
    where = os.environ.get("REACT_TEXT_EFFECTS")
    if where:
        with open(where, "a", encoding="utf-8") as file:
            file.write(text + "\n")
            file.flush()
            os.fsync(file.fileno())
    else:
        EFFECTS.append(text)


@tool(pure=True)
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@tool
def note(text: str) -> str:
    """Write a line to the notebook (an effect: never run twice)."""
    effect(f"note:{text}")
    if KILL_IN == "note":
        os.kill(os.getpid(), signal.SIGKILL)
    return "noted"


@tool(idempotent=True)
def put(key: str) -> str:
    """Set a flag (setting it again changes nothing)."""
    effect(f"put:{key}")
    if KILL_IN == "put":
        os.kill(os.getpid(), signal.SIGKILL)
    return "set"


@tool(risky=True)
def wire(amount: int) -> str:
    """Send money (risky: asked first)."""
    effect(f"wire:{amount}")
    return f"sent {amount}"


TASK = "What is 2 + 3, then doubled?"
SCRIPT = [
    "THOUGHT: first the sum\nACTION: add[2, 3]",
    "THOUGHT: write it down\nACTION: note[5]",
    "THOUGHT: mark it\nACTION: put[done]",
    "I am not sure what to write",  # a format error: a correction goes back
    "THOUGHT: again\nACTION: add[5, 5]",
    "FINAL: 10",
]
RISKY = [
    "THOUGHT: pay first\nACTION: wire[40]",
    "THOUGHT: note it\nACTION: note[paid]",
    "FINAL: done",
]
PARALLEL = [
    "THOUGHT: all at once\nACTION: add[1, 2]\nACTION: wire[7]\nACTION: note[three]\nACTION: wire[8]",
    "FINAL: 3",
]


def server_tokens(text: str) -> int:  # a server that counts unlike the engine: the meter learns its ratio
    return len(text) // 3 + 1


def model(replies: list[str], api: str = "chat") -> ScriptedModel:
    return ScriptedModel(replies, api=api, tokenizer=server_tokens)  # type: ignore[arg-type]


def agent(replies: list[str], *, api: str = "chat", approve: Any = None, parallel: bool = False) -> Agent:
    return Agent(
        model(replies, api),
        tools=[add, note, put, wire],
        limits=Limits(steps=8, tokens=6000),
        prompting=Prompting(parallel=parallel),
        approve=approve if approve is not None else (lambda t, a: True),
    )


def used(state: RunState) -> int:
    """The replies the run's log holds: a resumed scripted model goes on from the next."""
    return sum(isinstance(e, Replied | Failed) for e in state.log)


def timeless(result: RunResult) -> RunResult:
    """The result but its wall times (a resumed run keeps the times it logged; a new one measures its own)."""
    return dataclasses.replace(result, steps=tuple(dataclasses.replace(s, seconds=0.0) for s in result.steps))


class Killing:
    """A store that kills its process right after its `at`th save (a save that completed)."""

    def __init__(self, store: Store, at: int) -> None:
        self.store, self.at, self.saves = store, at, 0

    def save(self, state: RunState) -> None:
        self.store.save(state)
        self.saves += 1
        if self.saves == self.at:
            os.kill(os.getpid(), signal.SIGKILL)

    def load(self, run_id: str) -> RunState:
        return self.store.load(run_id)

    def runs(self) -> tuple[str, ...]:
        return self.store.runs()

    def delete(self, run_id: str) -> None:
        self.store.delete(run_id)


def child(argv: list[str]) -> int:
    global KILL_IN
    parser = argparse.ArgumentParser()
    parser.add_argument("state")
    parser.add_argument("driver", choices=["sync", "async"])
    parser.add_argument("--kill-at-save", type=int, default=0)
    parser.add_argument("--kill-in")
    parser.add_argument("--script", default="SCRIPT")
    parser.add_argument("--later", action="store_true", help="the approver answers later")
    parser.add_argument("--decide", help="resume with this decision: yes, no, or deny:REASON")
    args = parser.parse_args(argv)
    KILL_IN = args.kill_in
    script: list[str] = globals()[args.script]
    plain = FileStore.single(args.state)
    store: Store = Killing(plain, args.kill_at_save) if args.kill_at_save else plain
    approve = (lambda t, a: "later") if args.later else None
    decision: Any = None
    if args.decide:
        decision = {"yes": True, "no": False}.get(args.decide)
        if decision is None:
            from react_text.durable import Deny

            decision = Deny(args.decide.removeprefix("deny:"))
    if Path(args.state).exists():
        saved = plain.load("any")
        runner = agent(script[used(saved) :], approve=approve)
        if args.driver == "sync":
            result = runner.resume(store, decision=decision)
        else:
            result = asyncio.run(runner.aresume(store, decision=decision))
    else:
        runner = agent(script, approve=approve)
        if args.driver == "sync":
            result = runner.run(TASK, state=store, run_id="run-1", seed=7)
        else:
            result = asyncio.run(runner.arun(TASK, state=store, run_id="run-1", seed=7))
    observations = [s.observation for s in result.steps]
    calls = len(runner.model.calls)  # type: ignore[attr-defined]  # a ScriptedModel
    print(
        json.dumps(
            {"stop_reason": result.stop_reason, "answer": result.answer, "observations": observations, "calls": calls}
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(child(sys.argv[1:]))
