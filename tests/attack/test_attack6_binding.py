"""attack6: the parser and the binder where an input holds a closing bracket inside quotes.

docs/concepts/binder.md:15-16 and :117: `search[{"query": "cats", "limit": 3}]` binds from the JSON
object, and "a quoted value is one value, commas and all"; docs/concepts/parser.md:25 reads
"balanced brackets ... fenced or quoted inputs", and :46 "a tool it recognises but whose arguments
it cannot read is a format error, never a call with fewer arguments". So a tool is called with
what the model wrote, or not at all: never with a value cut at a `]` inside a string.
"""

from __future__ import annotations

import pytest
from _attack6_fake import DRIVERS, drive

from react_text import Agent, Prompting, ScriptedModel

CASES = {
    "json-object": ('ACTION: write[{"path": "a.txt", "content": "x]y"}]', ("a.txt", "x]y")),
    "json-array": ('ACTION: write[["a.txt", "x]y"]]', ("a.txt", "x]y")),
    "quoted-positional": ('ACTION: write["a.txt", "x]y"]', ("a.txt", "x]y")),
    "quoted-keyword": ('ACTION: write[path="a.txt", content="x]y"]', ("a.txt", "x]y")),
    "one-parameter": ('ACTION: lookup["a]b"]', ("a]b",)),
}


def _agent(reply: str, calls: list[tuple[str, ...]], parallel: bool) -> Agent:
    def write(path: str, content: str) -> str:
        """Write a file."""
        calls.append((path, content))
        return "written"

    def lookup(item: str) -> str:
        """Look an item up."""
        calls.append((item,))
        return "found"

    model = ScriptedModel([reply, "FINAL: done", "FINAL: done"])
    return Agent(model, tools=[write, lookup], prompting=Prompting(parallel=parallel))


@pytest.mark.parametrize("parallel", [False, True], ids=["one-action", "parallel"])
@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("driver", DRIVERS)
def test_a_bracket_inside_a_quoted_input_never_reaches_the_tool_cut(case: str, parallel: bool, driver: str) -> None:
    reply, written = CASES[case]
    calls: list[tuple[str, ...]] = []
    result = drive(_agent(reply, calls, parallel), "Write it.", driver)
    assert result.stop_reason == "final"
    # called with exactly what was written, or refused (not run): never with part of a string
    assert calls in ([written], []), calls
