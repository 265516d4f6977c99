"""What streaming a run costs: `agent.stream(task)` beside `agent.run(task)`, on a scripted model,
so that only the engine is timed. The same two-step script, whole (one delta a reply) and cut into
deltas of 16, 4 and 1 characters; the extra time of the stream over `run`, per delta.

    python bench/stream_overhead.py [--rounds N]

Each figure is the median of N rounds (default 30) of one run, wall time on one thread; the two
paths are interleaved round by round, so that a busy machine slows both alike. The extra cost per
delta is (stream - run - the stream's cost with one delta a reply) / the deltas past one a reply:
the StreamReader reading the reply so far again at each delta (bench/stream_reader.py), and making
the events.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from react_text import Agent, ScriptedModel  # noqa: E402


def add(a: float, b: float) -> float:
    """Add two numbers."""
    return a + b


THOUGHT = "I need the sum of the two numbers the user gave, so I will call the add tool with both of them. " * 2
SCRIPT = [
    f"THOUGHT: {THOUGHT}\nACTION: add[1234, 5678]\nOBSERVATION: 1\n",
    f"THOUGHT: {THOUGHT}the tool gave the sum.\nFINAL: 6912",
]
TASK = "What is 1234 + 5678?"


def once(chunks: int | None, streamed: bool) -> float:
    agent = Agent(ScriptedModel(SCRIPT, chunks=chunks), tools=[add])
    started = time.perf_counter()
    if streamed:
        for _ in agent.stream(TASK):
            pass
    else:
        agent.run(TASK)
    return time.perf_counter() - started


def deltas(chunks: int | None) -> int:
    if chunks is None:
        return len(SCRIPT)
    return sum(-(-len(reply) // chunks) for reply in SCRIPT)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30)
    rounds = parser.parse_args().rounds
    sizes: list[int | None] = [None, 16, 4, 1]
    for _ in range(3):  # warm: imports, the tokenizer, the agent's memoised counts
        once(None, False)
        once(1, True)
    times: dict[object, list[float]] = {"run": []}
    for size in sizes:
        times[size] = []
    for _ in range(rounds):
        times["run"].append(once(None, False))
        for size in sizes:
            times[size].append(once(size, True))
    run = statistics.median(times["run"])
    whole = statistics.median(times[None])
    print(f"run(): {run * 1e3:.2f} ms a run (2 steps, replies of {', '.join(str(len(r)) for r in SCRIPT)} characters)")
    print(f"{'stream(), deltas of':<22}{'deltas':>8}{'ms a run':>10}{'vs run':>9}{'µs a delta':>12}")
    for size in sizes:
        median = statistics.median(times[size])
        count = deltas(size)
        past = count - deltas(None)
        per = (median - whole) / past * 1e6 if past else float("nan")
        label = "whole replies" if size is None else f"{size} characters"
        shown = "-" if size is None else f"{per:.1f}"
        print(f"{label:<22}{count:>8}{median * 1e3:>10.2f}{median / run:>8.2f}x{shown:>12}")


if __name__ == "__main__":
    main()
