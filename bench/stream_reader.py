"""The streaming reader's cost: CPU µs per delta (a token's text) and per reply, beside reading the
reply once whole, for replies of 200 to 16,000 characters fed a token (about 4 characters) at a time.

    python bench/stream_reader.py

The reader reads the reply so far again at each delta (the guard and the section labels, and the
parser once the cut is certain), so its cost per delta grows with the reply: the table says by how
much. Times are CPU time, the least of three runs.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from react_text.core.types import Reply  # noqa: E402
from react_text.parser.stream import Reader, StreamReader, read_reply  # noqa: E402

TOKEN = 4  # characters a delta


def reply(size: int) -> str:
    words = [
        "the",
        "sum",
        "of",
        "two",
        "numbers",
        "is",
        "what",
        "the",
        "user",
        "wants",
        "so",
        "I",
        "will",
        "add",
        "them",
        "with",
        "the",
        "tool",
    ]
    thought, i = [], 0
    while sum(len(w) + 1 for w in thought) < size:
        thought.append(words[i % len(words)])
        i += 1
        if i % 17 == 0:
            thought.append("\n")
    return f"<think>checking</think>\nTHOUGHT: {' '.join(thought)}\nACTION: add[2, 3]\nOBSERVATION: 5"


def streamed(text: str, reader: Reader) -> None:
    state = StreamReader(reader)
    for start in range(0, len(text), TOKEN):
        state, _ = state.feed(text[start : start + TOKEN])
    state.finish(Reply(text))


def cpu(run: object, *args: object) -> float:
    best = float("inf")
    for _ in range(3):
        start = time.process_time()
        run(*args)  # type: ignore[operator]
        best = min(best, time.process_time() - start)
    return best


def main() -> None:
    reader = Reader(tools=("add",))
    print(f"{'reply chars':>12} {'deltas':>7} {'µs/delta':>10} {'ms/reply':>10} {'whole read, ms':>15}")
    for size in (200, 1_000, 4_000, 16_000):
        text = reply(size)
        deltas = -(-len(text) // TOKEN)
        stream_s = cpu(streamed, text, reader)
        whole_s = cpu(read_reply, text, None, reader)
        print(
            f"{len(text):>12} {deltas:>7} {stream_s / deltas * 1e6:>10.1f} {stream_s * 1e3:>10.2f} {whole_s * 1e3:>15.3f}"
        )


if __name__ == "__main__":
    main()
