"""Driving a plan: what to send, free of I/O (the request plan, `identify.plan`, `wire.window_plan`),
carried out by the sync or the async client, as httpx's clients drive one auth flow. All but the `await`."""

from __future__ import annotations

import typing
from collections.abc import Awaitable, Callable, Generator
from typing import TypeVar

__all__ = ["adrive", "drive"]

_Asked = TypeVar("_Asked")
_Answer = TypeVar("_Answer")
_Found = TypeVar("_Found")


def drive(
    plan: Generator[_Asked, _Answer | Exception, _Found],
    carry: Callable[[_Asked], _Answer],
    caught: tuple[type[Exception], ...] = (),
) -> _Found:
    """Run `plan`: each thing it asks, carried out, and sent back (or the `caught` error it raised)."""
    try:
        asked = next(plan)
        while True:
            try:
                answer: _Answer | Exception = carry(asked)
            except caught as exc:
                answer = exc
            asked = plan.send(answer)
    except StopIteration as done:
        return typing.cast(_Found, done.value)


async def adrive(
    plan: Generator[_Asked, _Answer | Exception, _Found],
    carry: Callable[[_Asked], Awaitable[_Answer]],
    caught: tuple[type[Exception], ...] = (),
) -> _Found:
    """`drive`, awaiting each thing carried out."""
    try:
        asked = next(plan)
        while True:
            try:
                answer: _Answer | Exception = await carry(asked)
            except caught as exc:
                answer = exc
            asked = plan.send(answer)
    except StopIteration as done:
        return typing.cast(_Found, done.value)
