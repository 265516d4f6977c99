"""One call's plan, free of I/O (both drivers run it, `drive`): what to send, and what to send again
after a failure: without `stop` once the server has rejected it, unstreamed once a stream was dropped
without a word (to hear why)."""

from __future__ import annotations

from collections.abc import Callable, Generator
from typing import Any

from react_text.backends import wire
from react_text.core.types import Reply

__all__ = ["CallPlan", "call_plan", "retried"]

CallPlan = Generator[dict[str, Any], "Reply | Exception", Reply]  # yields requests, is sent each outcome


def call_plan(
    build: Callable[[], dict[str, Any]], stop_rejected: Callable[[Exception, dict[str, Any]], bool]
) -> CallPlan:
    """The arguments `build` makes, sent; again after a 400 that `stop_rejected` says rejected `stop`
    (the backend sends it no more); again unstreamed after a stream that failed before its first token."""
    arguments = build()
    outcome = yield arguments
    if isinstance(outcome, Exception) and stop_rejected(outcome, arguments):
        arguments = build()
        outcome = yield arguments
    if arguments.get("stream") and (isinstance(outcome, wire.EmptyStream) or wire.dropped(outcome)):
        # llama-cpp-python's server fails a stream before its first token (a prompt past n_ctx)
        # by closing the connection, with or without a 200 first: ask once unstreamed to hear why.
        arguments = {k: v for k, v in arguments.items() if k not in ("stream", "stream_options")}
        outcome = yield arguments
    if isinstance(outcome, Exception):
        raise outcome
    return outcome


def retried() -> tuple[type[Exception], ...]:
    """The failures of one try that the plan is sent, to decide whether to send again."""
    import openai

    return (openai.BadRequestError, openai.APIConnectionError, wire.EmptyStream)
