"""The one way to watch a run: the drivers tell an observer every command before it is carried
out, what came of it, and how the run ended. Telemetry (OpenTelemetry spans) and traces (JSONL)
both implement it; nothing wraps the model.

    observer.begin(model)                    # the run starts, on a model that offers this (ModelInfo)
    with observer.around(command) as call:   # a model request, a tool run, the approver asked
        event = ...carry the command out...
        call.record(event, counted)          # what came of it; `counted`: the engine's count of
                                             # a reply's tokens, when the model reported none
    observer.end(result) / observer.fail(error) / observer.abandon(steps)

An exception raised while the command is carried out (Ctrl-C, a bug in a backend) passes through
`around`, which may note it and must let it go on.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from react_text.core.commands import Command, Event
    from react_text.core.model_info import ModelInfo
    from react_text.core.types import RunResult, Usage

__all__ = ["Call", "Observer", "Quiet", "both"]


class Call(Protocol):
    def record(self, event: Event, counted: Usage | None = None) -> None:
        """What came of the command."""


class Observer(Protocol):
    def begin(self, model: ModelInfo) -> None:
        """The run starts, on a model that offers what `model` says (its server, its URL...)."""

    def around(self, command: Command) -> AbstractContextManager[Call]:
        """Entered before the command is carried out, left after."""

    def end(self, result: RunResult) -> None:
        """The run finished."""

    def fail(self, error: BaseException) -> None:
        """The run was interrupted by an exception (Ctrl-C, a bug in a backend)."""

    def abandon(self, steps: int) -> None:
        """The caller stopped iterating the run after `steps` steps (closed it, or let it go)."""


class _QuietCall:
    def record(self, event: Event, counted: Usage | None = None) -> None:
        pass


class Quiet:
    """An observer that notes nothing: a base for those that note some things."""

    def begin(self, model: ModelInfo) -> None:
        pass

    def around(self, command: Command) -> AbstractContextManager[Call]:
        return _QUIETLY  # one for all: entered and left at every command of every run, it keeps nothing

    def end(self, result: RunResult) -> None:
        pass

    def fail(self, error: BaseException) -> None:
        pass

    def abandon(self, steps: int) -> None:
        pass


class _Quietly(AbstractContextManager["_QuietCall"]):
    """`Quiet.around`: a call that notes nothing, and lets every exception go on."""

    def __enter__(self) -> _QuietCall:
        return _QUIET_CALL

    def __exit__(self, *raised: object) -> None:
        return None


def both(observers: Sequence[Observer]) -> Observer:
    """One observer that tells each of `observers`, in order (entered in order, left in reverse)."""
    return observers[0] if len(observers) == 1 else _Several(tuple(observers))


class _Several:
    def __init__(self, observers: tuple[Observer, ...]) -> None:
        self._observers = observers

    def begin(self, model: ModelInfo) -> None:
        for o in self._observers:
            o.begin(model)

    @contextlib.contextmanager
    def around(self, command: Command) -> Iterator[Call]:
        with contextlib.ExitStack() as stack:
            calls = [stack.enter_context(o.around(command)) for o in self._observers]
            yield _SeveralCalls(calls)

    def end(self, result: RunResult) -> None:
        for o in self._observers:
            o.end(result)

    def fail(self, error: BaseException) -> None:
        for o in self._observers:
            o.fail(error)

    def abandon(self, steps: int) -> None:
        for o in self._observers:
            o.abandon(steps)


class _SeveralCalls:
    def __init__(self, calls: list[Call]) -> None:
        self._calls = calls

    def record(self, event: Event, counted: Usage | None = None) -> None:
        for call in self._calls:
            call.record(event, counted)


_QUIET_CALL = _QuietCall()
_QUIETLY = _Quietly()
