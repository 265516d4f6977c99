"""attack2: MCP tools (docs/how-to/mcp.md, docs/concepts/binder.md "Repeats"), both drivers."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest

from react_text import Agent, Limits, Prompting, ScriptedModel
from react_text.tools.mcp import mcp_tools

SERVER = f"{sys.executable} {Path(__file__).parent / 'servers2' / 'attack2_mcp.py'}"
DRIVERS = ["sync", "async"]
_REPEATED = (  # corrections/repeated_call.txt, spelled here apart from the file the engine reads
    "(You have called bump[] {times} times in a row, and it ran each time: it has side effects. Do not call it "
    "again unless you mean to: use what it said, try something else, or give the FINAL answer.)"
)


def _observations(replies: list[str], driver: str, **agent: Any) -> list[str | None]:
    if driver == "sync":
        with mcp_tools(SERVER) as tools:
            result = Agent(ScriptedModel(replies), tools=tools, limits=Limits(steps=12), **agent).run("Go.")
    else:

        async def main() -> Any:
            async with mcp_tools(SERVER) as tools:
                return await Agent(ScriptedModel(replies), tools=tools, limits=Limits(steps=12), **agent).arun("Go.")

        result = asyncio.run(main())
    return [step.observation for step in result.steps]


# mcp.md: "Each MCP tool is a tool of the engine under its exact name (`get-weather`,
# `files.read`) ... parameters from the input schema (required first, then optional with their
# defaults ...), bound like a Python function's"; binder.md "defaults are ... the MCP server's";
# "More values than parameters are refused, saying what the tool takes".
@pytest.mark.parametrize("driver", DRIVERS)
def test_mcp_names_defaults_and_refusals(driver: str) -> None:
    observations = _observations(
        [
            "ACTION: fs.add[2]",
            "ACTION: fs.add[a=2, b=3]",
            "ACTION: Wiki Search[cats]",
            "ACTION: fs.add[2, 3, 4]",
            "FINAL: x",
        ],
        driver,
    )
    assert observations[:3] == ["12", "5", "found cats"]
    assert observations[3] is not None
    assert observations[3].startswith("The tool fs.add was not run: ")
    assert observations[3].endswith("Its inputs: fs.add[a: int, b=10]")


# mcp.md: "One session per server for the whole block: a stateful server ... keeps its state from
# call to call"; binder.md: "every other tool runs each time it is called (a browser, a shell or a
# counter must)"; "Risky tools: a tool whose annotations say destructiveHint (and not
# readOnlyHint) runs only when approved".
@pytest.mark.parametrize("driver", DRIVERS)
def test_a_counter_counts_every_call_and_a_destructive_tool_needs_approval(driver: str) -> None:
    observations = _observations(
        ["ACTION: bump[]", "ACTION: bump[]", "ACTION: reset[]", "ACTION: safe-reset[]", "FINAL: x"], driver
    )
    # the second bump ran (the counter says 2), and the model is told it repeated a call with side
    # effects (guarantees.md: "a tool with side effects called again with the same input runs, and
    # the model is told it repeated itself")
    assert observations[0] == "1"
    assert observations[1] is not None and observations[1].splitlines() == ["2", _REPEATED.format(times=2)]
    assert observations[2] is not None and observations[2].startswith("The user declined to run reset[]")
    assert observations[3] == "2"


# guarantees.md: "a repeated call is answered from the first only for a tool free of side effects
# (... MCP tools saying readOnlyHint ...)"; tool(): "pure=True says the function has no side
# effects (the same input, the same result)"; mcp.md: a stateful server "keeps its state from call
# to call". A read-only tool is not a pure one: `peek` after a `bump` must see the bump. The engine
# answers the second peek from the first, so the model is told the counter is still 1.
@pytest.mark.parametrize("driver", DRIVERS)
def test_a_read_only_tool_sees_state_changed_by_another_tool(driver: str) -> None:
    observations = _observations(
        ["ACTION: bump[]", "ACTION: peek[]", "ACTION: bump[]", "ACTION: peek[]", "FINAL: x"], driver
    )
    assert observations == ["1", "1", "2", "2", None]


# The documented repeat rule where nothing changed in between holds: the second peek is answered
# from the first with the repeat note (troubleshooting: corrections/repeated_action.txt).
@pytest.mark.parametrize("driver", DRIVERS)
def test_a_read_only_tool_repeated_at_once_is_answered_from_the_first(driver: str) -> None:
    observations = _observations(["ACTION: bump[]", "ACTION: peek[]", "ACTION: peek[]", "FINAL: x"], driver)
    assert observations[:2] == ["1", "1"]
    assert observations[2] is not None and observations[2].startswith(
        "You already called peek[] in step 2. Its result was: 1"
    )


# notebook 7 / README: parallel actions "run at once, one labelled observation each"; with MCP the
# calls share one session, so two bumps count twice.
@pytest.mark.parametrize("driver", DRIVERS)
def test_parallel_mcp_calls_share_the_session(driver: str) -> None:
    observations = _observations(
        ["ACTION: bump[]\nACTION: bump[]", "ACTION: bump[]", "FINAL: x"], driver, prompting=Prompting(parallel=True)
    )
    assert observations[1] is not None and observations[1].splitlines() == ["3", _REPEATED.format(times=3)]
