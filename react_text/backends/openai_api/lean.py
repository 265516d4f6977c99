"""The lean path of `agenerate`: one try over `http1` (a prepared body on a keep-alive connection from
one pool per event loop) to a plain `http://` server, for a client built by the backend, no proxy in
the environment, a request not streamed. Its first failure hands the request to the `openai` client,
which retries, waits and raises as ever; the tries add up to the client's own."""

from __future__ import annotations

import asyncio
import json
import random
import urllib.parse
import urllib.request
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from react_text.backends import http1, wire

if TYPE_CHECKING:
    import openai

__all__ = ["Answered", "Lean", "body", "httpx", "lean", "try_once"]


@dataclass(frozen=True, slots=True)
class Lean:
    """Where the lean path sends a backend's requests: a plain-HTTP server, the head prepared once."""

    host: str
    port: int
    head: bytes  # request line and headers, up to Content-Length
    url: str
    timeout: float | None


@dataclass(frozen=True, slots=True)
class Answered:
    """A 200 answer on the lean path: its JSON (or its text, when it is not JSON)."""

    answer: object


def lean(client: openai.OpenAI, path: str, timeout: float | None) -> Lean | None:
    """The lean path for a client built here, or None where only the `openai` client can go: HTTPS
    (its certificates and TLS set-up), a proxy from the environment, headers it cannot send as they are."""
    url = urllib.parse.urlsplit(str(client.base_url))
    proxies = urllib.request.getproxies()
    if url.scheme != "http" or not url.hostname or "http" in proxies or "all" in proxies:
        return None
    headers = {k.lower(): v for k, v in client.default_headers.items() if isinstance(v, str)}
    if client.api_key:
        headers.setdefault("authorization", f"Bearer {client.api_key}")
    headers |= {"accept-encoding": "identity", "connection": "keep-alive"}
    port = url.port or 80
    target = f"{url.path.rstrip('/')}{path}"
    lines = [f"POST {target} HTTP/1.1", f"host: {url.hostname}:{port}"] + [f"{k}: {v}" for k, v in headers.items()]
    if any("\r" in line or "\n" in line for line in lines):
        return None
    head = "".join(f"{line}\r\n" for line in lines).encode("latin-1", "replace")
    return Lean(url.hostname, port, head, f"http://{url.hostname}:{port}{target}", timeout)


async def try_once(lean: Lean, client: openai.OpenAI, arguments: dict[str, Any]) -> Answered | int:
    """One try over the lean HTTP path (`http1`): the answer, or how many retries the `openai`
    client has left for this request after that try failed (it then asks, retries and raises
    its own errors, from the server's own answer). A failure that may be retried waits as
    `openai` would first (Retry-After, else its first backoff), so the tries and waits add up
    to the client's own. A refused or timed-out last try, and an answer that is not retried
    (a 4xx, the last 5xx), raise the client's error directly: no request is sent twice."""
    import openai

    retries = client.max_retries
    sent = json.dumps(body(arguments), ensure_ascii=False, separators=(",", ":")).encode()
    try:
        answer = await (await http1.pool()).post(lean.host, lean.port, lean.head, sent, lean.timeout)
    except http1.Unsupported:
        return retries
    except http1.TransportError as exc:
        if retries == 0:
            request = httpx().Request("POST", lean.url)
            failure = openai.APITimeoutError if isinstance(exc, http1.TimedOut) else openai.APIConnectionError
            raise failure(request=request) from exc
        await asyncio.sleep(wire.first_backoff(random.random()))
        return retries - 1
    if 200 <= answer.status < 300:
        return Answered(_decoded(answer))
    if retries == 0 or not wire.retried(answer.status, answer.headers):
        raise _status_error(client, answer, lean.url)  # the client's own error, from this answer: not asked again
    await asyncio.sleep(wire.retry_wait(answer.headers, random.random()))
    return retries - 1


def _status_error(client: openai.OpenAI, answer: http1.Answer, url: str) -> openai.APIStatusError:
    """The error the `openai` client raises for `answer` (its own mapping of a status to a class
    and of the body to a message), so a failure on the lean path reads as one through the client."""
    http = httpx()
    response = http.Response(
        answer.status, headers=answer.headers, content=answer.body, request=http.Request("POST", url)
    )
    return client._make_status_error_from_response(response)


def body(arguments: dict[str, Any]) -> dict[str, Any]:
    """The JSON body of a request: the arguments, with `extra_body` merged in as the client merges it."""
    merged = {k: v for k, v in arguments.items() if k != "extra_body"}
    merged.update(arguments.get("extra_body") or {})
    return merged


def _decoded(answer: http1.Answer) -> object:
    """A 200 answer's JSON, or its text when it is not JSON or not said to be (as the client hands
    it over: it reads JSON only under a Content-Type ending in `json`)."""
    text = answer.body.decode("utf-8", "replace")
    if not answer.headers.get("content-type", "*").split(";")[0].strip().endswith("json"):
        return text
    try:
        return json.loads(answer.body)
    except ValueError:
        return text


def httpx() -> Any:
    """The HTTP library of the installed `openai` (httpx2 for 3.x, httpx before), for its errors' requests."""
    try:
        import httpx2

        return httpx2
    except ImportError:  # pragma: no cover - openai before 3.x
        import httpx

        return httpx
