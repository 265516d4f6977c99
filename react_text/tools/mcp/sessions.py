"""One session a server, held by one task of its own, and the event-loop thread of the sync form.

Why a task per session: the SDK's transports hold anyio cancel scopes, which must be left by the
task that entered them. So each session is opened, held and closed by one task of its own (on a
background event-loop thread in the sync form; in the caller's loop in the async form), and tool
calls are handed to it. A server that dies takes only its own task down; its tools then fail
with a ConnectionError the model reads, and the run goes on.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import dataclasses
import functools
import logging
import os
import shlex
import sys
import threading
import typing
from collections.abc import Awaitable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TextIO

from react_text.core.errors import ConfigError, safe_url, scrub
from react_text.tools.mcp.results import ToolError, result_text

if TYPE_CHECKING:
    import mcp
    import mcp.types

__all__ = ["CANCEL_GRACE", "CLOSE_SECONDS", "OPEN_SECONDS", "LoopThread", "Server", "Session"]

log = logging.getLogger(__name__)
_T = typing.TypeVar("_T")

OPEN_SECONDS = 30.0  # to start a server (or reach it) and list its tools
CLOSE_SECONDS = 10.0  # for a session to close before it is cancelled, then abandoned
CANCEL_GRACE = 1.0  # after a tool's time limit, until the abandoned call is cancelled


@dataclass(frozen=True, slots=True, repr=False)
class Server:
    """One MCP server: a command line (stdio) or an http(s) URL (streamable HTTP).

    `env` (stdio only) is added to the SDK's default environment; `headers` (HTTP only) are sent
    with every request. Neither is ever shown.
    """

    target: str
    env: Mapping[str, str] = dataclasses.field(default_factory=dict)
    headers: Mapping[str, str] = dataclasses.field(default_factory=dict)
    cwd: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.target, str):
            raise TypeError(
                f"an MCP server is a command line or an http(s) URL, as text, not {type(self.target).__name__}"
            )
        _texts("env", self.env)
        _texts("headers", self.headers)
        if self.cwd is not None and not isinstance(self.cwd, str | os.PathLike):
            raise TypeError(f"cwd must be a folder's path or None, not {self.cwd!r}")
        if not self.target.strip():
            raise ValueError("an MCP server is a command line or an http(s) URL, not an empty string")
        if self.http and self.env:
            raise ValueError(f"env= is for servers started as commands, not for the URL {self.name}")
        if not self.http and self.headers:
            raise ValueError(f"headers= are for HTTP servers, not for the command {self.name}")

    @property
    def http(self) -> bool:
        return self.target.startswith(("http://", "https://"))

    @property
    def name(self) -> str:
        """How the server is named in messages: the command line, or the URL without credentials."""
        return safe_url(self.target) if self.http else self.target

    def __repr__(self) -> str:
        return f"Server({self.name!r})"


def _texts(option: str, given: object) -> None:
    """`env` and `headers` map names to text; a wrong one is named by its key, never its value (a secret)."""
    if not isinstance(given, Mapping):
        raise TypeError(f"{option}= maps names to text values, not {type(given).__name__}")
    for key, value in given.items():
        if not isinstance(key, str):
            raise TypeError(f"{option}= maps names to text values; a name is {type(key).__name__} {key!r:.40}")
        if not isinstance(value, str):
            raise TypeError(f"{option}[{key!r}] must be text (its value as a string), not {type(value).__name__}")


class Session:
    def __init__(self, server: Server) -> None:
        self.server = server
        self.loop: asyncio.AbstractEventLoop | None = None
        self._client: mcp.Client | None = None
        self._task: asyncio.Task[None] | None = None
        self._stop: asyncio.Event | None = None
        self._lost = ""
        self.closed = False

    def __str__(self) -> str:
        return f"the MCP server {self.server.name!r}"

    async def start(self) -> list[mcp.types.Tool]:
        """Open the session in a task of its own; its tools once they are listed."""
        self.loop = asyncio.get_running_loop()
        ready: asyncio.Future[list[mcp.types.Tool]] = self.loop.create_future()
        self._stop = asyncio.Event()
        self._task = self.loop.create_task(self._hold(ready), name=f"mcp {self.server.name}")
        try:
            async with asyncio.timeout(OPEN_SECONDS):
                return await asyncio.shield(ready)
        except TimeoutError:
            await self.close()
            raise ConfigError(f"{self} did not answer within {OPEN_SECONDS:.0f} seconds") from None

    async def _hold(self, ready: asyncio.Future[list[mcp.types.Tool]]) -> None:
        try:
            async with contextlib.AsyncExitStack() as stack:
                client = await stack.enter_async_context(await self._connect(stack))
                found = await _list_tools(client)
                self._client = client
                ready.set_result(found)
                assert self._stop is not None
                await self._stop.wait()
        except Exception as exc:  # noqa: BLE001 - the transport boundary: a dead server is said, not raised
            self._lost = self._redact(_reason(exc))
            if ready.done():
                log.warning("%s closed: %s", self, self._lost)
            elif _closed(exc) and not self.server.http:
                why = "it exited before it answered (its own error output, if any, is just above)"
                ready.set_exception(ConfigError(f"could not start {self}: {why}"))
            else:
                ready.set_exception(ConfigError(f"could not open {self}: {self._lost}"))
        finally:
            self._client = None
            if not ready.done():
                ready.cancel()

    async def _connect(self, stack: contextlib.AsyncExitStack) -> mcp.Client:
        import httpx2
        from mcp import Client, StdioServerParameters
        from mcp.client.stdio import stdio_client
        from mcp.client.streamable_http import streamable_http_client

        if self.server.http:
            http = await stack.enter_async_context(
                httpx2.AsyncClient(headers=dict(self.server.headers), timeout=httpx2.Timeout(30.0, read=300.0))
            )
            return Client(streamable_http_client(self.server.target, http_client=http))
        words = shlex.split(self.server.target)
        command = StdioServerParameters(
            command=words[0], args=words[1:], env=dict(self.server.env) or None, cwd=self.server.cwd
        )
        return Client(stdio_client(command, errlog=_stderr()))

    async def call(self, name: str, arguments: dict[str, object]) -> str:
        """Call a tool in this session; its result as text. A dead server is a ConnectionError."""
        from mcp import MCPError

        if self.closed:
            raise RuntimeError(f"{self} is closed: use its tools inside the mcp_tools(...) block")
        client, holder = self._client, self._task
        if client is None or holder is None or holder.done():
            raise ConnectionError(self._gone())
        request = asyncio.ensure_future(client.call_tool(name, arguments))
        request.add_done_callback(_retrieve)
        try:
            done, _ = await asyncio.wait({request, holder}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            request.cancel()  # no-op once it is done; a cancelled call stops here (time limit, Ctrl-C)
        if request not in done:
            raise ConnectionError(self._gone())
        try:
            result = request.result()
        except MCPError as exc:
            if _closed(exc):
                raise ConnectionError(self._gone()) from None
            raise ToolError(self._redact(exc.error.message)) from None
        except Exception as exc:  # noqa: BLE001 - a transport failure, told without secrets
            raise ConnectionError(f"{self} failed: {self._redact(_reason(exc))}") from None
        return result_text(name, result)

    async def close(self) -> None:
        self.closed = True
        task = self._task
        if task is None or task.done():
            return
        assert self._stop is not None
        self._stop.set()
        if self._client is None:
            task.cancel()  # still opening: stop there (the task leaves its own scopes)
        done, _ = await asyncio.wait({task}, timeout=CLOSE_SECONDS)
        if not done:
            task.cancel()
            done, _ = await asyncio.wait({task}, timeout=CLOSE_SECONDS)
        if not done:
            log.warning("%s did not close within %.0f seconds; abandoned", self, 2 * CLOSE_SECONDS)

    def _gone(self) -> str:
        why = f" ({self._lost})" if self._lost else ""
        return f"{self} is no longer running or reachable{why}; its tools cannot be used any more"

    def _redact(self, text: str) -> str:
        for secret in [*self.server.headers.values(), *self.server.env.values()]:
            if len(secret) >= 4:
                text = text.replace(secret, "[secret]")
        if self.server.http:
            text = text.replace(self.server.target, self.server.name)
        return scrub(text)


async def _list_tools(client: mcp.Client) -> list[mcp.types.Tool]:
    found: list[mcp.types.Tool] = []
    cursor: str | None = None
    for _ in range(100):  # a server whose pages never end cannot hang the start
        page = await client.list_tools(cursor=cursor)
        found += page.tools
        cursor = page.next_cursor
        if cursor is None:
            break
    return found


def _leaf(exc: BaseException) -> BaseException:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def _reason(exc: BaseException) -> str:
    exc = _leaf(exc)
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


def _closed(exc: BaseException) -> bool:
    """The connection closed under a request (the SDK's CONNECTION_CLOSED)."""
    from mcp import MCPError
    from mcp.types import CONNECTION_CLOSED

    exc = _leaf(exc)
    return isinstance(exc, MCPError) and exc.code == CONNECTION_CLOSED


def _retrieve(task: asyncio.Future[Any]) -> None:
    """Mark a call's outcome as seen, so an abandoned call logs no 'exception never retrieved'."""
    if not task.cancelled():
        task.exception()


def _stderr() -> TextIO:
    """Where a stdio server's stderr goes: ours, when it is a real file (not so in a notebook)."""
    for stream in (sys.stderr, sys.__stderr__):
        try:
            if stream is not None:
                stream.fileno()
                return stream
        except (OSError, ValueError, AttributeError):
            continue
    return _devnull()


@functools.cache
def _devnull() -> TextIO:
    return open(os.devnull, "w")  # one for the process, never closed


class LoopThread:
    """An event loop on a daemon thread, for the sync form: the sessions live there all block long."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._serve, name="react-text-mcp", daemon=True)
        self._thread.start()

    @property
    def running(self) -> bool:
        return self.loop.is_running()

    def _serve(self) -> None:
        asyncio.set_event_loop(self.loop)
        try:
            self.loop.run_forever()
            leftover = asyncio.all_tasks(self.loop)
            for task in leftover:
                task.cancel()
            self.loop.run_until_complete(asyncio.gather(*leftover, return_exceptions=True))
            self.loop.run_until_complete(self.loop.shutdown_asyncgens())
            self.loop.run_until_complete(self.loop.shutdown_default_executor())
        finally:
            self.loop.close()

    def run(self, work: Awaitable[_T], timeout: float | None = None) -> _T:
        future = asyncio.run_coroutine_threadsafe(_awaited(work), self.loop)
        try:
            return future.result(timeout)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise TimeoutError from None
        except BaseException:  # Ctrl-C while waiting: the call is cancelled, not left running
            future.cancel()
            raise

    def stop(self) -> None:
        with contextlib.suppress(RuntimeError):  # already closed
            self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(CLOSE_SECONDS)


async def _awaited(work: Awaitable[_T]) -> _T:
    return await work
