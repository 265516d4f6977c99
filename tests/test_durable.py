"""Durable runs, below the drivers: the state value and its JSON (checked on load), the stores, and
the exact resume by replaying a run's log into a fresh episode (react_text/durable/).

The oracle of a resume is the same run never stopped: its requests after the save point, byte for
byte, and its RunResult. The runs here are driven by a loop of a dozen lines over the sans-IO
episode (as the drivers do), with every duration 0, so results compare exactly.
"""

from __future__ import annotations

import dataclasses
import json
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from react_text import Agent, ConfigError, Limits, Prompting, ScriptedModel, tool
from react_text.core.commands import (
    Approve,
    Command,
    Decided,
    Done,
    Emit,
    Event,
    Failed,
    Invoke,
    InvokeAll,
    Ran,
    RanAll,
    Replied,
    Send,
)
from react_text.core.episode import Episode, EpisodeSpec
from react_text.core.errors import ModelError
from react_text.core.types import Reply, Request, RunResult
from react_text.durable import (
    FileStore,
    Intent,
    Journal,
    RunState,
    SQLiteStore,
    Store,
    dumps,
    loads,
    replay,
    settings_of,
    unknown_outcome,
)
from react_text.tools import running

CALLS: list[str] = []  # what the tools with effects did, in order


@tool(pure=True)
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@tool
def log(text: str) -> str:
    """Write a line to the log (an effect: never run twice)."""
    CALLS.append(f"log:{text}")
    return "logged"


@tool(idempotent=True)
def put(key: str) -> str:
    """Set a flag (setting it again changes nothing)."""
    CALLS.append(f"put:{key}")
    return "set"


CHAT = [
    "THOUGHT: first the sum\nACTION: add[2, 3]",
    "THOUGHT: write it down\nACTION: log[5]",
    "THOUGHT: mark it\nACTION: put[done]",
    "I am not sure what to write",  # a format error: a correction goes back
    "THOUGHT: again\nACTION: add[5, 5]",
    "FINAL: 10",
]
PARALLEL = [
    "THOUGHT: both at once\nACTION: add[1, 2]\nACTION: log[three]",
    "THOUGHT: done\nFINAL: 3",
]


def server_tokens(text: str) -> int:  # a server that counts unlike the engine: the meter learns its ratio
    return len(text) // 3 + 1


@dataclasses.dataclass
class Case:
    name: str
    replies: list[str]
    api: str = "chat"
    parallel: bool = False
    tokens: int | None = None

    def model(self, replies: list[str] | None = None) -> ScriptedModel:
        return ScriptedModel(self.replies if replies is None else replies, api=self.api, tokenizer=server_tokens)  # type: ignore[arg-type]

    def spec(self) -> EpisodeSpec:
        agent = Agent(
            self.model(),
            tools=[add, log, put],
            limits=Limits(steps=8, tokens=self.tokens),
            prompting=Prompting(parallel=self.parallel),
            approve=lambda t, a: True,
        )
        return agent.spec(None)


CASES = [
    Case("chat", CHAT),
    Case("completion", CHAT, api="completion"),
    Case("budget", CHAT, tokens=6000),
    Case("parallel", PARALLEL, parallel=True),
]


def drive(
    episode: Episode,
    command: Command,
    model: ScriptedModel,
    journal: Journal,
    saved: Callable[[str], None] = lambda _: None,
) -> RunResult:
    """Carry out the episode's commands (as a driver does), saving the state where a run saves it:
    after each step and before each tool call."""
    while not isinstance(command, Done):
        event: Event
        if isinstance(command, Send):
            try:
                event = Replied(model.generate(command.request), 0.0)
            except ModelError as exc:
                event = Failed(exc, 0.0)
        elif isinstance(command, Approve):
            event = Decided(True)
        elif isinstance(command, InvokeAll):
            journal.intend(command)
            saved(dumps(journal.state(episode)))
            outcomes = running.run_all([(i.tool, i.arguments, i.seconds) for i in command.invokes])
            event = RanAll(tuple(Ran(o, 0.0) for o, _ in outcomes), 0.0)
        elif isinstance(command, Invoke):
            journal.intend(command)
            saved(dumps(journal.state(episode)))
            event = Ran(running.run(command.tool, command.arguments, command.seconds), 0.0)
        else:
            event = None
        journal.sent(command, event)
        stepped = isinstance(command, Emit)
        command = episode.send(event)
        if stepped and not isinstance(command, Done):  # a step is complete (its observation recorded)
            saved(dumps(journal.state(episode)))
    saved(dumps(journal.state(episode, status="done")))
    return command.result


