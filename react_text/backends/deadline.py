"""A whole answer in `timeout` seconds on the sync path (not part of the API).

httpx's timeouts are per read: a server that sends a byte every 50 ms never times out, and a
1-second `timeout=` held a sync run for 14 seconds. The async path bounds each try as a whole
(`http1`, under `asyncio.timeout`); this transport does the same for the `openai` client the sync
backends build: each try's answer must end within `seconds` of the request, else httpx's
ReadTimeout (which the client retries and reports as a time-out, as any other). A streamed answer
(text/event-stream) is not bounded: it may rightly last minutes, and the backend watches it for
bytes without text instead.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator

try:
    import httpx2 as httpx
except ImportError:  # pragma: no cover - openai before 3.x
    import httpx  # type: ignore[no-redef]

__all__ = ["Deadline", "client"]

_LIMITS = httpx.Limits(max_connections=1000, max_keepalive_connections=100)  # the openai client's own


class Deadline(httpx.BaseTransport):
    """`inner`, with each whole answer bounded to `seconds` from its request."""

    def __init__(self, inner: httpx.BaseTransport, seconds: float) -> None:
        self._inner = inner
        self._seconds = seconds

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        deadline = time.monotonic() + self._seconds
        response = self._inner.handle_request(request)
        if response.headers.get("content-type", "").startswith("text/event-stream"):
            return response
        bounded = _Bounded(response.stream, deadline, self._seconds, request)  # type: ignore[arg-type]
        return httpx.Response(
            response.status_code, headers=response.headers, stream=bounded, extensions=response.extensions
        )

    def close(self) -> None:
        self._inner.close()


class _Bounded(httpx.SyncByteStream):
    def __init__(self, inner: httpx.SyncByteStream, deadline: float, seconds: float, request: httpx.Request) -> None:
        self._inner = inner
        self._deadline = deadline
        self._seconds = seconds
        self._request = request

    def __iter__(self) -> Iterator[bytes]:
        for chunk in self._inner:
            if time.monotonic() > self._deadline:
                raise httpx.ReadTimeout(f"the whole answer took more than {self._seconds:g} s", request=self._request)
            yield chunk

    def close(self) -> None:
        self._inner.close()


class _Client(httpx.Client):
    """Closed when dropped, as the `openai` client's own is (its connections with it)."""

    def __del__(self) -> None:
        if self.is_closed:
            return
        with contextlib.suppress(Exception):  # at interpreter exit, anything may be gone already
            self.close()


def client(seconds: float) -> httpx.Client:
    """An httpx client as the `openai` client makes its own, each answer bounded to `seconds`."""
    transport = Deadline(httpx.HTTPTransport(limits=_LIMITS), seconds)
    return _Client(transport=transport, follow_redirects=True, timeout=seconds)
