"""Peers' text parsers timed on the texts bench/parser_speed.py gives them (run in a venv that has them).

    /tmp/peers-venv/bin/python bench/peers/parser_peers.py TEXTS.json

TEXTS.json holds {"sets": {name: [reply, ...]}, "shapes": {name: text}}. Prints one JSON object:
{peer: {"sets": {name: replies_a_second}, "shapes": {name: milliseconds}}}, for each peer that
imports: smolagents' text tool call (`get_tool_call_from_text`, what ToolCallingAgent uses when a
model writes its call as text) and LangChain's ReAct output parser (`ReActSingleInputOutputParser`,
what `create_react_agent` uses). A parser that refuses a reply raises; that counts as a reading.
"""

from __future__ import annotations

import contextlib
import json
import sys
import time
from collections.abc import Callable

Parse = Callable[[str], object]


def peers() -> dict[str, Parse]:
    found: dict[str, Parse] = {}
    try:
        from smolagents.models import get_tool_call_from_text

        found["smolagents"] = lambda text: get_tool_call_from_text(text, "name", "arguments")
    except ImportError:
        pass
    try:  # langchain 1.x moved the agents to langchain-classic
        from langchain_classic.agents.output_parsers import ReActSingleInputOutputParser
    except ImportError:
        try:
            from langchain.agents.output_parsers import ReActSingleInputOutputParser
        except ImportError:
            ReActSingleInputOutputParser = None
    if ReActSingleInputOutputParser is not None:
        found["LangChain ReAct"] = ReActSingleInputOutputParser().parse
    return found


def read(parse: Parse, text: str) -> None:
    with contextlib.suppress(Exception):  # a refusal is a reading; the time is what is measured
        parse(text)


def best(run: Callable[[], None], repeat: int) -> float:
    """The best of `repeat` timings (one only when it takes over a second: some shapes take many)."""
    times: list[float] = []
    while len(times) < repeat and not (times and times[-1] > 1.0):
        started = time.perf_counter()
        run()
        times.append(time.perf_counter() - started)
    return min(times)


def main(path: str) -> None:
    with open(path, encoding="utf-8") as handle:
        texts = json.load(handle)
    out: dict[str, dict[str, dict[str, float]]] = {}
    for name, parse in peers().items():
        sets = {}
        for label, replies in texts["sets"].items():
            rounds = max(1, 2000 // len(replies))
            took = best(
                lambda parse=parse, replies=replies, rounds=rounds: [read(parse, t) for t in replies * rounds], 5
            )
            sets[label] = len(replies) * rounds / took
        shapes = {
            label: 1e3 * best(lambda parse=parse, text=text: read(parse, text), 3)
            for label, text in texts["shapes"].items()
        }
        out[name] = {"sets": sets, "shapes": shapes}
    print(json.dumps(out))


if __name__ == "__main__":
    main(sys.argv[1])
