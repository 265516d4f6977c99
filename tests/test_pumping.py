"""Every regular expression in the package, pumped from its own structure, costs linear time.

The patterns are found by walking the package's modules (tests/pumping.py: every compiled pattern a
module holds, in tuples and dicts too), and an AST scan makes sure none is used inline, so a new
pattern cannot escape these tests. Each repeated part, and each pair of adjacent optional or
repeated parts that can take the same character, is pumped to 100 KB after the text that leads the
match there, with and without a suffix that makes the match fail. A pattern is timed as the package
uses it: with `match` if it is only ever matched at a position the package chose, else with `search`
(which tries every position). Each input must finish within a generous bound, and ten times the
input may cost at most about ten times the time: a quadratic costs a hundred.
"""

from __future__ import annotations

import importlib
import pkgutil
import time
from pathlib import Path
from typing import Any

import pytest
from pumping import FAIL, cases, inline_patterns, matched_only, patterns_of, tree

import react_text
from react_text import Agent
from react_text.core.types import Reply, Request
from react_text.parser import guard, parse

ROOT = Path(react_text.__file__).parent
BIG = 100_000
SMALL = 10_000
BOUND = 1.0  # seconds for one 100 KB input: generous; a quadratic at 100 KB takes minutes
RATIO = 30  # 10x the input: linear costs ~10x, quadratic ~100x


def _modules() -> list[Any]:
    names = [m.name for m in pkgutil.walk_packages([str(ROOT)], "react_text.")]
    found = []
    for name in ["react_text", *names]:
        try:
            found.append(importlib.import_module(name))
        except ImportError:  # an optional extra that is not installed (its patterns are found when it is)
            continue
    return found


PATTERNS = sorted({name: p for m in _modules() for name, p in patterns_of(m)}.items())
MATCHED = matched_only(ROOT)


def _method(name: str, pattern: Any) -> Any:
    owner = name.split("[", 1)[0]
    return pattern.match if owner in MATCHED else pattern.search


def _cost(run: Any, text: str, repeats: int = 2) -> float:
    """The least CPU time of `repeats` runs (CPU, not wall: other processes do not count)."""
    best = float("inf")
    for _ in range(repeats):
        start = time.process_time()
        run(text)
        best = min(best, time.process_time() - start)
    return best


def test_patterns_are_found_and_none_is_used_inline() -> None:
    assert len(PATTERNS) >= 30, [n for n, _ in PATTERNS]
    assert inline_patterns(ROOT) == []


def _linear(run: Any, build: Any) -> str | None:
    """None if `run` over build(n) grows linearly up to 100 KB; else what was measured.

    The size grows tenfold at a time from 100 characters, and a step that costs more than RATIO
    times the last fails at once: a quadratic shows itself long before 100 KB, where it would take
    minutes (a regular expression cannot be interrupted while it matches).
    """
    last = 0.0
    for size in (100, 1_000, SMALL, BIG):
        cost = _cost(run, build(size))
        if cost > BOUND or cost > RATIO * max(last, 2e-4):
            again = _cost(run, build(size), 3)  # a busy machine, or the pattern?
            if again > BOUND or again > RATIO * max(last, 2e-4):
                return f"{last * 1e3:.2f} ms at {size // 10} chars, {again * 1e3:.1f} ms at {size}"
            cost = again
        last = cost
    return None


@pytest.mark.parametrize(("name", "pattern"), PATTERNS, ids=[n for n, _ in PATTERNS])
def test_pumped_pattern_costs_linear_time(name: str, pattern: Any) -> None:
    run = _method(name, pattern)
    shapes = cases(pattern.pattern, pattern.flags)
    assert shapes or "MAXREPEAT" not in str(tree(pattern.pattern, pattern.flags)), f"{name}: no pumped shape"
    slow = [f"{case.name}: {found}" for case in shapes if (found := _linear(run, case.build)) is not None]
    assert slow == [], f"{name} ({'match' if run == pattern.match else 'search'}) {pattern.pattern!r}"


# --- whole replies --------------------------------------------------------------------------------
# The patterns are linear one by one; the parser must also call them a bounded number of times per
# advance. So whole replies: a frame that leads the parser into one of its paths, a 100 KB run of
# one shape, and an ending that completes or breaks what the frame began.

