"""attack36: streaming and durable runs, attacked through the public API only.

Promises read in docs/how-to/stream.md, docs/concepts/durable-runs.md, docs/reference/cli.md
(run --state/--ask-later, resume) and docs/guarantees.md. A test that passes is a regression test;
a defect is a strict xfail saying what the docs promise and what happens.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any, Literal

import _attack36_support as s
import pytest

from react_text import (
    ActionReady,
    Agent,
    ConfigError,
    Limits,
    ModelError,
    Observed,
    Prompting,
    Reply,
    Revision,
    RunEnd,
    ScriptedModel,
    StepEnd,
    TextDelta,
)
from react_text.core.model_info import ReplyDelta
from react_text.durable import Deny, Edit, dumps, loads

ROOT = Path(__file__).resolve().parents[2]
DRIVERS = ["sync", "async"]


def LATER(tool: Any, action: Any) -> Literal["later"]:
    return "later"


@pytest.fixture(autouse=True)
def _clear_ran() -> None:
    s.RAN.clear()


# --- streaming -----------------------------------------------------------------------------

FINAL = "THOUGHT: the tool says 5.\nFINAL: 5"
TRICKY = {
    "canonical": "THOUGHT: I add them.\nACTION: add[2, 3]\nOBSERVATION: 99",
    "titlecase": "THOUGHT: I add.\nACTION: add[2, 3]\nObservation: 99",
    "numbered": "THOUGHT: I add.\nACTION: add[2, 3]\nObservation 12: 99",
    "crlf": "THOUGHT: I add.\r\nACTION: add[2, 3]\r\nOBSERVATION: 99",
    "indented": "THOUGHT: I add.\nACTION: add[2, 3]\n  OBSERVATION: 99",
    "markdown": "**Thought:** I add.\n**Action:** add[2, 3]\n**Observation:** 99",
    "think": "<think>I plan. OBSERVATION: 99</think>\nTHOUGHT: go\nACTION: add[2, 3]\nOBSERVATION: 99",
    "lone_close": "I plan hard.</think>\nTHOUGHT: go\nACTION: add[2, 3]\nOBSERVATION: 99",
    "unicode": "THOUGHT: café 🎉 — ünïcødé 日本語\nACTION: add[2, 3]\nOBSERVATION: 99",
    "same_line": "THOUGHT: I add.\nACTION: add[2, 3] OBSERVATION: 99",
    "after_blank": "THOUGHT: I add.\nACTION: add[2, 3]\n\nOBSERVATION: 99\nTHOUGHT: 99\nFINAL: 99",
}


@pytest.mark.parametrize("name", sorted(TRICKY))
def test_every_split_of_a_reply_is_the_run_and_never_shows_a_made_up_observation(name: str) -> None:
    """stream.md: every chunking gives the same steps and text; a made-up OBSERVATION is never
    shown however it is split; the stream is the run, under both drivers."""
    reply = TRICKY[name]
    replies = [reply, FINAL]
    ran = s.outline(Agent(ScriptedModel(replies), tools=[s.add]).run("What is 2 + 3?"))
    reference = s.shown(s.collect(Agent(ScriptedModel(replies), tools=[s.add]), "q", "sync"))
    chunkings: list[Any] = [1, 2, 3] + [s.split_at(i) for i in range(1, len(reply))]
    for index, chunks in enumerate(chunkings):
        driver = DRIVERS[index % 2]
        agent = Agent(ScriptedModel(replies, chunks=chunks), tools=[s.add])
        events = s.collect(agent, "What is 2 + 3?", driver)
        text = s.shown(events)
        assert "99" not in text.get(1, ""), (index, driver, text)
        revised = [e for e in events if isinstance(e, Revision)]
        assert not revised or name == "lone_close", (index, driver, revised)
        assert text == reference, (index, driver)
        assert isinstance(events[-1], RunEnd)
        assert s.outline(events[-1].result) == ran, (index, driver)


@pytest.mark.parametrize("driver", DRIVERS)
def test_a_label_split_across_deltas_is_still_a_label(driver: str) -> None:
    """stream.md: a label split across two deltas is still recognised."""
    reply = "THOUGHT: I add.\nACTION: add[2, 3]"
    for cut in range(1, len(reply)):
        agent = Agent(ScriptedModel([reply, FINAL], chunks=s.split_at(cut)), tools=[s.add])
        events = s.collect(agent, "q", driver)
        labels = [e.text for e in events if isinstance(e, TextDelta) and e.kind == "label"]
        assert "".join(labels[:2]) == "THOUGHT:ACTION:", (cut, labels)
        kinds = {e.kind for e in events if isinstance(e, TextDelta) and e.step == 1}
        assert kinds == {"label", "thought", "action"}, (cut, kinds)


@pytest.mark.parametrize("driver", DRIVERS)
def test_unicode_split_inside_a_character_run_and_thinking_are_kept_apart(driver: str) -> None:
    """stream.md: thinking is its own kind, never parsed; the joined text is the reading."""
    reply = "<think>ACTION: add[9, 9] 🎉</think>\nTHOUGHT: café — 日本\nFINAL: 🎉 ünï"
    for n in (1, 2, 5):
        events = s.collect(Agent(ScriptedModel([reply], chunks=n), tools=[s.add]), "q", driver)
        thinking = "".join(e.text for e in events if isinstance(e, TextDelta) and e.kind == "thinking")
        answer = "".join(e.text for e in events if isinstance(e, TextDelta) and e.kind == "answer")
        assert "add[9, 9]" in thinking and "🎉" in thinking
        assert answer.strip() == "🎉 ünï"
        assert not [e for e in events if isinstance(e, ActionReady)]
        assert events[-1].result.answer == "🎉 ünï" and s.RAN == []


SCENARIOS: dict[str, dict[str, Any]] = {
    "max_steps": {
        "replies": ["ACTION: add[1, 2]", "ACTION: add[2, 3]", "ACTION: add[3, 4]", "FINAL: 7"],
        "limits": Limits(steps=2),
    },
    "token_budget": {
        "replies": ["THOUGHT: " + "word " * 40 + "\nACTION: add[1, 2]"] * 6 + ["FINAL: 3"],
        "limits": Limits(tokens=900),
    },
    "parallel": {
        "replies": ["ACTION: add[1, 2]\nACTION: add[3, 4]\nOBSERVATION: 3", "FINAL: 3 and 7"],
        "prompting": Prompting(parallel=True),
    },
    "declined": {
        "replies": ["ACTION: pay[40]", "FINAL: not paid"],
        "approve": lambda tool, action: False,
    },
    "approved_parallel": {
        "replies": ["ACTION: pay[1]\nACTION: note[x]", "FINAL: ok"],
        "approve": lambda tool, action: True,
        "prompting": Prompting(parallel=True),
    },
    "repeats": {
        "replies": ["ACTION: add[1, 2]"] * 5 + ["FINAL: 3"],
    },
}


def _agent(replies: list[Any], chunks: Any = None, **options: Any) -> Agent:
    tools = [s.add, s.pay, s.note, boom]
    return Agent(ScriptedModel(replies, chunks=chunks), tools=tools, **options)


@pytest.mark.parametrize("driver", DRIVERS)
@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_a_streamed_run_under_limits_approvals_and_parallel_actions_is_the_run(name: str, driver: str) -> None:
    """stream.md: the steps and RunResult of a stream are those of run(); each action is handed
    out whole before it runs (ActionReady before its Observed)."""
    scene = dict(SCENARIOS[name])
    replies = scene.pop("replies")
    ran = s.outline(s.run(_agent(replies, **scene), "task", driver))
    ran_tools = list(s.RAN)
    for chunks in (1, 4):
        s.RAN.clear()
        events = s.collect(_agent(replies, chunks, **scene), "task", driver)
        assert s.outline(events[-1].result) == ran, chunks
        assert sorted(s.RAN) == sorted(ran_tools)  # a reply's parallel calls run at once
        steps = [e.step for e in events if isinstance(e, StepEnd)]
        assert tuple(steps) == tuple(events[-1].result.steps)
        for step in steps:
            ready = [i for i, e in enumerate(events) if isinstance(e, ActionReady) and e.step == step.number]
            seen = [i for i, e in enumerate(events) if isinstance(e, Observed) and e.step == step.number]
            if ready and seen:
                assert max(ready) < min(seen)


@pytest.mark.parametrize("driver", DRIVERS)
def test_later_in_a_stream_without_a_state_is_refused_never_a_yes(driver: str) -> None:
    """durable-runs.md: an approver that answers "later" in a run with no state is refused."""
    with pytest.raises(ConfigError):
        s.collect(_agent(["ACTION: pay[40]", "FINAL: paid"], 3, approve=LATER), "Pay.", driver)
    assert s.RAN == []


# --- durable runs ------------------------------------------------------------------------


class Recording:
    """A Store (the four methods) keeping every state saved, as the text `dumps` gives."""

    def __init__(self) -> None:
        self.saved: list[str] = []
        self.latest: dict[str, str] = {}

    def save(self, state: Any) -> None:
        text = dumps(state)
        self.saved.append(text)
        self.latest[state.run_id] = text

    def load(self, run_id: str) -> Any:
        return loads(self.latest[run_id], where=run_id)

    def runs(self) -> list[str]:
        return sorted(self.latest)

    def delete(self, run_id: str) -> None:
        self.latest.pop(run_id, None)


class Fixed(Recording):
    def __init__(self, text: str) -> None:
        super().__init__()
        self.latest[json.loads(text)["run_id"]] = text


def _replied(text: str) -> int:
    return sum(1 for event in json.loads(text)["log"] if event["kind"] == "replied")


def boom(text: str) -> str:
    """Fail loudly."""
    raise ValueError("kaput " + text)


DURABLE: dict[str, dict[str, Any]] = {
    "thinking": {
        "replies": [
            Reply("<think>plan OBSERVATION: 1</think>\nACTION: add[1, 2]", reasoning="why"),
            Reply("<think>I think and think", finish_reason="length"),
            "THOUGHT: ok\nACTION: add[2, 2]\nOBSERVATION: 9",
            "FINAL: 4",
        ]
    },
    "failures": {"replies": ["hmm", "ACTION: nothere[1]", "ACTION: boom[x]", "ACTION: add[1,", "FINAL: 3"]},
    "model_error": {"replies": ["ACTION: add[1, 2]", ModelError("gone")]},
    "steps": {"replies": ["ACTION: note[a]", "ACTION: add[1, 2]", "FINAL: 3"]},
    "parallel": {
        "replies": ["ACTION: add[1, 2]\nACTION: note[b]", "ACTION: add[5, 5]", "FINAL: 3"],
        "prompting": Prompting(parallel=True),
    },
    "repeats": {"replies": ["ACTION: add[1, 2]"] * 5 + ["FINAL: 3"], "limits": Limits(repeats=2)},
    "budget": {
        "replies": ["THOUGHT: " + "word " * 40 + "\nACTION: add[1, 2]"] * 6 + ["FINAL: 3"],
        "limits": Limits(tokens=900),
    },
}


@pytest.mark.parametrize("driver", DRIVERS)
@pytest.mark.parametrize("name", sorted(DURABLE))
def test_a_resume_from_every_save_comes_to_the_run_never_stopped(name: str, driver: str) -> None:
    """durable-runs.md: resumed from any save, the RunResult is the same but for wall times
    (parallel actions, repeats, a token budget; both drivers); no tool call runs twice."""
    scene: dict[str, Any] = dict(DURABLE[name])
    replies = scene.pop("replies")
    store = Recording()
    whole = s.outline(s.run(_agent(replies, **scene), "task", driver, state=store))
    whole_tools = list(s.RAN)
    assert len(store.saved) >= 3
    for number, text in enumerate(store.saved):
        s.RAN.clear()
        state = json.loads(text)
        used = _replied(text)
        done = [e for e in state["log"] if e["kind"] in ("ran", "ran_all")]
        if state["log"] and state["log"][-1]["kind"] == "intent":
            continue  # an intent with no outcome: the pure/idempotent rule decides; tested below
        again = s.resume(_agent(replies[used:], **scene), Fixed(text), driver)
        assert s.outline(again) == whole, (number, state["snapshot"]["status"])
        if not done:
            assert sorted(s.RAN) == sorted(whole_tools), number


@pytest.mark.parametrize("driver", DRIVERS)
def test_a_finished_run_resumed_runs_nothing_again(driver: str, tmp_path: Path) -> None:
    """durable-runs.md: a finished run: nothing runs again."""
    path = tmp_path / "run.json"
    first = s.run(_agent(["ACTION: note[milk]", "FINAL: noted"]), "Note.", driver, state=str(path))
    s.RAN.clear()
    again = s.resume(_agent([]), str(path), driver)
    assert s.outline(again) == s.outline(first) and s.RAN == []
    with pytest.raises(ConfigError):
        s.resume(_agent([]), str(path), driver, decision=True)


@pytest.mark.parametrize("driver", DRIVERS)
@pytest.mark.parametrize(
    ("decision", "inline", "observation"),
    [
        (True, True, "paid 40"),
        (False, False, None),
        (Deny("not this month"), False, "not this month"),
        (Edit("55"), None, "paid 55"),
    ],
)
def test_a_decision_later_is_a_decision_on_the_spot(
    decision: Any, inline: Any, observation: Any, driver: str, tmp_path: Path
) -> None:
    """durable-runs.md: "later" stops awaiting_approval naming the call; a resume decides:
    True, False, Deny(reason) (the model is told), Edit(input) (the call runs with it)."""
    replies = ["ACTION: pay[40]", "FINAL: paid"]
    path = str(tmp_path / "pay.json")
    paused = s.run(_agent(replies, approve=LATER), "Pay 40.", driver, state=path)
    assert paused.stop_reason == "awaiting_approval"
    assert paused.error == "awaiting approval of pay[40]" and s.RAN == []
    done = s.resume(_agent(replies[1:], approve=LATER), path, driver, decision=decision)
    if inline is not None:
        s.RAN.clear()
        spot = s.run(_agent(replies, approve=lambda tool, action: inline), "Pay 40.", driver)
        if not isinstance(decision, Deny):
            assert s.outline(done)[:4] == s.outline(spot)[:4]
    if observation is not None:
        assert observation in (done.steps[0].observation or "")
    assert done.answer == "paid"


@pytest.mark.parametrize("driver", DRIVERS)
def test_each_risky_call_of_a_parallel_reply_pauses_on_its_own_and_none_runs_twice(driver: str, tmp_path: Path) -> None:
    """durable-runs.md: a reply with two risky calls pauses twice; no call runs until all are
    decided; none runs twice."""
    replies = ["ACTION: pay[1]\nACTION: pay[2]\nACTION: note[z]", "FINAL: done"]
    options: dict[str, Any] = {"approve": LATER, "prompting": Prompting(parallel=True)}
    path = str(tmp_path / "par.json")
    first = s.run(_agent(replies, **options), "Pay.", driver, state=path)
    assert first.error == "awaiting approval of pay[1]" and s.RAN == []
    second = s.resume(_agent(replies[1:], **options), path, driver, decision=True)
    assert second.error == "awaiting approval of pay[2]" and s.RAN == []
    done = s.resume(_agent(replies[1:], **options), path, driver, decision=Deny("no"))
    assert done.answer == "done"
    assert sorted(s.RAN) == [("note", "z"), ("pay", "1")]
    s.resume(_agent([], **options), path, driver)
    assert sorted(s.RAN) == [("note", "z"), ("pay", "1")]


@pytest.mark.parametrize("driver", DRIVERS)
def test_a_resume_with_another_tool_set_or_settings_is_one_config_error_line(driver: str, tmp_path: Path) -> None:
    """durable-runs.md: the resuming agent must be made as the run's was, else one ConfigError
    line names what differs."""
    replies = ["ACTION: pay[40]", "FINAL: paid"]
    path = str(tmp_path / "pay.json")
    s.run(_agent(replies, approve=LATER), "Pay 40.", driver, state=path)
    others = [
        Agent(ScriptedModel(replies[1:]), tools=[s.pay], approve=LATER),
        Agent(ScriptedModel(replies[1:]), tools=[s.pay, s.note, s.add]),
        _agent(replies[1:], approve=LATER, limits=Limits(steps=3)),
        _agent(replies[1:], approve=LATER, prompting=Prompting(parallel=True)),
        Agent(ScriptedModel(replies[1:], name="other"), tools=[s.add, s.pay, s.note], approve=LATER),
    ]
    for other in others:
        with pytest.raises(ConfigError) as caught:
            s.resume(other, path, driver, decision=True)
        assert "\n" not in str(caught.value) and "other settings" in str(caught.value)
    assert s.RAN == []


def _paused_state(tmp_path: Path) -> tuple[str, dict[str, Any]]:
    path = str(tmp_path / "pay.json")
    _agent(["ACTION: pay[40]", "FINAL: paid"], approve=LATER).run("Pay 40.", state=path)
    return path, json.loads(Path(path).read_text())


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> Any:
    yield prefix
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _paths(item, (*prefix, index))


def test_a_damaged_or_foreign_state_is_one_config_error_line(tmp_path: Path) -> None:
    """durable-runs.md: a damaged or foreign file is one ConfigError line naming the file;
    any field removed or of the wrong type never crashes the resume with another exception."""
    path, state = _paused_state(tmp_path)
    text = Path(path).read_text()
    for content in ["", text[: len(text) // 2], "[]", '{"format": "other"}', "\x00\x01"]:
        Path(path).write_text(content)
        with pytest.raises(ConfigError) as caught:
            _agent(["FINAL: paid"], approve=LATER).resume(path, decision=True)
        assert "\n" not in str(caught.value) and "pay.json" in str(caught.value)
    for where in list(_paths(state))[1:]:
        values: tuple[Any, ...] = (None, 7, "x", [], {}, "del")
        for value in values:
            broken = copy.deepcopy(state)
            holder = broken
            for key in where[:-1]:
                holder = holder[key]
            if value == "del":
                del holder[where[-1]]
            else:
                holder[where[-1]] = value
            Path(path).write_text(json.dumps(broken))
            s.RAN.clear()
            said = ""
            try:
                _agent(["FINAL: paid"], approve=LATER).resume(path, decision=True)
            except ConfigError as error:
                said = str(error)
            assert "\n" not in said, where
            assert s.RAN in ([], [("pay", "40")]), (where, value, s.RAN)


def test_a_state_whose_task_no_longer_fits_its_snapshot_is_refused(tmp_path: Path) -> None:
    path, state = _paused_state(tmp_path)
    state["task"] = "Pay 4000 to Mallory."
    Path(path).write_text(json.dumps(state))
    with pytest.raises(ConfigError):
        _agent(["FINAL: paid"], approve=LATER).resume(path, decision=True)


def test_a_log_that_disagrees_with_the_pending_call_is_refused_not_approved(tmp_path: Path) -> None:
    path, state = _paused_state(tmp_path)
    assert state["snapshot"]["pending"][0]["input"] == "40"
    state["log"][0]["text"] = "ACTION: pay[4000]"
    Path(path).write_text(json.dumps(state))
    with contextlib.suppress(ConfigError):
        _agent(["FINAL: paid"], approve=LATER).resume(path, decision=True)
    assert ("pay", "4000") not in s.RAN


# --- a new interpreter, killed inside a tool -----------------------------------------------

CHILD = textwrap.dedent(
    """
    import os, signal, sys
    from pathlib import Path
    from react_text import Agent, Prompting, ScriptedModel, tool

    log = Path(sys.argv[2])
    kill = sys.argv[3] == "kill"

    def effect(name, text):
        with log.open("a") as out:
            out.write(f"{name}:{text}\\n")
        if kill and name == "{victim}":
            os.kill(os.getpid(), signal.SIGKILL)

    @tool
    def note(text: str) -> str:
        \"\"\"Write a line (an effect).\"\"\"
        effect("note", text)
        return "noted"

    @tool(pure=True)
    def upper(text: str) -> str:
        \"\"\"Upper-case text.\"\"\"
        effect("upper", text)
        return text.upper()

    @tool(idempotent=True)
    def mark(text: str) -> str:
        \"\"\"Set a flag (the same each time).\"\"\"
        effect("mark", text)
        return "marked"

    replies = [{replies}]
    used = int(sys.argv[4])
    agent = Agent(ScriptedModel(replies[used:]), tools=[note, upper, mark],
                  prompting=Prompting(parallel={parallel}))
    if sys.argv[5] == "run":
        result = agent.run("Do it.", state=sys.argv[1])
    elif sys.argv[5] == "arun":
        import asyncio
        result = asyncio.run(agent.arun("Do it.", state=sys.argv[1]))
    else:
        result = agent.resume(sys.argv[1])
    print(repr((result.answer, result.stop_reason, [s.observation for s in result.steps])))
    """
)


def _child(tmp_path: Path, victim: str, replies: list[str], parallel: bool, *args: str) -> Any:
    script = tmp_path / "child.py"
    body = CHILD.replace("{victim}", victim).replace("{replies}", ", ".join(map(repr, replies)))
    script.write_text(body.replace("{parallel}", str(parallel)))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, str(script), *args], capture_output=True, text=True, env=env, timeout=60)


@pytest.mark.parametrize("driver", ["run", "arun"])
@pytest.mark.parametrize(("victim", "parallel"), [("note", False), ("upper", False), ("mark", False), ("note", True)])
def test_killed_inside_a_tool_an_effect_is_not_run_again_and_a_pure_call_is(
    victim: str, parallel: bool, driver: str, tmp_path: Path
) -> None:
    """durable-runs.md: killed at any point; a call whose intent was saved but not its outcome
    runs again only if pure or idempotent, else the model is told its outcome is unknown; of a
    parallel reply's calls the pure and idempotent ones run again and the others are told
    unknown. Killed with SIGKILL, resumed in a new interpreter."""
    calls = ["note[b]", "upper[a]", "mark[c]"]
    if parallel:
        replies = ["\n".join(f"ACTION: {call}" for call in calls), "FINAL: done"]
    else:
        replies = [f"ACTION: {call}" for call in calls] + ["FINAL: done"]
    state, log = str(tmp_path / "run.json"), tmp_path / "effects.txt"
    killed = _child(tmp_path, victim, replies, parallel, state, str(log), "kill", "0", driver)
    assert killed.returncode == -9, killed.stderr
    used = _replied(Path(state).read_text())
    before = log.read_text().splitlines()
    resumed = _child(tmp_path, victim, replies, parallel, state, str(log), "live", str(used), "resume")
    assert resumed.returncode == 0, resumed.stderr
    effects = log.read_text().splitlines()
    for call in ("note:b", "upper:a", "mark:c"):
        again = not call.startswith("note") and (parallel or call.startswith(victim))
        assert effects.count(call) == (before.count(call) + 1 if again else 1), (call, effects)
    answer, reason, observations = eval(resumed.stdout.strip().splitlines()[-1])
    assert (answer, reason) == ("done", "final")
    told = " ".join(o for o in observations if o).lower()
    assert ("unknown" in told) == (victim == "note"), observations
    assert "A" in told.upper()


# --- the command line ----------------------------------------------------------------------


def _cli(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "react_text.cli", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=60,
    )


PAYTOOLS = '''from react_text import tool


@tool(risky=True)
def pay(amount: int) -> str:
    """Send a payment (asked first)."""
    return f"paid {amount}"
'''


def test_cli_ask_later_exits_3_and_resume_decides_with_runs_statuses(tmp_path: Path) -> None:
    """cli.md: run --state --ask-later exits 3 printing `paused at pay[..]`; resume --approve /
    --edit decides with run's output and status (3 when it waits again); a decision for a run
    that waits on none, a damaged or foreign FILE and another tool set are one line, exit 2."""
    (tmp_path / "paytools.py").write_text(PAYTOOLS)
    (tmp_path / "pay.txt").write_text("ACTION: pay[1]\n---\nACTION: pay[2]\n---\nFINAL: paid 3\n")
    tools = ["--tools", "./paytools.py", "--script", "pay.txt"]
    paused = _cli(tmp_path, "run", *tools, "--state", "run.json", "--ask-later", "Pay.")
    assert paused.returncode == 3 and "paused at pay[1]" in paused.stdout
    again = _cli(tmp_path, "resume", "run.json", *tools, "--approve", "--ask-later")
    assert again.returncode == 3 and "paid 1" in again.stdout and "paused at pay[2]" in again.stdout
    done = _cli(tmp_path, "resume", "run.json", *tools, "--edit", "7")
    assert done.returncode == 0 and "paid 7" in done.stdout
    for args in (
        ["resume", "run.json", *tools, "--approve"],
        ["resume", "run.json", "--script", "pay.txt"],
    ):
        refused = _cli(tmp_path, *args)
        assert refused.returncode == 2 and len(refused.stderr.strip().splitlines()) == 1, refused
    (tmp_path / "bad.json").write_text('{"format": "react-text/run-state", "version": 2')
    (tmp_path / "foreign.json").write_text('{"hello": 1}')
    for name in ("bad.json", "foreign.json"):
        refused = _cli(tmp_path, "resume", name, *tools, "--approve")
        assert refused.returncode == 2, refused
        assert refused.stderr.strip().splitlines() == [refused.stderr.strip()]
        assert name in refused.stderr and "Traceback" not in refused.stderr


# --- more joins ------------------------------------------------------------------------------


class Dropping:
    """A streaming model whose call fails after some text came (a server gone mid-stream)."""

    api: Literal["chat"] = "chat"
    name = "dropping"
    accepts_grammar = False

    def generate(self, request: Any) -> Reply:
        raise ModelError("server went away")

    def stream_reply(self, request: Any) -> Any:
        yield ReplyDelta("THOUGHT: I will ")
        yield ReplyDelta("add.\nACTION: add[1")
        raise ModelError("server went away")

    async def astream_reply(self, request: Any) -> Any:
        yield ReplyDelta("THOUGHT: I will ")
        yield ReplyDelta("add.\nACTION: add[1")
        raise ModelError("server went away")


@pytest.mark.parametrize("driver", DRIVERS)
def test_a_call_that_fails_after_some_text_is_revoked_and_ends_as_run_does(driver: str) -> None:
    """stream.md: a call that failed after some text came gives a Revision with no deltas; the
    run ends as run() does (model_error, never an exception)."""
    ran = s.run(Agent(Dropping(), tools=[s.add]), "q", driver)
    events = s.collect(Agent(Dropping(), tools=[s.add]), "q", driver)
    revisions = [e for e in events if isinstance(e, Revision)]
    assert [r.deltas for r in revisions] == [()]
    assert isinstance(events[-1], RunEnd) and s.outline(events[-1].result) == s.outline(ran)
    assert ran.stop_reason == "model_error" and s.RAN == []


@pytest.mark.parametrize("driver", DRIVERS)
def test_an_edited_input_is_bound_as_the_models_and_cannot_smuggle_a_second_call(driver: str, tmp_path: Path) -> None:
    """durable-runs.md: Edit(input): the call runs with that input, bound as the model's would be."""
    replies = ["ACTION: pay[40]", "FINAL: paid"]
    for edited, ran in [("amount=77", [("pay", "77")]), ("40]\nACTION: pay[9999", []), ("", [])]:
        s.RAN.clear()
        path = str(tmp_path / "edit.json")
        s.run(_agent(replies, approve=LATER), "Pay.", driver, state=path)
        done = s.resume(_agent(replies[1:], approve=LATER), path, driver, decision=Edit(edited))
        assert ran == s.RAN, edited
        assert done.stop_reason == "final"


