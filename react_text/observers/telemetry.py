"""OpenTelemetry spans for runs, model calls and tool calls, named by the GenAI semantic conventions.

The drivers call this seam; it emits through `opentelemetry-api` when that is installed (the `otel`
extra) and does nothing otherwise (nothing is even imported). As a library should, it only uses
the API: the application sets up the SDK and its exporter, and without one the API's spans are
no-ops. The conventions followed are those of semantic-conventions v1.41.0 (`docs/gen-ai/`:
gen-ai-agent-spans.md, gen-ai-spans.md; status Development), the last release that held them
before they moved to their own repository.

    invoke_agent [NAME]            INTERNAL  the run; its status is ERROR when it ends in model_error
    ├── chat MODEL                 CLIENT    a model call (text_completion MODEL for a completion
    │                                        model; INTERNAL for a model in this process)
    └── execute_tool TOOL          INTERNAL  a tool call; ERROR when the tool raised or timed out
                                             (the calls of one reply made at once: one span each,
                                             siblings, each ended when its own call ended)

    spans = telemetry.start(agent, task)      # the run's span
    with spans.around(command) as span:       # a model call or a tool call, as a child span
        event = ...
        span.record(event)
    spans.end(result)                          # or spans.fail(exc), or spans.abandon(steps)

Child spans take the run's span as their parent explicitly: a sync run is an iterator, and the
code that iterates it may start spans of its own between steps. The run's span is never made
current; a call's span is current while the call runs (so an HTTP client's own instrumentation
nests under it). When the run's span is not recording (no SDK, or not sampled), no child span is
made at all.

Attributes: `gen_ai.operation.name`, `gen_ai.provider.name` ("openai" for OpenAI-compatible servers,
"llama_cpp" in-process), `gen_ai.request.model`, `gen_ai.request.max_tokens`, `gen_ai.usage.input_tokens`,
`gen_ai.usage.output_tokens`, `gen_ai.response.finish_reasons`, `gen_ai.tool.name`,
`gen_ai.tool.description`, `gen_ai.agent.name` (when the agent has a name), `server.address` and
`server.port`, `error.type` (the exception's class: ModelError, ContextLengthError, the tool's
KeyError...; "timeout" for a tool that overran), and the run's `react_text.stop_reason`,
`react_text.steps`, `react_text.tool_calls`, `react_text.forced`.

Content (the task, prompts, replies, tool arguments and results, the answer) can be sensitive and
is never recorded unless the user opts in with the conventions' own switch,
OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true; then `gen_ai.input.messages`,
`gen_ai.output.messages`, `gen_ai.tool.call.arguments` and `gen_ai.tool.call.result` are recorded
as JSON strings, keys scrubbed, and error descriptions say what went wrong; without it, an error's
description is its type alone (`KeyError`), since an exception's message may hold a tool's input.
API keys are never recorded. A model that reports no usage gets the engine's own count of the
call's tokens, marked `react_text.usage.counted_locally`. A run the caller stops iterating early
ends its span when it is closed or collected (`react_text.stop_reason` "abandoned").
"""

from __future__ import annotations

import json
import os
import threading
import time
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Protocol

from react_text.core.commands import Command, Event, Failed, Invoke, InvokeAll, Ran, RanAll, Replied, Send
from react_text.core.errors import scrub
from react_text.observers.observing import Quiet

if TYPE_CHECKING:
    from react_text.core.limits import Limits
    from react_text.core.model_info import ModelInfo
    from react_text.core.types import Model, Request, RunResult, Usage

__all__ = [
    "CAPTURE",
    "RunSpans",
    "Watched",
    "start",
    "tracing",
    "under",
]

CAPTURE = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"


class _Call:
    def record(self, event: Event, counted: Usage | None = None) -> None:
        """What came of the call; `counted`: the engine's count of a reply's tokens, when the model
        reported none."""


class RunSpans(Quiet):
    """The spans of one run, an observer of it (observing.py). This base records nothing."""


_NONE = RunSpans()
_api: Any = None  # the opentelemetry.trace module, once looked for; False when it is not installed
_tracer: Any = None
_looking = threading.Lock()  # a process's first runs may start on several threads at once


class Watched(Protocol):
    """What telemetry reads of an agent (`react_text.Agent` is one): its model, what the model
    offers, and its limits. A protocol, so that observers depend on the core's values only."""

    @property
    def model(self) -> Model: ...
    @property
    def info(self) -> ModelInfo: ...
    @property
    def limits(self) -> Limits: ...


def start(agent: Watched, task: str) -> RunSpans:
    """The spans of a run that starts now: a no-op without opentelemetry-api or when not recording."""
    found = tracing()
    if found is None:
        return _NONE  # no provider is set: every span would be a non-recording one
    run = _Spans(found[0], found[1], agent, task)
    return run if run.recording else _Ended(run)


