"""The flow of one run: everything a run does around its episode but the I/O, written once.

    flow = Runner(agent, task, observer, seed).flow()
    need = next(flow)              # a Send, Approve, Invoke or InvokeAll to carry out, the window
    need = flow.send(made)         # to ask (AskWindow), or a Step to hand out; made: what came of it
    need = flow.throw(exc)         # or what it raised: the flow says what it comes to

What a run decides lives in the episode (a state machine that performs no I/O). What a step does
around it (the observer and telemetry told, what an exception comes to, the event the episode is
sent, the tokens recorded for a trajectory) is this one generator; it yields what needs the world
outside. The drivers (`drivers.Run`, `drivers.AsyncRun`) are the two loops that carry that out and
send back what came of it, as httpx's sync and async clients drive one auth flow; so a sync and an
async run of the same script take the same steps, and fail alike. The flow reads an agent through
`Runnable` (`Agent` is one), so that it needs nothing of the module that makes agents.
"""

from __future__ import annotations

import time
from collections.abc import Generator
from dataclasses import dataclass
from typing import Any, Protocol

from react_text.core.commands import (
    Approve,
    Approver,
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
from react_text.core.errors import ConfigError, ModelError
from react_text.core.keeping import Keeper
from react_text.core.limits import Limits
from react_text.core.model_info import ModelInfo
from react_text.core.sampling import check_seed
from react_text.core.spec import EpisodeSpec
from react_text.core.types import Model, Reply, RunResult, Step
from react_text.observers import observing, telemetry, trajectory
from react_text.observers.observing import Observer

__all__ = [
    "WINDOW",
    "AskWindow",
    "Flow",
    "Need",
    "Runnable",
    "Runner",
    "escaped",
]


class Runnable(Protocol):
    """What a run reads of its agent (`react_text.Agent` is one): the model, the approver, what the
    model offers, the limits, and the spec of an episode for a context window."""

    @property
    def model(self) -> Model: ...
    @property
    def approve(self) -> Approver | None: ...
    @property
    def info(self) -> ModelInfo: ...
    @property
    def limits(self) -> Limits: ...
    def spec(self, window: int | None = None) -> EpisodeSpec: ...


class Runner:
    """One run's state, and its flow (`flow`): everything a run does but the I/O. Apart from the
    Run that drives it, so that the Run and its suspended flow do not hold each other (a run let
    go would then be closed by the cycle collector, whenever it came, not when it is let go)."""

    __slots__ = (
        "_agent",
        "_command",
        "_episode",
        "_handed",
        "_keeper",
        "_observer",
        "_result",
        "_seed",
        "_spans",
        "_task",
        "_tokens",
        "closed",
    )

    def __init__(
        self, agent: Runnable, task: str, observer: Observer | None, seed: int | None, keeper: Keeper | None = None
    ) -> None:
        if not isinstance(task, str):  # checked here for the four that drive a run (drivers, streaming)
            raise TypeError(f"the task must be a string, not {type(task).__name__}")
        if seed is not None:
            check_seed(seed)
        self._agent = agent
        self._keeper = keeper  # a run that keeps its state (react_text.durable): told each step
        self._task = task
        self._seed = seed
        self._episode: Episode | None = None
        self._command: Command | None = None
        self._result: RunResult | None = None
        self._observer = observer
        self._spans: Observer = observing.Quiet()
        self._handed = 0  # steps handed out
        self.closed = False
        self._tokens = trajectory.Recorder(chat=agent.model.api == "chat")

    @property
    def result(self) -> RunResult:
        if self._result is None:
            if self.closed:
                raise RuntimeError("the run was closed before it finished: it has no result")
            raise RuntimeError("the run is not finished: iterate it to the end first")
        return self._result

    def close(self) -> None:
        if self._result is None and not self.closed:
            self.closed = True
            self._spans.abandon(self._handed)

    def flow(self) -> Flow:
        """The run from the command the episode is at: each step, yielded as it comes.

        Before each step it yields what needs the world outside (the context window, first; then
        each model call, approval and tool run) and is sent what came of it, or has the exception
        thrown in; the drivers only carry that out (`drivers.py`). So what an exception
        comes to, what the observer is told and what the episode is sent are written once, for
        both drivers."""
        while True:
            try:
                command = self._command
                if command is None:
                    window = yield WINDOW
                    command = self._begin(window)  # type: ignore[arg-type]  # what a driver answers WINDOW
                episode: Episode = self._episode  # type: ignore[assignment]  # made by _begin
                keeper = self._keeper
                while not isinstance(command, Emit | Done):
                    with self._spans.around(command) as span:
                        started = time.perf_counter()
                        carry: Need | Ran | RanAll = command
                        if keeper is not None and isinstance(command, Invoke | InvokeAll):
                            carry = keeper.intend(episode, command)  # the intent saved before the call
                        try:
                            made = carry if isinstance(carry, Ran | RanAll) else (yield carry)
                        except (ModelError, OSError) as exc:
                            if not isinstance(command, Send):
                                raise
                            made = _model_error(exc)
                        except (StopIteration, StopAsyncIteration, RuntimeError) as exc:
                            stop = _stop(exc)
                            if stop is None:
                                raise
                            raise escaped(_who(command), stop) from stop
                        if isinstance(command, Approve) and isinstance(made, str) and made == "later":
                            command = Done(_later(keeper, episode, command))
                            break
                        seconds = time.perf_counter() - started
                        event = carry if isinstance(carry, Ran | RanAll) else _event(_asked(carry), made, seconds)
                        if keeper is not None:
                            event = keeper.sent(command, event)
                        self._tokens.see(command, event)
                        command = episode.send(event)
                        span.record(event, episode.counted)
            except (StopIteration, StopAsyncIteration) as exc:  # from an observer, say: told as it is raised
                error = escaped(_OWN, exc)
                self._spans.fail(error)
                raise error from exc
            except BaseException as exc:
                self._spans.fail(exc)
                raise
            try:
                step = self._after(command)
            except (StopIteration, StopAsyncIteration) as exc:  # from the observer's `end`
                raise escaped(_OWN, exc) from exc
            if step is None:
                return
            yield step

    def _begin(self, window: int | None) -> Command:
        spans = telemetry.start(self._agent, self._task)
        self._spans = observing.both([spans, self._observer] if self._observer is not None else [spans])
        self._spans.begin(self._agent.info)
        keeper = self._keeper
        if keeper is None:
            self._episode = Episode(self._agent.spec(window), self._task, seed=self._seed)
            return self._episode.start()
        spec = self._agent.spec(keeper.window(window))
        self._episode = Episode(spec, self._task, seed=self._seed)
        return keeper.begin(self._episode, spec, self._agent.model.name, self._replayed)

    def _replayed(self, command: Command, event: Event) -> None:
        """A command of a resumed run's log and its event, as the run saw them live: its tokens recorded."""
        self._tokens.see(command, event)
        if isinstance(command, Emit):
            self._tokens.emitted()
            self._handed += 1

    def _after(self, command: Command) -> Step | None:
        """At an Emit or Done command: the step to hand out, or None at the end."""
        assert self._episode is not None
        if isinstance(command, Done):
            if self._keeper is not None and command.result.stop_reason != "awaiting_approval":
                self._keeper.ended(self._episode)
            self._result = self._tokens.finish(command.result)
            self._command = command
            self._spans.end(command.result)
            return None
        assert isinstance(command, Emit)
        self._tokens.emitted()
        self._command = self._episode.send(None)
        self._handed += 1
        if self._keeper is not None and not isinstance(self._command, Done):
            self._keeper.stepped(self._episode)
        return command.step


@dataclass(frozen=True, slots=True)
class AskWindow:
    """What the flow asks before the first command: the context window (a server may be asked)."""


WINDOW = AskWindow()
Need = Send | Approve | Invoke | InvokeAll | AskWindow  # what the flow asks a driver to carry out
Flow = Generator[Need | Step, object, None]


# The flow decides what a model's, a tool's or an approver's exception comes to. A ModelError (or
# an OSError, a transport's) from the model is a Failed event (the run ends "model_error"); what a
# tool raises is its observation (running.py); anything else is raised to the caller, the same
# under both drivers, except that a StopIteration or StopAsyncIteration is raised as a RuntimeError:
# either would end the caller's `for` or `async for` quietly, as if the run were over.


def _event(command: Command, made: Any, seconds: float) -> Event:
    """The event the episode is sent for what came of `command`: a Reply or a ModelError for a
    Send, an Approval, an Outcome, or (Outcome, seconds) pairs for an InvokeAll, as the drivers make them."""
    if isinstance(command, Send):
        if isinstance(made, ModelError):
            return Failed(made, seconds)
        if not isinstance(made, Reply):  # a model of the user's own: its bug, said in its words
            raise TypeError(f"the model's generate returned {type(made).__name__}, not a Reply: return Reply(text)")
        return Replied(made, seconds)
    if isinstance(command, Approve):
        return Decided(made)
    if isinstance(command, InvokeAll):
        return RanAll(tuple(Ran(o, s) for o, s in made), seconds)
    return Ran(made, seconds)


def _asked(carry: Need) -> Command:
    if isinstance(carry, AskWindow):  # the window is asked before the first command, never here
        raise RuntimeError("the flow asked for the window inside a step")
    return carry


def _later(keeper: Keeper | None, episode: Episode, command: Approve) -> RunResult:
    """The approver answered "later": the run pauses, awaiting approval, if it keeps its state."""
    if keeper is None:
        raise ConfigError(
            f'the approver answered "later" for {command.tool.name}[{command.action.input}], which only a run that '
            "keeps its state can wait for: agent.run(task, state=FILE), then agent.resume(FILE, decision=...)"
        )
    return keeper.later(episode, command)


def _who(command: Command) -> str:
    return "the approver" if isinstance(command, Approve) else "the model" if isinstance(command, Send) else "a tool"


_OWN = "an observer or the token counter"  # what else the flow calls that the user may have written
# What Python makes of a StopIteration that leaves a generator or a coroutine (PEP 479): an async
# model's StopIteration reaches the async driver so, as a sync model's reaches the sync one bare.
_PEP_479 = frozenset(f"{kind} raised StopIteration" for kind in ("generator", "coroutine", "async generator"))


def _stop(exc: BaseException) -> StopIteration | StopAsyncIteration | None:
    """The StopIteration or StopAsyncIteration `exc` is, or that Python made it of; else None."""
    if isinstance(exc, StopIteration | StopAsyncIteration):
        return exc
    cause = exc.__cause__
    if type(exc) is RuntimeError and str(exc) in _PEP_479 and isinstance(cause, StopIteration):
        return cause
    return None


def _model_error(exc: ModelError | OSError) -> ModelError:
    """What a model raised, as the ModelError that ends the run as model_error. ConnectionError,
    TimeoutError and their kin from a model of the user's own are a failure of its transport too
    (the README: a network failure never raises)."""
    if isinstance(exc, ModelError):
        return exc
    return ModelError(f"{type(exc).__name__}: {exc}".rstrip(": "))


def escaped(who: str, exc: BaseException) -> RuntimeError:
    return RuntimeError(f"{type(exc).__name__} escaped from {who}: {exc}".rstrip(": "))
