"""Engine overhead per step, with the model and the tools taken out.

    python bench/engine_overhead.py

A canned model returns ready replies at no cost and the one tool echoes its input, so what is
timed is the engine: prompt building, token counting (incremental, tiktoken), the stop guard,
the parser, the tool call and the bookkeeping. Episodes of 5, 20 and 100 steps; median CPU
microseconds per step over N=20 episodes; peak Python memory of one episode (tracemalloc).
A bare 40-line loop (no budget, no guard, one regex) is measured beside it, in the same run.
"timed tools" is the default Agent: each tool call is handed to a worker thread so a hung tool
can be abandoned at `tool_timeout`; the plain row runs the tool inline (`tool_timeout=None`).
Peers are measured in venvs of their own (they are not dependencies) when an environment variable
names that venv's python: REACT_TEXT_SMOLAGENTS_PYTHON (`pip install smolagents`) and
REACT_TEXT_LANGCHAIN_PYTHON (`pip install "langchain<0.4"`: AgentExecutor with a ReAct text agent).
"""

from __future__ import annotations

import os
import re
import statistics
import subprocess
import time
import tracemalloc
from dataclasses import dataclass, field
from pathlib import Path

from react_text import Agent, Reply, Request

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


def echo(text: str) -> str:
    """Return the input."""
    return text


def script(steps: int) -> list[str]:
    return [f"THOUGHT: step {i}, looking up item {i}.\nACTION: echo[item {i}]" for i in range(steps - 1)] + [
        "THOUGHT: done.\nFINAL: 42"
    ]


def react_text_episode(steps: int, tool_timeout: float | None = None) -> None:
    model = Canned(script(steps))
    agent = Agent(model, tools=[echo], max_steps=steps, max_tokens=10**7, tool_timeout=tool_timeout)  # type: ignore[arg-type]
    result = agent.run("Find the answer.")
    assert result.stop_reason == "final", result.stop_reason


def react_text_timed_tools(steps: int) -> None:
    """The default: each tool call goes to a worker thread, under a 60 s time limit."""
    react_text_episode(steps, tool_timeout=60.0)


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


def main() -> None:
    print(f"{'engine':<24} {'steps':>5} {'µs/step':>9} {'peak KiB':>9} {'ratio to bare':>14}")
    for steps in (5, 20, 100):
        bare, bare_peak = measure(bare_episode, steps)
        for name, episode in (("react-text", react_text_episode), ("react-text, timed tools", react_text_timed_tools)):
            ours, ours_peak = measure(episode, steps)
            print(f"{name:<24} {steps:>5} {ours:>9.1f} {ours_peak:>9.0f} {ours / bare:>13.0f}x")
        print(f"{'bare loop':<24} {steps:>5} {bare:>9.1f} {bare_peak:>9.0f} {1:>13.0f}x")
    for name, (variable, script) in PEERS.items():
        python = os.environ.get(variable)
        if not python:
            print(f"{name:<24} skipped: set {variable} to the python of a venv that has it")
            continue
        out = subprocess.run(
            [python, str(Path(__file__).parent / "peers" / script)], capture_output=True, text=True, check=True
        )
        for line in out.stdout.splitlines():
            steps, micros = line.split()
            print(f"{name:<24} {steps:>5} {float(micros):>9.1f} {'':>9}")


if __name__ == "__main__":
    main()
