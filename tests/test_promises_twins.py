"""Issue 20, "the twins drifted": every exception a model, a tool or an approver can raise gives the
same outcome under the sync and the async driver: the same RunResult, or the same exception raised.

The sync driver guarded a StopIteration escaping a model; the async one had no guard for
StopAsyncIteration, so `async for` over `aiter_steps` ended silently and `.result` said the run had
not finished. One table says what each exception comes to, for each raiser; one parametrised test
runs it under both drivers (through `iter_steps` and `aiter_steps`, as a caller iterates).

Issue 21 (one driver, two thin shells) made the drivers one step flow carried out by two loops; the
same test now compares the whole RunResult (wall times aside) and every call the observer was
told, and an observer that raises (entering a command, recording what came of it, told the end)
goes through it too: its exception, like an approver's, is raised to the caller. The async
driver once let an observer's StopAsyncIteration end `async for` quietly and a StopIteration from
`end` finish the sync run as if nothing happened; the flow makes both a RuntimeError.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import gc
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from react_text import Action, Agent, ModelError, Prompting, Reply, Request, RunResult, ScriptedModel, Tool, Usage, tool
from react_text.core.episode import Command, Event
from react_text.observers.observing import Call, Quiet


class Custom(BaseException):
    """A BaseException of the caller's own (like trio's Cancelled): never swallowed."""


# (exception, what a model raising it comes to, a tool, an approver). "model_error", "observation":
# a RunResult; an exception class: raised to the caller. A StopIteration or StopAsyncIteration must
# never end an iteration quietly: it is raised as a RuntimeError that says where it came from.
TABLE: list[tuple[BaseException, Any, Any, Any]] = [
    (ModelError("server down"), "model_error", "observation", ModelError),
    (StopIteration(), RuntimeError, "observation", RuntimeError),
    (StopAsyncIteration(), RuntimeError, "observation", RuntimeError),
    (ValueError("bad"), ValueError, "observation", ValueError),
    (RuntimeError("boom"), RuntimeError, "observation", RuntimeError),
    (KeyError("k"), KeyError, "observation", KeyError),
    (KeyboardInterrupt(), KeyboardInterrupt, KeyboardInterrupt, KeyboardInterrupt),
    (ConnectionError("refused"), "model_error", "observation", ConnectionError),  # a network failure
    (TimeoutError("timed out"), "model_error", "observation", TimeoutError),
    (SystemExit(3), SystemExit, "observation", SystemExit),  # sys.exit() in a tool must not end the program
    (GeneratorExit(), GeneratorExit, GeneratorExit, GeneratorExit),
    (asyncio.CancelledError(), asyncio.CancelledError, asyncio.CancelledError, asyncio.CancelledError),
    (Custom(), Custom, Custom, Custom),
]
# An observer's exception comes to what an approver's does (the fourth column): raised to the caller.
RAISERS = [
    "model",
    "async-model",
    "tool",
    "async-tool",
    "parallel-tool",  # one of two actions of a reply run at once (Prompting(parallel=True))
    "parallel-async-tool",
    "approver",
    "observer-around",
    "observer-record",
    "observer-end",
]


class Raising:
    """A chat model that acts once, then raises `error` if `when` is "model", then answers."""

    api = "chat"
    name = "scripted"
    accepts_grammar = False

    def __init__(self, error: BaseException | None, act: str = "ACTION: risky[x]") -> None:
        self.error = error
        self.script = ScriptedModel([f"THOUGHT: look.\n{act}", "THOUGHT: done.\nFINAL: 7"])

    def generate(self, request: Request) -> Reply:
        if self.error is not None and self.script.calls:
            raise self.error
        return self.script.generate(request)


class AsyncRaising(Raising):
    async def agenerate(self, request: Request) -> Reply:
        await asyncio.sleep(0)
        return self.generate(request)


class Watching(Quiet):
    """Notes every call the drivers make to the observer; raises `error` at `where` (once)."""

    def __init__(self, where: str = "", error: BaseException | None = None) -> None:
        self.seen: list[tuple[str, str]] = []
        self.where = where
        self.error = error

    def _note(self, what: str, of: object) -> None:
        self.seen.append((what, of if isinstance(of, str) else type(of).__name__))
        if what == self.where and self.error is not None:
            error, self.error = self.error, None
            raise error

    @contextlib.contextmanager
    def around(self, command: Command) -> Iterator[Call]:
        self._note("around", command)
        try:
            yield self
        except BaseException as exc:
            self.seen.append(("left by", type(exc).__name__))
            raise
        self.seen.append(("left", type(command).__name__))

    def record(self, event: Event, counted: Usage | None = None) -> None:
        self._note("record", event)

    def end(self, result: RunResult) -> None:
        self._note("end", result.stop_reason)

    def fail(self, error: BaseException) -> None:
        self.seen.append(("fail", type(error).__name__))

    def abandon(self, steps: int) -> None:
        self.seen.append(("abandon", str(steps)))


def make(raiser: str, error: BaseException) -> Agent:
    def risky(item: str) -> str:
        """Look an item up."""
        if raiser in {"tool", "parallel-tool"}:
            raise error
        return "12"

    async def arisky(item: str) -> str:
        """Look an item up."""
        raise error

    def approve(t: Tool, action: Action) -> bool:
        if raiser == "approver":
            raise error
        return True

    def calm(item: str) -> str:
        """Look another item up."""
        return "5"

    fn: Callable[..., object] = arisky if raiser in {"async-tool", "parallel-async-tool"} else risky
    if raiser.startswith("parallel-"):  # the raising call and a calm one, run at once
        return Agent(
            Raising(None, "ACTION: risky[x]\nACTION: calm[y]"),
            tools=[tool(fn, name="risky", risky=True), calm],
            approve=approve,
            prompting=Prompting(parallel=True),
        )
    model = {"model": Raising, "async-model": AsyncRaising}.get(raiser, Raising)
    return Agent(
        model(error if raiser in {"model", "async-model"} else None),
        tools=[tool(fn, name="risky", risky=True)],
        approve=approve,
    )


def sync_outcome(agent: Agent, observer: Watching | None = None) -> RunResult | BaseException:
    run = agent.iter_steps("q", observer=observer)
    try:
        for _ in run:
            pass
    except BaseException as exc:  # noqa: BLE001 - the outcome under test
        return exc
    return run.result


def async_outcome(agent: Agent, observer: Watching | None = None) -> RunResult | BaseException:
    async def go() -> RunResult | BaseException:
        run = agent.aiter_steps("q", observer=observer)
        try:
            async for _ in run:
                pass
        except BaseException as exc:  # noqa: BLE001 - the outcome under test
            return exc
        return run.result

    async def bounded() -> RunResult | BaseException:
        try:
            return await asyncio.wait_for(go(), 10)
        except TimeoutError as exc:  # a hung run is an outcome too (and a failing one)
            return exc

    return asyncio.run(bounded())


def summary(outcome: RunResult | BaseException) -> Any:
    """The whole outcome but its wall times: the RunResult, or the exception's class and words."""
    if isinstance(outcome, BaseException):
        return type(outcome), str(outcome)
    return dataclasses.replace(outcome, steps=tuple(dataclasses.replace(s, seconds=0.0) for s in outcome.steps))


