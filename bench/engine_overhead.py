"""Engine overhead per step, with the model and the tools taken out.

    python bench/engine_overhead.py
    python bench/engine_overhead.py --against ../react-text-0.3   # this checkout against another, interleaved

A canned model returns ready replies at no cost and the one tool echoes its input, so what is
timed is the engine: prompt building, token counting (incremental, tiktoken), the stop guard,
the parser, the tool call and the bookkeeping. Episodes of 5, 20 and 100 steps; median CPU
microseconds per step over N=20 episodes; peak Python memory of one episode (tracemalloc).
A bare 40-line loop (no budget, no guard, one regex) is measured beside it, in the same run.
Rows: the sync driver with tools run inline and no time limit (`Limits(tool_seconds=None)`); the
sync driver as it comes (a 60 s time limit: on the main thread the tool runs inline under a
SIGALRM timer); the async driver as it comes (`agent.arun`: a sync tool runs on a worker thread,
so a hung tool never blocks the event loop); the async driver with an `async def` tool (no
worker thread: what the async driver costs apart from the hand-off, `bench/thread_handoff.py`).
With `--against DIR`, each round runs one child process on this checkout and one on DIR's
`react_text` (PYTHONPATH), in turn, A B A B ...; each child times N=20 episodes of 20 steps per row,
and the ratio is taken round by round, so a machine whose speed drifts compares fairly. The row
"async extra" is the async driver's cost over the sync default's, per step.
Peers are measured in venvs of their own (they are not dependencies) when an environment variable
names that venv's python: REACT_TEXT_SMOLAGENTS_PYTHON (`pip install smolagents`) and
REACT_TEXT_LANGCHAIN_PYTHON (`pip install "langchain<0.4"`: AgentExecutor with a ReAct text agent).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import statistics
import subprocess
import sys
import time
import tracemalloc
from dataclasses import dataclass, field
from pathlib import Path

from react_text import Agent, Limits, Reply, Request, tool

RUNS = 20
# Peers run in venvs of their own (they are not dependencies): name -> (variable naming its python, script)
PEERS = {
    "smolagents ToolCalling": ("REACT_TEXT_SMOLAGENTS_PYTHON", "smolagents_overhead.py"),
    "LangChain AgentExecutor": ("REACT_TEXT_LANGCHAIN_PYTHON", "langchain_overhead.py"),
}


@dataclass
class Canned:
    """A model that costs nothing: the n-th call returns the n-th reply."""

    replies: list[str]
    api: str = "chat"
    name: str = "gpt-4o-mini"
    accepts_grammar: bool = False
    n: int = field(default=0)

    def generate(self, request: Request) -> Reply:
        self.n += 1
        return Reply(self.replies[self.n - 1])

    async def agenerate(self, request: Request) -> Reply:
        return self.generate(request)


def echo(text: str) -> str:
    """Return the input."""
    return text


async def echo_async(text: str) -> str:
    """Return the input."""
    return text


def script(steps: int) -> list[str]:
    return [f"THOUGHT: step {i}, looking up item {i}.\nACTION: echo[item {i}]" for i in range(steps - 1)] + [
        "THOUGHT: done.\nFINAL: 42"
    ]


def agent(steps: int, tool_seconds: float | None = 60.0, *, awaited: bool = False) -> Agent:
    limits = Limits(steps=steps, tokens=10**7, tool_seconds=tool_seconds)
    echoes = tool(echo_async, name="echo") if awaited else echo
    return Agent(Canned(script(steps)), tools=[echoes], limits=limits)  # type: ignore[arg-type]


def react_text_inline(steps: int) -> None:
    result = agent(steps, tool_seconds=None).run("Find the answer.")
    assert result.stop_reason == "final", result.stop_reason


def react_text_default(steps: int) -> None:
    """The default: tools under a 60 s time limit."""
    result = agent(steps).run("Find the answer.")
    assert result.stop_reason == "final", result.stop_reason


def react_text_async(steps: int) -> None:
    result = asyncio.run(agent(steps).arun("Find the answer."))
    assert result.stop_reason == "final", result.stop_reason


def react_text_async_tool(steps: int) -> None:
    """The async driver with an `async def` tool: no worker thread."""
    result = asyncio.run(agent(steps, awaited=True).arun("Find the answer."))
    assert result.stop_reason == "final", result.stop_reason


def bare_episode(steps: int) -> None:
    """The 40-line tutorial loop: no budget, no guard, one regex."""
    replies = iter(script(steps))
    messages = [{"role": "system", "content": "tools: echo"}, {"role": "user", "content": "Find the answer."}]
    pattern = re.compile(r"ACTION: (\w+)\[(.*)\]")
    for _ in range(steps):
        text = next(replies)
        messages.append({"role": "assistant", "content": text})
        if "FINAL:" in text:
            return
        match = pattern.search(text)
        if match:
            messages.append({"role": "user", "content": f"OBSERVATION: {echo(match.group(2))}"})


def measure(episode, steps: int) -> tuple[float, float]:  # type: ignore[no-untyped-def]
    episode(steps)  # warm caches (the tokenizer is loaded once per process)
    per_step = []
    for _ in range(RUNS):
        started = time.process_time()
        episode(steps)
        per_step.append((time.process_time() - started) / steps * 1e6)
    tracemalloc.start()
    episode(steps)
    peak = tracemalloc.get_traced_memory()[1] / 1024
    tracemalloc.stop()
    return statistics.median(per_step), peak


ROWS = {
    "sync, inline": react_text_inline,
    "sync, default": react_text_default,
    "async, default": react_text_async,
    "async, async tool": react_text_async_tool,
}


def child(steps: int) -> None:
    """One side of a comparison: the median per-step CPU of each row, as JSON."""
    print(json.dumps({name: measure(episode, steps)[0] for name, episode in ROWS.items()}))


def against(other: Path, rounds: int, steps: int) -> None:
    here = Path(__file__).resolve()
    sides = {"this checkout": here.parent.parent, str(other): other.resolve()}
    figures: dict[str, list[dict[str, float]]] = {side: [] for side in sides}
    for _ in range(rounds):
        for side, root in sides.items():
            env = {**os.environ, "PYTHONPATH": str(root)}
            out = subprocess.run(
                [sys.executable, str(here), "--child", "--steps", str(steps)],
                capture_output=True,
                text=True,
                check=True,
                env=env,
                cwd=root,
            )
            figures[side].append(json.loads(out.stdout.splitlines()[-1]))
    for rounds_of in figures.values():
        for row in rounds_of:
            row["async extra"] = row["async, default"] - row["sync, default"]
    mine, theirs = figures.values()
    print(f"{steps} steps an episode, {rounds} interleaved rounds; median µs/step (min-max of the ratio)")
    print(f"{'row':<16} {'this':>9} {'other':>9} {'ratio':>7} {'range':>14}")
    for row in [*ROWS, "async extra"]:
        ratios = sorted(a[row] / b[row] for a, b in zip(mine, theirs, strict=True))
        a = statistics.median(r[row] for r in mine)
        b = statistics.median(r[row] for r in theirs)
        print(f"{row:<16} {a:>9.1f} {b:>9.1f} {statistics.median(ratios):>6.2f}x {ratios[0]:>6.2f}-{ratios[-1]:.2f}")


def main() -> None:
    options = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    options.add_argument("--against", type=Path, help="another checkout, timed interleaved with this one")
    options.add_argument("--rounds", type=int, default=7)
    options.add_argument("--steps", type=int, default=20)
    options.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = options.parse_args()
    if args.child:
        return child(args.steps)
    if args.against:
        return against(args.against, args.rounds, args.steps)
    print(f"{'engine':<28} {'steps':>5} {'µs/step':>9} {'peak KiB':>9} {'ratio to bare':>14}")
    rows = (
        ("react-text sync, inline", react_text_inline),
        ("react-text sync, default", react_text_default),
        ("react-text async, default", react_text_async),
        ("react-text async, async tool", react_text_async_tool),
    )
    for steps in (5, 20, 100):
        bare, bare_peak = measure(bare_episode, steps)
        for name, episode in rows:
            ours, ours_peak = measure(episode, steps)
            print(f"{name:<28} {steps:>5} {ours:>9.1f} {ours_peak:>9.0f} {ours / bare:>13.0f}x")
        print(f"{'bare loop':<28} {steps:>5} {bare:>9.1f} {bare_peak:>9.0f} {1:>13.0f}x")
    for name, (variable, script) in PEERS.items():
        python = os.environ.get(variable)
        if not python:
            print(f"{name:<28} skipped: set {variable} to the python of a venv that has it")
            continue
        out = subprocess.run(
            [python, str(Path(__file__).parent / "peers" / script)], capture_output=True, text=True, check=True
        )
        for line in out.stdout.splitlines():
            steps, micros = line.split()
            print(f"{name:<28} {steps:>5} {float(micros):>9.1f} {'':>9}")


if __name__ == "__main__":
    main()
