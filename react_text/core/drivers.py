"""The two drivers of a run, sync and async: the awaits only.

    run = agent.iter_steps(task)     # Run: iterate it for its steps; then run.result
    arun = agent.aiter_steps(task)   # AsyncRun: `async for` its steps; then arun.result
    run.close()                      # stop early (await arun.aclose()); let go unfinished: the same

Each is a short loop around the run's flow (`flow.Runner.flow`), which holds all that a run does
but the I/O: the driver carries out what the flow yields (`carrying.carry` calls the model, the
approver or the tool; `carrying.acarry` awaits them, a sync-only model on a worker thread) and sends
back what came of it, or throws in what it raised. The two differ in nothing else.
"""

from __future__ import annotations

import contextlib

from react_text.core.carrying import acarry, carry
from react_text.core.flow import Flow, Runnable, Runner
from react_text.core.keeping import Keeper
from react_text.core.types import RunResult, Step
from react_text.observers.observing import Observer

__all__ = [
    "AsyncRun",
    "Run",
]


class _Driven:
    """What the two drivers share: the run's state (`Runner`, which checks what the run is given)
    and its flow, kept from one step to the next (a flow that has ended, finished or raised, is
    begun again where the episode is: iterated again, the run goes on from the same command, as it
    did before)."""

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
                made = carry(self._agent, need)
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
                    made = await acarry(self._agent, need)
                except BaseException as exc:  # noqa: BLE001 - the flow says what it comes to (CancelledError too)
                    need = flow.throw(exc)
                else:
                    need = flow.send(made)
        except StopIteration:  # the flow's end is this iteration's
            raise StopAsyncIteration from None
        return need