def outcome_of(driver: str, raiser: str, error: BaseException) -> tuple[RunResult | BaseException, list[Any]]:
    """The outcome of one run under `driver`, and every call its observer was told."""
    where = raiser.removeprefix("observer-") if raiser.startswith("observer-") else ""
    observer = Watching(where, error if where else None)
    outcome = (sync_outcome if driver == "sync" else async_outcome)(make(raiser, error), observer)
    return outcome, observer.seen


@pytest.mark.parametrize("raiser", RAISERS)
@pytest.mark.parametrize(("error", "model", "tool_", "approver"), TABLE, ids=lambda v: type(v).__name__)
@pytest.mark.parametrize("driver", ["sync", "async"])
def test_every_exception_gives_the_same_outcome_under_both_drivers(
    driver: str, error: BaseException, model: Any, tool_: Any, approver: Any, raiser: str
) -> None:
    """Issue 20: one table of what each exception raised by a model, a tool or an approver comes
    to, and both drivers keep it."""
    expected = {"model": model, "async-model": model}.get(raiser, tool_ if "tool" in raiser else approver)
    outcome, seen = outcome_of(driver, raiser, error)
    if expected == "model_error":
        assert isinstance(outcome, RunResult), outcome
        assert outcome.stop_reason == "model_error" and str(error) in (outcome.error or ""), outcome.error
    elif expected == "observation":
        assert isinstance(outcome, RunResult), outcome
        assert (outcome.stop_reason, outcome.answer) == ("final", "7")
        assert type(error).__name__ in (outcome.steps[0].observation or ""), outcome.steps[0].observation
    else:
        assert type(outcome) is expected, f"{outcome!r} is not a {expected.__name__}"
        if isinstance(error, StopIteration | StopAsyncIteration):
            assert type(error).__name__ in str(outcome)
    other, other_seen = outcome_of("async" if driver == "sync" else "sync", raiser, error)
    assert summary(outcome) == summary(other), "the twins differ"
    assert seen == other_seen, "the twins told the observer different things"
    if isinstance(outcome, BaseException):
        assert seen[-1] == ("fail", type(outcome).__name__) or raiser == "observer-end", seen


