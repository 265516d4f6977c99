"""A lean HTTP/1.1 POST over plain TCP, with one keep-alive pool per event loop (not part of the API).

The `openai` client spends about 2 ms of CPU on a chat request (it converts the arguments against
its typed parameters, copies its options twice, builds headers, and its connection pool looks at
every open connection on every request, so 1,000 concurrent requests cost 1,000 times as much
each). At thousands of episodes against a server that is the whole budget. This module is the
request path the async backends take instead for a plain `http://` server when they built their
own client: the body is JSON written once, the headers are the client's own, read once, and a
request is one write and two reads on a connection taken from the loop's pool.

It does one thing: POST a body, read the whole answer (Content-Length, chunked, or until close;
gzip or deflate decoded, though it asks for neither; a `100 Continue` skipped; lines ended by LF
alone read as by CRLF). A server whose answers it cannot read (another coding, an upgrade) is
remembered by the pool: later requests to it go to the `openai` client at once, not twice.
It never retries and never judges a status: the backend raises the `openai` client's own error
from a failed answer, or hands a try left over to the client, so its retries and errors stay
the ones users get and the tries add up to its own (see `openai_api`). One exception: an
idle connection the server closed under us is replaced once, since the request never reached it.

    Unsupported     an answer this module will not read (compressed, upgraded): ask `openai`
    TransportError  no whole answer (refused, reset, closed early)
      TimedOut      no whole answer in time
      Cut           the server answered, then closed the connection before the body's end
"""

from __future__ import annotations

import asyncio
import contextlib
import weakref
import zlib
from collections import deque
from collections.abc import AsyncGenerator
from dataclasses import dataclass

__all__ = ["Answer", "Cut", "Pool", "TimedOut", "TransportError", "Unsupported", "pool"]

_LIMIT = 1000  # open connections per server, as the openai client's pool (httpx's limits)
_HEAD_LIMIT = 64 * 1024  # bytes of status line and headers


class TransportError(Exception):
    """No whole answer came: the connection was refused, reset or closed before the end."""


class TimedOut(TransportError):
    """No whole answer came in time."""


class Cut(TransportError):
    """The body was cut short: the server closed the connection before its end. How many of how
    many bytes came, when the answer said its length (None for a chunked body, as httpx says it)."""

    def __init__(self, received: int | None, expected: int | None) -> None:
        said = f" after {received} of {expected} bytes" if received is not None and expected is not None else ""
        super().__init__(f"the answer was cut short{said}")
        self.received = received
        self.expected = expected


class Unsupported(Exception):
    """An answer this module does not read (a content coding, an upgrade): ask the full client."""


@dataclass(frozen=True, slots=True)
class Answer:
    status: int
    headers: dict[str, str]  # names lower-cased; a repeated header keeps its last value
    body: bytes


_Connection = tuple[asyncio.StreamReader, asyncio.StreamWriter]


class Pool:
    """Keep-alive connections of one event loop, by server."""

    def __init__(self) -> None:
        self._idle: dict[tuple[str, int], deque[_Connection]] = {}
        self._gates: dict[tuple[str, int], asyncio.Semaphore] = {}
        self._unreadable: set[tuple[str, int]] = set()  # servers whose answers this module cannot read

    async def post(self, host: str, port: int, head: bytes, body: bytes, timeout: float | None) -> Answer:
        """POST `body` with `head` (request line and headers up to the blank line, without
        Content-Length) and read the whole answer, in `timeout` seconds at most."""
        server = (host, port)
        if server in self._unreadable:
            raise Unsupported("an earlier answer of this server could not be read here")
        gate = self._gates.get(server)
        if gate is None:
            gate = self._gates[server] = asyncio.Semaphore(_LIMIT)
        message = b"%scontent-length: %d\r\n\r\n%s" % (head, len(body), body)
        try:
            async with gate, asyncio.timeout(timeout):
                idle = self._idle.setdefault(server, deque())
                while idle:  # a connection the server closed while idle never got the request: next
                    connection = idle.pop()
                    if connection[0].at_eof():
                        connection[1].close()
                        continue
                    try:
                        return await self._exchange(server, connection, message, reused=True)
                    except _Stale:
                        continue
                try:
                    connection = await asyncio.open_connection(host, port, limit=_HEAD_LIMIT)
                except OSError as exc:
                    raise TransportError(f"could not connect: {exc}") from exc
                return await self._exchange(server, connection, message, reused=False)
        except TimeoutError as exc:
            raise TimedOut("no answer in time") from exc
        except Unsupported:
            self._unreadable.add(server)
            raise

    async def _exchange(
        self, server: tuple[str, int], connection: _Connection, message: bytes, *, reused: bool
    ) -> Answer:
        reader, writer = connection
        keep = False
        try:
            writer.write(message)
            try:
                lines = await _lines(reader)
            except (asyncio.IncompleteReadError, ConnectionError) as exc:
                nothing = not isinstance(exc, asyncio.IncompleteReadError) or not exc.partial
                if reused and nothing:
                    raise _Stale from exc
                raise TransportError(f"no answer: {exc}" if nothing else "the answer ended in its headers") from exc
            status, headers, version = _head(lines)
            while 100 <= status < 200 and status != 101:  # 100 Continue, 103 Early Hints: the answer follows
                status, headers, version = _head(await _lines(reader))
            coding = headers.get("content-encoding", "identity").strip().lower()
            if coding not in _CODINGS or status == 101:
                raise Unsupported(f"an answer with content-encoding {coding!r}" if status != 101 else "an upgrade")
            body, keep = await _body(reader, headers)
            keep = keep and version == "1.1" and "close" not in headers.get("connection", "").lower()
            return Answer(status, headers, _decode(coding, body))
        except asyncio.IncompleteReadError as exc:
            raise TransportError("the answer ended early") from exc
        except ConnectionError as exc:
            raise TransportError(f"the connection broke: {exc}") from exc
        except (asyncio.LimitOverrunError, ValueError, zlib.error) as exc:
            raise TransportError(f"a broken answer: {exc}") from exc
        finally:
            if keep:
                self._idle.setdefault(server, deque()).append(connection)
            else:
                writer.close()

    async def close(self) -> None:
        for idle in self._idle.values():
            while idle:
                writer = idle.pop()[1]
                writer.close()
                with contextlib.suppress(OSError):  # a peer that reset on close
                    await writer.wait_closed()


