"""Tools from MCP servers, for any text model: `pip install "react-text[mcp]"`.

    with mcp_tools("python server.py", "http://127.0.0.1:8000/mcp") as tools:
        Agent(model, tools=tools).run(task)

    async with mcp_tools("python server.py") as tools:
        await Agent(model, tools=tools).arun(task)

A server is a command line (stdio; split like a shell would, never run through one) or an http(s)
URL (streamable HTTP). Each server gets one session for the whole block, so a stateful server (a
browser, a shell, a counter) keeps its state from call to call; every session is closed on the
way out, whether the block ends, raises or is interrupted.

Each MCP tool becomes a `Tool` under its exact name (`get-weather`, `files.read`), its
description's first paragraph, and a signature made from its input schema, so the one binder
reads `get-weather[Oslo]` as it reads a Python function's input. Results: text content is joined,
structured content without text is shown as JSON, an `isError` result raises `ToolError` with the
server's words (the engine shows it as a tool error), and images, audio and other binary content
are refused in words. A tool whose annotations say `destructiveHint` (and not `readOnlyHint`) is
risky: it runs only when approved. One that says `readOnlyHint` or `idempotentHint` is pure: a call
the model repeats is answered from the first one. Any other tool (a counter, a browser, a shell)
runs every time it is called.

Secrets: a stdio server gets only the SDK's default environment (HOME, PATH, ...) plus `env=`;
HTTP headers are sent to their server and appear in no repr, log line or error message.

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
import importlib.util
import inspect
import json
import keyword
import logging
import operator
import os
import re
import shlex
import sys
import threading
import typing
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import TYPE_CHECKING, Any, Literal, TextIO

from . import prompting
from .errors import ConfigError, safe_url, scrub, set_up
from .tools import Tool

if TYPE_CHECKING:
    import mcp
    import mcp.types

__all__ = [
    "MCPTools",
    "Parameters",
    "Server",
    "ToolError",
    "from_cli",
    "mcp_tools",
]

log = logging.getLogger(__name__)
_T = typing.TypeVar("_T")

_OPEN_SECONDS = 30.0  # to start a server (or reach it) and list its tools
_CLOSE_SECONDS = 10.0  # for a session to close before it is cancelled, then abandoned
_CANCEL_GRACE = 1.0  # after a tool's time limit, until the abandoned call is cancelled
_INSTALL = 'MCP servers need the mcp extra: pip install "react-text[mcp]"'


class ToolError(Exception):
    """An MCP tool reported failure (`isError`); the message is the server's text."""


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
        if importlib.util.find_spec("mcp") is None:
            raise ConfigError(_INSTALL)
        self.servers = servers
        self.timeout = timeout
        self._sessions = [_Session(s) for s in servers]
        self._loop: _LoopThread | None = None
        self._entered = False

    def __repr__(self) -> str:
        return f"mcp_tools({', '.join(repr(s.name) for s in self.servers)})"

    def __enter__(self) -> tuple[Tool, ...]:
        self._enter()
        loop = self._loop = _LoopThread()
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


# --- the parameters of an MCP tool, from its input schema ----------------------------------------

_JSON_TYPES: dict[str, Any] = {
    "string": str,
    "integer": int,
    "number": float,
    "boolean": bool,
    "array": list,
    "object": dict,
    "null": type(None),
}


