"""Issue 20, "Stateful tools are not repeats": a repeated call is answered from the first one only
for a tool known to be free of side effects; any other tool runs again. Under both drivers.

The oracle is the tool's own count of its calls (a Python list, an MCP server's counter), not the
engine's bookkeeping.
"""

from __future__ import annotations

import asyncio
import shlex
import sys
from pathlib import Path

import pytest
from conftest import Drive

from react_text import Agent, Prompting, ScriptedModel, Tool, tool
from react_text.prompting import render

pytest.importorskip("mcp", reason='needs pip install "react-text[mcp]"')

from react_text.tools.mcp import mcp_tools

COUNTER = (
    f"{shlex.quote(sys.executable)} {shlex.quote(str(Path(__file__).resolve().parent / 'mcp_servers' / 'counter.py'))}"
)


def observations(drive: Drive, agent: Agent) -> list[str | None]:
    return [step.observation for step in drive(agent, "count").steps]


def repeated(name: str, result: str, step: int = 1, input_: str = "") -> str:
    return render("corrections/repeated_action", tool=name, input=input_, step=step, result=result)


def told(name: str, result: str, times: int, input_: str = "") -> str:
    """A tool with side effects called again with the same input: it ran, and the model is told (issue 33)."""
    return render("corrections/repeated_call", result=result, tool=name, input=input_, times=times)


def test_an_mcp_counter_bumped_twice_counts_twice(drive: Drive) -> None:
    with mcp_tools(COUNTER) as tools:
        agent = Agent(ScriptedModel(["ACTION: bump[]", "ACTION: bump[]", "ACTION: bump[]", "FINAL: 3"]), tools=tools)
        assert observations(drive, agent)[:3] == ["1", told("bump", "2", 2), told("bump", "3", 3)]


def test_mcp_tools_that_say_they_are_read_only_or_idempotent_are_not_called_again(drive: Drive) -> None:
    with mcp_tools(COUNTER) as tools:
        script = [
            "ACTION: bump[]",
            "ACTION: peek[]",
            "ACTION: peek[]",
            "ACTION: reset[]",
            "ACTION: reset[]",
            "FINAL: ok",
        ]
        seen = observations(drive, Agent(ScriptedModel(script), tools=tools))
        assert seen[:5] == ["1", "1", repeated("peek", "1", 2), "reset", repeated("reset", "reset", 4)]
        by_name = {t.name: (t.pure, t.idempotent) for t in tools}
        assert by_name == {"bump": (False, False), "peek": (True, False), "reset": (False, True)}


def test_an_idempotent_mcp_tool_changes_what_a_read_only_one_reads(drive: Drive) -> None:
    """MCP's idempotentHint says a repeat has no further effect, not that the call has none: a
    `peek` after a `reset` runs again, and a `reset` is answered from the last one only while no
    other tool with side effects has run since (a read-only `peek` is none)."""
    with mcp_tools(COUNTER) as tools:
        script = ["bump", "peek", "reset", "peek", "reset", "bump", "reset", "peek"]
        seen = observations(
            drive, Agent(ScriptedModel([f"ACTION: {a}[]" for a in script] + ["FINAL: ok"]), tools=tools)
        )
        assert seen[:8] == ["1", "1", "reset", "0", repeated("reset", "reset", 3), "1", "reset", "0"]


def test_an_idempotent_python_tool_is_answered_from_its_last_call_only_while_nothing_else_changed(
    drive: Drive,
) -> None:
    store = {"x": 0}
    ran: list[str] = []

    @tool(idempotent=True)
    def set_x(value: int) -> str:
        """Set x."""
        ran.append(f"set {value}")
        store["x"] = value
        return f"x is {value}"

    @tool(pure=True)
    def get_x() -> str:
        """Read x."""
        ran.append("get")
        return str(store["x"])

    script = ["set_x[5]", "get_x[]", "set_x[5]", "get_x[]", "set_x[6]", "get_x[]", "set_x[5]", "get_x[]"]
    seen = observations(
        drive, Agent(ScriptedModel([f"ACTION: {a}" for a in script] + ["FINAL: ok"]), tools=[set_x, get_x])
    )
    assert ran == ["set 5", "get", "set 6", "get", "set 5", "get"]
    assert seen[:8] == [
        "x is 5",
        "5",
        repeated("set_x", "x is 5", 1, "5"),
        repeated("get_x", "5", 2),
        "x is 6",
        "6",
        "x is 5",
        "5",
    ]
    with pytest.raises(TypeError, match="idempotent must be True or False"):
        Tool("f", "X.", get_x.fn, idempotent=1)  # type: ignore[arg-type]