@pytest.mark.parametrize("raiser", ["model", "async-model", "approver"])
def test_a_run_stopped_by_an_exception_says_it_did_not_finish(raiser: str) -> None:
    """After a run raised, `.result` says it did not finish, under both drivers alike."""
    agent = make(raiser, StopAsyncIteration())
    run = agent.iter_steps("q")
    with pytest.raises(RuntimeError):
        for _ in run:
            pass
    with pytest.raises(RuntimeError, match="not finished"):
        _ = run.result

    async def go() -> None:
        arun = make(raiser, StopAsyncIteration()).aiter_steps("q")
        with pytest.raises(RuntimeError):
            async for _ in arun:
                pass
        with pytest.raises(RuntimeError, match="not finished"):
            _ = arun.result

    asyncio.run(go())


def test_a_cancelled_async_run_is_told_as_a_sync_run_stopped_by_ctrl_c() -> None:
    """Cancelling an async run while the model works is what Ctrl-C is to a sync run: the
    exception goes on to the caller, the observer is told the run failed, and it has no result."""

    class Slow(Raising):
        def __init__(self, started: asyncio.Event) -> None:
            super().__init__(None)
            self.started = started

        async def agenerate(self, request: Request) -> Reply:
            self.started.set()
            await asyncio.sleep(10)
            raise AssertionError("not cancelled")

    async def go() -> list[Any]:
        started, watching = asyncio.Event(), Watching()
        run = Agent(Slow(started)).aiter_steps("q", observer=watching)
        step = asyncio.ensure_future(anext(run))
        await started.wait()
        step.cancel()
        with pytest.raises(asyncio.CancelledError):
            await step
        with pytest.raises(RuntimeError, match="not finished"):
            _ = run.result
        await run.aclose()
        return watching.seen

    interrupted = Watching()
    run = make("model", KeyboardInterrupt()).iter_steps("q", observer=interrupted)
    with pytest.raises(KeyboardInterrupt):
        list(run)
    run.close()
    # then, closed unfinished, each run is abandoned (an observer keeps the first of fail and abandon)
    told = [("around", "Send"), ("left by", "{0}"), ("fail", "{0}"), ("abandon", "{1}")]
    assert asyncio.run(go()) == [(what, of.format("CancelledError", 0)) for what, of in told]
    assert interrupted.seen[-4:] == [(what, of.format("KeyboardInterrupt", 1)) for what, of in told]  # after a step


@pytest.mark.parametrize("driver", ["sync", "async"])
def test_a_run_let_go_midway_is_closed_at_once(driver: str) -> None:
    """The flow is kept from step to step; it must not hold the run it drives, or a run let go
    would be closed whenever the cycle collector came, not when it is let go."""
    watching = Watching()
    agent = Agent(Raising(None), tools=[tool(lambda item: "12", name="risky")])
    gc.disable()
    try:
        if driver == "sync":
            run = agent.iter_steps("q", observer=watching)
            next(run)
            del run
        else:

            async def go() -> None:
                arun = agent.aiter_steps("q", observer=watching)
                await anext(arun)
                del arun
                assert watching.seen[-1] == ("abandon", "1")

            asyncio.run(go())
        assert watching.seen[-1] == ("abandon", "1"), watching.seen
    finally:
        gc.enable()


@pytest.mark.parametrize("driver", ["sync", "async"])
def test_a_run_iterated_again_after_an_exception_goes_on_from_where_it_was(driver: str) -> None:
    """Ctrl-C in a model call stops the run there; iterated again, it asks the model again and
    goes on (both drivers alike)."""
    model = Raising(KeyboardInterrupt())
    agent = Agent(model, tools=[tool(lambda item: "12", name="risky")])

    def steps() -> list[str]:
        if driver == "sync":
            run = agent.iter_steps("q")
            with pytest.raises(KeyboardInterrupt):
                list(run)
            model.error = None
            return [s.reply for s in run] + [run.result.answer or ""]

        async def go() -> list[str]:
            arun = agent.aiter_steps("q")
            with pytest.raises(KeyboardInterrupt):
                async for _ in arun:
                    pass
            model.error = None
            return [s.reply async for s in arun] + [arun.result.answer or ""]

        return asyncio.run(go())

    assert steps() == ["THOUGHT: done.\nFINAL: 7", "7"]
    assert len(model.script.calls) == 2  # the interrupted call never reached the script
