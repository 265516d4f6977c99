"""The ASGI app (Starlette): the HTTP edge of the endpoint, and its only I/O.

    POST /v1/chat/completions     a chat completion, or its stream of server-sent events
    GET  /v1/models               the one model served

Every failure is OpenAI's error JSON with its status: 400 for a malformed request (naming the
field), 401 without the API key when one is set, 413 past the size bound, 400
`context_length_exceeded` for a prompt past the window, 502 when the upstream cannot be reached or
fails (its reason, scrubbed of credentials). A request the endpoint cannot take is logged in one
line at most, never with a traceback.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
import secrets
import time
from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request as HttpRequest
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from react_text.core.commands import Failed, Replied, Send
from react_text.core.errors import ConfigError, ContextLengthError, ModelError, scrub
from react_text.core.types import AsyncModel, Model, Reply, Request, Usage
from react_text.observers.observing import Observer, both
from react_text.tokens.meter import Counter

from . import requests, responses, spans
from .exchange import Outcome, exchange, plan, prompt_tokens
from .spans import RequestSpan
from .spread import Spread, sticky, unreachable
from .tracing import QUIET, RequestTrace
from .upstream import Upstream, tempered, windowed

__all__ = ["MAX_BODY", "make_app"]

log = logging.getLogger(__name__)

MAX_BODY = 4 * 1024 * 1024  # bytes of a request body, at most (413 past it)


class _TooLarge(Exception):
    pass


def make_app(
    upstreams: Upstream | Sequence[Upstream],
    *,
    api_key: str | None = None,
    max_body: int = MAX_BODY,
    trace: Path | None = None,
) -> Starlette:
    """The endpoint over `upstreams`, one or several (`spread`: conversations stick to one, an
    unreachable one passes its requests on); see `serving.app` for the public way to make one;
    `trace`: a folder to write one trace a request to (`tracing`)."""
    every = (upstreams,) if isinstance(upstreams, Upstream) else tuple(upstreams)
    found = every[0]
    state: dict[int, Upstream] = {}
    numbers = itertools.count(1)
    spreading = Spread(len(every))

    async def settled(index: int) -> Upstream:
        if index not in state:
            state[index] = await windowed(every[index])  # its context window, asked once
        return state[index]

    def refused(request: HttpRequest) -> JSONResponse | None:
        if api_key is None:
            return None
        given = request.headers.get("authorization", "")
        if secrets.compare_digest(given.encode(), f"Bearer {api_key}".encode()):
            return None
        return _error(401, "a valid API key is needed: Authorization: Bearer KEY", code="invalid_api_key")

    async def chat_completions(request: HttpRequest) -> Response:
        spanned = spans.opened(request.headers, request.url.path)  # None unless a tracer provider is set
        if (denied := refused(request)) is not None:
            if spanned is not None:
                spanned.end(denied.status_code, json.loads(bytes(denied.body)))
            return denied  # before any trace: a request without the key writes nothing
        number = next(numbers)
        said: dict[str, Any] = {"id": f"chatcmpl-{secrets.token_hex(12)}", "created": int(time.time())}
        traced = None if trace is None else _opened(trace, number, said["id"])
        seen: dict[str, Any] = {}
        try:
            response = await answer(request, number, said, traced, seen, spanned)
        except BaseException:
            if traced is not None:
                traced.end(found, 500, None, {}, stream=False)
            if spanned is not None:
                spanned.end(500)
            raise
        if traced is not None:
            streamed = isinstance(response, StreamingResponse)
            body = seen.get("completion") if streamed else json.loads(bytes(response.body))
            traced.end(seen.get("upstream", found), response.status_code, body, dict(response.headers), stream=streamed)
        if spanned is not None:
            if isinstance(response, StreamingResponse):  # its span ends with the stream's last byte
                response.body_iterator = spanned.around(response.body_iterator, response.status_code)
            else:
                failed = response.status_code >= 400
                spanned.end(response.status_code, json.loads(bytes(response.body)) if failed else None)
        return response

    async def answer(
        request: HttpRequest,
        number: int,
        said: dict[str, Any],
        traced: RequestTrace | None,
        seen: dict[str, Any],
        spanned: RequestSpan | None,
    ) -> Response:
        try:
            body = json.loads(await _body(request, max_body))
        except _TooLarge:
            return _error(413, f"the request body is larger than {max_body} bytes", code="request_too_large")
        except (ValueError, UnicodeDecodeError):
            return _error(400, "the request body is not JSON")
        except RecursionError:  # the decoder's own bound on nesting, under max_body
            return _error(400, "the request body nests its arrays and objects too deeply to be read")
        chat = requests.read(body)
        if isinstance(chat, requests.Invalid):
            return _error(400, chat.message, param=chat.param or None, code=chat.code)
        if spanned is not None:
            spanned.read(chat)
        order = spreading.order(chat)
        prefix = f"call_{secrets.token_hex(6)}_"
        for place, index in enumerate(order):
            upstream = seen["upstream"] = await settled(index)
            if traced is not None:
                traced.begin(upstream, chat)
            planned = plan(chat, upstream)
            if isinstance(planned, requests.Invalid):
                return _error(400, planned.message, param=planned.param, code=planned.code)
            model = tempered(upstream, chat.temperature)
            watching = [traced.observer] if traced is not None else []
            watching += [spanned.observer(upstream)] if spanned is not None else []
            observer = both(watching) if watching else QUIET
            try:
                outcome = await _drive(exchange(planned, lambda i: f"{prefix}{i}"), model, observer, upstream.count)
            except ContextLengthError as exc:
                return _error(400, scrub(str(exc)), param="messages", code="context_length_exceeded")
            except ModelError as exc:
                if unreachable(exc) and place + 1 < len(order):
                    spreading.failed(index)
                    log.warning(
                        "request %d: upstream %d could not be reached (%s): sent to upstream %d",
                        *(number, index, scrub(str(exc)), order[place + 1]),
                    )
                    continue
                if unreachable(exc):
                    spreading.failed(index)
                log.info("request %d: the upstream failed: %s", number, scrub(str(exc)))
                return _error(502, f"the upstream model failed: {scrub(str(exc))}", kind="upstream_error")
            except Exception as exc:  # a model of the user's own may raise anything: the client hears it as a 502
                raised = f"{type(exc).__name__}: {scrub(str(exc))}"
                log.warning("request %d: the upstream model raised %s", number, raised)
                log.debug("request %d: the upstream model raised", number, exc_info=True)
                return _error(502, f"the upstream model raised {raised}", kind="upstream_error")
            spreading.answered(index)
            return respond(
                chat, outcome, said, traced, seen, spanned, _passed(sticky(chat, len(every)), index, len(every))
            )
        raise AssertionError("unreachable: the last upstream answers or fails")  # pragma: no cover

    def respond(
        chat: requests.ChatRequest,
        outcome: Outcome,
        said: dict[str, Any],
        traced: RequestTrace | None,
        seen: dict[str, Any],
        spanned: RequestSpan | None,
        where: dict[str, str],
    ) -> Response:
        said["model"] = chat.model
        if spanned is not None:
            spanned.outcome(outcome)
            if where:
                passed = where.get("x-react-text-failed-over")
                spanned.upstream(int(where["x-react-text-upstream"]), len(passed.split(",")) if passed else 0)
        if traced is not None:
            seen["completion"] = responses.completion(outcome, **said)
        headers = responses.headers(outcome) | where
        if chat.stream:
            return StreamingResponse(
                _events(outcome, said, chat.include_usage), media_type="text/event-stream", headers=headers
            )
        return JSONResponse(responses.completion(outcome, **said), headers=headers)

    async def list_models(request: HttpRequest) -> Response:
        if (denied := refused(request)) is not None:
            return denied
        return JSONResponse(responses.models(found.model.name))

    routes = [
        Route("/v1/chat/completions", chat_completions, methods=["POST"]),
        Route("/v1/models", list_models, methods=["GET"]),
    ]
    return Starlette(routes=routes, exception_handlers={404: _not_found, 405: _not_allowed})


def _passed(first: int, index: int, upstreams: int) -> dict[str, str]:
    """The headers that say which upstream answered, and which the request's conversation would
    have gone to before it (its own, unreachable now or lately), with several upstreams."""
    if upstreams == 1:
        return {}
    ring = [(first + step) % upstreams for step in range(upstreams)]  # the sticky one, then the next ones
    passed = ring[: ring.index(index)]
    said = {"x-react-text-upstream": str(index)}
    if passed:
        said["x-react-text-failed-over"] = ",".join(map(str, passed))
    return said


def _opened(folder: Path, number: int, completion_id: str) -> RequestTrace | None:
    """The request's trace, or None (said in one line) when its file cannot be written."""
    try:
        return RequestTrace(folder, number, completion_id)
    except ConfigError as exc:
        log.warning("request %d: not traced: %s", number, exc)
        return None