@dataclass(frozen=True, slots=True)
class Parameters:
    """A tool's input schema as a Python signature, and the way back to the JSON the server takes.

    Property names that are not Python identifiers (`max-results`, `from`) get one (`max_results`,
    `from_`); `keys` maps them back. Required properties come first, in schema order, then the
    optional ones. An optional property without a default defaults to None, which means "not
    sent", so the server applies its own default.
    """

    signature: inspect.Signature
    keys: Mapping[str, str]  # Python name -> property name
    unsent_when_none: frozenset[str]

    @classmethod
    def of(cls, schema: Mapping[str, Any]) -> Parameters:
        properties = schema.get("properties")
        properties = properties if isinstance(properties, dict) else {}
        defs = schema.get("$defs") or schema.get("definitions") or {}
        required = [k for k in schema.get("required") or () if isinstance(k, str)]
        order = [k for k in properties if k in required] + [k for k in required if k not in properties]
        order += [k for k in properties if k not in required]
        params: list[inspect.Parameter] = []
        keys: dict[str, str] = {}
        unsent: set[str] = set()
        for key in order:
            sub = properties.get(key, {})
            name = _identifier(key, keys)
            keys[name] = key
            annotation = _annotation(sub, defs)
            default: object = inspect.Parameter.empty
            if key not in required:
                if isinstance(sub, dict) and "default" in sub:
                    default = sub["default"]
                else:
                    default = None
                    unsent.add(name)
                    if not _admits_none(annotation):
                        annotation = annotation | None
            params.append(
                inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=default, annotation=annotation)
            )
        return cls(inspect.Signature(params, return_annotation=str), keys, frozenset(unsent))

    def arguments(self, args: tuple[object, ...], kwargs: Mapping[str, object]) -> dict[str, object]:
        """The JSON arguments of a call, keyed as the server named them."""
        if not self.signature.parameters:
            return {}  # a tool that takes nothing ignores what it was given (`count[]`, `count[now]`)
        bound = self.signature.bind(*args, **kwargs)
        return {
            self.keys[name]: value
            for name, value in bound.arguments.items()
            if not (value is None and name in self.unsent_when_none)
        }


_NOT_WORD = re.compile(r"\W")


def _identifier(key: str, taken: Iterable[str]) -> str:
    name = _NOT_WORD.sub("_", key) or "_"
    if name[0].isdigit():
        name = f"_{name}"
    if keyword.iskeyword(name):
        name += "_"
    while name in taken:
        name += "_"
    return name


def _annotation(schema: object, defs: Mapping[str, Any], depth: int = 0) -> Any:
    """The Python type of a JSON Schema: str, int, float, bool, list[...], dict, X | None, Literal."""
    if not isinstance(schema, dict) or depth > 8:
        return Any
    ref = schema.get("$ref")
    if isinstance(ref, str):
        target = defs.get(ref.rsplit("/", 1)[-1]) if ref.startswith(("#/$defs/", "#/definitions/")) else None
        return _annotation(target, defs, depth + 1)
    if isinstance(schema.get("enum"), list) or "const" in schema:
        choices = schema["enum"] if isinstance(schema.get("enum"), list) else [schema["const"]]
        values = tuple(c for c in choices if c is not None)
        if values and all(isinstance(c, str | int | float | bool) for c in values):
            return _union([typing.cast(Any, Literal)[values], *([None] if None in choices else [])])
    for key in ("anyOf", "oneOf"):
        if isinstance(schema.get(key), list) and schema[key]:
            return _union([_annotation(option, defs, depth + 1) for option in schema[key]])
    kind = schema.get("type")
    kinds = kind if isinstance(kind, list) else [kind] if isinstance(kind, str) else []
    if not kinds:
        return dict if "properties" in schema else Any
    made = []
    for k in kinds:
        if k == "array" and isinstance(schema.get("items"), dict):
            inner = _annotation(schema["items"], defs, depth + 1)
            made.append(list if inner is Any else list[inner])  # type: ignore[valid-type]
        else:
            made.append(_JSON_TYPES.get(k, Any))
    return _union(made)


def _union(options: list[Any]) -> Any:
    unique = list(dict.fromkeys(None if o is type(None) else o for o in options))
    if Any in unique or not unique:
        return Any
    types = [o for o in unique if o is not None] + ([type(None)] if None in unique else [])
    return functools.reduce(operator.or_, types) if len(types) > 1 else types[0]


def _admits_none(annotation: Any) -> bool:
    return annotation is Any or annotation is type(None) or type(None) in typing.get_args(annotation)


# --- results --------------------------------------------------------------------------------------