def fresh(case: Case, spec: EpisodeSpec) -> tuple[Episode, Journal]:
    state = RunState("run-1", "What is 2 + 3, then doubled?", 7, None, settings_of(spec, "scripted"))
    return Episode(spec, state.task, seed=state.seed), Journal(state)


def replies_used(state: RunState) -> int:
    return sum(isinstance(e, Replied | Failed) for e in state.log)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_a_resume_from_any_save_point_makes_the_same_requests_and_result(case: Case) -> None:
    spec = case.spec()
    episode, journal = fresh(case, spec)
    model = case.model()
    saves: list[str] = []
    CALLS.clear()
    whole = drive(episode, episode.start(), model, journal, saves.append)
    intents = sum(isinstance(e, Intent) for e in loads(saves[-1]).log)
    assert len(saves) == len(whole.steps) + intents  # a save a step, and one before the calls of each
    for text in saves:
        state = loads(text)
        assert state == loads(dumps(state))  # the JSON is the value
        again = Episode(spec, state.task, seed=state.seed)
        replayed = replay(again, state.log)
        used = replies_used(state)
        rest = case.model(case.replies[used:])
        journal = Journal(state)
        command = replayed.command
        if replayed.unknown is not None:  # saved at an intent: these are the tools that may run again
            assert isinstance(command, Invoke | InvokeAll)
            invokes = command.invokes if isinstance(command, InvokeAll) else (command,)
            if any(unknown_outcome(i) is not None for i in invokes):
                continue  # the model is told the outcome is unknown: another test
        resumed = drive(again, command, rest, journal)
        assert list(rest.calls) == model.calls[used:]  # byte for byte: the same Request values
        assert resumed == whole


def test_the_snapshot_says_what_the_log_came_to() -> None:
    case = CASES[2]
    spec = case.spec()
    episode, journal = fresh(case, spec)
    saves: list[str] = []
    whole = drive(episode, episode.start(), case.model(), journal, saves.append)
    last = loads(saves[-1]).snapshot
    assert last.status == "done" and last.step == len(whole.steps) and last.usage == whole.usage
    assert last.rate is not None and last.rate > 1.0  # the server counts a third of the characters: more
    assert last.tool_calls == whole.tool_calls
    assert [s["reply"] for s in last.steps] == [s.reply for s in whole.steps]
    assert last.result is not None and last.result["answer"] == "10"
    assert last.transcript == tuple((m.role, m.content) for m in whole.transcript)  # type: ignore[union-attr]


def test_a_call_whose_outcome_was_lost_is_not_run_again_unless_it_may_be() -> None:
    case = CASES[0]
    spec = case.spec()
    episode, journal = fresh(case, spec)
    saves: list[str] = []
    drive(episode, episode.start(), case.model(), journal, saves.append)
    at_intents = [s for s in map(loads, saves) if s.log and type(s.log[-1]).__name__ == "Intent"]
    tools = [s.log[-1].calls[0][0] for s in at_intents]  # type: ignore[union-attr]
    assert tools == ["add", "log", "put", "add"]
    for state in at_intents:
        CALLS.clear()
        again = Episode(spec, state.task, seed=state.seed)
        replayed = replay(again, state.log)
        assert isinstance(replayed.command, Invoke) and replayed.unknown is not None
        ran = unknown_outcome(replayed.command)
        name = replayed.command.tool.name
        if name == "log":  # an effect, maybe done: not run again, and the model is told
            assert ran is not None and "unknown" in ran.outcome.text and "log('5')" in ran.outcome.text
            journal = Journal(state)
            journal.sent(replayed.command, ran)
            result = drive(again, again.send(ran), case.model(case.replies[replies_used(state) :]), journal)
            assert CALLS == ["put:done"]  # the log line was not written again
            assert "unknown" in (result.steps[1].observation or "")
            assert result.answer == "10"
        else:  # pure or idempotent: run again
            assert ran is None


def test_a_log_that_does_not_fit_the_agent_is_refused_in_one_line() -> None:
    case = CASES[0]
    spec = case.spec()
    episode, journal = fresh(case, spec)
    saves: list[str] = []
    drive(episode, episode.start(), case.model(), journal, saves.append)
    state = loads(saves[-1])
    other = Agent(case.model(), tools=[add, log, put], limits=Limits(steps=1)).spec(None)
    with pytest.raises(ConfigError) as caught:
        replay(Episode(other, state.task, seed=state.seed), state.log)
    assert "\n" not in str(caught.value) and "does not fit" in str(caught.value)


