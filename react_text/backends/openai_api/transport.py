"""How one backend's requests and look-ups go over the `openai` clients, sync and async.

Requests go through the client's low-level `post` (the body as built, the answer as plain JSON), not
`chat.completions.create`, whose conversion of every argument against its typed parameters cost
about 1.7 ms a call. The async client is the one given, or one per event loop built from the sync
client's settings; `asend` takes the lean path (`lean`) where it can. A streamed answer is read into
a `wire.StreamReading` while its bytes are watched (`Watched`). Look-ups (`get`, `post`: the context
window, what the server is, how it tokenized a prompt) are tried once, and their failures are values.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
import urllib.parse
import weakref
from collections.abc import AsyncGenerator, AsyncIterator, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from react_text.backends import identify, wire
from react_text.backends.openai_api.lean import Answered, Lean, body, try_once
from react_text.core.errors import ConfigError, safe_url, scrub

if TYPE_CHECKING:
    import openai

__all__ = ["Transport", "make_client"]

log = logging.getLogger(__name__)

_LOOKUP_SECONDS = 10.0
_LoopClient = tuple["openai.AsyncOpenAI", AsyncGenerator[None, None]]


class Transport:
    """The clients of one backend (`who` names it in the log), and each request and look-up over them."""

    def __init__(
        self, client: openai.OpenAI, async_client: openai.AsyncOpenAI | None, lean: Lean | None, who: str
    ) -> None:
        self.client = client
        self._async_client = async_client
        self._lean = lean
        self._who = who
        self._async_clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _LoopClient] = (
            weakref.WeakKeyDictionary()
        )

    # -- one request: the answer's JSON, or the stream read into `reading` -------------------------

    def send(self, path: str, arguments: dict[str, Any], reading: wire.StreamReading | None) -> object:
        import openai

        stream = reading is not None
        answer: Any = self.client.post(
            path, body=body(arguments), cast_to=object, stream=stream, stream_cls=openai.Stream[object]
        )
        if reading is None:
            return answer
        answer.response = Watched(answer.response, reading, _read_seconds(getattr(self.client, "timeout", None)))
        try:
            for chunk in answer:
                if reading.add(chunk):
                    break
        finally:
            answer.close()
        return reading

    async def asend(self, path: str, arguments: dict[str, Any], reading: wire.StreamReading | None) -> object:
        import openai

        stream = reading is not None
        if self._lean is not None and not stream:
            outcome = await try_once(self._lean, self.client, arguments)
            if isinstance(outcome, Answered):
                return outcome.answer
            client = (await self.aclient()).with_options(max_retries=outcome)
        else:
            client = await self.aclient()
        answer: Any = await client.post(
            path, body=body(arguments), cast_to=object, stream=stream, stream_cls=openai.AsyncStream[object]
        )
        if reading is None:
            return answer
        answer.response = Watched(answer.response, reading, _read_seconds(client.timeout))
        try:
            async for chunk in answer:
                if reading.add(chunk):
                    break
        finally:
            await answer.close()
        return reading

    def stream(self, path: str, arguments: dict[str, Any], reading: wire.StreamReading) -> Iterator[tuple[str, str]]:
        """`send`, streamed, for a caller that shows the reply as it comes: what each chunk adds
        (its reasoning, its text), read into `reading` as `send` reads it."""
        import openai

        answer: Any = self.client.post(
            path, body=body(arguments), cast_to=object, stream=True, stream_cls=openai.Stream[object]
        )
        answer.response = Watched(answer.response, reading, _read_seconds(getattr(self.client, "timeout", None)))
        try:
            for chunk in answer:
                stop = reading.add(chunk)
                if reading.fresh != ("", ""):
                    yield reading.fresh
                if stop:
                    break
        finally:
            answer.close()

    async def astream(
        self, path: str, arguments: dict[str, Any], reading: wire.StreamReading
    ) -> AsyncIterator[tuple[str, str]]:
        """`stream`, over the async client."""
        import openai

        client = await self.aclient()
        answer: Any = await client.post(
            path, body=body(arguments), cast_to=object, stream=True, stream_cls=openai.AsyncStream[object]
        )
        answer.response = Watched(answer.response, reading, _read_seconds(client.timeout))
        try:
            async for chunk in answer:
                stop = reading.add(chunk)
                if reading.fresh != ("", ""):
                    yield reading.fresh
                if stop:
                    break
        finally:
            await answer.close()

    async def aclient(self) -> openai.AsyncOpenAI:
        """The async client: the one given, or one per event loop, built from the sync client's settings.

        One per loop because connections belong to the loop that opened them: a backend used by
        two `asyncio.run(...)` calls in turn must not reuse the first loop's connections. Each is
        closed when its loop shuts down its async generators (asyncio.run does), so no socket is
        left open behind a closed loop.
        """
        if self._async_client is not None:
            return self._async_client
        loop = asyncio.get_running_loop()
        held = self._async_clients.get(loop)
        if held is None:
            import openai

            client = openai.AsyncOpenAI(**async_settings(self.client))
            held = self._async_clients[loop] = (client, _closed_with_its_loop(client))
            await anext(held[1])  # started in this loop, so this loop will close it
        return held[0]

    # -- look-ups: tried once, within a few seconds; a failure is a value --------------------------

    def get(self, url: str, *, quiet: bool = False) -> object:
        """A look-up's answer (the window, what the server is), or what its failure comes to."""
        import openai

        try:
            return self.client.with_options(max_retries=0, timeout=_LOOKUP_SECONDS).get(url, cast_to=object)
        except (openai.OpenAIError, ValueError) as exc:
            return self._unanswered(url, exc, quiet=quiet)

    async def aget(self, url: str, *, quiet: bool = False) -> object:
        import openai

        try:
            client = (await self.aclient()).with_options(max_retries=0, timeout=_LOOKUP_SECONDS)
            return await client.get(url, cast_to=object)
        except (openai.OpenAIError, ValueError) as exc:
            return self._unanswered(url, exc, quiet=quiet)

    def _unanswered(self, url: str, exc: Exception, *, quiet: bool) -> object:
        """What a failed look-up comes to: for a probe (`quiet`), UNREACHABLE when the server could
        not be reached and None when it answered otherwise (a 404 is an answer: this server is not
        the one that path is for, and it is not logged); for the window, None."""
        import openai

        reached = not isinstance(exc, openai.APIConnectionError)  # a timeout is one too
        if not (quiet and reached):
            log.info("%s: GET %s failed: %s", self._who, safe_url(url), scrub(str(exc)))
        return identify.UNREACHABLE if quiet and not reached else None

    def post(self, asked: tuple[str, object]) -> object:
        import openai

        url, sent = asked
        try:
            client = self.client.with_options(max_retries=0, timeout=_LOOKUP_SECONDS)
            return client.post(url, body=sent, cast_to=object)
        except (openai.OpenAIError, ValueError) as exc:
            log.info("%s: POST %s failed: %s", self._who, safe_url(url), scrub(str(exc)))
            return None

    async def apost(self, asked: tuple[str, object]) -> object:
        import openai

        url, sent = asked
        try:
            client = (await self.aclient()).with_options(max_retries=0, timeout=_LOOKUP_SECONDS)
            return await client.post(url, body=sent, cast_to=object)
        except (openai.OpenAIError, ValueError) as exc:
            log.info("%s: POST %s failed: %s", self._who, safe_url(url), scrub(str(exc)))
            return None