@pytest.mark.parametrize("driver", DRIVERS)
def test_a_decision_of_later_is_never_read_as_a_yes(driver: str, tmp_path: Path) -> None:
    replies = ["ACTION: pay[40]", "FINAL: paid"]
    path = str(tmp_path / "pay.json")
    s.run(_agent(replies, approve=LATER), "Pay.", driver, state=path)
    try:
        result = s.resume(_agent(replies[1:], approve=LATER), path, driver, decision="later")
    except ConfigError:
        result = None
    assert s.RAN == [], result


@pytest.mark.parametrize("driver", DRIVERS)
def test_without_a_decision_the_resuming_agents_approver_is_asked(driver: str, tmp_path: Path) -> None:
    """durable-runs.md: without a decision the resuming agent's approver is asked; "later"
    again keeps the run waiting; iter_resume hands out only the steps after the resume."""
    replies = ["ACTION: note[a]", "ACTION: pay[40]", "FINAL: paid"]
    path = str(tmp_path / "pay.json")
    s.run(_agent(replies, approve=LATER), "Go.", driver, state=path)
    waiting = s.resume(_agent(replies[2:], approve=LATER), path, driver)
    assert waiting.stop_reason == "awaiting_approval" and s.RAN == [("note", "a")]
    asked: list[str] = []

    def yes_and_note(tool: Any, action: Any) -> bool:
        asked.append(action.input)
        return True

    yes = _agent(replies[2:], approve=yes_and_note)
    run = yes.iter_resume(path)
    assert [step.number for step in run] == [2, 3]
    assert [step.number for step in run.result.steps] == [1, 2, 3]
    assert asked == ["40"] and s.RAN == [("note", "a"), ("pay", "40")]