# --- the file, damaged --------------------------------------------------------------------------------


def _good() -> dict[str, Any]:
    case = CASES[3]
    spec = case.spec()
    episode, journal = fresh(case, spec)
    saves: list[str] = []
    drive(episode, episode.start(), case.model(), journal, saves.append)
    return json.loads(saves[-1])  # type: ignore[no-any-return]


def _damaged(change: Callable[[dict[str, Any]], object]) -> str:
    data = _good()
    change(data)
    return json.dumps(data)


DAMAGE = {
    "not json": ('{"format": "react-text/run-st', "not JSON"),
    "a trace": ('{"event": "run_start"}', "not a react-text run state"),
    "a list": ("[1, 2]", "not a react-text run state"),
    "newer": (_damaged(lambda d: d.update(version=3)), "version 3"),
    "no task": (_damaged(lambda d: d.pop("task")), "task is missing"),
    "bad seed": (_damaged(lambda d: d.update(seed="7")), "seed"),
    "bad event": (_damaged(lambda d: d["log"].append({"kind": "teleported"})), "log[4] is no event"),
    "bad reply": (_damaged(lambda d: d["log"][0].update(text=None)), "log[0].text"),
    "bad outcome": (_damaged(lambda d: d["log"][2]["ran"][0].update(outcome=["fine", "", ""])), "log[2].ran"),
    "bad status": (_damaged(lambda d: d["snapshot"].update(status="paused")), "snapshot.status"),
    "negative seconds": (_damaged(lambda d: d["log"][0].update(seconds=-1)), "log[0].seconds"),
}


@pytest.mark.parametrize("name", sorted(DAMAGE))
def test_a_damaged_or_foreign_state_is_refused_in_one_line(name: str, tmp_path: Path) -> None:
    text, said = DAMAGE[name]
    path = tmp_path / "run.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        FileStore.single(path).load("any")
    message = str(caught.value)
    assert "\n" not in message and str(path) in message and said in message, message


def test_the_good_state_loads() -> None:
    assert loads(json.dumps(_good())).snapshot.status == "done"


# --- stores --------------------------------------------------------------------------------------------


def _stores(tmp_path: Path) -> list[Store]:
    return [FileStore(tmp_path / "runs"), SQLiteStore(tmp_path / "runs.db")]


@pytest.mark.parametrize("kind", [0, 1], ids=["file", "sqlite"])
def test_a_store_keeps_the_last_state_of_each_run(kind: int, tmp_path: Path) -> None:
    store = _stores(tmp_path)[kind]
    assert isinstance(store, Store)
    state = loads(json.dumps(_good()))
    store.save(dataclasses.replace(state, run_id="b"))
    store.save(dataclasses.replace(state, run_id="a", task="first"))
    store.save(dataclasses.replace(state, run_id="a", task="second"))
    assert store.runs() == ("a", "b")
    assert store.load("a").task == "second" and store.load("b") == dataclasses.replace(state, run_id="b")
    store.delete("a")
    assert store.runs() == ("b",)
    with pytest.raises(ConfigError, match="no run"):
        store.load("a")


def test_a_file_store_leaves_no_temporary_file_and_replaces_atomically(tmp_path: Path) -> None:
    store = FileStore(tmp_path)
    state = loads(json.dumps(_good()))
    store.save(state)
    store.save(dataclasses.replace(state, task="again"))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run-1.json"]
    assert store.load("run-1").task == "again"
    with pytest.raises(ValueError, match="run id"):
        store.save(dataclasses.replace(state, run_id="../x"))


def test_a_sqlite_store_takes_saves_from_many_threads(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "many.db")
    state = loads(json.dumps(_good()))

    def save(i: int) -> None:
        for j in range(5):
            store.save(dataclasses.replace(state, run_id=f"run-{i}", task=f"{j}"))

    threads = [threading.Thread(target=save, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert store.runs() == tuple(sorted(f"run-{i}" for i in range(8)))
    assert {store.load(r).task for r in store.runs()} == {"4"}
    store.close()


def test_requests_are_values_that_compare_by_content() -> None:  # what "byte for byte" above relies on
    assert Request(("a",), (), 5) == Request(("a",), (), 5)  # type: ignore[arg-type]
    assert Reply("x") == Reply("x")