def tracing() -> tuple[Any, Any] | None:
    """The `opentelemetry.trace` module and react-text's tracer, when the API is installed and a
    provider is set; None otherwise (the API looked for once, a provider at every call)."""
    global _api, _tracer
    if _api is None:
        with _looking:
            if _api is None:  # the tracer is set before the module, so a reader never sees one alone
                try:
                    from opentelemetry import trace
                except ImportError:
                    _api = False
                else:
                    _tracer = trace.get_tracer("react_text", _version())
                    _api = trace
    if _api is False or isinstance(_api.get_tracer_provider(), _api.ProxyTracerProvider):
        return None
    return _api, _tracer


def under(span: Any, agent: Watched) -> RunSpans:
    """The model and tool calls of `agent` as children of `span`, a span of the caller's own (the
    endpoint's span of one request), named and attributed as a run's calls are. The caller ends
    `span`; this observer's `end`, `fail` and `abandon` leave it alone. A no-op when `span` is not
    recording."""
    found = tracing()
    if found is None or not span.is_recording():
        return _NONE
    return _Calls(found[0], found[1], agent, span)


class _Ended(RunSpans):
    """A run whose span records nothing: end it, and make no child spans."""

    def __init__(self, run: _Spans) -> None:
        self._run = run

    def end(self, result: RunResult) -> None:
        self._run.close()

    def fail(self, error: BaseException) -> None:
        self._run.close()

    def abandon(self, steps: int) -> None:
        self._run.close()


class _Spans(RunSpans):
    def __init__(self, api: Any, tracer: Any, agent: Watched, task: str, span: Any = None) -> None:
        self._api = api
        self._tracer = tracer
        self._model: Model = agent.model
        self._capture = os.environ.get(CAPTURE, "").strip().lower() in ("true", "1", "yes")
        self._failure: str | None = None
        self._open = True
        info = agent.info
        self._provider = info.provider
        self._in_process = info.in_process
        self._server = _server(info.url)
        name = getattr(agent, "name", None)
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.provider.name": self._provider,
            "gen_ai.request.model": agent.model.name,
            "gen_ai.request.max_tokens": agent.limits.reply_tokens,
        }
        if name:
            attributes["gen_ai.agent.name"] = name
        self.span = span or tracer.start_span(
            f"invoke_agent {name}" if name else "invoke_agent",
            kind=api.SpanKind.INTERNAL,
            attributes=attributes,
        )
        self.recording: bool = self.span.is_recording()
        if self.recording and self._capture and span is None:
            self.span.set_attribute("gen_ai.input.messages", _messages("user", task))
        self._parent = api.set_span_in_context(self.span)

    @contextmanager
    def around(self, command: Command) -> Iterator[_Call]:
        if isinstance(command, InvokeAll):  # several calls at once: none of their spans is made current
            started = time.time_ns()
            spans = [self._tool_span(invoke) for invoke in command.invokes]
            calls = _ToolCalls(spans, self, started)
            try:
                yield calls
            except BaseException as exc:
                for span in spans:
                    self.error(span, type(exc).__name__, str(exc))
                raise
            finally:
                calls.end()
            return
        if isinstance(command, Send):
            span = self._model_span(command.request)
            call: _Call = _ModelCall(span, self)
        elif isinstance(command, Invoke):
            span = self._tool_span(command)
            call = _ToolCall(span, self)
        else:  # asking the approver is not a call of its own
            yield _Call()
            return
        try:
            with self._api.use_span(span, end_on_exit=False, record_exception=False, set_status_on_exception=False):
                yield call
        except BaseException as exc:
            self.error(span, type(exc).__name__, str(exc))
            raise
        finally:
            span.end()

    def _tool_span(self, invoke: Invoke) -> Any:
        span = self._tracer.start_span(
            f"execute_tool {invoke.tool.name}",
            context=self._parent,
            kind=self._api.SpanKind.INTERNAL,
            attributes={
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": invoke.tool.name,
                "gen_ai.tool.description": invoke.tool.description,
                "gen_ai.tool.type": "function",
            },
        )
        if self._capture:
            arguments = dict(invoke.arguments.arguments)
            span.set_attribute("gen_ai.tool.call.arguments", scrub(json.dumps(arguments, default=str)))
        return span

    def _model_span(self, request: Request) -> Any:
        operation = "chat" if self._model.api == "chat" else "text_completion"
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": operation,
            "gen_ai.provider.name": self._provider,
            "gen_ai.request.model": self._model.name,
            "gen_ai.request.max_tokens": request.max_tokens,
        }
        if self._server is not None:
            attributes["server.address"], attributes["server.port"] = self._server
        kind = self._api.SpanKind.INTERNAL if self._in_process else self._api.SpanKind.CLIENT
        span = self._tracer.start_span(
            f"{operation} {self._model.name}", context=self._parent, kind=kind, attributes=attributes
        )
        if self._capture:
            if isinstance(request.prompt, str):
                span.set_attribute("gen_ai.input.messages", _messages("user", request.prompt))
            else:
                parts = [{"role": m.role, "parts": [{"type": "text", "content": m.content}]} for m in request.prompt]
                span.set_attribute("gen_ai.input.messages", scrub(json.dumps(parts, ensure_ascii=False)))
        return span

    def end(self, result: RunResult) -> None:
        if not self._open:
            return
        span = self.span
        span.set_attribute("react_text.stop_reason", result.stop_reason)
        span.set_attribute("react_text.steps", len(result.steps))
        span.set_attribute("react_text.tool_calls", result.tool_calls)
        span.set_attribute("react_text.forced", result.forced)
        span.set_attribute("gen_ai.usage.input_tokens", result.usage.prompt_tokens)
        span.set_attribute("gen_ai.usage.output_tokens", result.usage.completion_tokens)
        if self._capture and result.answer is not None:
            span.set_attribute("gen_ai.output.messages", _messages("assistant", result.answer))
        if result.stop_reason == "model_error":
            self.error(span, self._failure or "model_error", result.error or "")
        self.close()

    def fail(self, error: BaseException) -> None:
        if self._open:
            self.error(self.span, type(error).__name__, str(error))
        self.close()

    def abandon(self, steps: int) -> None:
        if self._open:
            self.span.set_attribute("react_text.stop_reason", "abandoned")
            self.span.set_attribute("react_text.steps", steps)
        self.close()

    def close(self) -> None:
        """End the run's span, once."""
        if self._open:
            self._open = False
            self.span.end()

    def error(self, span: Any, kind: str, description: str) -> None:
        """Mark a span as failed. Without the opt-in the description is the kind alone: an
        exception's message may hold a tool's input or a server's echo of the prompt."""
        span.set_attribute("error.type", kind)
        said = scrub(description)[:500] if self._capture else kind
        span.set_status(self._api.Status(self._api.StatusCode.ERROR, said))


