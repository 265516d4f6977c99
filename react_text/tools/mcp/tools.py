"""mcp_tools: the Tools of one or more MCP servers, for a `with` or `async with` block (see the
package's docstring for what becomes of a tool and its results)."""

from __future__ import annotations

import asyncio
import functools
import importlib.util
import inspect
import logging
import os
from collections.abc import Callable, Mapping, Sequence
from types import TracebackType
from typing import TYPE_CHECKING

from react_text.core.errors import ConfigError, set_up
from react_text.tools.mcp.schema import Parameters
from react_text.tools.mcp.sessions import CANCEL_GRACE, LoopThread, Server, Session
from react_text.tools.tool import Tool

if TYPE_CHECKING:
    import mcp.types

__all__ = ["MCPTools", "from_cli", "mcp_tools"]

log = logging.getLogger(__name__)
_INSTALL = 'MCP servers need the mcp extra: pip install "react-text[mcp]"'


def mcp_tools(
    *servers: str | Server,
    env: Mapping[str, str] | None = None,
    headers: Mapping[str, str] | None = None,
    timeout: float | None = None,
) -> MCPTools:
    """The tools of `servers`, for a `with` (sync runs) or `async with` block (async runs).

    `env` goes to the servers given as command lines, `headers` to the one given as a URL (to give
    two URLs different headers, pass `Server(url, headers=...)` for each: a token meant for one
    server is never sent to another). `timeout` is each tool's time limit in seconds (None: the
    agent's `Limits.tool_seconds`).
    """
    for server in servers:
        if not isinstance(server, str | Server):
            raise TypeError(
                "mcp_tools takes each server as an argument of its own, a command line or an http(s) URL "
                f'(mcp_tools("python server.py", "http://127.0.0.1:8000/mcp"); a list: mcp_tools(*servers)), '
                f"not {type(server).__name__}"
            )
    _check_timeout(timeout)
    commands = [s for s in servers if isinstance(s, str) and not s.startswith(("http://", "https://"))]
    urls = [s for s in servers if isinstance(s, str) and s.startswith(("http://", "https://"))]
    if env and not commands:
        raise ValueError("env= is for servers given as command lines, and none was given")
    if headers and len(urls) != 1:
        raise ValueError(
            "headers= go to the one server given as a URL; "
            + ("none was given" if not urls else "give each URL its own: Server(url, headers=...)")
        )
    made = tuple(
        s if isinstance(s, Server) else Server(s, headers=headers or {}) if s in urls else Server(s, env=env or {})
        for s in servers
    )
    if not made:
        raise ValueError("mcp_tools needs at least one server: a command line or an http(s) URL")
    return MCPTools(made, timeout)


class MCPTools:
    """The context manager `mcp_tools` returns; entering it yields a tuple of Tools. Used once."""

    def __init__(self, servers: tuple[Server, ...], timeout: float | None = None) -> None:
        _check_timeout(timeout)
        if importlib.util.find_spec("mcp") is None:
            raise ConfigError(_INSTALL)
        self.servers = servers
        self.timeout = timeout
        self._sessions = [Session(s) for s in servers]
        self._loop: LoopThread | None = None
        self._entered = False

    def __repr__(self) -> str:
        return f"mcp_tools({', '.join(repr(s.name) for s in self.servers)})"

    def __enter__(self) -> tuple[Tool, ...]:
        self._enter()
        loop = self._loop = LoopThread()
        try:
            return self._tools(loop.run(self._open()), functools.partial(_sync_call, loop, self.timeout))
        except BaseException:  # including Ctrl-C while servers start: close what did start
            self._shut()
            raise

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self._shut()

    async def __aenter__(self) -> tuple[Tool, ...]:
        self._enter()
        try:
            return self._tools(await self._open(), _async_call)
        except BaseException:
            await self._close()
            raise

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        await self._close()

    def _enter(self) -> None:
        if self._entered:
            raise RuntimeError("an mcp_tools(...) block is used once; call mcp_tools again for another")
        self._entered = True

    async def _open(self) -> list[list[mcp.types.Tool]]:
        return list(await asyncio.gather(*(s.start() for s in self._sessions)))

    async def _close(self) -> None:
        await asyncio.gather(*(s.close() for s in self._sessions))

    def _shut(self) -> None:
        if self._loop is not None:
            try:
                self._loop.run(self._close())
            finally:
                self._loop.stop()

    def _tools(self, found: list[list[mcp.types.Tool]], make: _CallMaker) -> tuple[Tool, ...]:
        made: list[Tool] = []
        owner: dict[str, str] = {}
        for session, listed in zip(self._sessions, found, strict=True):
            for spec in listed:
                if spec.name in owner:
                    raise ValueError(
                        f"two MCP servers have a tool named {spec.name!r}: {owner[spec.name]} and {session.server.name}"
                    )
                owner[spec.name] = session.server.name
                try:
                    made.append(_tool(spec, make(session, spec.name, Parameters.of(spec.input_schema)), self.timeout))
                except ValueError as exc:  # a name the text protocol cannot carry (brackets, a newline)
                    log.warning("skipped the tool %r of %s: %s", spec.name, session, exc)
        return tuple(made)


