"""OpenTelemetry spans for runs, model calls and tool calls (a no-op until the SDK is wired).

spans = telemetry.start(agent, task)      # the run's span
with spans.around(command) as span:       # a model call or a tool call, as a child span
    event = ...
    span.record(event)
spans.end(result)                          # or spans.fail(exc)
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .episode import Command, Event
    from .loop import Agent
    from .types import RunResult


class _Call:
    def record(self, event: Event) -> None:
        """What came of the call."""


class RunSpans:
    """The spans of one run. This base records nothing."""

    @contextmanager
    def around(self, command: Command) -> Iterator[_Call]:
        yield _Call()

    def end(self, result: RunResult) -> None:
        """The run finished."""

    def fail(self, error: BaseException) -> None:
        """The run was interrupted by an exception (Ctrl-C, a bug in a backend)."""


_NONE = RunSpans()


def start(agent: Agent, task: str) -> RunSpans:
    return _NONE