FRAMES = [
    "",
    "Action: x",
    "Action: x[",
    "ACTION: x[y",
    "ACTION: ",
    "Thought: ",
    "THOUGHT: a\nACTION: ",
    "Action: x\nAction Input: ",
    "Final Answer: ",
    "FINAL: ",
    "```",
    "Action: x[```",
    "{",
    '{"action": "x", "action_input": ',
    "Action: {",
    "<think>",
    "</think>",
    "Observation",
    "ACTION: x[y] Observ",
    "Tool: Search Tool Input: ",
    "Action: None\n",
    "Action: I will use calc",
    "x[",
    "**Action",
    "### ",
    "1. Action",
    "Action 2",
    "[ACTION] ",
    "Action: x (a tool)",
    "ACTION: web search",  # a name of words (without the registered names)
    "ACTION: 天气",  # a name of other letters
    "Action: Ask question to",
    # the families of issue 34: markup calls, code actions, unlabelled calls and call lists
    "<function=x>",
    "<function=x><parameter=",
    "<tool_call>",
    "[TOOL_CALLS]x",
    "<|python_tag|>x.call(",
    "<|tool_calls_section_begin|><|tool_call_begin|>",
    "<action><tool_name>",
    "Code:\n```py\n",
    "```py\n",
    "calc(",
    "[x(",
    "Finish[",
    ", x(",
    "Thought 1: a. Action 1",
]
RUNS = [
    " ",
    "\t",
    "\n",
    " \n",
    "\r\n",
    "*",
    "-",
    "#",
    "`",
    '"',
    ":",
    "：",
    "[",
    "]",
    "(",
    "{",
    "a",
    "a ",  # words: a name of at most five, then prose
    "天",
    "\u093f",  # a combining vowel sign, part of a name
    "1",
    "Action: ",
    "ACTION: x[",
    "Observation: ",
    "<think>",
    "FINAL: ",
    '{"a": ',
    "```\n",
    "Action Input: ",
]
# bench/fuzz.py --pumped reads every frame with every run and every end; the suite takes one end each.
ENDS = ["", "y", "]", FAIL, "\nAction Input: z", "]\nObservation: 1"]
TOOLS = ("Search Tool", "calc", "x")


def _reply(frame: str, run: str, end: str, size: int) -> str:
    return frame + run * (size // len(run)) + end


def _read(text: str) -> None:
    parse(text)
    parse(text, tools=TOOLS)
    guard.cut(text)
    guard.is_cut(text)


SHAPES = [(f, r, ENDS[(i + j) % len(ENDS)]) for i, f in enumerate(FRAMES) for j, r in enumerate(RUNS)]


@pytest.mark.parametrize("frame", FRAMES, ids=[repr(f) for f in FRAMES])
def test_pumped_replies_read_in_linear_time(frame: str) -> None:
    slow = []
    for f, run, end in SHAPES:
        if f == frame and (found := _linear(_read, lambda n, f=f, r=run, e=end: _reply(f, r, e, n))) is not None:
            slow.append(f"{run!r} then {end!r}: {found}")
    assert slow == []


class _Raw:
    """A model that returns one reply as it is, however long (a server that ignores max_tokens)."""

    api = "chat"
    name = "raw"
    accepts_grammar = False

    def __init__(self, text: str) -> None:
        self.text = text

    def generate(self, request: Request) -> Reply:
        return Reply(self.text)

    async def agenerate(self, request: Request) -> Reply:
        return Reply(self.text)


@pytest.mark.parametrize(
    ("frame", "run"),
    [
        ("Action: x", " "),
        ("Action: x\nAction Input: ", "\n"),
        ("ACTION: x[", "["),
        ("{", '{"a": '),
        ("Thought: ", "Action: "),
        ("<think>", "Observation: "),
        ("FINAL: ", "*"),
    ],
)
def test_a_pumped_reply_ends_the_run_quickly_through_the_agent(drive: Any, frame: str, run: str) -> None:
    def x(text: str) -> str:
        """Echo."""
        return text

    agent = Agent(_Raw(_reply(frame, run, FAIL, BIG)), tools=[x]).with_limits(steps=2, format_errors=2)
    start = time.process_time()
    result = drive(agent, "Go.")
    assert time.process_time() - start < 10 * BOUND
    assert result.stop_reason in ("final", "max_steps", "format_errors", "max_tokens")


# A quoted value inside a bracketed input (parser/quoted.py: a bracket inside quotes is the value's):
# many quotes, brackets inside and between them, each opening or closing a value or neither, must
# not make the reader scan back over what it has read.
QUOTED_FRAMES = ['ACTION: x["', 'ACTION: x[{"a": "', "ACTION: x[a='", "ACTION: x(", 'x["']
QUOTED_RUNS = ['", "', ' "x] ', '[", "', "']", '"a\\"]', '{"a": "]', '"\n', "\"'`"]


@pytest.mark.parametrize("frame", QUOTED_FRAMES, ids=[repr(f) for f in QUOTED_FRAMES])
def test_pumped_quoted_inputs_read_in_linear_time(frame: str) -> None:
    slow = []
    for i, run in enumerate(QUOTED_RUNS):
        end = ENDS[i % len(ENDS)]
        if (found := _linear(_read, lambda n, r=run, e=end: _reply(frame, r, e, n))) is not None:
            slow.append(f"{run!r} then {end!r}: {found}")
    assert slow == []