def from_cli(servers: Sequence[str], env: Sequence[str] = (), headers: Sequence[str] = ()) -> MCPTools:
    """mcp_tools from command-line words: `--mcp-env NAME=VALUE` (or NAME, to pass this
    process's value on) and `--mcp-header "Name: value"`."""
    variables: dict[str, str] = {}
    for item in env:
        key, sep, value = item.partition("=")
        if not sep:
            if key not in os.environ:
                raise ConfigError(f"--mcp-env {key}: no such variable in this environment (or give NAME=VALUE)")
            value = os.environ[key]
        variables[key] = value
    fields: dict[str, str] = {}
    for item in headers:
        key, sep, value = item.partition(":")
        if not sep or not key.strip():
            raise ConfigError("--mcp-header takes 'Name: value'")  # the value may be a secret: not echoed
        fields[key.strip()] = value.strip()
    with set_up():
        return mcp_tools(*servers, env=variables or None, headers=fields or None)


def _check_timeout(timeout: object) -> None:
    """Each tool's time limit, as `Tool` takes it: refused when the block is made, not tool by tool
    when it is entered (which would skip every tool)."""
    if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, int | float) or not timeout > 0):
        raise ValueError(f"timeout must be a positive number of seconds or None, not {timeout!r}")


_CallMaker = Callable[[Session, str, Parameters], Callable[..., object]]


def _tool(spec: mcp.types.Tool, fn: Callable[..., object], timeout: float | None) -> Tool:
    hints = spec.annotations
    text = inspect.cleandoc(spec.description or spec.title or (hints.title if hints else None) or "")
    fn.__name__ = fn.__qualname__ = spec.name
    fn.__doc__ = text
    return Tool(
        spec.name,
        text.split("\n\n")[0].replace("\n", " ").strip(),  # the first paragraph, as for a Python function
        fn,
        risky=bool(hints and hints.destructive_hint and not hints.read_only_hint),
        timeout=timeout,
        pure=bool(hints and hints.read_only_hint),  # no side effects: a repeat is answered from the first
        # a side effect that a repeat adds nothing to: answered from the last while nothing else ran
        idempotent=bool(hints and hints.idempotent_hint and not hints.read_only_hint),
    )


def _sign(fn: Callable[..., object], parameters: Parameters) -> None:
    fn.__signature__ = parameters.signature  # type: ignore[attr-defined]


def _sync_call(
    loop: LoopThread, timeout: float | None, session: Session, name: str, parameters: Parameters
) -> Callable[..., object]:
    def call(*args: object, **kwargs: object) -> str:
        arguments = parameters.arguments(args, kwargs)
        if not loop.running:
            raise RuntimeError(f"{session} is closed: use its tools inside the mcp_tools(...) block")
        if timeout is None:
            return loop.run(session.call(name, arguments))
        # The engine abandons a call at `timeout` and says so; a moment later the call is cancelled
        # here too, so the server stops working on it.
        try:
            return loop.run(session.call(name, arguments), timeout + CANCEL_GRACE)
        except TimeoutError:
            raise TimeoutError(f"{session} did not answer within {timeout} seconds") from None

    _sign(call, parameters)
    return call


def _async_call(session: Session, name: str, parameters: Parameters) -> Callable[..., object]:
    async def call(*args: object, **kwargs: object) -> str:
        arguments = parameters.arguments(args, kwargs)
        if not session.closed and asyncio.get_running_loop() is not session.loop:
            raise RuntimeError(
                f"the tools of `async with mcp_tools(...)` run in the event loop that opened them ({session}); "
                "for sync runs, use `with mcp_tools(...)`"
            )
        return await session.call(name, arguments)

    _sign(call, parameters)
    return call
