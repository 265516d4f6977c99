"""Parser speed: the common case and the worst case, beside the naive and strict parsers (and peers).

    python bench/parser_speed.py
    python bench/parser_speed.py --versus        only react-text against smolagents on the mix
    REACT_TEXT_PEERS_PYTHON=/tmp/peers-venv/bin/python python bench/parser_speed.py

The common case: replies a second on canonical replies (the form the prompt teaches), on a mix of
ten realistic replies (canonical, completion-mode, markdown, LangChain ReAct, a fenced JSON blob, a
made-up observation, a <think> block, chatter after the answer), and on the whole corpus
(tests/data/replies.jsonl, with each row's tool names). The worst case: milliseconds for one
100 KB reply of each adversarial shape issue 13 names, and a few more (target: at most 10 ms for
the tolerant parser), and the tolerant parser's growth exponent from 10 KB to 1 MB (the slope of log(time)
against log(size): 1.0 is linear). Times are CPU time, the least of several runs (best of 5 for the
worst cases), so other processes on a shared machine count for little.

First, with smolagents importable here (the `peers` extra), react-text's tolerant parser against
smolagents' text parser on the mix, in one process, interleaved round by round: the medians and
bests of 15 rounds, and their ratios from the same run.

Peers are not dependencies: with REACT_TEXT_PEERS_PYTHON naming the Python of a venv that has
smolagents and LangChain (`python -m venv /tmp/peers-venv && /tmp/peers-venv/bin/pip install
smolagents "langchain<0.4"`), bench/peers/parser_peers.py times their parsers on the same texts in
the same run; otherwise they are "skipped". Their parsers read fewer shapes (smolagents: a JSON
blob; LangChain: Action / Action Input), so on the mix they refuse some replies: that counts.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from react_text.evaluation.corpus import load  # noqa: E402
from react_text.parser import PARSERS  # noqa: E402

CANONICAL = [
    "THOUGHT: I need the price of a train ticket.\nACTION: lookup[train ticket]",
    "THOUGHT: Now the hotel.\nACTION: lookup[hotel night]\n",
    "THOUGHT: I add the two prices.\nACTION: add[89, 145]",
    "THOUGHT: I have both prices and their sum.\nFINAL: 234",
]
MIX = [
    "THOUGHT: I need the price of a train ticket.\nACTION: lookup[train ticket]\n",
    "THOUGHT: I have both prices.\nFINAL: 234",
    "THOUGHT: I need the hotel price.\nACTION: lookup[hotel night]",  # completion mode, cue put back
    "**Thought:** I need the price.\n**Action:** lookup[train ticket]",
    "Thought: I need to look this up.\nAction: lookup\nAction Input: train ticket",
    "Thought: I now know the final answer\nFinal Answer: 234",
    '```json\n{"action": "lookup", "action_input": "hotel night"}\n```',
    "THOUGHT: price\nACTION: lookup[train ticket]\nOBSERVATION: 50\nTHOUGHT: so\nFINAL: 50",
    "<think>\nThe user wants a total. First the train price.\n</think>\nTHOUGHT: I need the price.\n"
    "ACTION: lookup[train ticket]",
    "THOUGHT: done\nFINAL: 234\n\nThe answer is 234 because 89 + 145 = 234.",
]
SIZE = 100_000


def _junk(n: int) -> str:
    rng = random.Random(13)
    return "".join(rng.choice("abc xyz019[](){}:\n\"'`*#<>/ACTIONFINALObs") for _ in range(n))


SHAPES: dict[str, Callable[[int], str]] = {
    "ACTION: on one line": lambda n: "ACTION:" * (n // 7),
    "ACTION: on lines": lambda n: "ACTION:\n" * (n // 8),
    "Action: on one line": lambda n: "Action:" * (n // 7),
    "Action: on lines": lambda n: "Action:\n" * (n // 8),
    "spaces": lambda n: "THOUGHT: x" + " " * n,
    "newlines": lambda n: "THOUGHT: x" + "\n" * n,
    "whitespace mix": lambda n: "THOUGHT: x" + " \n\t" * (n // 3),
    "x[ on one line": lambda n: "x[" * (n // 2),
    "x[ on lines": lambda n: "x[\n" * (n // 3),
    "ACTION: x[ on one line": lambda n: "ACTION: x[" * (n // 10),
    "ACTION: x[ on lines": lambda n: "ACTION: x[\n" * (n // 11),
    "random junk": _junk,
    "ACTION: f[ + junk": lambda n: "ACTION: f[" + _junk(n),
    "Action Input: + junk": lambda n: "Action: f\nAction Input: " + _junk(n),
    "ACTION: + Observation": lambda n: "ACTION: " * (n // 8) + "\nObservation: 1",
    "{{{{": lambda n: "{" * n,
    "unclosed fences": lambda n: "ACTION: f[" + "```\n" * (n // 4),
    "Obs runs": lambda n: "Obs " * (n // 4),
    "Thought: on lines": lambda n: "Thought: x\n" * (n // 11),
    "labels in thinking": lambda n: "<think>Observation: x</think>" * (n // 29),
    # the pumped shapes of issue 19: each once cost time quadratic in its run (tests/test_pumping.py)
    "Action: x + spaces + y": lambda n: "Action: x" + " " * n + "y",
    "Action: x + tabs + y": lambda n: "Action: x" + "\t" * n + "y",
    "FINAL: + tabs + line": lambda n: "FINAL: " + "\t" * n + "\nAction Input: z",
    "THOUGHT: + tabs": lambda n: "THOUGHT:" + "\t" * n + "x",
    "JSON blob + tabs": lambda n: '{"action": "x", "action_input": 1}' + "\t" * n + "!",
    "fence of tildes": lambda n: "Action: x[" + "~" * n + "`]",
    "fence + tabs + ]": lambda n: "ACTION: x[```\n1\n```" + "\t" * n + "!",
    "ACTION: x[ + tabs, repeated": lambda n: "ACTION: x[\t" * (n // 12),
}


def best_of(fn: Callable[[], object], repeat: int = 5) -> float:
    """The least CPU time of `repeat` runs: on a shared machine, other processes do not count."""
    times = []
    for _ in range(repeat):
        started = time.process_time()
        fn()
        times.append(time.process_time() - started)
    return min(times)


def rate(parse: Callable[..., object], replies: list[tuple[str, tuple[str, ...]]]) -> float:
    rounds = max(1, 2000 // len(replies))
    batch = replies * rounds
    took = best_of(lambda: [parse(text, tools=tools) for text, tools in batch])
    return len(batch) / took


def _smolagents() -> Callable[[str], object] | None:
    """smolagents' text parser, when it imports here (the `peers` extra), with a refusal counted as a reading."""
    try:
        from smolagents.models import get_tool_call_from_text
    except ImportError:
        return None

    def read(text: str) -> object:
        with contextlib.suppress(ValueError):  # its refusal is a reading; the time is what is measured
            return get_tool_call_from_text(text, "name", "arguments")
        return None

    return read


