"""A fuzzing campaign (hypothesis at scale) on parse, the stop guard and the calculator.

    python bench/fuzz.py [EXAMPLES]        default 100000 inputs per target
    python bench/fuzz.py --pumped          every pumped 100 KB shape of tests/test_pumping.py

Each target gets random text and protocol-shaped noise (labels, brackets, fences, <think>,
partial observations, registered tool names with spaces). It fails on any exception (the calculator may only refuse with
CalculatorError) and reports the slowest input, so a hang or a super-linear case shows up.
Prints one table.
"""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Callable
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from react_text.parser import parse
from react_text.parser.guard import cut, is_cut, split_reasoning
from react_text.tools.toolbox import CalculatorError, calculate

PIECES = [
    "THOUGHT:", "ACTION:", "FINAL:", "OBSERVATION:", "Obs", "Action Input:", "Final Answer:", "**", "###",
    "[", "]", "(", ")", "{", "}", "```", "\n", " ", '"', "'", "<think>", "</think>", "tool", "calculator",
    "9", "**", "^", "/", "-", "+", "*", ".", ",", "Observation 1:", "Finish[", "{\"action\": ", "思考：",
    "Tool Input:", "Search Tool", "Action:", "None", "answer[", "  ```json\n", "\"action_input\": ", "Observation：",
]  # fmt: skip
TOOLS = ("Search Tool", "answer", "get-weather", "加法")
noise = st.lists(st.sampled_from(PIECES) | st.text(max_size=5), max_size=60).map("".join)
texts = st.text(max_size=400) | noise


def campaign(
    name: str, target: Callable[[str], object], examples: int, allowed: tuple[type[BaseException], ...]
) -> str:
    tried = 0
    slowest = (0.0, "")

    @settings(max_examples=examples, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(texts)
    def run(text: str) -> None:
        nonlocal tried, slowest
        tried += 1
        started = time.perf_counter()
        with contextlib.suppress(allowed):
            target(text)
        took = time.perf_counter() - started
        if took > slowest[0]:
            slowest = (took, text)

    with contextlib.suppress(allowed):
        target("warm up")  # the first call loads templates; time what comes after
    started = time.perf_counter()
    run()
    total = time.perf_counter() - started
    raised = 0  # reaching this line means no input raised
    return f"{name:<12} {tried:>9} {raised:>7} {1e3 * slowest[0]:>10.2f} {total:>8.1f}s  slowest: {slowest[1][:40]!r}"


def _cpu(read: Callable[[str], object], text: str) -> float:
    started = time.process_time()
    read(text)
    return time.process_time() - started


def pumped() -> None:
    """Every frame x run x end of tests/test_pumping.py at 100 KB (the suite reads one end each), in
    CPU time (a new worst is measured twice and the lesser kept: other processes do not count)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
    from test_pumping import BIG, ENDS, FRAMES, RUNS, TOOLS, _reply

    readers = {
        "parse": parse,
        "parse tools": lambda t: parse(t, tools=TOOLS),
        "guard.cut": cut,
        "guard.is_cut": is_cut,
    }
    print(f"{'target':<12} {'inputs':>9} {'worst ms':>10}  slowest shape (frame, run, end)")
    for name, read in readers.items():
        worst = (0.0, ("", "", ""))
        for frame in FRAMES:
            for run in RUNS:
                for end in ENDS:
                    text = _reply(frame, run, end, BIG)
                    took = _cpu(read, text)
                    if took > worst[0]:
                        took = min(took, _cpu(read, text))  # a busy moment, or the shape?
                    worst = max(worst, (took, (frame, run, end)))
        total = len(FRAMES) * len(RUNS) * len(ENDS)
        print(f"{name:<12} {total:>9} {1e3 * worst[0]:>10.2f}  {worst[1]!r}")


def main() -> None:
    if sys.argv[1:] == ["--pumped"]:
        pumped()
        return
    examples = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    print(f"{'target':<12} {'inputs':>9} {'raised':>7} {'worst ms':>10} {'wall':>9}")
    print(campaign("parse", parse, examples, ()))
    print(campaign("parse strict", lambda t: parse(t, strict=True), examples, ()))
    print(campaign("parse tools", lambda t: parse(t, tools=TOOLS), examples, ()))
    print(campaign("guard.cut", cut, examples, ()))
    print(campaign("guard.is_cut", lambda t: is_cut(t, len(t) // 2), examples, ()))
    print(campaign("reasoning", split_reasoning, examples, ()))
    print(campaign("calculator", calculate, examples, (CalculatorError,)))


if __name__ == "__main__":
    main()