def _result_text(name: str, result: mcp.types.CallToolResult) -> str:
    """What the model reads of a tool's result; raises ToolError for an `isError` result."""
    import mcp.types as types

    pieces: list[str] = []
    texts = 0
    for block in result.content:
        if isinstance(block, types.TextContent):
            pieces.append(block.text)
            texts += 1
        elif isinstance(block, types.EmbeddedResource) and isinstance(block.resource, types.TextResourceContents):
            pieces.append(block.resource.text)
            texts += 1
        elif isinstance(block, types.ResourceLink):
            pieces.append(f"{block.name}: {block.uri}" + (f" ({block.description})" if block.description else ""))
        else:
            pieces.append(prompting.render("corrections/tool_bad_result", tool=name, kind=_binary_kind(block)))
    if result.structured_content is not None and not texts:
        # The text blocks, when there are any, already carry it (the spec asks servers to send both).
        pieces.insert(0, json.dumps(result.structured_content, ensure_ascii=False))
    text = "\n".join(pieces)
    if result.is_error:
        raise ToolError(text or "the server reported an error and gave no message")
    return text


def _binary_kind(block: object) -> str:
    """In words: "an image (image/png, 12 KB)"."""
    import mcp.types as types

    if isinstance(block, types.ImageContent | types.AudioContent):
        noun, mime, data = (
            ("an image" if isinstance(block, types.ImageContent) else "audio"),
            block.mime_type,
            block.data,
        )
    elif isinstance(block, types.EmbeddedResource) and isinstance(block.resource, types.BlobResourceContents):
        noun, mime, data = "a file", block.resource.mime_type or "binary", block.resource.blob
    else:
        return f"content of type {getattr(block, 'type', type(block).__name__)!r}"
    size = len(data) * 3 // 4 - data[-2:].count("=")  # base64
    amount = f"{size} bytes" if size < 1024 else f"{size / 1024:.0f} KB"
    return f"{noun} ({mime}, {amount})"


# --- one session a server, held by one task -------------------------------------------------------


class _Session:
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
            async with asyncio.timeout(_OPEN_SECONDS):
                return await asyncio.shield(ready)
        except TimeoutError:
            await self.close()
            raise ConfigError(f"{self} did not answer within {_OPEN_SECONDS:.0f} seconds") from None

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
        return _result_text(name, result)

    async def close(self) -> None:
        self.closed = True
        task = self._task
        if task is None or task.done():
            return
        assert self._stop is not None
        self._stop.set()
        if self._client is None:
            task.cancel()  # still opening: stop there (the task leaves its own scopes)
        done, _ = await asyncio.wait({task}, timeout=_CLOSE_SECONDS)
        if not done:
            task.cancel()
            done, _ = await asyncio.wait({task}, timeout=_CLOSE_SECONDS)
        if not done:
            log.warning("%s did not close within %.0f seconds; abandoned", self, 2 * _CLOSE_SECONDS)

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


# --- the Tools ------------------------------------------------------------------------------------

_CallMaker = Callable[[_Session, str, Parameters], Callable[..., object]]


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
        pure=bool(hints and (hints.read_only_hint or hints.idempotent_hint)),  # a repeat changes nothing
    )


def _sign(fn: Callable[..., object], parameters: Parameters) -> None:
    fn.__signature__ = parameters.signature  # type: ignore[attr-defined]


def _sync_call(
    loop: _LoopThread, timeout: float | None, session: _Session, name: str, parameters: Parameters
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
            return loop.run(session.call(name, arguments), timeout + _CANCEL_GRACE)
        except TimeoutError:
            raise TimeoutError(f"{session} did not answer within {timeout} seconds") from None

    _sign(call, parameters)
    return call


def _async_call(session: _Session, name: str, parameters: Parameters) -> Callable[..., object]:
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


class _LoopThread:
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
        self._thread.join(_CLOSE_SECONDS)


async def _awaited(work: Awaitable[_T]) -> _T:
    return await work
