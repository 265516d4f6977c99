"""Durable runs through the agent, under both drivers: `agent.run(task, state=...)` saves the state
after every step and before every tool call, `agent.resume(...)` goes on from it exactly, an
approver's "later" pauses the run until a resume decides, and a process killed (SIGKILL) at any
point loses at most the step in flight and never runs a tool with effects twice unseen.

The oracle of a resume is the same run never stopped: its requests after the save point, byte for
byte (Request values compare by content), and its RunResult but its wall times.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import durable_support as ds
import pytest

from react_text import Agent, ConfigError, RunResult
from react_text.core.commands import RanAll
from react_text.core.types import Request
from react_text.durable import Deny, Edit, FileStore, Intent, RunState, SQLiteStore, Store, loads

HERE = Path(__file__).parent
SUPPORT = HERE / "durable_support.py"


class Recording:
    """A store that keeps a copy of every state saved, in order, beside the store it wraps."""

    def __init__(self, store: Store) -> None:
        self.store, self.saved = store, []  # type: list[RunState]

    def save(self, state: RunState) -> None:
        self.store.save(state)
        self.saved.append(state)

    def load(self, run_id: str) -> RunState:
        return self.store.load(run_id)

    def runs(self) -> tuple[str, ...]:
        return self.store.runs()

    def delete(self, run_id: str) -> None:
        self.store.delete(run_id)


@pytest.fixture(params=["sync", "async"])
def driver(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def run(driver: str, agent: Agent, task: str, **options: Any) -> RunResult:
    if driver == "sync":
        return agent.run(task, **options)
    return asyncio.run(agent.arun(task, **options))


def resume(driver: str, agent: Agent, where: Any, **options: Any) -> RunResult:
    if driver == "sync":
        return agent.resume(where, **options)
    return asyncio.run(agent.aresume(where, **options))


def requests(agent: Agent) -> list[Request]:
    return list(agent.model.calls)  # type: ignore[attr-defined]  # a ScriptedModel


@pytest.fixture(autouse=True)
def _no_effects() -> None:
    ds.EFFECTS.clear()


CASES = {
    "chat": (ds.SCRIPT, "chat", False),
    "completion": (ds.SCRIPT, "completion", False),
    "parallel": (ds.PARALLEL, "chat", True),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_resume_from_every_save_makes_the_same_requests_and_result(case: str, driver: str, tmp_path: Path) -> None:
    script, api, parallel = CASES[case]
    whole_agent = ds.agent(script, api=api, parallel=parallel)
    store = Recording(FileStore(tmp_path))
    whole = run(driver, whole_agent, ds.TASK, state=store, run_id="r", seed=7)
    assert whole.stop_reason == "final"
    intents = sum(isinstance(e, Intent) for e in store.saved[-1].log)
    assert len(store.saved) == 1 + len(whole.steps) - 1 + intents + 1  # start, each step but the last, intents, end
    assert store.saved[-1].snapshot.status == "done" and store.saved[0].log == ()
    resumed_any = 0
    for state in store.saved[:-1]:
        if (
            state.log
            and isinstance(state.log[-1], Intent)
            and any(t in ("note", "wire") for t, _ in state.log[-1].calls)
        ):
            continue  # a call with effects whose outcome is unknown: the next test
        again = ds.agent(script[ds.used(state) :], api=api, parallel=parallel)
        one = FileStore(tmp_path / "one")
        one.save(state)
        result = resume(driver, again, one, run_id="r")
        assert requests(again) == requests(whole_agent)[ds.used(state) :]  # byte for byte
        assert ds.timeless(result) == ds.timeless(whole)
        assert one.load("r").snapshot.status == "done"
        resumed_any += 1
    assert resumed_any >= len(whole.steps)


def test_a_call_with_effects_whose_outcome_was_lost_is_not_run_again(driver: str, tmp_path: Path) -> None:
    store = Recording(FileStore(tmp_path))
    whole = run(driver, ds.agent(ds.SCRIPT), ds.TASK, state=store, run_id="r", seed=7)
    at = [s for s in store.saved if s.log and isinstance(s.log[-1], Intent)]
    assert [s.log[-1].calls[0][0] for s in at] == ["add", "note", "put", "add"]  # type: ignore[union-attr]
    for state in at:
        ds.EFFECTS.clear()
        path = tmp_path / "at-intent.json"
        FileStore.single(path).save(state)
        result = resume(driver, ds.agent(ds.SCRIPT[ds.used(state) :]), path)
        tool = state.log[-1].calls[0][0]  # type: ignore[union-attr]
        assert result.answer == "10" and result.stop_reason == "final"
        if tool == "note":  # an effect, maybe done: not run again, and the model is told
            assert ds.EFFECTS == ["put:done"]
            assert "unknown" in (result.steps[1].observation or "") and "note('5')" in (
                result.steps[1].observation or ""
            )
        else:  # pure or idempotent: run again, and the run is the run never stopped
            assert ds.timeless(result) == ds.timeless(whole)
            assert {0: ["note:5", "put:done"], 2: ["put:done"], 4: []}[state.snapshot.step] == ds.EFFECTS


def test_parallel_calls_of_which_some_may_run_again(driver: str, tmp_path: Path) -> None:
    store = Recording(FileStore(tmp_path))
    run(driver, ds.agent(ds.PARALLEL, parallel=True), ds.TASK, state=store, run_id="r", seed=7)
    state = next(s for s in store.saved if s.log and isinstance(s.log[-1], Intent))
    assert [t for t, _ in state.log[-1].calls] == ["add", "wire", "note", "wire"]  # type: ignore[union-attr]
    ds.EFFECTS.clear()
    path = tmp_path / "p.json"
    FileStore.single(path).save(state)
    result = resume(driver, ds.agent(ds.PARALLEL[1:], parallel=True), path)
    assert ds.EFFECTS == []  # add is pure (run again, no effect); the rest are told unknown
    observation = result.steps[0].observation or ""
    assert "3" in observation and observation.count("is unknown") == 3
    assert result.answer == "3"


# --- approvals later ------------------------------------------------------------------------------------


def later(tool: Any, action: Any) -> str:
    return "later"


def test_later_pauses_the_run_and_a_resume_with_approval_is_approving_inline(driver: str, tmp_path: Path) -> None:
    inline_agent = ds.agent(ds.RISKY, approve=lambda t, a: True)
    inline = run(driver, inline_agent, ds.TASK, seed=7)
    inline_effects = list(ds.EFFECTS)
    ds.EFFECTS.clear()
    path = tmp_path / "run.json"
    first = ds.agent(ds.RISKY, approve=later)
    paused = run(driver, first, ds.TASK, state=path, seed=7)
    assert paused.stop_reason == "awaiting_approval" and paused.answer is None
    assert "wire[40]" in (paused.error or "") and ds.EFFECTS == []
    saved = FileStore.single(path).load("any")
    assert saved.snapshot.status == "awaiting_approval"
    assert [(p.tool, p.input, p.why) for p in saved.snapshot.pending] == [("wire", "40", "approval")]
    second = ds.agent(ds.RISKY[ds.used(saved) :], approve=later)
    result = resume(driver, second, path, decision=True)
    assert ds.timeless(result) == ds.timeless(inline)
    assert requests(first) + requests(second) == requests(inline_agent)
    assert ds.EFFECTS == inline_effects == ["wire:40", "note:paid"]


def test_a_denial_with_its_reason_and_an_edited_input(driver: str, tmp_path: Path) -> None:
    path = tmp_path / "run.json"
    run(driver, ds.agent(ds.RISKY, approve=later), ds.TASK, state=path, seed=7)
    denied = resume(driver, ds.agent(ds.RISKY[1:], approve=later), path, decision=Deny("over the monthly limit"))
    said = denied.steps[0].observation or ""
    assert "declined" in said and "over the monthly limit" in said and "wire[40]" in said
    assert ds.EFFECTS == ["note:paid"]
    ds.EFFECTS.clear()
    path.unlink()
    run(driver, ds.agent(ds.RISKY, approve=later), ds.TASK, state=path, seed=7)
    edited = resume(driver, ds.agent(ds.RISKY[1:], approve=later), path, decision=Edit("30"))
    assert edited.steps[0].observation == "sent 30" and ds.EFFECTS == ["wire:30", "note:paid"]


def test_each_pending_call_of_a_parallel_reply_is_decided_on_its_own(driver: str, tmp_path: Path) -> None:
    def inline_decision(tool: Any, action: Any) -> Any:
        return True if action.input == "7" else Deny("too much")

    inline = run(driver, ds.agent(ds.PARALLEL, approve=inline_decision, parallel=True), ds.TASK, seed=7)
    inline_effects = list(ds.EFFECTS)
    ds.EFFECTS.clear()
    path = tmp_path / "run.json"
    paused = run(driver, ds.agent(ds.PARALLEL, approve=later, parallel=True), ds.TASK, state=path, seed=7)
    assert "wire[7]" in (paused.error or "")
    used = ds.used(FileStore.single(path).load("any"))
    again = resume(driver, ds.agent(ds.PARALLEL[used:], approve=later, parallel=True), path, decision=True)
    assert again.stop_reason == "awaiting_approval" and "wire[8]" in (again.error or "") and ds.EFFECTS == []
    pending = FileStore.single(path).load("any").snapshot.pending
    assert [(p.tool, p.input) for p in pending] == [("wire", "8")]
    done = resume(driver, ds.agent(ds.PARALLEL[used:], approve=later, parallel=True), path, decision=Deny("too much"))
    assert ds.timeless(done) == ds.timeless(inline)
    # each call once, the others' results kept (in any order: a parallel reply's calls run at once)
    assert sorted(ds.EFFECTS) == sorted(inline_effects) == ["note:three", "wire:7"]


def test_later_without_a_kept_state_and_a_decision_for_no_pending_call_are_refused(driver: str, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match='answered "later"'):
        run(driver, ds.agent(ds.RISKY, approve=later), ds.TASK)
    path = tmp_path / "run.json"
    store = Recording(FileStore.single(path))
    run(driver, ds.agent(ds.SCRIPT), ds.TASK, state=store)
    FileStore.single(path).save(store.saved[3])
    with pytest.raises(ConfigError, match="waits on no approval"):
        resume(driver, ds.agent(ds.SCRIPT), path, decision=True)


# --- what is refused, and what still loads --------------------------------------------------------------


def test_a_damaged_state_or_another_agents_is_refused_in_one_line(driver: str, tmp_path: Path) -> None:
    path = tmp_path / "run.json"
    path.write_text('{"format": "react-text/run-st', encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        resume(driver, ds.agent(ds.SCRIPT), path)
    assert "\n" not in str(caught.value) and "damaged" in str(caught.value)
    path.unlink()
    run(driver, ds.agent(ds.SCRIPT), ds.TASK, state=path)
    other = Agent(ds.model(ds.SCRIPT), tools=[ds.add, ds.note], approve=lambda t, a: True)
    with pytest.raises(ConfigError) as caught:
        resume(driver, other, path)
    assert "\n" not in str(caught.value) and "other settings" in str(caught.value) and "tools" in str(caught.value)


def test_a_state_of_version_1_still_loads_and_resumes(driver: str, tmp_path: Path) -> None:
    text = (HERE / "data" / "run-state-v1.json").read_text(encoding="utf-8")
    assert json.loads(text)["version"] == 1
    state = loads(text)
    assert state.snapshot.step == 3
    store = SQLiteStore(tmp_path / "runs.db")
    store.save(state)
    again = ds.agent(ds.SCRIPT[ds.used(state) :])
    result = resume(driver, again, tmp_path / "runs.db")
    assert result.answer == "10" and len(result.steps) == 6 and ds.EFFECTS == []
    assert [s.seconds for s in result.steps[:3]] == [0.75, 0.75, 0.75]  # the times it logged
    with sqlite3.connect(tmp_path / "runs.db") as db:
        assert json.loads(db.execute("SELECT state FROM runs").fetchone()[0])["version"] == 2  # saved anew as 2
    store.close()


def test_a_run_id_and_a_store_of_many_runs(driver: str, tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    for name in ("a", "b"):
        run(driver, ds.agent(ds.RISKY, approve=later), ds.TASK, state=db, run_id=name)
    with pytest.raises(ConfigError, match="say which run"):
        resume(driver, ds.agent(ds.RISKY[1:]), db)
    result = resume(driver, ds.agent(ds.RISKY[1:]), db, run_id="b", decision=False)
    assert result.stop_reason == "final" and "declined" in (result.steps[0].observation or "")
    assert SQLiteStore(db).load("a").snapshot.status == "awaiting_approval"
    with pytest.raises(TypeError, match="give state="):
        ds.agent(ds.SCRIPT).run(ds.TASK, run_id="x")


# --- in other processes: a new interpreter, and the SIGKILL matrix ---------------------------------------


def child(state: Path, driver: str, *flags: str, effects: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "REACT_TEXT_EFFECTS": str(effects), "PYTHONPATH": str(HERE.parent)}
    return subprocess.run(
        [sys.executable, str(SUPPORT), str(state), driver, *flags], capture_output=True, text=True, env=env, timeout=120
    )


def test_paused_for_approval_and_resumed_in_a_new_interpreter(driver: str, tmp_path: Path) -> None:
    effects = tmp_path / "effects.txt"
    inline = child(tmp_path / "inline.json", driver, "--script", "RISKY", effects=tmp_path / "inline.txt")
    assert inline.returncode == 0, inline.stderr
    state = tmp_path / "run.json"
    paused = child(state, driver, "--script", "RISKY", "--later", effects=effects)
    assert paused.returncode == 0 and json.loads(paused.stdout)["stop_reason"] == "awaiting_approval"
    assert not effects.exists()
    resumed = child(state, driver, "--script", "RISKY", "--decide", "yes", effects=effects)
    assert resumed.returncode == 0, resumed.stderr
    got, expected = json.loads(resumed.stdout), json.loads(inline.stdout)
    assert {**got, "calls": 0} == {**expected, "calls": 0}
    assert json.loads(paused.stdout)["calls"] + got["calls"] == expected["calls"]  # no reply asked twice
    assert effects.read_text() == (tmp_path / "inline.txt").read_text() == "wire:40\nnote:paid\n"


SAVES = 11  # of the script: at the start, 4 intents, after 5 of its 6 steps, at the end
KILLS = [*(f"save-{n}" for n in range(1, SAVES)), "in-note", "in-put"]


@pytest.mark.parametrize("kill", KILLS)
def test_killed_at_every_step_boundary_and_inside_a_tool_call(kill: str, driver: str, tmp_path: Path) -> None:
    whole = child(tmp_path / "whole.json", driver, effects=tmp_path / "whole.txt")
    assert whole.returncode == 0, whole.stderr
    expected = json.loads(whole.stdout)
    state, effects = tmp_path / "run.json", tmp_path / "effects.txt"
    flags = ["--kill-at-save", kill.removeprefix("save-")] if kill.startswith("save-") else ["--kill-in", kill[3:]]
    killed = child(state, driver, *flags, effects=effects)
    assert killed.returncode == -9 and killed.stdout == "", killed.stderr
    at_kill = loads(state.read_text(encoding="utf-8"))
    lines_at_kill = effects.read_text().splitlines() if effects.exists() else []
    resumed = child(state, driver, effects=effects)
    assert resumed.returncode == 0, resumed.stderr
    got = json.loads(resumed.stdout)
    done = effects.read_text().splitlines()
    assert done.count("note:5") <= 1  # never run twice
    assert got["answer"] == "10" and got["stop_reason"] == "final"
    note_lost = bool(at_kill.log) and isinstance(at_kill.log[-1], Intent) and at_kill.log[-1].calls[0][0] == "note"
    if note_lost:  # killed between note's intent and its outcome: the model is told, the rest is the same
        assert "is unknown" in got["observations"][1]
        assert (
            got["observations"][:1] + got["observations"][2:]
            == expected["observations"][:1] + expected["observations"][2:]
        )
        assert done == [*lines_at_kill, "put:done"]
    else:
        assert {**got, "calls": 0} == {**expected, "calls": 0}
        assert sorted(set(done)) == ["note:5", "put:done"]
    # at most the step in flight is lost: the state at the kill is the last one saved before it, and
    # the resumed process asks the model only for the replies that state does not hold
    assert got["calls"] == len(ds.SCRIPT) - ds.used(at_kill)
    saves = Recording(FileStore(tmp_path / "saves"))
    ds.agent(ds.SCRIPT).run(ds.TASK, state=saves, run_id="run-1", seed=7)
    if kill.startswith("save-"):
        assert _timeless_log(at_kill) == _timeless_log(saves.saved[int(kill[5:]) - 1])
    else:
        assert at_kill.log[-1] == Intent(((kill[3:], {"in-note": "'5'", "in-put": "'done'"}[kill]),))


def _timeless_log(state: RunState) -> list[object]:
    """The log but its wall times."""
    return [
        dataclasses.replace(e, seconds=0.0, ran=tuple(dataclasses.replace(r, seconds=0.0) for r in e.ran))
        if isinstance(e, RanAll)
        else dataclasses.replace(e, seconds=0.0)  # type: ignore[arg-type]
        if hasattr(e, "seconds")
        else e
        for e in state.log
    ]


# --- eval: episodes kept in SQLite, picked up mid-episode -----------------------------------------------


def test_an_eval_stopped_mid_episode_goes_on_from_its_kept_state(tmp_path: Path) -> None:
    from react_text import evaluation
    from react_text.evaluation import Options, Task

    tasks = [Task("sum", ds.TASK, "10", tools=())]
    options = Options(root=tmp_path, tools=(ds.add, ds.note, ds.put), states=tmp_path / "runs.db")

    async def collect(models: Any) -> list[Any]:
        return [o async for o in evaluation.aevaluate(tasks, models, options)]

    crashing = ds.model([*ds.SCRIPT[:3], KeyboardInterrupt()])  # type: ignore[list-item]  # the process stops
    with pytest.raises(KeyboardInterrupt):
        asyncio.run(collect(lambda task: crashing))
    kept = SQLiteStore(tmp_path / "runs.db").load("sum#0")
    assert kept.snapshot.step == 3 and kept.snapshot.status == "running" and ds.EFFECTS == ["note:5", "put:done"]
    rest = ds.model(ds.SCRIPT[3:])
    (outcome,) = asyncio.run(collect(lambda task: rest))
    assert outcome.ok and outcome.answer == "10" and outcome.steps == 6
    assert len(rest.calls) == 3 and ds.EFFECTS == ["note:5", "put:done"]  # no step taken again
    assert SQLiteStore(tmp_path / "runs.db").load("sum#0").snapshot.status == "done"


def test_an_edited_call_is_not_remembered_as_the_call_the_model_wrote(driver: str, tmp_path: Path) -> None:
    @ds.tool(pure=True, risky=True)
    def peek(name: str) -> str:
        """Read a private record (pure, but asked first)."""
        return f"record {name}"

    replies = ["ACTION: peek[a]", "ACTION: peek[a]", "FINAL: done"]
    path = tmp_path / "run.json"
    first = Agent(ds.model(replies), tools=[peek], approve=later)
    assert run(driver, first, ds.TASK, state=path).stop_reason == "awaiting_approval"
    then = Agent(ds.model(replies[1:]), tools=[peek], approve=lambda t, a: True)
    result = resume(driver, then, path, decision=Edit("b"))
    assert [s.observation for s in result.steps[:2]] == ["record b", "record a"]  # peek[a] ran: not answered from b


def test_a_new_run_never_writes_over_a_run_that_is_not_over(driver: str, tmp_path: Path) -> None:
    # "Bad input gets a clear error and loses nothing": a paused run's file, given again to a new
    # run, is refused; once the paused run is over, its file may hold a new run.
    path = tmp_path / "pay.json"
    paused = run(driver, ds.agent(ds.RISKY, approve=later), ds.TASK, state=path, seed=7)
    assert paused.stop_reason == "awaiting_approval"
    before = path.read_bytes()
    with pytest.raises(ConfigError, match="not over \\(awaiting_approval\\)"):
        run(driver, ds.agent(ds.RISKY, approve=later), ds.TASK, state=path, seed=7)
    assert path.read_bytes() == before
    folder = tmp_path / "runs"
    run(driver, ds.agent(ds.RISKY, approve=later), ds.TASK, state=folder, run_id="a", seed=7)
    with pytest.raises(ConfigError, match="holds run 'a'"):
        run(driver, ds.agent(ds.RISKY, approve=later), ds.TASK, state=folder, run_id="a", seed=7)
    ds.EFFECTS.clear()
    done = resume(
        driver,
        ds.agent(ds.RISKY[ds.used(FileStore.single(path).load("any")) :], approve=later),
        path,
        decision=Deny("no"),
    )
    assert done.stop_reason != "awaiting_approval"
    again = run(driver, ds.agent(["FINAL: 5"]), ds.TASK, state=path, seed=7)  # over: its file may be reused
    assert again.answer == "5"