@pytest.mark.parametrize("driver", DRIVERS)
def test_a_sqlite_store_keeps_many_runs_apart_by_id(driver: str, tmp_path: Path) -> None:
    """durable-runs.md: a .db file is a SQLiteStore; run_id names the run in the store."""
    replies = ["ACTION: pay[40]", "FINAL: paid"]
    db = str(tmp_path / "runs.db")
    for run_id in ("one", "two"):
        s.run(_agent(replies, approve=LATER), f"Pay {run_id}.", driver, state=db, run_id=run_id)
    with pytest.raises(ConfigError):
        s.resume(_agent(replies[1:], approve=LATER), db, driver, decision=True)
    denied = s.resume(_agent(replies[1:], approve=LATER), db, driver, run_id="two", decision=Deny("no"))
    assert "no" in (denied.steps[0].observation or "") and s.RAN == []
    paid = s.resume(_agent(replies[1:], approve=LATER), db, driver, run_id="one", decision=True)
    assert paid.steps[0].observation == "paid 40" and s.RAN == [("pay", "40")]
    with pytest.raises(ConfigError):
        s.resume(_agent(replies[1:], approve=LATER), db, driver, run_id="three", decision=True)


def _normal(text: str) -> str:
    return re.sub(r"\d+\.\d+s", "Ts", text)