class _Calls(_Spans):
    """Calls under a span the caller made and ends (`under`)."""

    def __init__(self, api: Any, tracer: Any, agent: Watched, span: Any) -> None:
        super().__init__(api, tracer, agent, "", span)

    def end(self, result: RunResult) -> None:
        pass

    def fail(self, error: BaseException) -> None:
        pass

    def abandon(self, steps: int) -> None:
        pass


class _ModelCall(_Call):
    def __init__(self, span: Any, run: _Spans) -> None:
        self._span = span
        self._run = run

    def record(self, event: Event, counted: Usage | None = None) -> None:
        span = self._span
        if isinstance(event, Failed):
            self._run._failure = type(event.error).__name__
            self._run.error(span, type(event.error).__name__, str(event.error))
        elif isinstance(event, Replied):
            reply = event.reply
            usage = reply.usage or counted
            if usage is not None:
                span.set_attribute("gen_ai.usage.input_tokens", usage.prompt_tokens)
                span.set_attribute("gen_ai.usage.output_tokens", usage.completion_tokens)
            if reply.usage is None and counted is not None:
                span.set_attribute("react_text.usage.counted_locally", True)
            if reply.finish_reason:
                span.set_attribute("gen_ai.response.finish_reasons", [reply.finish_reason])
            if self._run._capture:
                message = {"role": "assistant", "parts": [{"type": "text", "content": reply.text}]}
                if reply.finish_reason:
                    message["finish_reason"] = reply.finish_reason
                span.set_attribute("gen_ai.output.messages", scrub(json.dumps([message], ensure_ascii=False)))


class _ToolCall(_Call):
    def __init__(self, span: Any, run: _Spans) -> None:
        self._span = span
        self._run = run

    def record(self, event: Event, counted: Usage | None = None) -> None:
        if not isinstance(event, Ran):
            return
        outcome = event.outcome
        if outcome.kind == "ok":
            if self._run._capture:
                self._span.set_attribute("gen_ai.tool.call.result", scrub(outcome.text))
            return
        kind = "timeout" if outcome.kind == "timeout" else outcome.error_type or "_OTHER"
        self._run.error(self._span, kind, outcome.text)


class _ToolCalls(_Call):
    """The spans of several calls made at once; each ends when its own call ended."""

    def __init__(self, spans: list[Any], run: _Spans, started: int) -> None:
        self._calls = [_ToolCall(span, run) for span in spans]
        self._spans = spans
        self._started = started
        self._seconds: list[float] | None = None

    def record(self, event: Event, counted: Usage | None = None) -> None:
        if not isinstance(event, RanAll):
            return
        for call, ran in zip(self._calls, event.ran, strict=False):
            call.record(ran)
        self._seconds = [ran.seconds for ran in event.ran]

    def end(self) -> None:
        for index, span in enumerate(self._spans):
            if self._seconds is not None and index < len(self._seconds):
                span.end(end_time=self._started + int(self._seconds[index] * 1e9))
            else:
                span.end()


def _messages(role: str, text: str) -> str:
    return scrub(json.dumps([{"role": role, "parts": [{"type": "text", "content": text}]}], ensure_ascii=False))


def _server(url: str | None) -> tuple[str, int] | None:
    if not url:
        return None
    parts = urllib.parse.urlsplit(url)
    if not parts.hostname:
        return None
    return parts.hostname, parts.port or (443 if parts.scheme == "https" else 80)


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("react-text")
    except PackageNotFoundError:
        return "unknown"
