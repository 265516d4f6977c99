"""What a run's flow needs, carried out for its drivers: the model call, the approval, the tool calls, the window."""

from __future__ import annotations

import asyncio
import inspect
import typing
from collections.abc import Callable
from typing import Any

from react_text.core.commands import Approve, Approver, Invoke, InvokeAll, Send
from react_text.core.flow import Need, Runnable, escaped
from react_text.core.types import AsyncModel
from react_text.tools import running

__all__ = [
    "acarry",
    "carry",
    "guarded",
]


def carry(agent: Runnable, need: Need) -> object:
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


async def acarry(agent: Runnable, need: Need) -> object:
    """What the async driver does for the flow: `carry`, awaited. A sync-only model runs on a
    worker thread (`guarded`: a StopIteration cannot cross a future); an approver may be async."""
    if isinstance(need, Send):
        if agent.info.asynchronous:
            return await typing.cast(AsyncModel, agent.model).agenerate(need.request)
        return await asyncio.to_thread(guarded, agent.model.generate, need.request)
    if isinstance(need, Approve):
        decision = _approver(agent)(need.tool, need.action)
        return await decision if inspect.isawaitable(decision) else decision
    if isinstance(need, InvokeAll):
        return await running.arun_all(_invocations(need))
    if isinstance(need, Invoke):
        return await running.arun(need.tool, need.arguments, need.seconds)
    await _aidentify(agent)
    return await _awindow(agent)


def guarded(call: Callable[..., Any], *args: Any) -> Any:
    """A sync model's `call(*args)` on a worker thread, with a StopIteration or StopAsyncIteration
    it raises made a RuntimeError: raised into the future that carries it back, it would break
    that future instead, and the run would wait for it for ever."""
    try:
        return call(*args)
    except (StopIteration, StopAsyncIteration) as exc:
        raise escaped("the model", exc) from exc


def _invocations(command: InvokeAll) -> list[running.Invocation]:
    return [(i.tool, i.arguments, i.seconds) for i in command.invokes]


def _approver(agent: Runnable) -> Approver:
    if agent.approve is None:  # the episode asks only an agent that has one
        raise RuntimeError("the episode asked for an approval, but the agent has no approver")
    return agent.approve


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
