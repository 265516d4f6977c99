"""A run's log, kept as it happens, and replayed into a fresh episode to resume it. No I/O here.

    journal = Journal(RunState(run_id, task, seed, window, settings_of(spec, model.name)))
    journal.sent(command, event)          # each event the episode is sent, in order
    journal.intend(command)               # before an Invoke or InvokeAll is carried out
    state = journal.state(episode, steps, status="running")   # the value to save

    replayed = replay(Episode(spec, task, seed=seed), state.log)
    replayed.command                      # what to carry out next (live)
    replayed.unknown                      # the call(s) whose intent was saved but not their outcome

The episode is deterministic: the same spec, task and seed, sent the same events, gives the same
commands. So replaying the log rebuilds all the episode holds (history, meter, plan, repeats,
counters) exactly, and the requests after a resume are byte for byte those of a run never stopped.
A log that does not fit the episode (another agent, another task) is refused in one line.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

from react_text import prompting
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
from react_text.core.episode import Episode
from react_text.core.errors import ConfigError
from react_text.core.types import Outcome, Step
from react_text.durable.state import Intent, Logged, Pending, RunState, Snapshot, Status
from react_text.observers.trace import step_dict

__all__ = ["Journal", "Replayed", "call_words", "progress", "replay", "unknown_outcome"]


def call_words(invoke: Invoke) -> tuple[str, str]:
    """A call as the log names it: its tool, and its arguments as written to the tool."""
    bound = invoke.arguments
    words = ", ".join([repr(a) for a in bound.args] + [f"{k}={v!r}" for k, v in bound.kwargs.items()])
    return invoke.tool.name, words


def _invokes(command: Invoke | InvokeAll) -> tuple[Invoke, ...]:
    return command.invokes if isinstance(command, InvokeAll) else (command,)


class Journal:
    """The log of one run as it goes (the driver tells it each event, and each call before it is
    made), and the state it comes to. The one mutable thing of a durable run, and the driver's."""

    def __init__(self, start: RunState) -> None:
        self.start = start
        self._log: list[Logged] = list(start.log)

    @property
    def log(self) -> tuple[Logged, ...]:
        return tuple(self._log)

    def sent(self, command: Command, event: Event) -> None:
        """The episode was sent `event` for `command` (an Emit's None is not logged: replay sends it)."""
        if event is not None:
            self._log.append(event)

    def intend(self, command: Invoke | InvokeAll) -> None:
        """The calls of `command` are about to run: recorded (and saved) before they are."""
        self._log.append(Intent(tuple(call_words(i) for i in _invokes(command))))

    def state(self, episode: Episode, *, status: Status = "running", pending: tuple[Pending, ...] = ()) -> RunState:
        return dataclasses.replace(self.start, log=self.log, snapshot=progress(episode, status, pending))


def progress(episode: Episode, status: Status = "running", pending: tuple[Pending, ...] = ()) -> Snapshot:
    """What the episode holds now, as the snapshot saved beside the log."""
    now = episode.progress()
    transcript = now.transcript
    command = episode.command
    result = None
    if isinstance(command, Done):
        r = command.result
        result = {"stop_reason": r.stop_reason, "answer": r.answer, "error": r.error, "forced": r.forced}
    return Snapshot(
        status=status,
        step=len(now.steps),
        usage=now.billed,
        rate=now.rate,
        tool_calls=now.tool_calls,
        transcript=transcript if isinstance(transcript, str) else tuple((m.role, m.content) for m in transcript),
        steps=tuple(step_dict(s) for s in now.steps),
        pending=pending,
        result=result,
    )


@dataclass(frozen=True, slots=True)
class Replayed:
    """Where a replay left the episode: the command to carry out next, the steps it handed out, and,
    when the log ends at an intent, the calls of `command` whose outcome was never recorded."""

    command: Command
    steps: tuple[Step, ...]
    unknown: Intent | None = None


def replay(
    episode: Episode, log: tuple[Logged, ...], *, see: Callable[[Command, Event], None] | None = None
) -> Replayed:
    """Send `log` to a fresh `episode`, as the run sent it, without any I/O; `see(command, event)`
    is told each, as an observer or recorder would have been (an Emit with None)."""
    command = episode.start()
    steps: list[Step] = []
    at = 0
    while True:
        if isinstance(command, Emit):
            steps.append(command.step)
            if see is not None:
                see(command, None)
            command = episode.send(None)
            continue
        if isinstance(command, Done) or at == len(log):
            if at < len(log):
                raise ConfigError(
                    f"the run state does not fit this agent and task: its log goes on past the run's end "
                    f"({len(log) - at} events more; was it saved by a run with other settings?)"
                )
            return Replayed(command, tuple(steps))
        entry = log[at]
        at += 1
        if isinstance(command, Invoke | InvokeAll):
            calls = tuple(call_words(i) for i in _invokes(command))
            if not isinstance(entry, Intent) or tuple(entry.calls) != calls:
                raise _misfit(at - 1, command, entry)
            if at == len(log):
                return Replayed(command, tuple(steps), entry)
            entry = log[at]
            at += 1
        if not _answers(command, entry):
            raise _misfit(at - 1, command, entry)
        if see is not None:
            see(command, entry)  # type: ignore[arg-type]  # an event, as _answers checked
        command = episode.send(entry)  # type: ignore[arg-type]


def _answers(command: Command, entry: Logged) -> bool:
    if isinstance(command, Send):
        return isinstance(entry, Replied | Failed)
    if isinstance(command, Approve):
        return isinstance(entry, Decided)
    if isinstance(command, InvokeAll):
        return isinstance(entry, RanAll) and len(entry.ran) == len(command.invokes)
    return isinstance(command, Invoke) and isinstance(entry, Ran)


def _misfit(index: int, command: Command, entry: Logged) -> ConfigError:
    return ConfigError(
        f"the run state does not fit this agent and task: at log[{index}] the run asks {type(command).__name__} "
        f"and the log holds {type(entry).__name__} (was it saved by a run with other settings?)"
    )


def unknown_outcome(invoke: Invoke) -> Ran | None:
    """What a call whose outcome was never recorded comes to on resume: None when it may run again
    (its tool is pure or idempotent); else an outcome that tells the model it is unknown."""
    if invoke.tool.pure or invoke.tool.idempotent:
        return None
    tool, words = call_words(invoke)
    text = prompting.render("corrections/outcome_unknown", tool=tool, input=words)
    return Ran(Outcome("error", text, "OutcomeUnknown"), 0.0)