def test_cli_streamed_and_unstreamed_runs_write_the_same_trace(tmp_path: Path) -> None:
    """stream.md / cli.md: the trace is the same either way; streamed, the made-up observation is
    not printed as the model's text (only the note of the cut names it)."""
    (tmp_path / "s.txt").write_text(
        "THOUGHT: café 🎉 add\nACTION: calculator[2 + 3]\nOBSERVATION: 99\n---\nTHOUGHT: ok\nFINAL: 5\n"
    )
    streamed = _cli(tmp_path, "run", "--script", "s.txt", "--stream", "--trace", "a.jsonl", "2 + 3?")
    plain = _cli(tmp_path, "run", "--script", "s.txt", "--no-stream", "--trace", "b.jsonl", "2 + 3?")
    assert streamed.returncode == plain.returncode == 0
    assert "\n".join(line for line in streamed.stdout.splitlines() if "cut" not in line).count("99") == 0

    def events(name: str) -> list[Any]:
        drop = {"t", "seconds"}
        lines = (tmp_path / name).read_text().splitlines()
        return [_without(json.loads(line), drop) for line in lines]

    assert events("a.jsonl") == events("b.jsonl")


def _without(value: Any, drop: set[str]) -> Any:
    if isinstance(value, dict):
        return {k: _without(v, drop) for k, v in value.items() if k not in drop}
    if isinstance(value, list):
        return [_without(v, drop) for v in value]
    return value


