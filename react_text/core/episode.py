"""One run of the protocol as a state machine that performs no I/O (sans-IO, as h11 does it).

The episode is built from one frozen value, `EpisodeSpec`, that holds all a run reads (the Agent
makes it: `agent.spec(window)`); it says what to do next and is told what came of it:

    episode = Episode(spec, task)
    command = episode.start()
    while not isinstance(command, Done):
        ...                                   # Send: call the model; Approve: ask the approver;
        command = episode.send(event)         # Invoke: run the tool; Emit: a step is complete

Which event answers which command is the table in `commands.py`; `episode.expecting` says what the
episode waits for, and an event it did not ask for raises `EventError` (naming what was expected
and what came) before anything changes, so the episode carries on as if it was never sent.

Everything a run decides lives behind it, by phase: the step machine (`steps`: ask, act or
correct, feed back), one model call and the reading of its reply (`asking`: the request, the
refused-request retry, the guard's one cut, the parser), the actions (`acting`: tools, repeats,
approvals), the forced final answer (`final`), all over the run's token account
(`tokens.account`). It never calls a model, runs a tool, reads a clock or sleeps, so the sync and
async drivers (`core/drivers.py`) are a few lines each and one set of behaviour tests covers both.

The token budget is planned, not hoped for, by the run's token account (`tokens.account.Account`),
which the episode asks and never reaches behind: a normal call is made only if, after it, the
forced final call still fits (its note, a short observation, a short reply); the estimate of each
request is corrected with what the server reported for the last one. A budget warning is attached
to an observation only when the next call fits.
"""

from __future__ import annotations

from dataclasses import dataclass

from react_text.core.commands import (
    EXPECTS,
    Approval,
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
    check,
)
from react_text.core.errors import EventError
from react_text.core.spec import EpisodeSpec
from react_text.core.steps import Steps
from react_text.core.types import Message, Step, Usage

__all__ = [  # the commands and events are commands.py's, named here too for those who import them from here
    "Approval",
    "Approve",
    "Command",
    "Decided",
    "Done",
    "Emit",
    "Episode",
    "EpisodeSpec",
    "Event",
    "Failed",
    "Invoke",
    "InvokeAll",
    "Progress",
    "Ran",
    "RanAll",
    "Replied",
    "Send",
]


@dataclass(frozen=True, slots=True)
class Progress:
    """A run so far: the steps taken, what was billed, the server's learned token rate, the tool
    calls made and the history as it would be sent now."""

    steps: tuple[Step, ...]
    billed: Usage
    rate: float | None
    tool_calls: int
    transcript: tuple[Message, ...] | str


class Episode:
    """One run of `task` as `spec` says. `seed` goes with every model call (`Request.seed`)."""

    def __init__(self, spec: EpisodeSpec, task: str, *, seed: int | None = None) -> None:
        if not isinstance(spec, EpisodeSpec):
            raise TypeError(f"an Episode is built from an EpisodeSpec (agent.spec()), not {type(spec).__name__}")
        if not isinstance(task, str):
            raise TypeError(f"the task must be a string, not {type(task).__name__}")
        self._steps = Steps(spec, task, seed)
        self._play = self._steps.play()
        self._command: Command | None = None  # the last command given; None before start

    @property
    def command(self) -> Command | None:
        """The command the episode last gave (None before `start`): what it waits on."""
        return self._command

    @property
    def expecting(self) -> tuple[type[object], ...]:
        """The kinds of event `send` takes now (commands.EXPECTS): (Replied, Failed) after a Send,
        (NoneType,) after an Emit, () before `start` and once Done."""
        return () if self._command is None else EXPECTS[type(self._command)]

    @property
    def counted(self) -> Usage | None:
        """The tokens the engine counted for the last reply it was sent, when the model reported
        none (None when it did): what the reply was billed."""
        return self._steps.account.counted

    def progress(self) -> Progress:
        """What the run has come to so far, read and never changed (a durable run saves it)."""
        steps = self._steps
        return Progress(
            tuple(steps.steps),
            steps.account.billed,
            steps.account.rate,
            steps.actor.tool_calls,
            steps.account.transcript(),
        )

    def start(self) -> Command:
        """The first command. Once only."""
        if self._command is not None:
            raise EventError(f"the episode has started already: it is waiting on {type(self._command).__name__}")
        try:
            command = next(self._play)
        except StopIteration as end:  # finished before any call (a budget too small for one)
            command = Done(end.value)
        self._command = command
        return command

    def send(self, event: Event) -> Command:
        """Tell the episode what came of its last command; the next command. An event the last
        command did not ask for raises EventError and changes nothing."""
        command = self._command
        if command is None:
            raise EventError("the episode has not started: call start() first, then send what came of its command")
        if type(command) is Done:
            raise EventError(f"the run is over (Done): the episode takes no more events, not {_kind(event)}")
        check(command, event)
        try:
            command = self._play.send(event)
        except StopIteration as end:
            if end.value is None:  # the play raised before (a parser's bug, say): it is over, with no result
                raise EventError("the episode raised an exception earlier: it takes no more events") from None
            command = Done(end.value)
        self._command = command
        return command


def _kind(event: object) -> str:
    return "None" if event is None else type(event).__name__
