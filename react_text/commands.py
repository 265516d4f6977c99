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
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from .errors import EventError, ModelError
from .tools import Tool
from .types import Action, Outcome, Reply, Request, RunResult, Step

__all__ = [
    "EXPECTS",
    "Approval",
    "Approve",
    "Command",
    "Decided",
    "Done",
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

Approval = bool | Literal["stop"]


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


# --- events (what came of a command) -------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Replied:
    reply: Reply
    seconds: float


@dataclass(frozen=True, slots=True)
class Failed:
    error: ModelError
    seconds: float


@dataclass(frozen=True, slots=True)
class Decided:
    approval: Approval  # what the approver said: truthy runs the tool, "stop" ends the run


@dataclass(frozen=True, slots=True)
class Ran:
    outcome: Outcome
    seconds: float


@dataclass(frozen=True, slots=True)
class RanAll:
    ran: tuple[Ran, ...]  # one per call, in the order asked
    seconds: float  # the wall time of them all


Event = Replied | Failed | Decided | Ran | RanAll | None


# --- the contract ---------------------------------------------------------------------------------

EXPECTS: Mapping[type[Command], tuple[type[object], ...]] = {
    Send: (Replied, Failed),
    Approve: (Decided,),
    Invoke: (Ran,),
    InvokeAll: (RanAll,),
    Emit: (type(None),),
    Done: (),
}

# What each event carries, by field: a driver that builds one from the wrong thing is told so here,
# not with an AttributeError somewhere in the episode.
_CARRIES: Mapping[type[object], tuple[tuple[str, type[object] | tuple[type[object], ...]], ...]] = {
    Replied: (("reply", Reply), ("seconds", (int, float))),
    Failed: (("error", ModelError), ("seconds", (int, float))),
    Decided: (),  # an approver's answer is read by its truth, as it always was
    Ran: (("outcome", Outcome), ("seconds", (int, float))),
    RanAll: (("ran", tuple), ("seconds", (int, float))),
}


def check(command: Command, event: object) -> None:
    """Raise EventError unless `event` is what `command` asks for, whole; change nothing."""
    expected = EXPECTS[type(command)]
    if not isinstance(event, expected):
        raise EventError(f"{_asked(command)}, not {_name(event)}")
    for field, kind in _CARRIES.get(type(event), ()):
        value = getattr(event, field)
        if not isinstance(value, kind) or isinstance(value, bool):
            raise EventError(f"{type(event).__name__}.{field} must be {_kinds(kind)}, not {_name(value)}")
    if isinstance(command, InvokeAll) and isinstance(event, RanAll):
        asked, came = len(command.invokes), len(event.ran)
        if came != asked or not all(isinstance(r, Ran) and isinstance(r.outcome, Outcome) for r in event.ran):
            got = ", ".join(_name(r) for r in event.ran) or "nothing"
            raise EventError(f"InvokeAll asked for {asked} calls and takes a RanAll of {asked} Ran, not of {got}")


def _asked(command: Command) -> str:
    takes = " or ".join(_name_of(t) for t in EXPECTS[type(command)]) or "nothing (the run is over)"
    return f"the episode asked {type(command).__name__} and takes {takes}"


def _name_of(kind: type[object]) -> str:
    return "None" if kind is type(None) else kind.__name__


def _name(value: object) -> str:
    return "None" if value is None else type(value).__name__


def _kinds(kind: type[object] | tuple[type[object], ...]) -> str:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if kinds == (int, float):
        return "a number"
    return " or ".join(f"{'an' if k.__name__[0] in 'AEIOU' else 'a'} {k.__name__}" for k in kinds)
