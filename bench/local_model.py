"""The embedded model: wall time per episode and per step, and prefix reuse of the KV cache.

    python bench/local_model.py [TASKS]        default: the first 8 tasks of the suite

Each task runs twice on SmolLM2-135M (completion mode, protocol grammar, worked example): once
with llama.cpp reusing the KV cache of the common prefix between calls (the default), once
resetting it every call. "evaluated" is the prompt tokens llama.cpp had to process; "sent" is
the prompt tokens of every call added up.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from react_text import Agent
from react_text.backends.local import LocalModel
from react_text.evaluation import correct, load, toolset

SUITE = Path(__file__).resolve().parent / "tasks" / "suite.jsonl"


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 8
    tasks = load(SUITE)[:count]
    print(
        f"{'prefix cache':<14} {'tasks':>5} {'right':>5} {'steps':>6} {'s/episode':>10} {'s/step':>8} {'sent':>7} {'evaluated':>10}"
    )
    for cache in (True, False):
        model = LocalModel(prefix_cache=cache)
        right = steps = 0
        started = time.perf_counter()
        for task in tasks:
            agent = Agent(model, tools=toolset(task.tools, SUITE.parent / "docs")).with_limits(steps=6)
            result = agent.run(task.task)
            right += correct(result.answer, task.answer)
            steps += len(result.steps)
        wall = time.perf_counter() - started
        stats = model.stats
        print(
            f"{'on' if cache else 'off':<14} {len(tasks):>5} {right:>5} {steps:>6} {wall / len(tasks):>10.2f} "
            f"{wall / steps:>8.2f} {stats.prompt_tokens:>7} {stats.evaluated_tokens:>10}"
        )


if __name__ == "__main__":
    main()
