"""The server's context window, asked of it once (`wire.window_plan`: vLLM's /v1/models, llama.cpp's
/props), or learned from a context-length error that names it (llama-cpp-python's server says it no
other way)."""

from __future__ import annotations

import asyncio
import functools
import logging
import weakref
from collections.abc import Callable
from typing import Any

from react_text.backends import wire
from react_text.backends.openai_api.drive import adrive, drive
from react_text.backends.openai_api.transport import Transport
from react_text.core.errors import ContextLengthError, ModelError

__all__ = ["ContextWindow"]

log = logging.getLogger(__name__)

_UNKNOWN: Any = object()


class ContextWindow:
    """One backend's context window: unknown until asked (once) or named by an error."""

    def __init__(self, transport: Transport, name: str, who: str) -> None:
        self._transport = transport
        self._name = name
        self._who = who
        self._window: int | None = _UNKNOWN
        self._lookups: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Task[None]] = (
            weakref.WeakKeyDictionary()
        )

    def get(self) -> int | None:
        if self._window is _UNKNOWN:
            self._window = self._found(drive(self._plan(), self._transport.get))
        return self._window

    async def aget(self) -> int | None:
        """`get`, over the async client: once, however many runs ask at the same time (a thousand
        episodes starting together wait for the one look-up)."""
        if self._window is _UNKNOWN:
            loop = asyncio.get_running_loop()
            lookup = self._lookups.get(loop)
            if lookup is None:
                lookup = self._lookups[loop] = loop.create_task(self._alookup())
            await asyncio.shield(lookup)
        return self._window

    async def _alookup(self) -> None:
        window = await adrive(self._plan(), self._transport.aget)
        if self._window is _UNKNOWN:
            self._window = self._found(window)

    def _plan(self) -> wire.WindowPlan:
        return wire.window_plan(str(self._transport.client.base_url), self._name)

    def _found(self, window: int | None) -> int | None:
        if window is None:
            log.info("%s does not say its context window", self._who)
        return window

    def failure(self, *said: object) -> Callable[[str], ModelError]:
        """ContextLengthError when the server says the prompt did not fit, learning the window
        from its words when it could not say it before (llama-cpp-python's server has no /props)."""
        if not wire.exceeds_context(*said):
            return ModelError
        window = wire.window_said(*said)
        if window is not None and self._window in (_UNKNOWN, None):
            log.info("%s: its context window is %d tokens, as its error says", self._who, window)
            self._window = window
        return functools.partial(ContextLengthError, window=window, prompt_tokens=wire.prompt_said(*said))