def test_cli_run_with_state_still_streams_when_asked(tmp_path: Path) -> None:
    (tmp_path / "c.txt").write_text("THOUGHT: add\nACTION: calculator[2 + 3]\n---\nTHOUGHT: ok\nFINAL: 5\n")
    plain = _cli(tmp_path, "run", "--script", "c.txt", "--stream", "2 + 3?")
    kept = _cli(tmp_path, "run", "--script", "c.txt", "--stream", "--state", "r.json", "2 + 3?")
    assert plain.returncode == kept.returncode == 0
    assert _normal(kept.stdout) == _normal(plain.stdout)


def test_cli_a_paused_run_kept_in_a_db_file_resumes(tmp_path: Path) -> None:
    (tmp_path / "paytools.py").write_text(PAYTOOLS)
    (tmp_path / "pay.txt").write_text("ACTION: pay[40]\n---\nFINAL: paid 40\n")
    tools = ["--tools", "./paytools.py", "--script", "pay.txt"]
    paused = _cli(tmp_path, "run", *tools, "--state", "run.db", "--ask-later", "Pay 40.")
    assert paused.returncode == 3 and "resume run.db" in paused.stdout
    done = _cli(tmp_path, "resume", "run.db", *tools, "--approve")
    assert done.returncode == 0, done.stderr
    assert "paid 40" in done.stdout


