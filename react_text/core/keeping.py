"""What a run that keeps its state asks of its keeper: the seam between the flow (`flow.py`) and
durable runs (`react_text.durable.keeping.Keeping` is the one keeper), so that the flow holds no
knowledge of logs and stores, and the drivers none at all (they hand the keeper to the flow).

    command = keeper.begin(episode, spec, model, see)   # a fresh run saved, or a saved one replayed
    carry = keeper.intend(episode, invoke)              # before a tool call: its intent saved
    event = keeper.sent(command, event)                 # each event the episode is sent, logged
    keeper.stepped(episode)                             # after each step: the state saved
    result = keeper.later(episode, approve)             # the approver said "later": saved, paused
    keeper.ended(episode)                               # the run is over: saved as done
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from react_text.core.commands import Approve, Command, Event, Invoke, InvokeAll, Ran, RanAll
from react_text.core.episode import Episode
from react_text.core.spec import EpisodeSpec
from react_text.core.types import RunResult

__all__ = ["Keeper"]


class Keeper(Protocol):
    def window(self, asked: int | None) -> int | None:
        """The context window to plan the run for: `asked` (the model's), or the one a resumed run was planned for."""

    def begin(self, episode: Episode, spec: EpisodeSpec, model: str, see: Callable[[Command, Event], None]) -> Command:
        """Start `episode` and save the fresh run, or replay the saved one into it (`see` told each
        command and event, as the flow sees them live): the command the run goes on from."""

    def intend(self, episode: Episode, command: Invoke | InvokeAll) -> Invoke | InvokeAll | Ran | RanAll:
        """Before the calls of `command` run: their intent saved. What to carry out: `command`; or,
        resumed at an intent whose outcome was not saved, only the calls that may run again, or the
        event that says the outcome of the others is unknown."""

    def sent(self, command: Command, event: Event) -> Event:
        """`event`, about to be sent for `command`, logged (made whole first, if `intend` held back calls)."""

    def stepped(self, episode: Episode) -> None:
        """A step is complete: the state saved."""

    def later(self, episode: Episode, command: Approve) -> RunResult:
        """The approver answered "later": the state saved as awaiting approval; the run's result so far."""

    def ended(self, episode: Episode) -> None:
        """The run is over: the state saved as done."""
