"""Prompt efficiency: tokens sent per episode, and what truncating long observations saves.

    python bench/prompt_tokens.py

1. The two-lookups-and-add task, replayed with the same replies through react-text (instructions,
   tool list, worked example; chat), through a bare loop (a one-line system prompt), and through
   smolagents when REACT_TEXT_SMOLAGENTS_PYTHON names a venv's python that has it. Each call
   resends the history, so the total grows with the square of the steps: the table shows it.
2. A 10-step episode whose tool returns about 3,000 tokens each time, with observations cut to
   1,000 tokens (the default) and not cut.
Counts are tiktoken (o200k_base) counts of what is sent, as the engine counts before each request.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from react_text import Agent, Limits, Prompting, ScriptedModel, tool
from react_text.tokens.meter import MESSAGE_OVERHEAD, REPLY_PRIMING, counter

count = counter("gpt-4o-mini")
REPLIES = [
    "THOUGHT: I need the train ticket price.\nACTION: lookup[train ticket]",
    "THOUGHT: Now the hotel night.\nACTION: lookup[hotel night]",
    "THOUGHT: Add them.\nACTION: add[89, 145]",
    "THOUGHT: Done.\nFINAL: 234",
]
PRICES = {"train ticket": "89", "hotel night": "145"}


def lookup(item: str) -> str:
    """Return the price of one item."""
    return PRICES[item]


def add(a: float, b: float) -> float:
    """Add two numbers."""
    return a + b


def sent(messages: list[dict[str, str]]) -> int:
    return sum(count(m["content"]) + MESSAGE_OVERHEAD for m in messages) + REPLY_PRIMING


def bare_loop() -> list[int]:
    messages = [
        {"role": "system", "content": "Tools: lookup[item], add[a, b]. Reply THOUGHT/ACTION or FINAL."},
        {"role": "user", "content": "What do a train ticket and one hotel night cost together?"},
    ]
    per_call = []
    observations = ["89", "145", "234.0"]
    for i, reply in enumerate(REPLIES):
        per_call.append(sent(messages))
        messages.append({"role": "assistant", "content": reply})
        if i < len(observations):
            messages.append({"role": "user", "content": f"OBSERVATION: {observations[i]}"})
    return per_call


def ours(**prompting: object) -> list[int]:
    agent = Agent(ScriptedModel(REPLIES, name="gpt-4o-mini"), tools=[lookup, add], prompting=Prompting(**prompting))  # type: ignore[arg-type]
    return [
        step.usage.prompt_tokens
        for step in agent.run("What do a train ticket and one hotel night cost together?").steps
    ]


def long_episode(observation_tokens: int) -> int:
    big = tool(lambda query: f"{query}: " + "data point, " * 1500, name="fetch")
    replies = [f"ACTION: fetch[page {i}]" for i in range(9)] + ["FINAL: done"]
    limits = Limits(steps=10, observation_tokens=observation_tokens)
    agent = Agent(ScriptedModel(replies, name="gpt-4o-mini"), tools=[big], limits=limits)
    return agent.run("Read ten pages.").usage.prompt_tokens


def smolagents() -> list[int] | None:
    """The same episode through smolagents' ToolCallingAgent, in its own venv (message text only:
    the JSON tool schemas it also sends are not counted, so this understates it)."""
    python = os.environ.get("REACT_TEXT_SMOLAGENTS_PYTHON")
    if not python:
        return None
    script = Path(__file__).parent / "peers" / "smolagents_prompts.py"
    out = subprocess.run([python, str(script)], capture_output=True, text=True, check=True).stdout
    return [
        sum(count(text) + MESSAGE_OVERHEAD for text in json.loads(line)) + REPLY_PRIMING for line in out.splitlines()
    ]


def main() -> None:
    rows = {
        "bare loop": bare_loop(),
        "react-text few-shot": ours(),
        "react-text zero-shot": ours(example=None),
    }
    peer = smolagents()
    if peer is not None:
        rows["smolagents ToolCalling"] = peer
    print(f"{'prompt tokens per call':<24}" + "".join(f"{'call ' + str(i + 1):>9}" for i in range(4)) + f"{'total':>9}")
    for name, per_call in rows.items():
        print(f"{name:<24}" + "".join(f"{n:>9}" for n in per_call) + f"{sum(per_call):>9}")
    print()
    cut, uncut = long_episode(1000), long_episode(10**6)
    print(f"{'10 steps, 3k-token results':<32} {'prompt tokens':>14}")
    print(f"{'observations cut to 1,000':<32} {cut:>14,}")
    print(f"{'observations not cut':<32} {uncut:>14,}")
    print(f"saved {100 * (1 - cut / uncut):.0f}%")


if __name__ == "__main__":
    main()