def test_cli_a_paused_run_kept_in_a_folder_resumes(tmp_path: Path) -> None:
    (tmp_path / "paytools.py").write_text(PAYTOOLS)
    (tmp_path / "pay.txt").write_text("ACTION: pay[40]\n---\nFINAL: paid 40\n")
    (tmp_path / "runs").mkdir()
    tools = ["--tools", "./paytools.py", "--script", "pay.txt"]
    paused = _cli(tmp_path, "run", *tools, "--state", "runs", "--ask-later", "Pay 40.")
    assert paused.returncode == 3 and "resume runs" in paused.stdout
    done = _cli(tmp_path, "resume", "runs", *tools, "--approve")
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("how", ["run", "resume"])
def test_a_db_file_that_is_not_a_database_is_one_config_error_line(how: str, tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    path.write_text("not a database\n")
    agent = _agent(["FINAL: 1"])

    def call() -> object:
        return agent.run("q", state=str(path)) if how == "run" else agent.resume(str(path))

    with pytest.raises(ConfigError, match=r"runs\.db"):
        call()


def test_cli_run_with_a_state_file_that_is_no_database_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "c.txt").write_text("THOUGHT: ok\nFINAL: 5\n")
    (tmp_path / "runs.db").write_text("not a database\n")
    result = _cli(tmp_path, "run", "--script", "c.txt", "--state", "runs.db", "2 + 3?")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_an_async_approver_may_answer_later_and_aresume_asks_it_again(tmp_path: Path) -> None:
    """loop.md: the approver may be async in async runs; durable-runs.md: "later" pauses, and a
    resume without a decision asks the resuming agent's approver."""

    async def later(tool: Any, action: Any) -> Literal["later"]:
        await asyncio.sleep(0)
        return "later"

    async def yes(tool: Any, action: Any) -> bool:
        return True

    replies = ["ACTION: pay[40]", "FINAL: paid"]
    path = str(tmp_path / "pay.json")
    paused = asyncio.run(_agent(replies, approve=later).arun("Pay.", state=path))
    assert paused.stop_reason == "awaiting_approval"
    again = asyncio.run(_agent(replies[1:], approve=later).aresume(path))
    assert again.stop_reason == "awaiting_approval" and s.RAN == []
    done = asyncio.run(_agent(replies[1:], approve=later).aresume(path, decision=True))
    assert done.answer == "paid" and s.RAN == [("pay", "40")]
    assert asyncio.run(_agent([], approve=yes).aresume(path)).answer == "paid"
    assert s.RAN == [("pay", "40")]


