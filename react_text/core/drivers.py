"""The two drivers of a run, sync and async: the awaits only.

    run = agent.iter_steps(task)     # Run: iterate it for its steps; then run.result
    arun = agent.aiter_steps(task)   # AsyncRun: `async for` its steps; then arun.result
    run.close()                      # stop early (await arun.aclose()); let go unfinished: the same

Each is a short loop around the run's flow (`flow.Runner.flow`), which holds all that a run does
but the I/O: the driver carries out what the flow yields (`_carry` calls the model, the approver or
the tool; `_acarry` awaits them, a sync-only model on a worker thread) and sends back what came of
it, or throws in what it raised. The two differ in nothing else.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import typing
from collections.abc import Callable
from typing import Any

from react_text.core.commands import Approve, Approver, Invoke, InvokeAll, Send
from react_text.core.flow import Flow, Need, Runnable, Runner, escaped
from react_text.core.keeping import Keeper
from react_text.core.sampling import check_seed
from react_text.core.types import AsyncModel, RunResult, Step
from react_text.observers.observing import Observer
from react_text.tools import running

__all__ = [
    "AsyncRun",
    "Run",
]


class _Driven:
    """What the two drivers share: the checks, the run's state (`Runner`) and its flow, kept from
    one step to the next (a flow that has ended, finished or raised, is begun again where the
    episode is: iterated again, the run goes on from the same command, as it did before)."""

    __slots__ = ("__weakref__", "_agent", "_flowing", "_runner")

    def __init__(
        self,
        agent: Runnable,
        task: str,
        observer: Observer | None = None,
        *,
        seed: int | None = None,
        keeper: Keeper | None = None,
    ) -> None:
        if not isinstance(task, str):
            raise TypeError(f"the task must be a string, not {type(task).__name__}")
        if seed is not None:
            check_seed(seed)
        self._agent = agent
        self._runner = Runner(agent, task, observer, seed, keeper)  # keeper: a durable run's (core/keeping.py)
        self._flowing: Flow | None = None

    @property
    def result(self) -> RunResult:
        return self._runner.result

    def close(self) -> None:
        """Stop the run where it is (it hands out no more steps); a finished run is unchanged.
        A run that is let go unfinished is closed when it is collected."""
        self._runner.close()

    def __del__(self) -> None:
        with contextlib.suppress(Exception):  # a finaliser must not raise, whatever an exporter does
            self.close()

    def _flow(self) -> Flow:
        flow = self._flowing
        if flow is None or flow.gi_frame is None:  # type: ignore[attr-defined]  # not begun, or ended
            flow = self._flowing = self._runner.flow()
        return flow


class Run(_Driven):
    """One run of an agent: iterate it for its steps; `result` once it is exhausted."""

    __slots__ = ()

    def __iter__(self) -> Run:
        return self

    def __next__(self) -> Step:
        if self._runner.closed:
            raise StopIteration
        flow = self._flow()
        need = next(flow)  # at the end, the flow's StopIteration is this one's
        while not isinstance(need, Step):
            try:
                made = _carry(self._agent, need)
            except BaseException as exc:  # noqa: BLE001 - the flow says what it comes to
                need = flow.throw(exc)
            else:
                need = flow.send(made)
        return need


class AsyncRun(_Driven):
    """One async run of an agent: `async for` its steps; `result` once it is exhausted."""

    __slots__ = ()

    def __aiter__(self) -> AsyncRun:
        return self

    async def aclose(self) -> None:
        """`close`, as an async generator's is awaited."""
        self.close()

    async def __anext__(self) -> Step:
        if self._runner.closed:
            raise StopAsyncIteration
        flow = self._flow()
        try:
            need = next(flow)
            while not isinstance(need, Step):
                try:
                    made = await _acarry(self._agent, need)
                except BaseException as exc:  # noqa: BLE001 - the flow says what it comes to (CancelledError too)
                    need = flow.throw(exc)
                else:
                    need = flow.send(made)
        except StopIteration:  # the flow's end is this iteration's
            raise StopAsyncIteration from None
        return need


def _carry(agent: Runnable, need: Need) -> object:
    """What the sync driver does for the flow: each call, made here."""
    if isinstance(need, Send):
        return agent.model.generate(need.request)
    if isinstance(need, Approve):
        decision = _approver(agent)(need.tool, need.action)
        if inspect.isawaitable(decision):
            if inspect.iscoroutine(decision):
                decision.close()
            raise TypeError("an async approver needs an async run: use agent.arun or agent.aiter_steps")
        return decision
    if isinstance(need, InvokeAll):
        return running.run_all(_invocations(need))
    if isinstance(need, Invoke):
        return running.run(need.tool, need.arguments, need.seconds)
    return _window(agent)


async def _acarry(agent: Runnable, need: Need) -> object:
    """What the async driver does for the flow: `_carry`, awaited. A sync-only model runs on a
    worker thread (`_guarded`: a StopIteration cannot cross a future); an approver may be async."""
    if isinstance(need, Send):
        if agent.info.asynchronous:
            return await typing.cast(AsyncModel, agent.model).agenerate(need.request)
        return await asyncio.to_thread(_guarded, agent.model.generate, need.request)
    if isinstance(need, Approve):
        decision = _approver(agent)(need.tool, need.action)
        return await decision if inspect.isawaitable(decision) else decision
    if isinstance(need, InvokeAll):
        return await running.arun_all(_invocations(need))
    if isinstance(need, Invoke):
        return await running.arun(need.tool, need.arguments, need.seconds)
    await _aidentify(agent)
    return await _awindow(agent)


def _invocations(command: InvokeAll) -> list[running.Invocation]:
    return [(i.tool, i.arguments, i.seconds) for i in command.invokes]


def _approver(agent: Runnable) -> Approver:
    if agent.approve is None:  # the episode asks only an agent that has one
        raise RuntimeError("the episode asked for an approval, but the agent has no approver")
    return agent.approve


def _guarded(call: Callable[..., Any], *args: Any) -> Any:
    """A sync model's `call(*args)` on a worker thread, with a StopIteration or StopAsyncIteration
    it raises made a RuntimeError: raised into the future that carries it back, it would break
    that future instead, and the run would wait for it for ever."""
    try:
        return call(*args)
    except (StopIteration, StopAsyncIteration) as exc:
        raise escaped("the model", exc) from exc


def _window(agent: Runnable) -> int | None:
    if agent.limits.context_tokens is not None:
        return agent.limits.context_tokens
    return agent.info.window() if agent.info.window is not None else None


async def _awindow(agent: Runnable) -> int | None:
    if agent.limits.context_tokens is not None:
        return agent.limits.context_tokens
    if agent.info.awindow is not None:
        window = await agent.info.awindow()
        return window if isinstance(window, int) and not isinstance(window, bool) else None
    return _window(agent)


async def _aidentify(agent: Runnable) -> None:
    """A server model that asks its server what it is (where a grammar goes) asks it over the
    event loop, before the run reads `accepts_grammar`."""
    look = getattr(agent.model, "aidentify", None)
    if look is not None:
        await look()
