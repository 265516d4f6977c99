"""A run that keeps its state: the keeper the flow tells each step (`core/keeping.Keeper`), and how
an agent's `state=` and `resume` make one.

    keeper = fresh(store, run_id, task, seed)               # agent.run(task, state=..., run_id=...)
    state, keeper = resumed(store, run_id, decision)         # agent.resume(store, decision=...)

What is saved, and when: the fresh run (an empty log) at its start; after every step; before every
tool call (the intent, with the reply that asked for it); when the approver answers "later" (status
awaiting_approval, the pending call named); at the end (done). A resume replays the log into a
fresh episode (`journal.replay`) and goes on live; a call whose intent was saved but whose outcome
was not is run again only if its tool is pure or idempotent, else the model is told its outcome is
unknown (`journal.unknown_outcome`). A decision given to a resume answers the pending approval.
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from react_text.core.commands import (
    Approval,
    Approve,
    Command,
    Decided,
    Deny,
    Edit,
    Event,
    Failed,
    Invoke,
    InvokeAll,
    Ran,
    RanAll,
    Replied,
)
from react_text.core.episode import Episode
from react_text.core.errors import ConfigError
from react_text.core.protocol import call
from react_text.core.spec import EpisodeSpec
from react_text.core.types import RunResult
from react_text.durable.journal import Journal, progress, replay, unknown_outcome
from react_text.durable.state import Pending, RunState, Status, settings_of
from react_text.durable.store import FileStore, SQLiteStore, Store

__all__ = ["Keeping", "StoreLike", "fresh", "load", "opened", "replies_used", "resumed"]

StoreLike = Store | str | os.PathLike[str]


def opened(where: StoreLike) -> Store:
    """The store `where` names: a Store as it is; a folder (one that exists, or a path ending in a
    separator) a FileStore; a .db, .sqlite or .sqlite3 file a SQLiteStore; any other path one file."""
    if isinstance(where, Store) and not isinstance(where, str | os.PathLike):
        return where
    path = Path(where)
    if path.is_dir() or str(where).endswith(("/", os.sep)):
        return FileStore(path)
    if path.suffix in (".db", ".sqlite", ".sqlite3"):
        return SQLiteStore(path)
    return FileStore.single(path)


def replies_used(state: RunState) -> int:
    """The model's replies (and failures) the run's log holds: a script resumed plays on from the next."""
    return sum(isinstance(e, Replied | Failed) for e in state.log)


def fresh(where: StoreLike, run_id: str | None, task: str, seed: int | None) -> Keeping:
    """The keeper of a new run of `task`, kept in `where` under `run_id` (default: a new random id).
    A run not over that the new one would write over (one file holds one run; a store, one a run id)
    is refused: a run waiting for approval, or stopped by a crash, is never lost silently."""
    store = opened(where)
    run_id = run_id or uuid.uuid4().hex[:12]
    single = isinstance(store, FileStore) and store.single_file is not None
    for kept in store.runs():
        if single or kept == run_id:
            status = store.load(kept).snapshot.status
            if status != "done":
                raise ConfigError(
                    f"{where} holds run {kept!r}, not over ({status}): go on with it (Agent.resume, react-text "
                    "resume) or remove it first; a new run does not write over it"
                )
    return Keeping(store, run_id, task, seed)


def load(where: StoreLike, run_id: str | None) -> tuple[Store, RunState]:
    """The store `where` names and the state of the run `run_id` in it (None: the one run it holds)."""
    store = opened(where)
    if run_id is None:
        kept = store.runs()
        if not kept and isinstance(where, str | os.PathLike) and not Path(where).exists():
            raise ConfigError(f"no run state at {where}")
        if len(kept) != 1:
            said = "none" if not kept else f"{len(kept)}: {', '.join(kept[:5])}"
            raise ConfigError(f"say which run to resume (run_id=...): {where} holds {said}")
        run_id = kept[0]
    return store, store.load(run_id)


def resumed(where: StoreLike, run_id: str | None, decision: Approval | None) -> tuple[RunState, Keeping]:
    """The saved state of a run, and the keeper that goes on with it (`decision`: the pending approval's)."""
    if decision is not None and not (decision is True or decision is False or decision == "stop" or _decided(decision)):
        raise ConfigError(
            f'{decision!r} is not a decision: give True, False, "stop", Deny(reason) or Edit(input) '
            "(or none, to ask the agent's approver again)"
        )
    store, state = load(where, run_id)
    return state, Keeping(store, state.run_id, state.task, state.seed, state=state, decision=decision)


def _decided(decision: object) -> bool:
    return isinstance(decision, Deny | Edit)


class Keeping:
    """The keeper of one run (core/keeping.Keeper): its journal, saved to `store`."""

    def __init__(
        self,
        store: Store,
        run_id: str,
        task: str,
        seed: int | None,
        *,
        state: RunState | None = None,
        decision: Approval | None = None,
    ) -> None:
        self.store = store
        self.run_id = run_id
        self._task = task
        self._seed = seed
        self._state = state
        self._decision = decision
        self._journal: Journal | None = None
        self._unknown = False  # resumed at an intent whose outcome was not saved
        self._fill: tuple[Ran | None, ...] | None = None  # the outcomes held back from an InvokeAll run again

    def window(self, asked: int | None) -> int | None:
        return self._state.window if self._state is not None else asked

    def begin(self, episode: Episode, spec: EpisodeSpec, model: str, see: Callable[[Command, Event], None]) -> Command:
        settings = settings_of(spec, model)
        state = self._state
        if state is None:
            self._journal = Journal(RunState(self.run_id, self._task, self._seed, spec.window, settings))
            command = episode.start()
            self._save(episode)
            return command
        _same(state.settings, settings, state.run_id)
        self._journal = journal = Journal(state)
        replayed = replay(episode, state.log, see=see)
        command = replayed.command
        _landed(state, episode, command)
        self._unknown = replayed.unknown is not None
        if self._decision is not None:
            if not isinstance(command, Approve):
                raise ConfigError(f"run {state.run_id!r} waits on no approval: resume it without a decision")
            event = Decided(self._decision)
            journal.sent(command, event)
            see(command, event)
            command = episode.send(event)
        return command

    def intend(self, episode: Episode, command: Invoke | InvokeAll) -> Invoke | InvokeAll | Ran | RanAll:
        if not self._unknown:
            self._log().intend(command)
            self._save(episode)
            return command
        self._unknown = False  # the intent is in the log already: these calls' outcome was never saved
        invokes = command.invokes if isinstance(command, InvokeAll) else (command,)
        fills = tuple(unknown_outcome(i) for i in invokes)
        if all(f is None for f in fills):
            return command
        if isinstance(command, Invoke):
            return fills[0]  # type: ignore[return-value]  # not None, as just checked
        again = tuple(i for i, f in zip(invokes, fills, strict=True) if f is None)
        if not again:
            return RanAll(fills, 0.0)  # type: ignore[arg-type]  # none is None
        self._fill = fills
        return InvokeAll(again)

    def sent(self, command: Command, event: Event) -> Event:
        if self._fill is not None and isinstance(event, RanAll):
            ran = iter(event.ran)
            event = RanAll(tuple(f if f is not None else next(ran) for f in self._fill), event.seconds)
            self._fill = None
        self._log().sent(command, event)
        return event

    def stepped(self, episode: Episode) -> None:
        self._save(episode)

    def later(self, episode: Episode, command: Approve) -> RunResult:
        tool, written = command.tool.name, command.action.input
        self._save(episode, "awaiting_approval", (Pending(tool, written, "approval"),))
        now = episode.progress()
        return RunResult(
            None,
            "awaiting_approval",
            now.steps,
            now.billed,
            now.transcript,
            error=f"awaiting approval of {call(tool, written)}",
            tool_calls=now.tool_calls,
        )

    def ended(self, episode: Episode) -> None:
        self._save(episode, "done")

    def _log(self) -> Journal:
        if self._journal is None:
            raise RuntimeError("the keeper was not begun: the flow calls begin first")
        return self._journal

    def _save(self, episode: Episode, status: Status = "running", pending: tuple[Pending, ...] = ()) -> None:
        self.store.save(self._log().state(episode, status=status, pending=pending))


def _same(saved: Any, now: Any, run_id: str) -> None:
    """A resume makes the run's episode again: the settings it was saved with, or one ConfigError line."""
    saved, now = json.loads(json.dumps(dict(saved))), json.loads(json.dumps(dict(now)))
    differ = sorted(k for k in saved.keys() | now.keys() if saved.get(k) != now.get(k))
    if differ:
        raise ConfigError(
            f"run {run_id!r} was saved by an agent with other settings ({', '.join(differ)}): "
            "resume it with the same model, tools and flags"
        )


def _landed(state: RunState, episode: Episode, command: Command) -> None:
    """The replayed log must come to the snapshot saved beside it (the history as sent, the steps,
    the call waiting for approval): a log or a task changed by hand, or a state of another run, is
    refused, never run on."""
    now = progress(episode, state.snapshot.status, state.snapshot.pending)
    saved = state.snapshot
    differ = [
        name
        for name, a, b in (
            ("the history", _plain(saved.transcript), _plain(now.transcript)),
            ("the steps", saved.step, now.step),
        )
        if a != b
    ]
    waiting = [(p.tool, p.input) for p in saved.pending if p.why == "approval"]
    if waiting and not (isinstance(command, Approve) and waiting == [(command.tool.name, command.action.input)]):
        differ.append("the call waiting for approval")
    if differ:
        raise ConfigError(
            f"run {state.run_id!r}: its log does not come to what was saved beside it ({', '.join(differ)} "
            "differ): the state was changed, or is another run's"
        )


def _plain(value: object) -> Any:
    return json.loads(json.dumps(value))
