"""OpenTelemetry spans of the endpoint: one SERVER span per request (`POST /v1/chat/completions`),
the upstream calls as its children with the names and attributes runs give them, through the real
`openai` client, streaming and not; nothing made without a provider; credentials never recorded."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import openai
import pytest

pytest.importorskip("opentelemetry.sdk", reason='needs pip install "react-text[otel]" opentelemetry-sdk')

import otel_support
from fake_openai import FakeServer
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode
from serving_support import ADD, WEATHER, serving

from react_text import ModelError, OpenAIChat, Reply, ScriptedModel, Usage
from react_text.serving import app

KEY = "sk-served-0123456789abcdefghij"
ROUTE = "POST /v1/chat/completions"


@pytest.fixture(scope="module", autouse=True)
def provider() -> None:
    otel_support.install()


@pytest.fixture
def spans() -> Iterator[InMemorySpanExporter]:
    otel_support.EXPORTER.clear()
    yield otel_support.EXPORTER
    otel_support.EXPORTER.clear()


def served(finished: tuple[ReadableSpan, ...]) -> list[ReadableSpan]:
    return [s for s in finished if s.name == ROUTE]


def children(finished: tuple[ReadableSpan, ...], parent: ReadableSpan) -> list[ReadableSpan]:
    assert parent.context is not None
    return [s for s in finished if s.parent is not None and s.parent.span_id == parent.context.span_id]


def client(url: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=url, api_key=KEY, max_retries=0)


def test_a_tool_call_request_is_a_server_span_with_the_model_call_as_its_child(spans: InMemorySpanExporter) -> None:
    model = ScriptedModel(["I add.", Reply("THOUGHT: add\nACTION: add[2, 3]", Usage(120, 12), "stop")])
    with serving(app(model, api_key=KEY)) as url, client(url) as openai_client:
        made = openai_client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "2 + 3?"}], tools=[ADD, WEATHER]
        )
    assert made.choices[0].finish_reason == "tool_calls"
    finished = spans.get_finished_spans()
    (request,) = served(finished)
    assert request.kind is SpanKind.SERVER and request.parent is None
    attributes = dict(request.attributes or {})
    assert attributes["http.request.method"] == "POST"
    assert attributes["http.route"] == "/v1/chat/completions"
    assert attributes["http.response.status_code"] == 200
    assert attributes["gen_ai.request.model"] == "m"
    assert attributes["react_text.request.tools"] == 2
    assert attributes["gen_ai.response.finish_reasons"] == ("tool_calls",)
    assert attributes["react_text.tries"] == 2  # the first reply was asked again
    assert "react_text.unread" not in attributes and "error.type" not in attributes
    assert request.status.status_code is StatusCode.UNSET
    calls = children(finished, request)
    assert [c.name for c in calls] == ["chat scripted", "chat scripted"]  # as a run names its model calls
    assert all(c.attributes and c.attributes["gen_ai.operation.name"] == "chat" for c in calls)
    assert calls[1].attributes and calls[1].attributes["gen_ai.usage.input_tokens"] == 120
    assert calls[0].attributes and calls[0].attributes["react_text.usage.counted_locally"] is True
    input_tokens = attributes["gen_ai.usage.input_tokens"]
    assert isinstance(input_tokens, int) and input_tokens > 120  # both tries' prompts
    assert made.usage is not None and attributes["gen_ai.usage.output_tokens"] == made.usage.completion_tokens
    assert all(s.context and s.context.trace_id == request.context.trace_id for s in calls)  # type: ignore[union-attr]


def test_a_streamed_answer_ends_its_span_after_the_stream(spans: InMemorySpanExporter) -> None:
    model = ScriptedModel([Reply("THOUGHT: done\nFINAL: 5", Usage(80, 6), "stop")])
    with serving(app(model)) as url, client(url) as openai_client:
        stream = openai_client.chat.completions.create(
            model="m",
            messages=[{"role": "user", "content": "2 + 3?"}],
            stream=True,
            stream_options={"include_usage": True},
        )
        text = "".join(chunk.choices[0].delta.content or "" for chunk in stream if chunk.choices)
    assert text == "5"
    finished = spans.get_finished_spans()
    (request,) = served(finished)
    attributes = dict(request.attributes or {})
    assert attributes["http.response.status_code"] == 200
    assert attributes["react_text.stream"] is True
    assert attributes["gen_ai.response.finish_reasons"] == ("stop",)
    assert (attributes["gen_ai.usage.input_tokens"], attributes["gen_ai.usage.output_tokens"]) == (80, 6)
    assert attributes["react_text.request.tools"] == 0
    (call,) = children(finished, request)
    assert call.name == "chat scripted" and call.end_time is not None and request.end_time is not None
    assert call.end_time <= request.end_time


def test_an_unread_reply_is_said_on_the_span(spans: InMemorySpanExporter) -> None:
    model = ScriptedModel(["no directive here"] * 5)
    with serving(app(model)) as url, client(url) as openai_client:
        raw = openai_client.chat.completions.with_raw_response.create(
            model="m", messages=[{"role": "user", "content": "2 + 3?"}], tools=[ADD]
        )
    unread = raw.headers["x-react-text-unread"]
    (request,) = served(spans.get_finished_spans())
    assert request.attributes and request.attributes["react_text.unread"] == unread


def test_errors_are_on_the_span_with_their_type_4xx_unset_5xx_error(spans: InMemorySpanExporter) -> None:
    with (
        serving(app(ScriptedModel([ModelError(f"the server said no to {KEY}")]), api_key=KEY)) as url,
        client(url) as openai_client,
    ):
        with pytest.raises(openai.BadRequestError):
            openai_client.chat.completions.create(model="m", messages=[])
        with pytest.raises(openai.InternalServerError):
            openai_client.chat.completions.create(model="m", messages=[{"role": "user", "content": KEY}])
        with pytest.raises(openai.AuthenticationError):
            openai.OpenAI(base_url=url, api_key="wrong", max_retries=0).chat.completions.create(
                model="m", messages=[{"role": "user", "content": "hi"}]
            )
    finished = spans.get_finished_spans()
    bad, failed, denied = sorted(served(finished), key=lambda s: s.start_time or 0)
    assert bad.attributes and bad.attributes["http.response.status_code"] == 400
    assert bad.attributes["error.type"] == "invalid_request_error"
    assert bad.status.status_code is StatusCode.UNSET  # a client's error is not the server's (HTTP conventions)
    assert failed.attributes and failed.attributes["http.response.status_code"] == 502
    assert failed.attributes["error.type"] == "upstream_error"
    assert failed.status.status_code is StatusCode.ERROR
    (call,) = children(finished, failed)
    assert call.attributes and call.attributes["error.type"] == "ModelError"
    assert denied.attributes and denied.attributes["http.response.status_code"] == 401
    assert denied.attributes["error.type"] == "invalid_api_key"
    for span in finished:  # the key was in a message, an upstream error and a header: in no attribute
        assert KEY not in repr(dict(span.attributes or {})) and KEY not in (span.status.description or "")


NO_PROVIDER = """
import sys
from starlette.testclient import TestClient
from react_text import ScriptedModel
from react_text.serving import app, spans
with TestClient(app(ScriptedModel(["FINAL: 5"]))) as client:
    said = client.post("/v1/chat/completions", json={"model": "m", "messages": [{"role": "user", "content": "hi"}]})
