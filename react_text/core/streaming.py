"""A run as it is written: typed events while the model's text arrives, then the step, then the run.

    for event in agent.stream(task):               # Stream: a sync iterator of events
        ...                                        # TextDelta, ActionReady, Observed, StepEnd, RunEnd
    async for event in agent.astream(task): ...    # AStream: the same, `async for`
    stream.result                                  # once it is exhausted: the RunResult run() returns

What comes, in order, for each step: the reply's text as `TextDelta`s (kind "thinking", "label",
"thought", "action" or "answer", from `parser.stream.StreamReader`: text is released once no later
byte can change it, so a made-up OBSERVATION is never released, however it is split), each action as
soon as it is read whole (`ActionReady`, before it is approved or run), the observation fed back
(`Observed`), and `StepEnd` with the same `Step` that `iter_steps` hands out; last, `RunEnd` with the
same `RunResult` that `run` returns. A `Revision` says that what was released of the step's reply is
replaced by its deltas: after a lone `</think>`, a reply asked again (the step's first call stopped
inside its thinking) or a call that failed after some text came.

The driver is the flow's (`flow.Runner`), as `Run` and `AsyncRun` are: the episode is sent the
complete Reply, the observer and telemetry are told what a run tells them, and only the model call
differs: a model that streams (`model_info.StreamingModel`) is read delta by delta, any other is
streamed as one delta. So a streamed run takes the steps an unstreamed one takes.
"""

from __future__ import annotations

import asyncio
import contextlib
import typing
from collections.abc import AsyncGenerator, Generator, Iterable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from react_text.core.carrying import acarry, carry, guarded
from react_text.core.commands import Send
from react_text.core.flow import AskWindow, Runnable, Runner
from react_text.core.keeping import Keeper
from react_text.core.model_info import ReplyDelta, threaded, whole
from react_text.core.types import Action, AsyncModel, Reply, Request, RunResult, Step
from react_text.observers.observing import Observer
from react_text.parser import stream as reading
from react_text.parser.stream import DeltaKind, Reader, StreamReader

__all__ = [
    "AStream",
    "ActionReady",
    "Observed",
    "Revision",
    "RunEnd",
    "RunEvent",
    "StepEnd",
    "Stream",
    "TextDelta",
]


@dataclass(frozen=True, slots=True)
class TextDelta:
    """Text of step `step`'s reply, as it arrives: thinking, or a label or a section's text."""

    step: int
    kind: DeltaKind
    text: str


@dataclass(frozen=True, slots=True)
class Revision:
    """What was released of step `step`'s reply is replaced by `deltas` (() : none of it stands)."""

    step: int
    deltas: tuple[TextDelta, ...]


@dataclass(frozen=True, slots=True)
class ActionReady:
    """An action of step `step`'s reply, read whole (`index`: its place among the reply's actions)."""

    step: int
    index: int
    action: Action


@dataclass(frozen=True, slots=True)
class Observed:
    """What was fed back after step `step` (`Step.observation`; `parts`: `Step.observations`)."""

    step: int
    text: str
    parts: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class StepEnd:
    """A step is complete: the `Step` that `iter_steps` hands out."""

    step: Step


@dataclass(frozen=True, slots=True)
class RunEnd:
    """The run is over: the `RunResult` that `run` returns."""

    result: RunResult


RunEvent = TextDelta | Revision | ActionReady | Observed | StepEnd | RunEnd
"""Any event of a stream (`Stream`, `AStream`)."""