async def _drive(talk: Any, model: Model, observer: Observer, count: Counter) -> Outcome:
    """Carry out an exchange: each request it asks, sent to the model (awaited, or on a thread for
        a model with no async call), and its reply sent back; the observer told of each (a trace, spans;
    the engine's count of a reply's tokens when the model reported none, as a run tells it)."""
    call: Callable[[Request], Any] = (
        model.agenerate if isinstance(model, AsyncModel) else lambda r: asyncio.to_thread(model.generate, r)
    )
    try:
        request = next(talk)
        while True:
            with observer.around(Send(request)) as noted:
                began = time.monotonic()
                try:
                    reply: Reply = await call(request)
                except ModelError as exc:
                    noted.record(Failed(exc, time.monotonic() - began))
                    raise
                counted = None if reply.usage or observer is QUIET else _counted(request, reply, count)
                noted.record(Replied(reply, time.monotonic() - began), counted)
            request = talk.send(reply)
    except StopIteration as end:
        outcome: Outcome = end.value
        return outcome


def _counted(request: Request, reply: Reply, count: Counter) -> Usage:
    """The engine's count of a call whose reply reported no usage (for observers only: the
    exchange counts its own)."""
    return Usage(prompt_tokens(request.prompt, count), count(reply.text))


async def _body(request: HttpRequest, most: int) -> bytes:
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > most:
        raise _TooLarge
    received = bytearray()
    async for piece in request.stream():
        received += piece
        if len(received) > most:
            raise _TooLarge
    return bytes(received)


async def _events(outcome: Outcome, said: dict[str, Any], include_usage: bool) -> AsyncIterator[str]:
    for chunk in responses.chunks(outcome, include_usage=include_usage, **said):
        yield f"data: {json.dumps(chunk, ensure_ascii=False)}\n\n"
    yield "data: [DONE]\n\n"


def _error(
    status: int, message: str, *, kind: str = "invalid_request_error", param: str | None = None, code: str | None = None
) -> JSONResponse:
    return JSONResponse(responses.error(message, kind=kind, param=param, code=code), status_code=status)


async def _not_found(request: HttpRequest, exc: Exception) -> Response:
    return _error(404, f"no such endpoint: {request.url.path} (this server has /v1/chat/completions and /v1/models)")


async def _not_allowed(request: HttpRequest, exc: Exception) -> Response:
    return _error(405, f"{request.method} is not allowed on {request.url.path}")