class _Stale(Exception):
    """The connection was closed before any of the answer came (reused idle ones may be)."""


_CODINGS = ("identity", "", "gzip", "x-gzip", "deflate")


async def _lines(reader: asyncio.StreamReader) -> list[str]:
    """The status line and headers up to the blank line, each line ended by CRLF or LF alone."""
    lines: list[str] = []
    size = 0
    while True:
        line = await reader.readline()
        if not line.endswith(b"\n"):
            raise asyncio.IncompleteReadError(b"".join(x.encode("latin-1") for x in lines) + line, None)
        size += len(line)
        if size > _HEAD_LIMIT:
            raise ValueError("the status line and headers are too long")
        text = line.decode("latin-1").rstrip("\r\n")
        if not text:
            return lines
        lines.append(text)


def _decode(coding: str, body: bytes) -> bytes:
    """The body without its content coding (a server may compress though asked not to)."""
    if coding in ("gzip", "x-gzip"):
        return zlib.decompress(body, 16 + zlib.MAX_WBITS)
    if coding == "deflate":  # zlib-wrapped as the RFC says, or raw as some servers send it
        try:
            return zlib.decompress(body)
        except zlib.error:
            return zlib.decompress(body, -zlib.MAX_WBITS)
    return body


def _head(lines: list[str]) -> tuple[int, dict[str, str], str]:
    if not lines:
        raise ValueError("an answer with no status line")
    parts = lines[0].split(" ", 2)
    if len(parts) < 2 or not parts[0].startswith("HTTP/1.") or not parts[1].isdigit():
        raise ValueError(f"not an HTTP/1 status line: {lines[0][:80]!r}")
    headers: dict[str, str] = {}
    for line in lines[1:]:
        if line:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
    return int(parts[1]), headers, parts[0][5:]


async def _body(reader: asyncio.StreamReader, headers: dict[str, str]) -> tuple[bytes, bool]:
    """The answer's body, and whether the connection may carry another request; Cut when the
    server closes the connection before the body's end."""
    if "chunked" in headers.get("transfer-encoding", "").lower():
        chunks: list[bytes] = []
        try:
            while True:
                size = int((await reader.readuntil(b"\r\n")).split(b";", 1)[0], 16)
                if size == 0:
                    while await reader.readuntil(b"\r\n") != b"\r\n":  # trailers
                        pass
                    return b"".join(chunks), True
                chunks.append((await reader.readexactly(size + 2))[:-2])
        except asyncio.IncompleteReadError as exc:
            raise Cut(None, None) from exc
    length = headers.get("content-length")
    if length is not None:
        expected = int(length)
        try:
            return await reader.readexactly(expected), True
        except asyncio.IncompleteReadError as exc:
            raise Cut(len(exc.partial), expected) from exc
    return await reader.read(), False  # until the server closes


_POOLS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, tuple[Pool, AsyncGenerator[None, None]]] = (
    weakref.WeakKeyDictionary()
)


async def pool() -> Pool:
    """The running loop's pool, shared by every backend in it; closed when the loop shuts down
    its async generators (asyncio.run does), so no socket outlives its loop."""
    loop = asyncio.get_running_loop()
    held = _POOLS.get(loop)
    if held is None:
        made = Pool()
        held = _POOLS[loop] = (made, _closed_with_its_loop(made))
        await anext(held[1])
    return held[0]


async def _closed_with_its_loop(made: Pool) -> AsyncGenerator[None, None]:
    try:
        yield
    finally:
        await made.close()
