"""Attacks on "Tools from MCP servers", with a server of our own (servers/attack_server.py).

README: "One session per server for the whole block: a stateful server ... keeps its state from
call to call, and from run to run inside the block. Every session is closed when the block ends,
raises or is interrupted, with no server process left behind"; "Each MCP tool is a tool of the
engine under its exact name (`get-weather`, `files.read`)"; "an `isError` result is a tool error
the model reads"; "A server that crashes mid-run is an error observation, never a hang"; "a tool
whose annotations say `destructiveHint` (and not `readOnlyHint`) runs only when approved";
"a server started as a command gets only the SDK's default environment (`HOME`, `PATH`, ...) plus
`env={...}`".
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from _support import DRIVERS

from react_text import Agent, Limits, RunResult, ScriptedModel
from react_text.tools.mcp import mcp_tools

SERVER = f"{sys.executable} {Path(__file__).parent / 'servers' / 'attack_server.py'}"


def run_with_server(driver: str, replies: list[str], **agent: object) -> tuple[RunResult, RunResult | None]:
    """Two runs in one block (the second with the same script), under the driver."""

    def agent_for(tools: object) -> Agent:
        return Agent(ScriptedModel(list(replies)), tools=tools, limits=Limits(steps=5, tool_seconds=10), **agent)  # type: ignore[arg-type]

    if driver == "sync":
        with mcp_tools(SERVER) as tools:
            return agent_for(tools).run("Go."), agent_for(tools).run("Go.")

    async def main() -> tuple[RunResult, RunResult]:
        async with mcp_tools(SERVER) as tools:
            return await agent_for(tools).arun("Go."), await agent_for(tools).arun("Go.")

    return asyncio.run(main())


def server_processes() -> list[str]:
    out = subprocess.run(["ps", "-eo", "pid,args"], capture_output=True, text=True).stdout
    return [line for line in out.splitlines() if "attack_server.py" in line and "ps -eo" not in line]


@pytest.mark.parametrize("driver", list(DRIVERS))
def test_names_state_errors_and_no_stray_process(driver: str) -> None:
    """README: exact names; one session for the whole block, from run to run; isError is a tool
    error; no server process left behind."""
    replies = ["ACTION: get-weather[Oslo, 3]", "ACTION: files.count[]", "ACTION: boom[x]", "FINAL: ok"]
    first, second = run_with_server(driver, replies)
    assert first.steps[0].observation == "Oslo: sunny x3"
    assert first.steps[1].observation == "1"
    assert second is not None and second.steps[1].observation == "2", "state did not carry over inside the block"
    assert "The tool boom failed with ToolError" in (first.steps[2].observation or "")
    time.sleep(0.5)
    assert not server_processes()


@pytest.mark.parametrize("driver", list(DRIVERS))
def test_a_destructive_tool_needs_approval(driver: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """README: "a tool whose annotations say `destructiveHint` (and not `readOnlyHint`) runs only when
    approved"."""
    log = Path(tempfile.gettempdir()) / "react-text-attack-wiped.log"
    log.unlink(missing_ok=True)
    first, _ = run_with_server(driver, ["ACTION: wipe[/etc]", "FINAL: no"])
    assert not log.exists() and first.answer == "no"


@pytest.mark.parametrize("driver", list(DRIVERS))
def test_the_server_sees_only_the_default_environment(driver: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """README: "a server started as a command gets only the SDK's default environment (`HOME`,
    `PATH`, ...) plus `env={...}`"."""
    monkeypatch.setenv("ATTACK_SECRET_TOKEN", "s3cr3t")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-attackattackattackattack")
    first, _ = run_with_server(driver, ["ACTION: leak[x]", "FINAL: ok"])
    names = (first.steps[0].observation or "").split()
    assert "PATH" in names
    assert "ATTACK_SECRET_TOKEN" not in names and "OPENAI_API_KEY" not in names


@pytest.mark.parametrize("driver", list(DRIVERS))
def test_a_server_that_crashes_mid_run_is_an_error_observation(driver: str) -> None:
    """README: "A server that crashes mid-run is an error observation, never a hang"."""
    started = time.monotonic()
    replies = ["ACTION: get-weather[Oslo]", "ACTION: die[x]", "ACTION: get-weather[Rome]", "FINAL: ok"]
    if driver == "sync":
        with mcp_tools(SERVER) as tools:
            result = Agent(ScriptedModel(replies), tools=tools, limits=Limits(steps=5, tool_seconds=10)).run("Go.")
    else:

        async def main() -> RunResult:
            async with mcp_tools(SERVER) as tools:
                return await Agent(ScriptedModel(replies), tools=tools, limits=Limits(steps=5, tool_seconds=10)).arun(
                    "Go."
                )

        result = asyncio.run(main())
    assert time.monotonic() - started < 30
    assert result.answer == "ok", (result.stop_reason, result.error)
    assert result.steps[1].observation and result.steps[2].observation
    time.sleep(0.5)
    assert not server_processes()
