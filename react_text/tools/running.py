"""Run a tool under its time limit, from a sync or an async run. Nothing escapes.

    outcome = run(tool, arguments, seconds)             # a sync run
    outcome = await arun(tool, arguments, seconds)      # an async run
    outcomes = run_all(calls) / await arun_all(calls)   # several at once: (Outcome, seconds) each
    text = run_text(tool, "2, 3")                       # from an input text, as a run would

A plain function in a sync run, on the main thread, runs inline under a SIGALRM timer: the time
limit costs two system calls, and a tool that overruns is interrupted where it stands (its
`finally` blocks run) instead of being left running. Elsewhere (another thread, a platform without
SIGALRM, a program that uses SIGALRM itself) it runs on a daemon worker thread, and a tool that
overruns is abandoned there: Python cannot stop a thread, so its work goes on in the background
until it returns or the process exits. In an async run a plain function always runs on a worker
thread, so a hung tool never blocks the other episodes on the event loop. An `async def` tool is
awaited under `asyncio.timeout` in an async run, and run to completion on an event loop of its own
in a sync run.

Several calls at once (the independent actions of one reply): in an async run each is `arun`,
all gathered, so async tools run concurrently and plain functions each on a worker thread; in a
sync run each call is made on a thread of its own, so a plain function runs on a worker thread
(abandoned, not interrupted, when it overruns) and an async one on a loop of its own. Each call
keeps its own time limit; the outcomes come back in the order of the calls, whatever order they
finish in.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import functools
import importlib
import inspect
import queue
import signal
import threading
import time
import typing
from collections.abc import Callable, Sequence
from typing import Any

from react_text import prompting
from react_text.core.types import Outcome
from react_text.tools import binding
from react_text.tools.tool import Tool, as_text

__all__ = [
    "Invocation",
    "arun",
    "arun_all",
    "run",
    "run_all",
    "run_text",
]


def run_text(tool: Tool, text: str) -> str:
    """Run the tool on an input text as a run would, under its own time limit; the observation
    text. Never raises. An input the tool cannot take is refused (binding.Refusal) without running it.
    """
    bound = binding.bind(tool, text)
    if isinstance(bound, binding.Refusal):
        return bound.message
    return run(tool, bound, tool.timeout).text


def run(tool: Tool, arguments: inspect.BoundArguments, seconds: float | None) -> Outcome:
    """Run the call in a sync run. Never raises (KeyboardInterrupt passes; a tool's SystemExit is an observation)."""
    if tool.coroutine:
        return _settle(tool, seconds, lambda: _run_coroutine(tool, arguments, seconds))
    job = _job(tool, arguments)
    if seconds is None:
        return _settle(tool, seconds, job)
    if _alarm_usable():
        return _settle(tool, seconds, lambda: _under_alarm(job, seconds))
    return _settle(tool, seconds, lambda: _pool.run(job, seconds))


Invocation = tuple[Tool, inspect.BoundArguments, float | None]  # a tool, its arguments, its time limit


def run_all(calls: Sequence[Invocation]) -> tuple[tuple[Outcome, float], ...]:
    """Make the calls at once in a sync run: each outcome and its wall time, in order. Never raises."""
    results: list[tuple[Outcome, float] | None] = [None] * len(calls)
    raised: list[BaseException] = []  # what `run` lets pass (KeyboardInterrupt, CancelledError, ...)

    def make(index: int, tool: Tool, arguments: inspect.BoundArguments, seconds: float | None) -> None:
        started = time.perf_counter()
        try:
            results[index] = (run(tool, arguments, seconds), time.perf_counter() - started)
        except BaseException as exc:  # noqa: BLE001 - raised in the caller, as `run` raises it on one call
            raised.append(exc)

    threads = [
        threading.Thread(target=make, args=(i, *c), name="react-text-call", daemon=True) for i, c in enumerate(calls)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if raised:
        raise raised[0]
    return tuple(
        r if r is not None else (_failed(c[0], RuntimeError("the call ended without a result")), 0.0)
        for r, c in zip(results, calls, strict=True)
    )


async def arun_all(calls: Sequence[Invocation]) -> tuple[tuple[Outcome, float], ...]:
    """Make the calls at once in an async run: each outcome and its wall time, in order. Never raises."""

    async def make(
        tool: Tool, arguments: inspect.BoundArguments, seconds: float | None
    ) -> tuple[Outcome, float] | BaseException:
        started = time.perf_counter()
        try:
            outcome = await arun(tool, arguments, seconds)
        except BaseException as exc:  # noqa: BLE001 - raised in the awaiting run: out of a task, asyncio
            return exc  # would throw a KeyboardInterrupt out of the event loop, past the run
        return outcome, time.perf_counter() - started

    made = await asyncio.gather(*(make(*c) for c in calls))
    for each in made:
        if isinstance(each, BaseException):
            raise each
    return typing.cast(tuple[tuple[Outcome, float], ...], tuple(made))


async def arun(tool: Tool, arguments: inspect.BoundArguments, seconds: float | None) -> Outcome:
    """Run the call in an async run, without blocking the event loop. Never raises."""
    try:
        if tool.coroutine:
            value = await _bounded(tool.fn(*arguments.args, **arguments.kwargs), seconds)
        else:
            value = await _pool.arun(_job(tool, arguments), seconds)
    except _BOUNDARY as exc:
        return _came_to(tool, seconds, exc)
    return Outcome("ok", as_text(tool.name, value))


class _Carried(Exception):
    """A StopIteration a tool raised on a worker thread, carried into the awaiting coroutine, which
    would turn it into "RuntimeError: coroutine raised StopIteration" (the sync run reports the
    tool's own StopIteration: both runs must say the same)."""

    def __init__(self, error: Exception) -> None:
        super().__init__(str(error))
        self.error = error


def _job(tool: Tool, arguments: inspect.BoundArguments) -> Callable[[], object]:
    return lambda: tool.fn(*arguments.args, **arguments.kwargs)


def _settle(tool: Tool, seconds: float | None, job: Callable[[], object]) -> Outcome:
    """`arun` for a sync run: the same boundary, the same outcomes."""
    try:
        value = job()
    except _BOUNDARY as exc:
        return _came_to(tool, seconds, exc)
    return Outcome("ok", as_text(tool.name, value))


def _came_to(tool: Tool, seconds: float | None, exc: BaseException) -> Outcome:
    """What a call that raised `exc` (one of `_BOUNDARY`) comes to."""
    if isinstance(exc, _TimedOut):
        return _timed_out(tool, seconds)
    return _failed(tool, exc.error if isinstance(exc, _Carried) else exc)


def _timed_out(tool: Tool, seconds: float | None) -> Outcome:
    return Outcome("timeout", prompting.render("corrections/tool_timeout", tool=tool.name, seconds=seconds))


def _failed(tool: Tool, exc: BaseException) -> Outcome:
    text = prompting.render("corrections/tool_error", tool=tool.name, error_type=type(exc).__name__, error=exc)
    return Outcome("error", text, type(exc).__name__)


def _run_coroutine(tool: Tool, arguments: inspect.BoundArguments, seconds: float | None) -> object:
    """An async tool in a sync run: on a loop of its own (on a worker thread if this one runs a loop)."""

    def job() -> object:
        return asyncio.run(_bounded(tool.fn(*arguments.args, **arguments.kwargs), seconds))

    try:
        asyncio.get_running_loop()
    except RuntimeError:  # no loop here (the usual case): run one
        return job()
    # Called from inside a running loop (a notebook cell): that loop cannot be re-entered.
    return _pool.run(job, None)


async def _bounded(coroutine: Any, seconds: float | None) -> object:
    """Await `coroutine` for at most `seconds`; _TimedOut when it overruns (a TimeoutError the
    tool raises itself stays the tool's error).

    The tool runs as a task of its own, and at its limit it is cancelled and left behind, not
    awaited: a tool that swallows CancelledError cannot hold the run (a worker thread that overruns
    is abandoned the same way).
    """
    task = asyncio.ensure_future(_carrying(coroutine))
    try:
        done, _ = await asyncio.wait({task}, timeout=seconds)
    except asyncio.CancelledError:
        task.cancel()
        raise
    if not done:
        task.cancel()
        task.add_done_callback(_forget)
        raise _TimedOut
    try:
        return task.result()
    except _Raised as raised:
        raise raised.error from None


class _Raised(Exception):
    """A KeyboardInterrupt or SystemExit a tool raised in its task, carried out as an exception:
    raised from a task, asyncio would throw it out of the event loop, past the awaiting run."""

    def __init__(self, error: BaseException) -> None:
        super().__init__(str(error))
        self.error = error


async def _carrying(coroutine: Any) -> object:
    try:
        return await coroutine
    except (KeyboardInterrupt, SystemExit) as exc:
        raise _Raised(exc) from None


def _forget(task: asyncio.Future[Any]) -> None:
    """Retrieve an abandoned tool's outcome, so asyncio does not log it as never retrieved."""
    if not task.cancelled():
        task.exception()


# --- the SIGALRM timer ----------------------------------------------------------------------------


class _TimedOut(BaseException):
    """Raised inside a tool when its time is up. A BaseException, so `except Exception` in a tool
    does not swallow it."""


# The tool boundary, the same for a sync and an async run: whatever a tool raises is an
# observation, sys.exit() in a tool too, which must not end the program that runs the agent
# (KeyboardInterrupt, CancelledError and the caller's own BaseExceptions still stop the run); its
# time running out is an observation of its own.
_BOUNDARY = (_TimedOut, Exception, SystemExit)


# The timer is set and cleared around every call, so it is made of the C functions themselves:
# `signal.signal` and `signal.getsignal` wrap `_signal`'s (CPython's, which has no type stubs) only
# to turn handlers into enum members and back, which costs about as long as the calls themselves.
_ALARM = hasattr(signal, "setitimer")
_C = importlib.import_module("_signal")
_set_handler: Callable[[int, Any], Any] = getattr(_C, "signal", signal.signal)
_handler_of: Callable[[int], Any] = getattr(_C, "getsignal", signal.getsignal)
_DEFAULT_HANDLERS = (int(signal.SIG_DFL), int(signal.SIG_IGN))


def _alarm_usable() -> bool:
    return (
        _ALARM
        and threading.current_thread() is threading.main_thread()
        and _handler_of(signal.SIGALRM) in _DEFAULT_HANDLERS
        and signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
    )


def _under_alarm(job: Callable[[], object], seconds: float) -> object:
    fired = False

    def ring(signum: int, frame: object) -> None:
        nonlocal fired
        fired = True
        raise _TimedOut

    previous = _set_handler(signal.SIGALRM, ring)
    try:
        signal.setitimer(signal.ITIMER_REAL, seconds)
        try:
            value = job()
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
    finally:
        _set_handler(signal.SIGALRM, previous)
    if fired:  # the tool caught _TimedOut itself and carried on past its limit
        raise _TimedOut
    return value


# --- worker threads -------------------------------------------------------------------------------


class _Pool:
    """Daemon threads that run tool calls, reused; one abandoned to a tool that overran is replaced.

    Daemon threads, unlike a ThreadPoolExecutor's, do not keep the process alive (nor block its
    exit) while a hung tool holds them.
    """

    def __init__(self) -> None:
        self._idle: queue.SimpleQueue[_Worker] = queue.SimpleQueue()

    def _take(self) -> _Worker:
        try:
            return self._idle.get_nowait()
        except queue.Empty:
            return _Worker()

    def run(self, job: Callable[[], object], seconds: float | None) -> object:
        job = _in_context(job)
        worker = self._take()
        answer: queue.SimpleQueue[tuple[bool, object]] = queue.SimpleQueue()
        worker.jobs.put((job, answer.put))
        try:
            ok, value = answer.get(timeout=seconds)
        except queue.Empty:
            raise _TimedOut from None  # the worker is abandoned to the tool
        self._idle.put(worker)
        return _unwrap(ok, value)

    async def arun(self, job: Callable[[], object], seconds: float | None) -> object:
        job = _in_context(job)
        loop = asyncio.get_running_loop()
        future: asyncio.Future[tuple[bool, object]] = loop.create_future()

        def deliver(outcome: tuple[bool, object]) -> None:
            with contextlib.suppress(RuntimeError):  # the loop is gone: nobody waits for this call any more
                loop.call_soon_threadsafe(_resolve, future, outcome)

        worker = self._take()
        worker.jobs.put((job, deliver))
        # The future is awaited itself, its limit a timer that settles it: no task, no shield, no
        # asyncio.wait (a hand-off took twice the loop's turns with them). Cancelled, or out of
        # time, the call is abandoned to its worker, and what it delivers late finds the future done.
        timer = None if seconds is None else loop.call_later(seconds, _resolve, future, _EXPIRED)
        try:
            ok, value = await future
        finally:
            if timer is not None:
                timer.cancel()
        if value is _EXPIRED_VALUE:
            raise _TimedOut  # the worker is abandoned to the tool
        self._idle.put(worker)
        return _unwrap(ok, value)


def _in_context(job: Callable[[], object]) -> Callable[[], object]:
    """`job` in a copy of the caller's context (as `asyncio.to_thread` runs one): the span a tool
    runs under (telemetry's execute_tool) stays current on the worker thread, so what the tool
    traces (an MCP client's request, an instrumented HTTP call) nests under it."""
    return functools.partial(contextvars.copy_context().run, job)


_EXPIRED_VALUE = object()
_EXPIRED = (False, _EXPIRED_VALUE)  # what the timer settles a hand-off's future with at its limit


def _resolve(future: asyncio.Future[tuple[bool, object]], outcome: tuple[bool, object]) -> None:
    if not future.done():
        future.set_result(outcome)


def _unwrap(ok: bool, value: object) -> object:
    if not ok:
        assert isinstance(value, BaseException)
        if isinstance(value, StopIteration | StopAsyncIteration):
            raise _Carried(value)
        raise value
    return value


class _Worker:
    def __init__(self) -> None:
        self.jobs: queue.SimpleQueue[tuple[Callable[[], object], Callable[[tuple[bool, object]], Any]]] = (
            queue.SimpleQueue()
        )
        threading.Thread(target=self._serve, name="react-text-tool", daemon=True).start()

    def _serve(self) -> None:
        while True:
            job, deliver = self.jobs.get()
            try:
                deliver((True, job()))
            except BaseException as exc:  # noqa: BLE001 - carried back to the caller, who decides
                deliver((False, exc))


_pool = _Pool()
