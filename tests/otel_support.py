"""The one OpenTelemetry SDK provider of the test process, with an in-memory exporter.

The global provider can be set once per process, and react-text asks for its tracer once (a proxy
that follows the global provider): every test module that reads spans uses this one exporter, so
the order the modules run in cannot send one module's spans to another's provider.
"""

from __future__ import annotations

from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

EXPORTER = InMemorySpanExporter()
_installed: list[TracerProvider] = []


def install() -> InMemorySpanExporter:
    """Set the process's SDK provider (once) and return its exporter."""
    if not _installed:
        sdk = TracerProvider()
        sdk.add_span_processor(SimpleSpanProcessor(EXPORTER))
        trace.set_tracer_provider(sdk)
        _installed.append(sdk)
    return EXPORTER