print(said.json()["choices"][0]["message"]["content"], spans.opened(None) is None, "opentelemetry.sdk" in sys.modules)
"""


def test_without_a_provider_no_span_is_made(tmp_path: Path) -> None:
    root = str(Path(__file__).resolve().parent.parent)
    done = subprocess.run(
        [sys.executable, "-c", NO_PROVIDER],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": root},
        timeout=60,
        check=True,
    )
    assert done.stdout.split() == ["5", "True", "False"]


def test_a_failover_is_on_the_span_with_the_refused_call_as_a_failed_child(spans: InMemorySpanExporter) -> None:
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{free.getsockname()[1]}/v1"
    with FakeServer(say=lambda messages: "THOUGHT: ok\nFINAL: done") as live:
        upstreams = [OpenAIChat("fake", base_url=url, api_key="-", max_retries=0) for url in (dead, live.url)]
        with serving(app(upstreams)) as url, client(url) as openai_client:
            for i in range(8):  # some of them stick to the dead one
                openai_client.chat.completions.create(model="m", messages=[{"role": "user", "content": f"q{i}"}])
    finished = spans.get_finished_spans()
    requests = served(finished)
    assert len(requests) == 8 and all(r.attributes and r.attributes["react_text.upstream"] == 1 for r in requests)
    moved = [r for r in requests if r.attributes and "react_text.failed_over" in r.attributes]
    assert moved and all(r.attributes and r.attributes["react_text.failed_over"] == 1 for r in moved)
    first = min(moved, key=lambda r: r.start_time or 0)
    refused, answered = sorted(children(finished, first), key=lambda s: s.start_time or 0)
    assert refused.name == answered.name == "chat fake" and refused.kind is SpanKind.CLIENT
    assert refused.attributes and refused.attributes["error.type"] == "ModelError"
    assert answered.attributes and answered.attributes["server.port"] == int(live.url.rsplit(":", 1)[1].split("/")[0])
    assert first.status.status_code is StatusCode.UNSET  # the client got its answer
