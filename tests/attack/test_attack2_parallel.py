"""attack2: several actions in one step (Prompting(parallel=True), --parallel), and their traces."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from _attack2_fake import drive

from react_text import Agent, Limits, Prompting, ScriptedModel, tool

DRIVERS = ["sync", "async"]
ran: list[str] = []


def echo(x: str) -> str:
    """Echo the text."""
    ran.append(x)
    return f"<{x}>"


FOUR = "ACTION: echo[a]\nACTION: echo[b]\nACTION: echo[c]\nACTION: echo[d]"


# guarantees.md said "no more than `steps` tools run"; with parallel actions Limits(steps=2) ran 8
# tools. The intended bound (limits.md, Limits.actions: the most actions of one reply that run) is
# steps x actions, and the guarantee now says so: it holds, and it is reached, not exceeded.
@pytest.mark.parametrize("driver", DRIVERS)
def test_no_more_than_steps_tools_run_with_parallel_actions(driver: str) -> None:
    ran.clear()
    model = ScriptedModel([FOUR, FOUR, FOUR, "FINAL: x"])
    limits = Limits(steps=2, actions=3)
    agent = Agent(model, tools=[echo], prompting=Prompting(parallel=True), limits=limits)
    result = drive(agent, "Echo.", driver)
    assert result.tool_calls == len(ran) == limits.steps * limits.actions == 6


# troubleshooting.md, corrections/too_many_actions.txt: "You wrote more than $most ACTION lines in
# one reply; only the first $most ran, not $skipped or any after it." and "Write at most $most
# ACTION lines in a reply."; notebook 7: "each observation names the call it answers, in the order
# the calls were written".
@pytest.mark.parametrize("driver", DRIVERS)
def test_actions_past_the_limit_are_not_run_and_the_model_is_told(driver: str) -> None:
    ran.clear()
    model = ScriptedModel([FOUR, "FINAL: x"])
    agent = Agent(model, tools=[echo], prompting=Prompting(parallel=True), limits=Limits(actions=2))
    result = drive(agent, "Echo.", driver)
    assert sorted(ran) == ["a", "b"] and result.tool_calls == 2
    fed = model.calls[1].prompt[-1].content
    assert fed.startswith("OBSERVATION (echo[a]): <a>\nOBSERVATION (echo[b]): <b>")
    assert "You wrote more than 2 ACTION lines in one reply; only the first 2 ran, not echo[c] or any after it." in fed
    assert "Write at most 2 ACTION lines in a reply." in fed


# binder.md: "A tool marked free of side effects, tool(fn, pure=True), is answered from its earlier
# result when the model repeats the exact same call; every other tool runs each time".
@pytest.mark.parametrize("driver", DRIVERS)
@pytest.mark.parametrize("pure", [True, False])
def test_a_call_repeated_in_one_reply_runs_again_only_if_impure(pure: bool, driver: str) -> None:
    ran.clear()
    model = ScriptedModel(["ACTION: echo[a]\nACTION: echo[a]", "FINAL: x"])
    agent = Agent(model, tools=[tool(echo, pure=pure)], prompting=Prompting(parallel=True))
    drive(agent, "Echo.", driver)
    assert ran == (["a"] if pure else ["a", "a"])


# loop.md: "every behaviour test of the loop runs under both" drivers; notebook 7: "a failing call
# becomes its observation and the others keep their results".
def test_a_parallel_step_with_a_failing_call_is_the_same_under_both_drivers() -> None:
    def boom(x: str) -> str:
        """Fail."""
        raise KeyError(x)

    replies = ["ACTION: echo[a]\nACTION: boom[b]\nACTION: nope[c]\nACTION: echo[d]", "FINAL: x"]
    outs = []
    for driver in DRIVERS:
        ran.clear()
        result = drive(
            Agent(ScriptedModel(replies), tools=[echo, boom], prompting=Prompting(parallel=True)), "Go.", driver
        )
        outs.append((result.steps[0].observations, result.answer, result.tool_calls))
    assert outs[0] == outs[1]
    observations = outs[0][0]
    assert observations[0] == "<a>" and observations[3] == "<d>"
    assert observations[1].startswith("The tool boom failed with KeyError")
    assert observations[2].startswith('There is no tool named "nope".')


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "react_text.cli", *args], capture_output=True, text=True, cwd=cwd, timeout=120
    )


# guarantees.md: "a trace replays through `run --script` to the same steps and answer, no flag
# repeated"; traces.md: "`react-text replay FILE` shows the run again as it was shown live". A run
# with --parallel writes a trace its own replay and run --script refuse:
# "run.jsonl:4: not a valid react-text trace: step.parsed.kind must be one of action, final, error,
# not the text 'actions'".
def test_a_trace_of_a_parallel_run_replays_to_the_same_steps(tmp_path: Path) -> None:
    (tmp_path / "mytools.py").write_text(
        'def shout(text: str) -> str:\n    """Say it louder."""\n    return text.upper() + "!"\n'
    )
    (tmp_path / "r.txt").write_text(
        "THOUGHT: both\nACTION: shout[a]\nACTION: shout[b]\nACTION: shout[c]\n---\nFINAL: A! B!\n"
    )
    live = _cli(
        "run",
        "--tools",
        "./mytools.py",
        "--parallel",
        "--max-actions",
        "2",
        "--script",
        "r.txt",
        "--trace",
        "run.jsonl",
        "--json",
        "Shout.",
        cwd=tmp_path,
    )
    assert live.returncode == 0, live.stderr
    replay = _cli("replay", "run.jsonl", cwd=tmp_path)
    assert replay.returncode == 0, replay.stderr
    again = _cli("run", "--script", "run.jsonl", "--json", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    before, after = json.loads(live.stdout), json.loads(again.stdout)
    assert after["answer"] == before["answer"] == "A! B!"
    assert [s["observations"] for s in after["steps"]] == [s["observations"] for s in before["steps"]]
