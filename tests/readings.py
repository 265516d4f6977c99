"""The replies whose readings are frozen in tests/data/readings.json, and how a reading is written.

Recorded from main's parser before the fast paths of issue 34 (`python tests/corpus/record_readings.py`),
and asserted equal by tests/test_readings.py after any change that must not change what a reply
reads as. The replies: every case of the corpora in tests/data/*.jsonl (as sent, with its tools
and without any), the bench's common-case replies and worst-case shapes (small sizes), and 6,000
replies made from protocol-shaped pieces by a seeded generator (the shapes the fast paths read
and their near misses: decorated labels, think blocks, observations, fences, blobs, chatter).
"""

from __future__ import annotations

import hashlib
import json
import random
import sys
from collections.abc import Iterator
from pathlib import Path

from react_text.core.types import Action, Final, Parsed, ParseError
from react_text.evaluation.corpus import load

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "tests" / "data" / "readings.json"
GENERATED = 6000

_LEADS = ["", "", "", "\n", "  ", "<think>\nThe user wants x.\n</think>\n", "<think>Obs: 1</think>", "```\n",
          "```json\n", "Observation: 89\n", "\ufeff", "<think>a", "</think>", " \n\t", "Task: q\n"]  # fmt: skip
_THOUGHTS = ["THOUGHT:", "THOUGHT:", "Thought:", "Thought:", "**Thought:**", "thought:", "### Thought\n",
             "Thought 1:", "**Thought**:", "[THOUGHT]", "Thought：", "THOUGHT:\t", "> Thought:", "Pensamiento:"]  # fmt: skip
_WORDS = ["I need", "the price", "code", "Obs", "observation", ":", "[", "]", "(", ")", "{", "}", "`", "'", '"', "*",
          "_", "#", "<", ">", "\t", "  ", "é", "加", "FINAL", "Action", "node", " ", " ", "x", "234", ".", ",", "?",
          "Final Answer", "-", "|", "\\", "/", "~", "\xa0", "ACTION:", "AI", "answer", "lookup", "=", "```"]  # fmt: skip
_TOOLS = ["lookup", "lookup", "Lookup", "LOOKUP", "look", "web search", "fs.read", "Finish", "answer", "add",
          "final_answer", "none", "None", "_x", "l2", "天气"]  # fmt: skip
_ACTIONS = ["ACTION: {t}[{v}]", "ACTION: {t}[{v}]", "Action: {t}[{v}]", "**Action:** {t}[{v}]",
            "Action: {t}\nAction Input: {v}", "Action: {t}\nAction Input: {v}", "ACTION:{t}[{v}]",
            "Action 1: {t}[{v}]", "action: {t}({v})", "Action: {t}\n**Action Input:** {v}",
            "Action: `{t}`\nAction Input: {v}", "ACTION: {t} [{v}]", "ACTION: {t}[{v}", "Action: {t}\nAction Input:{v}",
            "ACTION: {t}[{v}] and more", "Action: {t}[{v}]\nAction Input: {v}", "{t}[{v}]"]  # fmt: skip
_FINALS = ["FINAL: {v}", "FINAL: {v}", "Final Answer: {v}", "Final Answer: {v}", "**Final Answer:** {v}",
           "FINAL ANSWER: {v}", "Final answer: {v}", "FINAL:{v}", "Answer: {v}", "**FINAL:** {v}"]  # fmt: skip
_TAILS = ["", "", "", "\n", "\n", " ", "\t\n", "\nOBSERVATION: 50", "\nObservation: 1\nThought: so\nFinal Answer: 2",
          "\n\nThe answer is 234.", "\n\nThe answer is 234 because 89 + 145 = 234.", "\n```", " Obs", "\nObserv",
          "\n\nchatter: x", "\nmore words", "\n\nRESULT: 4", "\n**Observation:** 3", " Observation: 5",
          "\nThought: again\nACTION: add[1, 2]", "\n</think>", "\n\n", "\nOBS"]  # fmt: skip
_NAMES = [(), (), ("lookup",), ("lookup", "add"), ("Lookup",), ("look",), ("web search",), ("lookup", "finish")]


def _words(rng: random.Random) -> str:
    return "".join(rng.choice(_WORDS) for _ in range(rng.randrange(0, 6)))


def generated(count: int = GENERATED) -> Iterator[tuple[str, tuple[str, ...]]]:
    rng = random.Random(34)
    for _ in range(count):
        shape = rng.randrange(10)
        value = _words(rng)
        if shape == 0:  # a JSON blob, fenced or bare
            blob = json.dumps({"action": rng.choice(_TOOLS), "action_input": value})
            body = rng.choice([blob, f"```json\n{blob}\n```", f"```\n{blob}\n```", f"Action:\n```json\n{blob}\n```"])
        else:
            lines = []
            if rng.random() < 0.8:
                lines.append(f"{rng.choice(_THOUGHTS)} {_words(rng)}")
            if rng.random() < 0.1:
                lines.append(f"{rng.choice(_THOUGHTS)} {_words(rng)}")
            template = rng.choice(_ACTIONS) if shape < 6 else rng.choice(_FINALS)
            lines.append(template.format(t=rng.choice(_TOOLS), v=value))
            body = rng.choice(["\n", "\n", "\n", "\n\n", " ", "\n  "]).join(lines)
        yield rng.choice(_LEADS) + body + rng.choice(_TAILS), rng.choice(_NAMES)


def replies() -> list[tuple[str, tuple[str, ...]]]:
    """Every reply of the fixture, with the tool names it is read with, in a fixed order."""
    found: list[tuple[str, tuple[str, ...]]] = []
    for corpus in sorted((ROOT / "tests" / "data").glob("*.jsonl")):
        for case in load(corpus):
            found.append((case.sent, case.tools))
            found.append((case.sent, ()))
            if case.text != case.sent:
                found.append((case.text, case.tools))
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        import parser_speed
    finally:
        sys.path.remove(str(ROOT / "bench"))
    for text in [*parser_speed.CANONICAL, *parser_speed.MIX]:
        found.append((text, ()))
        found.append((text, ("lookup", "add")))
    for make in parser_speed.SHAPES.values():
        for size in (200, 3000):
            found.append((make(size), ()))
    found.extend(generated())
    return found


def key(text: str, tools: tuple[str, ...]) -> str:
    return hashlib.sha256(json.dumps([text, list(tools)]).encode()).hexdigest()[:16]


def written(parsed: Parsed) -> list[object]:
    """A reading as the fixture holds it: every field."""
    if isinstance(parsed, Action):
        return ["action", parsed.tool, parsed.input, parsed.thought, parsed.discarded, parsed.closed]
    if isinstance(parsed, Final):
        return ["final", parsed.answer, parsed.thought, parsed.discarded]
    assert isinstance(parsed, ParseError)
    return ["error", parsed.reason, parsed.message, parsed.thought]


def digest(parsed: Parsed) -> str:
    return hashlib.sha256(json.dumps(written(parsed)).encode()).hexdigest()[:16]
