"""Helpers of attack36: tools with and without effects, stream collection under both drivers."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable
from typing import Any

from react_text import Agent, Revision, RunResult, TextDelta, tool

RAN: list[tuple[str, str]] = []


@tool(risky=True)  # type: ignore[untyped-decorator]
def pay(amount: int) -> str:
    """Send a payment (asked first)."""
    RAN.append(("pay", str(amount)))
    return f"paid {amount}"


@tool
def note(text: str) -> str:
    """Write a line in the notebook (an effect: never run twice)."""
    RAN.append(("note", text))
    return "noted"


def add(a: float, b: float) -> float:
    """Add two numbers."""
    RAN.append(("add", f"{a}, {b}"))
    return a + b


def split_at(*positions: int) -> Callable[[str], Iterable[str]]:
    """A `chunks=` function cutting a reply at the given character positions."""

    def cut(text: str) -> list[str]:
        marks = sorted({p for p in positions if 0 < p < len(text)})
        pieces, last = [], 0
        for mark in marks:
            pieces.append(text[last:mark])
            last = mark
        pieces.append(text[last:])
        return pieces

    return cut


def collect(agent: Agent, task: str, driver: str) -> list[Any]:
    """Every event of a streamed run, under the sync or the async driver."""
    if driver == "sync":
        return list(agent.stream(task))

    async def gather() -> list[Any]:
        return [event async for event in agent.astream(task)]

    return asyncio.run(gather())


def run(agent: Agent, task: str, driver: str, **options: Any) -> RunResult:
    if driver == "sync":
        return agent.run(task, **options)
    return asyncio.run(agent.arun(task, **options))


def resume(agent: Agent, state: Any, driver: str, **options: Any) -> RunResult:
    if driver == "sync":
        return agent.resume(state, **options)
    return asyncio.run(agent.aresume(state, **options))


def shown(events: list[Any]) -> dict[int, str]:
    """The visible (non-thinking) text each step showed, revisions applied."""
    per: dict[int, list[str]] = {}
    for event in events:
        if isinstance(event, TextDelta) and event.kind != "thinking":
            per.setdefault(event.step, []).append(event.text)
        elif isinstance(event, Revision):
            per[event.step] = [d.text for d in event.deltas if d.kind != "thinking"]
    return {step: "".join(parts) for step, parts in per.items()}


def outline(result: RunResult) -> tuple[Any, ...]:
    """What a run came to, without wall times."""
    return (
        result.answer,
        result.stop_reason,
        result.error,
        [(s.number, str(s.parsed), s.observation) for s in result.steps],
        result.usage,
    )