class _Replies:
    """The reading of the replies of one run as they arrive: a StreamReader per model call, the
    events it makes, and what a second call in one step or a failed call comes to."""

    def __init__(self, agent: Runnable) -> None:
        self._agent = agent
        self._reader = Reader()
        self._state = StreamReader(self._reader)
        self._step = 0  # the step the last call was for
        self._released = False  # some of that step's reply was released
        self._prior: Reply | None = None  # the step's last reply, when a call of the step gave one
        self._base: Reply | None = None  # the reply a completion model's call continues
        self._chat = agent.model.api == "chat"

    def window(self, window: object) -> None:
        """The run's spec is known once its window is: read replies as it says."""
        spec = self._agent.spec(window if isinstance(window, int) else None)
        self._reader = Reader(
            chat=spec.api == "chat",
            parser=spec.parser,
            tools=tuple(t.name for t in spec.tools),
            parallel=spec.prompting.parallel,
            most=spec.limits.actions,
        )
        self._chat = spec.api == "chat"

    def asking(self, step: int) -> list[RunEvent]:
        """A call for `step` begins: a second one in the step replaces what the first released (a
        completion model continues the first one's text, which is released again)."""
        events: list[RunEvent] = []
        prior = self._prior if step == self._step else None
        if step == self._step and self._released:
            events.append(Revision(step, ()))
        self._step, self._released, self._prior = step, False, None
        self._state = StreamReader(self._reader)
        self._base = prior if prior is not None and not self._chat else None
        if self._base is not None:
            if self._base.reasoning:
                events += self.feed(ReplyDelta(self._base.reasoning, reasoning=True))
            events += self.feed(ReplyDelta(self._base.text))
        return events

    def feed(self, delta: ReplyDelta) -> list[RunEvent]:
        self._state, made = self._state.feed(delta.text, reasoning=delta.reasoning)
        return self._events(made)

    def finish(self, reply: Reply) -> list[RunEvent]:
        self._prior = reply
        base = self._base
        if base is not None:  # a completion model's reply continued: read as the episode reads it
            thinking = "\n".join(r for r in (base.reasoning, reply.reasoning) if r) or None
            reply = Reply(base.text + reply.text, reply.usage, reply.finish_reason, thinking)
        return self._events(self._state.finish(reply))

    def failed(self) -> list[RunEvent]:
        """The call failed: what it released does not stand."""
        self._prior = None
        return [Revision(self._step, ())] if self._released else []

    def _events(self, made: Iterable[reading.StreamEvent]) -> list[RunEvent]:
        step = self._step
        events: list[RunEvent] = []
        for event in made:
            if isinstance(event, reading.Delta):
                if event.text:
                    events.append(TextDelta(step, event.kind, event.text))
            elif isinstance(event, reading.ActionRead):
                events.append(ActionReady(step, event.index, event.action))
            else:
                events.append(Revision(step, tuple(TextDelta(step, d.kind, d.text) for d in event.deltas)))
        self._released = self._released or any(isinstance(e, TextDelta | Revision) for e in events)
        return events


def _ended(step: Step) -> list[RunEvent]:
    events: list[RunEvent] = []
    if step.observation is not None:
        events.append(Observed(step.number, step.observation, step.observations))
    events.append(StepEnd(step))
    return events


# --- what the two streams share -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Failed:
    """A model call that raised `error` while its reply was read (or whose stream ended without its Reply)."""

    error: BaseException


def _came(replies: _Replies, piece: ReplyDelta | Reply | _Failed) -> list[RunEvent]:
    """What a call came to, once its stream is closed: its Reply read to the end, or (it failed)
    what it released undone (anything else a stream ends with is sent to the flow unread)."""
    if isinstance(piece, _Failed):
        return replies.failed()
    return replies.finish(piece) if isinstance(piece, Reply) else []


_Events = TypeVar("_Events", Generator[RunEvent, None, None], AsyncGenerator[RunEvent, None])


class _Streamed(Generic[_Events]):
    """What the two streams share: the run's state (`Runner`, which checks what the run is given)
    and the generator of its events (a function's, not a method's: the stream and its suspended
    generator do not hold each other)."""

    __slots__ = ("__weakref__", "_events", "_runner")

    def __init__(
        self,
        agent: Runnable,
        task: str,
        observer: Observer | None = None,
        *,
        seed: int | None = None,
        keeper: Keeper | None = None,
    ) -> None:
        self._runner = Runner(agent, task, observer, seed, keeper)  # keeper: a run that keeps its state
        self._events: _Events = self._begun(agent, self._runner)

    @staticmethod
    def _begun(agent: Runnable, runner: Runner) -> _Events:
        raise NotImplementedError

    @property
    def result(self) -> RunResult:
        return self._runner.result

    def close(self) -> None:
        self._runner.close()

    def __del__(self) -> None:
        with contextlib.suppress(Exception):
            self.close()


# --- sync ----------------------------------------------------------------------------------------------


def _streamed(model: Any, request: Request, streams: bool) -> Generator[ReplyDelta | Reply, None, None]:
    """The model's reply as a stream: its own, or its whole reply as one delta."""
    if streams:
        yield from model.stream_reply(request)
    else:
        yield from whole(model.generate(request))


def _pulled(pieces: Generator[ReplyDelta | Reply, None, None]) -> ReplyDelta | Reply | _Failed:
    """The stream's next piece, or what taking it raised (its end, before the Reply, a RuntimeError)."""
    try:
        return next(pieces)
    except StopIteration:
        return _Failed(RuntimeError("the model's stream_reply ended without its Reply"))
    except BaseException as exc:  # noqa: BLE001 - the flow says what it comes to
        return _Failed(exc)