def async_settings(sync: object) -> dict[str, Any]:
    """What an async client built from `sync` takes of it: the URL, key, timeout and retries, and
    what an `openai.OpenAI` adds to each request (its default headers and query, organization and
    project), so that `arun` sends what `run` sends. A duck-typed client without the latter gives
    none of them."""
    settings: dict[str, Any] = {name: getattr(sync, name) for name in ("base_url", "api_key", "timeout", "max_retries")}
    for name, (attribute, kind) in _SENT.items():
        value = getattr(sync, attribute, None)
        if value and isinstance(value, kind):
            settings[name] = dict(value) if isinstance(value, Mapping) else value
    return settings


# An openai.OpenAI's settings sent with every request, by AsyncOpenAI's argument: the attribute
# that holds it (the headers and query given as default_headers= / default_query= are kept apart
# from the ones the client makes, such as its authorization).
_SENT: dict[str, tuple[str, type]] = {
    "default_headers": ("_custom_headers", Mapping),
    "default_query": ("_custom_query", Mapping),
    "organization": ("organization", str),
    "project": ("project", str),
}


async def _closed_with_its_loop(client: openai.AsyncOpenAI) -> AsyncGenerator[None, None]:
    try:
        yield
    finally:
        await client.close()


class Watched:
    """A streamed response whose bytes are watched: a server that goes on sending bytes with no
    text in them (keep-alive comments, empty chunks) for the client's read timeout raises
    `wire.Stalled` at the next bytes, as a silent one times out in the client. Everything else
    is the response's own."""

    def __init__(self, response: Any, reading: wire.StreamReading, seconds: float | None) -> None:
        self._response = response
        self._reading = reading
        self._seconds = seconds
        self._texts = -1
        self._since = time.monotonic()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._response, name)

    def _check(self) -> None:
        if self._seconds is None:
            return
        now = time.monotonic()
        if self._reading.texts != self._texts:
            self._texts, self._since = self._reading.texts, now
        elif now - self._since > self._seconds:
            raise wire.Stalled(f"its stream sent no text for {self._seconds:g} seconds")

    def iter_bytes(self, *args: Any, **kwargs: Any) -> Iterator[bytes]:
        for piece in self._response.iter_bytes(*args, **kwargs):
            self._check()
            yield piece

    async def aiter_bytes(self, *args: Any, **kwargs: Any) -> AsyncIterator[bytes]:
        async for piece in self._response.aiter_bytes(*args, **kwargs):
            self._check()
            yield piece


def _read_seconds(timeout: object) -> float | None:
    """The read timeout of a client's `timeout` (seconds, or an httpx Timeout); None: none."""
    read = getattr(timeout, "read", timeout)
    return float(read) if isinstance(read, (int, float)) and not isinstance(read, bool) else None


def make_client(
    model: str, base_url: str | None, api_key: str | None, timeout: float | None, max_retries: int
) -> openai.OpenAI:
    """The `openai` client a backend makes for itself when it is given none."""
    import openai

    # A local server needs no key; the client insists on one, so give it a placeholder.
    # OpenAI itself does: say so now, not with a 401 at the first call.
    key = api_key or os.environ.get("OPENAI_API_KEY")
    url = base_url or os.environ.get("OPENAI_BASE_URL") or "https://api.openai.com/v1"
    if not key and urllib.parse.urlsplit(url).hostname == "api.openai.com":
        raise ConfigError(
            f"{model} on api.openai.com needs an API key: set OPENAI_API_KEY (or pass api_key=...); "
            "for a local server, give its base_url"
        )
    from react_text.backends import deadline  # imports httpx, as openai does: only when a client is made here

    # each whole answer within `timeout` (httpx's own is per read), as on the async path
    http = deadline.client(timeout) if timeout is not None else None
    return openai.OpenAI(
        base_url=base_url, api_key=key or "not-needed", timeout=timeout, max_retries=max_retries, http_client=http
    )