def head_to_head(
    replies: list[str], contenders: dict[str, Callable[[str], object]], rounds: int = 15, size: int = 2000
) -> dict[str, list[float]]:
    """Replies a second of each contender on the same replies, interleaved: each round times every
    contender once on `size` replies (CPU time), in an order that turns each round, so a burst of
    load on a shared machine falls on all of them alike."""
    batch = (replies * (size // len(replies) + 1))[:size]
    names = list(contenders)
    rates: dict[str, list[float]] = {name: [] for name in names}
    for r in range(rounds):
        for name in names[r % len(names) :] + names[: r % len(names)]:
            read = contenders[name]
            started = time.process_time()
            for text in batch:
                read(text)
            rates[name].append(len(batch) / (time.process_time() - started))
    return rates


def peers(sets: dict[str, list[str]], shapes: dict[str, str]) -> dict[str, dict[str, dict[str, float]]] | None:
    python = os.environ.get("REACT_TEXT_PEERS_PYTHON")
    if not python:
        return None
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False, encoding="utf-8") as handle:
        json.dump({"sets": sets, "shapes": shapes}, handle)
    try:
        done = subprocess.run(
            [python, str(ROOT / "bench" / "peers" / "parser_peers.py"), handle.name],
            capture_output=True, text=True, timeout=600, check=True,
        )  # fmt: skip
    finally:
        os.unlink(handle.name)
    result: dict[str, dict[str, dict[str, float]]] = json.loads(done.stdout)
    return result


def versus() -> None:
    smolagents = _smolagents()
    if smolagents is None:
        print("react-text against smolagents: skipped (smolagents is not installed here: the `peers` extra)\n")
        return
    print("react-text against smolagents on the mix of 10 realistic replies, in one run")
    print("(15 interleaved rounds of 2,000 replies each; replies a second, CPU time)")
    rates = head_to_head(MIX, {"react-text": PARSERS["tolerant"], "smolagents": smolagents})
    print(f"{'parser':<18}{'median':>14}{'best':>14}")
    for name, got in rates.items():
        print(f"{name:<18}{statistics.median(got):>14,.0f}{max(got):>14,.0f}")
    ours, theirs = rates["react-text"], rates["smolagents"]
    print(
        f"react-text / smolagents: {statistics.median(ours) / statistics.median(theirs):.2f}x (medians), "
        f"{max(ours) / max(theirs):.2f}x (bests)\n"
    )


def main() -> None:
    versus()
    if "--versus" in sys.argv[1:]:
        return
    corpus = [(case.sent, case.tools) for case in load(ROOT / "tests" / "data" / "replies.jsonl")]
    sets = {
        "canonical": [(t, ()) for t in CANONICAL],
        "mix of 10": [(t, ()) for t in MIX],
        f"corpus ({len(corpus)})": corpus,
    }
    shapes = {name: make(SIZE) for name, make in SHAPES.items()}
    others = peers({k: [t for t, _ in v] for k, v in sets.items()}, shapes) or {}

    names = ["tolerant", "strict", "naive", *others]
    print("common case: replies a second (more is better)")
    print(f"{'parser':<18}" + "".join(f"{label:>16}" for label in sets))
    for name in names:
        if name in PARSERS:
            cells = [rate(PARSERS[name], replies) for replies in sets.values()]
        else:
            cells = [others[name]["sets"][label] for label in sets]
        print(f"{name:<18}" + "".join(f"{c:>16,.0f}" for c in cells))
    if not others:
        print("smolagents, LangChain: skipped (set REACT_TEXT_PEERS_PYTHON)")

    print(f"\nworst case: ms for one {SIZE // 1000} KB reply (tolerant target: at most 10)")
    print(f"{'shape':<24}" + "".join(f"{n[:14]:>15}" for n in names))
    for shape, text in shapes.items():
        cells = []
        for name in names:
            if name in PARSERS:
                cells.append(1e3 * best_of(lambda name=name, text=text: PARSERS[name](text)))
            else:
                cells.append(others[name]["shapes"][shape])
        print(f"{shape:<24}" + "".join(f"{c:>15.2f}" for c in cells))

    sizes = [10_000, 100_000, 1_000_000]
    print("\ngrowth of the tolerant parser, 10 KB to 1 MB (ms; exponent 1.0 is linear)")
    print(f"{'shape':<24}" + "".join(f"{s // 1000:>12} KB" for s in sizes) + f"{'exponent':>10}")
    for shape, make in SHAPES.items():
        texts = [make(size) for size in sizes]
        times = [best_of(lambda text=text: PARSERS["tolerant"](text), 3) for text in texts]
        slope = (math.log(times[-1]) - math.log(times[0])) / (math.log(sizes[-1]) - math.log(sizes[0]))
        print(f"{shape:<24}" + "".join(f"{1e3 * t:>15.2f}" for t in times) + f"{slope:>10.2f}")


if __name__ == "__main__":
    main()