@pytest.mark.parametrize("driver", DRIVERS)
def test_each_parallel_pending_call_takes_its_own_edit(driver: str, tmp_path: Path) -> None:
    """durable-runs.md: each risky call of a reply is decided on its own; then they run at once."""
    replies = ["ACTION: pay[1]\nACTION: pay[2]", "FINAL: ok"]
    options: dict[str, Any] = {"approve": LATER, "prompting": Prompting(parallel=True)}
    path = str(tmp_path / "par.json")
    s.run(_agent(replies, **options), "Pay.", driver, state=path)
    first = s.resume(_agent(replies[1:], **options), path, driver, decision=Edit("10"))
    assert first.error == "awaiting approval of pay[2]" and s.RAN == []
    done = s.resume(_agent(replies[1:], **options), path, driver, decision=Edit("20"))
    assert sorted(s.RAN) == [("pay", "10"), ("pay", "20")]
    assert done.steps[0].observation == "OBSERVATION (pay[1]): paid 10\nOBSERVATION (pay[2]): paid 20"


@pytest.mark.parametrize("driver", DRIVERS)
def test_a_parallel_reply_streams_each_action_with_its_index_and_the_result_is_kept(
    driver: str,
) -> None:
    """stream.md: ActionReady(step, index, action) once each action is read whole;
    RunEnd's result is also stream.result."""
    replies = ["ACTION: pay[1]\nACTION: pay[2]", "FINAL: ok"]
    options: dict[str, Any] = {"approve": lambda tool, action: True}
    options["prompting"] = Prompting(parallel=True)
    events = s.collect(_agent(replies, 3, **options), "Pay.", driver)
    ready = [(e.step, e.index, e.action.input) for e in events if isinstance(e, ActionReady)]
    assert ready == [(1, 0, "1"), (1, 1, "2")]
    stream = _agent(replies, 3, **options).stream("Pay.")
    last = list(stream)[-1]
    assert isinstance(last, RunEnd) and stream.result is last.result
