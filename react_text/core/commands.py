"""What an episode asks its driver to do (commands), what the driver tells it came of that (events),
and which event answers which command: the contract between the sans-IO core and its drivers.

    Send(request)                   ->  Replied(reply, seconds) | Failed(error, seconds)
    Approve(tool, action)           ->  Decided(approval)
    Invoke(tool, arguments, limit)  ->  Ran(outcome, seconds)
    InvokeAll(invokes)              ->  RanAll(ran, seconds)    one Ran a call, in the order asked
    Emit(step)                      ->  None
    Done(result)                        nothing: the run is over

The table is `EXPECTS`; `check` holds an event to it, as h11 holds an event to the state it is sent
in (h11/_state.py, `Connection.send`): an event the command did not ask for raises
`errors.EventError`, which names what was expected and what came, before anything is changed.
An event is checked for what it carries when it is made (a Replied holds a Reply and a number of
seconds, ...): a TypeError that names the field, at the line that made it.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Literal

from react_text.core.errors import EventError, ModelError
from react_text.core.types import Action, Outcome, Reply, Request, RunResult, Step
from react_text.tools.tool import Tool

__all__ = [
    "EXPECTS",
    "Approval",
    "Approve",
    "Approver",
    "Command",
    "Decided",
    "Deny",
    "Done",
    "Edit",
    "Emit",
    "Event",
    "Failed",
    "Invoke",
    "InvokeAll",
    "Ran",
    "RanAll",
    "Replied",
    "Send",
    "check",
]


@dataclass(frozen=True, slots=True)
class Deny:
    """An approver's no, with the reason the model is told (corrections/denied.txt)."""

    reason: str


@dataclass(frozen=True, slots=True)
class Edit:
    """An approver's yes to the call with another input, written as the model would write it."""

    input: str


Approval = bool | Literal["stop"] | Deny | Edit
# What answers an Approve: `approve(tool, action)`, an Agent's, which may be async. "later" (a run
# that keeps its state only: durable/) stops the run, awaiting_approval, until a resume decides.
Approver = Callable[[Tool, Action], Approval | Literal["later"] | Awaitable[Approval | Literal["later"]]]


# --- commands (what the driver is asked to do) ---------------------------------------------------


@dataclass(frozen=True, slots=True)
class Send:
    """Call the model with `request`."""

    request: Request


@dataclass(frozen=True, slots=True)
class Approve:
    """Ask the approver whether `tool` may run `action`."""

    tool: Tool
    action: Action


@dataclass(frozen=True, slots=True)
class Invoke:
    """Run `tool` on `arguments`, within `seconds` (None: no time limit)."""

    tool: Tool
    arguments: inspect.BoundArguments
    seconds: float | None  # the time limit


@dataclass(frozen=True, slots=True)
class InvokeAll:
    """Run these calls at once (the independent actions of one reply); answer with one Ran each, in order."""

    invokes: tuple[Invoke, ...]


@dataclass(frozen=True, slots=True)
class Emit:
    """A step is complete: hand it out."""

    step: Step


@dataclass(frozen=True, slots=True)
class Done:
    """The run is over."""

    result: RunResult


Command = Send | Approve | Invoke | InvokeAll | Emit | Done


# --- events (what came of a command), each checked when it is made -------------------------------


@dataclass(frozen=True, slots=True)
class Replied:
    reply: Reply
    seconds: float

    def __post_init__(self) -> None:
        if not isinstance(self.reply, Reply) or type(self.seconds) not in _NUMBER:
            raise _carries(self, reply=Reply)


@dataclass(frozen=True, slots=True)
class Failed:
    error: ModelError
    seconds: float

    def __post_init__(self) -> None:
        if not isinstance(self.error, ModelError) or type(self.seconds) not in _NUMBER:
            raise _carries(self, error=ModelError)


@dataclass(frozen=True, slots=True)
class Decided:
    approval: Approval  # what the approver said: truthy runs the tool, "stop" ends the run (read as ever)


@dataclass(frozen=True, slots=True)
class Ran:
    outcome: Outcome
    seconds: float

    def __post_init__(self) -> None:
        if not isinstance(self.outcome, Outcome) or type(self.seconds) not in _NUMBER:
            raise _carries(self, outcome=Outcome)


@dataclass(frozen=True, slots=True)
class RanAll:
    ran: tuple[Ran, ...]  # one per call, in the order asked
    seconds: float  # the wall time of them all

    def __post_init__(self) -> None:
        if not isinstance(self.ran, tuple) or not all(isinstance(r, Ran) for r in self.ran):
            raise TypeError(f"RanAll.ran must be a tuple of Ran, not {_names(self.ran)}")
        if type(self.seconds) not in _NUMBER:
            raise _carries(self)


Event = Replied | Failed | Decided | Ran | RanAll | None

_NUMBER = (float, int)  # of seconds: not a bool, not None


def _carries(event: object, **kinds: type[object]) -> TypeError:
    """What is wrong with what `event` was made of: the first field that is not of its kind."""
    for field, kind in kinds.items():
        value = getattr(event, field)
        if not isinstance(value, kind):
            return TypeError(f"{type(event).__name__}.{field} must be {_a(kind.__name__)}, not {_name(value)}")
    seconds = getattr(event, "seconds", None)
    return TypeError(f"{type(event).__name__}.seconds must be a number of seconds, not {_name(seconds)}")


# --- the contract ---------------------------------------------------------------------------------

EXPECTS: Mapping[type[Command], tuple[type[object], ...]] = {
    Send: (Replied, Failed),
    Approve: (Decided,),
    Invoke: (Ran,),
    InvokeAll: (RanAll,),
    Emit: (type(None),),
    Done: (),
}


def check(command: Command, event: object) -> None:
    """Raise EventError unless `event` is what `command` asks for (a RanAll: one Ran a call); change nothing."""
    if type(event) not in EXPECTS[type(command)] and not isinstance(event, EXPECTS[type(command)]):
        raise EventError(f"{_asked(command)}, not {_name(event)}")
    if type(command) is InvokeAll:
        ran, asked = typing.cast("RanAll", event).ran, len(command.invokes)
        if len(ran) != asked:
            raise EventError(f"InvokeAll asked for {asked} calls and takes a RanAll of {asked} Ran, not {_names(ran)}")


def _asked(command: Command) -> str:
    takes = " or ".join(_name_of(t) for t in EXPECTS[type(command)]) or "nothing (the run is over)"
    return f"the episode asked {type(command).__name__} and takes {takes}"


def _name_of(kind: type[object]) -> str:
    return "None" if kind is type(None) else kind.__name__


def _name(value: object) -> str:
    return "None" if value is None else type(value).__name__


def _names(values: object) -> str:
    """A tuple's items by kind: "a tuple of Ran, str"; anything else by its own."""
    if not isinstance(values, tuple):
        return _name(values)
    return f"a tuple of {', '.join(_name(v) for v in values)}" if values else "an empty tuple"


def _a(name: str) -> str:
    return f"{'an' if name[:1] in tuple('AEIOU') else 'a'} {name}"
