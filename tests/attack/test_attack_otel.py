"""Attacks on "OpenTelemetry": what spans record without the opt-in.

README: "Prompts, replies, tool arguments and results are never recorded unless you opt in with
`OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true` ...; keys never." and the Guarantees
table: "spans ... carry no prompt, reply or tool text unless asked". A tool that raises with its
input in the message, and a model failure whose message holds the prompt, must not put that text
into any span (attributes, status description or events).
"""

from __future__ import annotations

from collections.abc import Iterator

import otel_support
import pytest
from _support import DRIVERS
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from react_text import Agent, Limits, ModelError, ScriptedModel

SECRET = "patient-4471-hunter2"
_EXPORTER = otel_support.EXPORTER  # the process's one provider (tests/otel_support.py)


@pytest.fixture
def spans(monkeypatch: pytest.MonkeyPatch) -> Iterator[InMemorySpanExporter]:
    monkeypatch.delenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", raising=False)
    otel_support.install()
    _EXPORTER.clear()
    yield _EXPORTER
    _EXPORTER.clear()


def everything(span: ReadableSpan) -> str:
    events = [(e.name, dict(e.attributes or {})) for e in span.events]
    return repr((span.name, dict(span.attributes or {}), span.status.description, events))


@pytest.mark.parametrize("driver", list(DRIVERS))
def test_a_tool_error_holding_its_input_is_not_recorded(spans: InMemorySpanExporter, driver: str) -> None:
    """README: "tool arguments and results are never recorded unless you opt in"; "A ... tool that
    raised ... sets the span's status to ERROR with `error.type` (`ModelError`, `KeyError`, ...)"."""

    def lookup(item: str) -> str:
        """Look up a record."""
        raise KeyError(f"no record for {item}")

    model = ScriptedModel([f"THOUGHT: t\nACTION: lookup[{SECRET}]", "FINAL: none"])
    result = DRIVERS[driver](Agent(model, tools=[lookup], limits=Limits(steps=3)), "Find it.")
    assert result.stop_reason == "final"
    finished = spans.get_finished_spans()
    tool_spans = [s for s in finished if s.name == "execute_tool lookup"]
    assert tool_spans and tool_spans[0].attributes and tool_spans[0].attributes.get("error.type") == "KeyError"
    leaks = [s.name for s in finished if SECRET in everything(s)]
    assert not leaks, [everything(s) for s in finished if s.name in leaks]


@pytest.mark.parametrize("driver", list(DRIVERS))
def test_a_model_error_holding_the_prompt_is_not_recorded(spans: InMemorySpanExporter, driver: str) -> None:
    """README: "Prompts, replies ... are never recorded unless you opt in". A server error that
    echoes the request (many do: "invalid request: ...") must not carry the task into a span."""
    model = ScriptedModel([ModelError(f"400 bad request: messages[1].content={SECRET!r}")])
    result = DRIVERS[driver](Agent(model, limits=Limits(steps=2)), f"Look up {SECRET}.")
    assert result.stop_reason == "model_error"
    finished = spans.get_finished_spans()
    assert finished
    leaks = [s.name for s in finished if SECRET in everything(s)]
    assert not leaks, [everything(s) for s in finished if s.name in leaks]


@pytest.mark.parametrize("driver", list(DRIVERS))
def test_spans_nest_run_over_calls(spans: InMemorySpanExporter, driver: str) -> None:
    """README: "`invoke_agent` for the run, `chat MODEL` ... for each model call and `execute_tool
    TOOL` for each tool call, children of the run's span"."""

    def add(a: float, b: float) -> float:
        """Add two numbers."""
        return a + b

    model = ScriptedModel(["THOUGHT: t\nACTION: add[1, 2]", "FINAL: 3"])
    DRIVERS[driver](Agent(model, tools=[add], limits=Limits(steps=3)), "Add.")
    finished = spans.get_finished_spans()
    (run,) = [s for s in finished if s.name == "invoke_agent"] or [None]
    assert run is not None, [s.name for s in finished]
    children = sorted(s.name for s in finished if s.parent and s.parent.span_id == run.context.span_id)
    assert children == ["chat scripted", "chat scripted", "execute_tool add"]