def _events(agent: Runnable, runner: Runner) -> Generator[RunEvent, None, None]:
    """The run's events: the flow's needs carried out as `Run` carries them, the model's reply read
    as it comes."""
    flow = runner.flow()
    replies = _Replies(agent)
    handed = 0
    try:
        need = next(flow)
        while True:
            if isinstance(need, Step):
                handed += 1
                yield from _ended(need)
                need = next(flow)
            elif not isinstance(need, Send):
                try:
                    made = carry(agent, need)
                except BaseException as exc:  # noqa: BLE001 - the flow says what it comes to
                    need = flow.throw(exc)
                else:
                    if isinstance(need, AskWindow):
                        replies.window(made)
                    need = flow.send(made)
            else:
                yield from replies.asking(handed + 1)
                pieces = _streamed(agent.model, need.request, agent.info.streams)
                try:
                    piece = _pulled(pieces)
                    while isinstance(piece, ReplyDelta):
                        yield from replies.feed(piece)
                        piece = _pulled(pieces)
                finally:
                    pieces.close()
                yield from _came(replies, piece)
                need = flow.throw(piece.error) if isinstance(piece, _Failed) else flow.send(piece)
    except StopIteration:
        pass
    yield RunEnd(runner.result)


class Stream(_Streamed[Generator[RunEvent, None, None]]):
    """One run of an agent as events: iterate it; `result` once it is exhausted. `close()` stops
    the run where it is; a stream let go unfinished is closed when it is collected."""

    __slots__ = ()
    _begun = staticmethod(_events)  # the generator of its events

    def __iter__(self) -> Stream:
        return self

    def __next__(self) -> RunEvent:
        if self._runner.closed:
            raise StopIteration
        return next(self._events)

    def close(self) -> None:
        self._events.close()
        self._runner.close()


# --- async ---------------------------------------------------------------------------------------------


async def _astreamed(agent: Runnable, request: Request) -> AsyncGenerator[ReplyDelta | Reply, None]:
    """The model's reply as a stream, awaited: its own async stream, its sync one on a thread, or
    its whole reply as one delta (agenerate, or generate on a thread)."""
    model: Any = agent.model
    info = agent.info
    if info.astreams:
        async for piece in model.astream_reply(request):
            yield piece
        return
    if info.streams:
        async for piece in threaded(lambda: model.stream_reply(request)):
            yield piece
        return
    if info.asynchronous:
        reply = await typing.cast(AsyncModel, model).agenerate(request)
    else:
        reply = await asyncio.to_thread(guarded, model.generate, request)
    for piece in whole(reply):
        yield piece


async def _apulled(pieces: AsyncGenerator[ReplyDelta | Reply, None]) -> ReplyDelta | Reply | _Failed:
    """`_pulled`, awaited."""
    try:
        return await anext(pieces)
    except StopAsyncIteration:
        return _Failed(RuntimeError("the model's astream_reply ended without its Reply"))
    except BaseException as exc:  # noqa: BLE001 - the flow says what it comes to
        return _Failed(exc)


async def _aevents(agent: Runnable, runner: Runner) -> AsyncGenerator[RunEvent, None]:
    """`_events`, awaited."""
    flow = runner.flow()
    replies = _Replies(agent)
    handed = 0
    try:
        need = next(flow)
        while True:
            if isinstance(need, Step):
                handed += 1
                for event in _ended(need):
                    yield event
                need = next(flow)
            elif not isinstance(need, Send):
                try:
                    made = await acarry(agent, need)
                except BaseException as exc:  # noqa: BLE001 - the flow says what it comes to (CancelledError too)
                    need = flow.throw(exc)
                else:
                    if isinstance(need, AskWindow):
                        replies.window(made)
                    need = flow.send(made)
            else:
                for event in replies.asking(handed + 1):
                    yield event
                pieces = _astreamed(agent, need.request)
                try:
                    piece = await _apulled(pieces)
                    while isinstance(piece, ReplyDelta):
                        for event in replies.feed(piece):
                            yield event
                        piece = await _apulled(pieces)
                finally:
                    await pieces.aclose()
                for event in _came(replies, piece):
                    yield event
                need = flow.throw(piece.error) if isinstance(piece, _Failed) else flow.send(piece)
    except StopIteration:
        pass
    yield RunEnd(runner.result)


class AStream(_Streamed[AsyncGenerator[RunEvent, None]]):
    """`Stream`, for `async for`: `await stream.aclose()` stops the run where it is."""

    __slots__ = ()
    _begun = staticmethod(_aevents)  # the generator of its events

    def __aiter__(self) -> AStream:
        return self

    async def __anext__(self) -> RunEvent:
        if self._runner.closed:
            raise StopAsyncIteration
        return await anext(self._events)

    async def aclose(self) -> None:
        await self._events.aclose()
        self._runner.close()
