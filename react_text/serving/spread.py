"""Several upstreams behind one endpoint (`react-text serve --base-url A --base-url B`, `app([a, b])`):
which one a request goes to, and when it goes to the next. Pure, but for the clock `Spread` reads.

A conversation sticks to one upstream, so the server's prefix cache keeps hitting as it grows: the
first system message and the first user message (what every later request of the conversation
begins with) are hashed, and the hash picks the upstream. An upstream that cannot be reached
(connection refused or reset before it answered: the request never reached it, so sending it
elsewhere cannot run it twice) passes the request to the next one in order, and is passed over by
the requests that stick to it for `REST` seconds, when it is tried again. A server that answered,
even with an error, is not passed over: its answer is the request's.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable

from react_text.core.errors import ContextLengthError, ModelError

from .requests import ChatRequest, Said

__all__ = ["REST", "Spread", "sticky", "unreachable"]

REST = 10.0  # seconds an unreachable upstream is passed over


def sticky(chat: ChatRequest, upstreams: int) -> int:
    """The upstream of `chat`'s conversation: a hash of its first system and first user messages."""
    if upstreams == 1:
        return 0
    said = [m for m in chat.messages if isinstance(m, Said)]
    system = next((m.text for m in said if m.role == "system"), "")
    user = next((m.text for m in said if m.role == "user"), "")
    digest = hashlib.sha256(f"{system}\0{user}".encode("utf-8", "surrogatepass")).digest()
    return int.from_bytes(digest[:8], "big") % upstreams


def unreachable(error: BaseException) -> bool:
    """Whether `error` says the upstream was not reached at all (not: it answered with an error,
    timed out, or cut its answer short, when it may have done the work)."""
    if not isinstance(error, ModelError) or isinstance(error, ContextLengthError):
        return False
    try:
        import openai
    except ImportError:  # pragma: no cover - the serving extra's servers are reached through it
        return False
    cause = error.__cause__
    connection = isinstance(cause, openai.APIConnectionError) and not isinstance(cause, openai.APITimeoutError)
    return connection and str(error).startswith("could not reach")


class Spread:
    """The order a request tries the upstreams in, and which were found unreachable lately."""

    def __init__(self, upstreams: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.upstreams = upstreams
        self._clock = clock
        self._resting: dict[int, float] = {}  # an unreachable upstream -> when it is tried again

    def order(self, chat: ChatRequest) -> list[int]:
        """`chat`'s upstream then the next ones, round; the resting ones last."""
        first = sticky(chat, self.upstreams)
        ring = [(first + step) % self.upstreams for step in range(self.upstreams)]
        now = self._clock()
        return [i for i in ring if self._resting.get(i, 0.0) <= now] + [
            i for i in ring if self._resting.get(i, 0.0) > now
        ]

    def failed(self, index: int) -> None:
        self._resting[index] = self._clock() + REST

    def answered(self, index: int) -> None:
        self._resting.pop(index, None)
