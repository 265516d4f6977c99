"""OpenTelemetry spans per request, as runs have them (`observers.telemetry`): made only when the
API is installed and the application has set a tracer provider; otherwise `opened` gives None and
nothing else is done.

    POST /v1/chat/completions      SERVER    one request, from its arrival to its response's last
    │                                        byte (a stream's too); a traceparent header is its parent
    └── chat MODEL                 CLIENT    each upstream call, named and attributed as a run's
                                             model calls are (INTERNAL for a model in this process)

The request's span says `http.request.method`, `http.route`, `url.path`, `http.response.status_code`,
`gen_ai.request.model` (the model the client named), `react_text.request.tools` (how many tools it
sent), `react_text.stream`, `gen_ai.response.finish_reasons`, `gen_ai.usage.input_tokens` and
`gen_ai.usage.output_tokens` (every try's), `react_text.tries`, `react_text.usage.counted_locally`,
`react_text.unread` (why a reply could not be read, as the x-react-text-unread header says),
`react_text.upstream` and `react_text.failed_over` with several upstreams, and for a 4xx or 5xx
`error.type` (OpenAI's error code or type); a 5xx's status is ERROR with that type alone, a 4xx's
is left unset (the client's error, per the HTTP conventions). No header, message or error text is
recorded: an API key cannot reach a span.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator, Mapping
from dataclasses import dataclass
from typing import Any

from react_text.core.limits import Limits
from react_text.core.model_info import ModelInfo, describe
from react_text.core.types import Model
from react_text.observers import telemetry
from react_text.observers.observing import Observer

from .exchange import Outcome
from .requests import ChatRequest
from .upstream import Upstream

__all__ = ["ROUTE", "RequestSpan", "opened"]

ROUTE = "/v1/chat/completions"


@dataclass(frozen=True, slots=True)
class _Watched:
    """What telemetry reads of the upstream (`telemetry.Watched`)."""

    model: Model
    info: ModelInfo
    limits: Limits


def opened(headers: Mapping[str, str] | None, path: str = ROUTE) -> RequestSpan | None:
    """The span of a request that arrived now, or None when nothing would record it."""
    found = telemetry.tracing()
    if found is None:
        return None
    api, tracer = found
    from opentelemetry import propagate

    span = tracer.start_span(
        f"POST {ROUTE}",
        context=propagate.extract(dict(headers or {})),
        kind=api.SpanKind.SERVER,
        attributes={"http.request.method": "POST", "http.route": ROUTE, "url.path": path},
    )
    return RequestSpan(api, span) if span.is_recording() else None


class RequestSpan:
    """One request's span: `read` once the body is read, `observer` for the upstream calls,
    `outcome` with what they came to, `end` with the response (once)."""

    def __init__(self, api: Any, span: Any) -> None:
        self._api = api
        self.span = span
        self._open = True

    def read(self, chat: ChatRequest) -> None:
        self.span.set_attribute("gen_ai.request.model", chat.model)
        self.span.set_attribute("react_text.request.tools", len(chat.functions))
        self.span.set_attribute("react_text.stream", chat.stream)

    def observer(self, upstream: Upstream) -> Observer:
        model = upstream.model
        return telemetry.under(self.span, _Watched(model, describe(model), upstream.limits))

    def upstream(self, index: int, failed_over: int) -> None:
        self.span.set_attribute("react_text.upstream", index)
        if failed_over:
            self.span.set_attribute("react_text.failed_over", failed_over)

    def outcome(self, outcome: Outcome) -> None:
        span, answer = self.span, outcome.answer
        span.set_attribute("gen_ai.response.finish_reasons", [answer.finish_reason])
        span.set_attribute("gen_ai.usage.input_tokens", outcome.usage.prompt_tokens)
        span.set_attribute("gen_ai.usage.output_tokens", outcome.usage.completion_tokens)
        span.set_attribute("react_text.tries", outcome.tries)
        if outcome.counted:
            span.set_attribute("react_text.usage.counted_locally", True)
        if answer.unread:
            span.set_attribute("react_text.unread", answer.unread)

    def end(self, status: int, error: object = None) -> None:
        """End the span with the response's status; `error`: the body of an error response."""
        if not self._open:
            return
        self._open = False
        span = self.span
        span.set_attribute("http.response.status_code", status)
        if status >= 400:
            said = error.get("error") if isinstance(error, dict) else None
            said = said if isinstance(said, dict) else {}
            kind = str(said.get("code") or said.get("type") or status)
            span.set_attribute("error.type", kind)
            if status >= 500:
                span.set_status(self._api.Status(self._api.StatusCode.ERROR, kind))
        span.end()

    async def around(self, body: AsyncIterable[Any], status: int) -> AsyncIterator[Any]:
        """A streamed body that ends the span after its last piece (or when the client left)."""
        try:
            async for piece in body:
                yield piece
        finally:
            self.end(status)