def test_a_python_tool_runs_again_unless_marked_pure(drive: Drive) -> None:
    ran: list[str] = []

    def note(text: str) -> str:
        """Write a note down."""
        ran.append(text)
        return f"noted {len(ran)}"

    @tool(pure=True)
    def shout(text: str) -> str:
        """The text in capitals."""
        ran.append(f"shout {text}")
        return text.upper()

    script = ["ACTION: note[milk]", "ACTION: note[milk]", "ACTION: shout[hi]", "ACTION: shout[hi]", "FINAL: ok"]
    seen = observations(drive, Agent(ScriptedModel(script), tools=[note, shout]))
    assert ran == ["milk", "milk", "shout hi"]
    assert seen[:4] == ["noted 1", told("note", "noted 2", 2, "milk"), "HI", repeated("shout", "HI", 3, "hi")]


def test_a_pure_tool_runs_again_once_a_tool_with_side_effects_has_run(drive: Drive) -> None:
    """A repeat is answered from the earlier result only while no tool with side effects has run
    since: a pure reader of a store sees what a writer put there, one step or one reply later."""
    store = {"n": 0}

    def bump() -> str:
        """Add one to the count."""
        store["n"] += 1
        return str(store["n"])

    @tool(pure=True)
    def peek() -> str:
        """The count."""
        return str(store["n"])

    script = ["ACTION: peek[]", "ACTION: bump[]", "ACTION: peek[]", "ACTION: peek[]", "FINAL: ok"]
    seen = observations(drive, Agent(ScriptedModel(script), tools=[bump, peek]))
    assert seen[:4] == ["0", "1", "1", repeated("peek", "1", 3)]
    parallel = ["ACTION: bump[]\nACTION: peek[]", "ACTION: peek[]", "FINAL: ok"]
    store["n"] = 0
    seen = observations(drive, Agent(ScriptedModel(parallel), tools=[bump, peek], prompting=Prompting(parallel=True)))
    assert seen[1] == "1", "a peek run at once with a bump is not an answer for after it"


def test_pure_is_a_tool_field_and_the_built_in_tools_are_pure(tmp_path: Path) -> None:
    from react_text.evaluation import config

    def f(x: str) -> str:
        """X."""
        return x

    assert Tool("f", "X.", f).pure is False
    assert Tool("f", "X.", f, pure=True).pure is True
    assert tool(f, pure=True).pure is True
    with pytest.raises(TypeError, match="pure must be True or False"):
        Tool("f", "X.", f, pure="yes")  # type: ignore[arg-type]
    # the two say opposite things of a tool's side effects (found by an outside review, attack5)
    with pytest.raises(ValueError, match=r"pure=True .* idempotent=True"):
        tool(f, pure=True, idempotent=True)
    built_in = config.tools(root=str(tmp_path))
    assert {t.name: t.pure for t in built_in} == {"calculator": True, "python_doc": True, "search": True, "read": True}


def test_a_repeat_of_a_built_in_is_still_answered_from_the_first_call(drive: Drive) -> None:
    from react_text.tools.toolbox import calculator

    script = ["ACTION: calculator[2 + 2]", "ACTION: calculator[2 + 2]", "FINAL: 4"]
    seen = observations(drive, Agent(ScriptedModel(script), tools=[calculator]))
    assert seen[:2] == ["4", repeated("calculator", "4", 1, "2 + 2")]


def test_an_async_run_bumps_twice_too() -> None:
    async def go() -> list[str | None]:
        async with mcp_tools(COUNTER) as tools:
            result = await Agent(ScriptedModel(["ACTION: bump[]", "ACTION: bump[]", "FINAL: 2"]), tools=tools).arun("c")
            return [s.observation for s in result.steps]

    assert asyncio.run(go())[:2] == ["1", told("bump", "2", 2)]
