"""Issue 20, "the twins drifted": every exception a model, a tool or an approver can raise gives the
same outcome under the sync and the async driver: the same RunResult, or the same exception raised.

The sync driver guarded a StopIteration escaping a model; the async one had no guard for
StopAsyncIteration, so `async for` over `aiter_steps` ended silently and `.result` said the run had
not finished. One table says what each exception comes to, for each raiser; one parametrised test
runs it under both drivers (through `iter_steps` and `aiter_steps`, as a caller iterates).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

from react_text import Action, Agent, ModelError, Reply, Request, RunResult, ScriptedModel, Tool, tool


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
    (Custom(), Custom, Custom, Custom),
]
RAISERS = ["model", "async-model", "tool", "async-tool", "approver"]


class Raising:
    """A chat model that acts once, then raises `error` if `when` is "model", then answers."""

    api = "chat"
    name = "scripted"
    accepts_grammar = False

    def __init__(self, error: BaseException | None) -> None:
        self.error = error
        self.script = ScriptedModel(["THOUGHT: look.\nACTION: risky[x]", "THOUGHT: done.\nFINAL: 7"])

    def generate(self, request: Request) -> Reply:
        if self.error is not None and self.script.calls:
            raise self.error
        return self.script.generate(request)


class AsyncRaising(Raising):
    async def agenerate(self, request: Request) -> Reply:
        await asyncio.sleep(0)
        return self.generate(request)


def make(raiser: str, error: BaseException) -> Agent:
    def risky(item: str) -> str:
        """Look an item up."""
        if raiser == "tool":
            raise error
        return "12"

    async def arisky(item: str) -> str:
        """Look an item up."""
        raise error

    def approve(t: Tool, action: Action) -> bool:
        if raiser == "approver":
            raise error
        return True

    fn: Callable[..., object] = arisky if raiser == "async-tool" else risky
    model = {"model": Raising, "async-model": AsyncRaising}.get(raiser, Raising)
    return Agent(
        model(error if raiser in {"model", "async-model"} else None),
        tools=[tool(fn, name="risky", risky=True)],
        approve=approve,
    )


def sync_outcome(agent: Agent) -> RunResult | BaseException:
    run = agent.iter_steps("q")
    try:
        for _ in run:
            pass
    except BaseException as exc:  # noqa: BLE001 - the outcome under test
        return exc
    return run.result


def async_outcome(agent: Agent) -> RunResult | BaseException:
    async def go() -> RunResult | BaseException:
        run = agent.aiter_steps("q")
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
    if isinstance(outcome, BaseException):
        return type(outcome)
    step = outcome.steps[0] if outcome.steps else None
    return (outcome.stop_reason, outcome.answer, step.observation if step else None, outcome.tool_calls)


@pytest.mark.parametrize("raiser", RAISERS)
@pytest.mark.parametrize(("error", "model", "tool_", "approver"), TABLE, ids=lambda v: type(v).__name__)
@pytest.mark.parametrize("driver", ["sync", "async"])
def test_every_exception_gives_the_same_outcome_under_both_drivers(
    driver: str, error: BaseException, model: Any, tool_: Any, approver: Any, raiser: str
) -> None:
    """Issue 20: one table of what each exception raised by a model, a tool or an approver comes
    to, and both drivers keep it."""
    expected = {"model": model, "async-model": model, "tool": tool_, "async-tool": tool_, "approver": approver}[raiser]
    outcome = (sync_outcome if driver == "sync" else async_outcome)(make(raiser, error))
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
    other = (async_outcome if driver == "sync" else sync_outcome)(make(raiser, error))
    assert summary(outcome) == summary(other), "the twins differ"


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
