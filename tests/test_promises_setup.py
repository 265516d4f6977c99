"""Issue 20, "set-up checked when made": a worked example given as text works whatever its length,
a template name that does not exist is refused when Prompting is made, naming the option, and no
set-up mistake reaches a command-line user as a traceback (two MCP servers with one tool name)."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from react_text import Agent, Prompting, RunResult, ScriptedModel

Driver = Callable[[Agent, str], RunResult]
ONE_LINE = "QUESTION: What is 2 + 2? THOUGHT: I add. FINAL: 4"


def lookup(item: str) -> str:
    """Return the price of one item."""
    return "12"


def test_a_one_line_example_is_the_examples_text(driver: Driver) -> None:
    """Issue 20: a one-line text was taken for a template name: FileNotFoundError at run time."""
    model = ScriptedModel(["THOUGHT: easy.\nFINAL: 4"])
    result = driver(Agent(model, tools=[lookup], prompting=Prompting(example=ONE_LINE)), "What is 2 + 2?")
    assert (result.stop_reason, result.answer) == ("final", "4")
    assert ONE_LINE in model.calls[0].prompt[0].content  # type: ignore[union-attr]


@pytest.mark.parametrize(
    "name", ["calculater", "examples/calculater", "generic.txt", "examples/", "corrections/declined"]
)
def test_a_template_name_that_does_not_exist_is_refused_when_made(name: str) -> None:
    """Issue 20: a misspelled template name was accepted, and failed at run time."""
    with pytest.raises(ValueError, match=r"Prompting\.example") as refused:
        Prompting(example=name)
    assert "calculator" in str(refused.value)  # it says which names there are


@pytest.mark.parametrize("name", ["calculator", "examples/calculator"])
def test_a_template_name_gives_that_example(name: str) -> None:
    agent = Agent(ScriptedModel([]), tools=[lookup], prompting=Prompting(example=name))
    assert "calculator[" in agent.instructions()


@pytest.mark.parametrize("value", ["", b"calculator", 3])
def test_an_example_that_is_neither_is_refused(value: object) -> None:
    with pytest.raises((ValueError, TypeError), match=r"Prompting\.example"):
        Prompting(example=value)  # type: ignore[arg-type]


DEMO = Path(__file__).resolve().parent / "mcp_servers" / "demo.py"


def test_two_mcp_servers_with_one_tool_name_is_one_line_and_exit_2(tmp_path: Path) -> None:
    """Issue 20: the duplicate name raised ValueError inside mcp_tools().__enter__, outside the
    command line's set-up handling: a traceback."""
    pytest.importorskip("mcp")
    script = tmp_path / "replies.txt"
    script.write_text("FINAL: 1\n", encoding="utf-8")
    server = f"{shlex.quote(sys.executable)} {shlex.quote(str(DEMO))}"
    done = subprocess.run(
        [sys.executable, "-m", "react_text.cli", "run", "--script", str(script), "--mcp", server, "--mcp", server, "q"],
        capture_output=True, text=True, timeout=120, check=False, cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)},
    )  # fmt: skip
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert done.stderr.startswith("react-text: ") and "two MCP servers" in done.stderr, done.stderr
