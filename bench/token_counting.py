"""Token counting: the incremental (History) against re-encoding the whole history, at 100 steps.

    python bench/token_counting.py

Each step appends an assistant reply and an observation; before each request the prompt size is
needed. Incremental: encode only the two new messages. Re-encode: encode every message again.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from react_text.core.types import Message
from react_text.tokens.history import History
from react_text.tokens.meter import counter

STEPS = 100


def history(steps: int) -> list[Message]:
    messages = [Message("system", "You answer step by step. " * 40), Message("user", "QUESTION: find it")]
    for i in range(steps):
        messages.append(Message("assistant", f"THOUGHT: step {i}, I look up item {i}.\nACTION: lookup[item {i}]"))
        messages.append(Message("user", f"OBSERVATION: item {i} costs {i * 7} euros and ships in {i % 5} days."))
    return messages


def main() -> None:
    count = counter("gpt-4o-mini")
    messages = history(STEPS)
    count("warm up")

    started = time.perf_counter()
    history_ = History(tuple(messages[:2]), count)
    for i in range(2, len(messages), 2):
        history_.add_reply(messages[i].content, i // 2)
        history_.add_observation(messages[i + 1].content.removeprefix("OBSERVATION: "), i // 2)
        history_.tokens  # noqa: B018 - what is read before each request
    incremental = time.perf_counter() - started

    started = time.perf_counter()
    for step in range(2, len(messages) + 1, 2):
        sum(count(m.content) for m in messages[:step])
    reencode = time.perf_counter() - started

    print(f"{'method':<22} {'total ms':>10} {'µs/step':>10}   ({STEPS} steps)")
    print(f"{'incremental (History)':<22} {1e3 * incremental:>10.2f} {1e6 * incremental / STEPS:>10.1f}")
    print(f"{'re-encode history':<22} {1e3 * reencode:>10.2f} {1e6 * reencode / STEPS:>10.1f}")
    print(f"ratio {reencode / incremental:.0f}x")


if __name__ == "__main__":
    main()
