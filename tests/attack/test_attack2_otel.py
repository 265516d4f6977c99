"""attack2: OpenTelemetry spans (docs/how-to/opentelemetry.md), in a fresh process each (the
tracer provider can be set once per process)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

pytest.importorskip("opentelemetry.sdk")

PROGRAM = r'''
import asyncio, json, sys, time
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
exporter = InMemorySpanExporter()
trace.set_tracer_provider(provider := TracerProvider())
provider.add_span_processor(SimpleSpanProcessor(exporter))
from react_text import Agent, Limits, ModelError, Prompting, ScriptedModel

SECRET = "SECRETXYZ"

def look(q: str) -> str:
    """Look a thing up."""
    if q == "boom":
        raise KeyError(SECRET + "-in-the-error")
    if q == "slow":
        time.sleep(2)
    return SECRET + "-in-the-result"

def two(a: int, b: int) -> str:
    """Take two numbers."""
    return "x"

replies = [
    f"THOUGHT: {SECRET} thinking\nACTION: {SECRET}tool[{SECRET}-input]",
    f"ACTION: look[{SECRET}-1]\nACTION: look[boom]\nACTION: two[{SECRET}, 2]",
    "ACTION: look[slow]",
    ModelError(f"the server said {SECRET}"),
]
agent = Agent(ScriptedModel(replies), tools=[__import__("react_text").tool(look, timeout=0.3), two],
              prompting=Prompting(parallel=True), limits=Limits(steps=6))
driver = sys.argv[1]
result = agent.run(f"task {SECRET}") if driver == "sync" else asyncio.run(agent.arun(f"task {SECRET}"))

async def cancelled():
    slow_agent = Agent(ScriptedModel(["ACTION: look[slow]", "FINAL: x"]), tools=[look])
    try:
        await asyncio.wait_for(slow_agent.arun("cancelled task"), 0.3)
    except asyncio.TimeoutError:
        pass
if driver == "async":
    asyncio.run(cancelled())
time.sleep(2.5)
spans = []
for s in exporter.get_finished_spans():
    spans.append({"name": s.name, "status": s.status.status_code.name, "description": s.status.description,
                  "attributes": {k: str(v) for k, v in (s.attributes or {}).items()},
                  "events": [[e.name, {k: str(v) for k, v in (e.attributes or {}).items()}] for e in s.events],
                  "parent": s.parent.span_id if s.parent else None, "id": s.context.span_id})
print(json.dumps({"stop_reason": result.stop_reason, "spans": spans}))
'''


def _spans(driver: str) -> dict[str, object]:
    env = {k: v for k, v in os.environ.items() if k != "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"}
    done = subprocess.run([sys.executable, "-c", PROGRAM, driver], capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0, done.stderr
    out: dict[str, object] = json.loads(done.stdout.splitlines()[-1])
    return out


# opentelemetry.md: "Without OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true, no span
# carries a prompt, a reply, a tool's arguments or its result, and a failed span's description is
# the exception's type only (`KeyError`), never its message"; "the run's span is an error only when
# it ended in model_error"; "A model failure or a tool that raised or timed out sets the span's
# status to ERROR with error.type (ModelError, KeyError, timeout)". Here with parallel actions, an
# unknown tool written by the model, an input refused, a tool error, a time-out and a model error.
@pytest.mark.parametrize("driver", ["sync", "async"])
def test_no_content_in_any_span_and_errors_by_type_alone(driver: str) -> None:
    out = _spans(driver)
    assert out["stop_reason"] == "model_error"
    spans = out["spans"]
    assert isinstance(spans, list)
    leaks = [s["name"] for s in spans if "SECRETXYZ" in json.dumps(s)]
    assert leaks == []
    runs = [
        s
        for s in spans
        if s["name"] == "invoke_agent" and s["attributes"].get("react_text.stop_reason") == "model_error"
    ]
    assert len(runs) == 1 and runs[0]["status"] == "ERROR"
    mine = [s for s in spans if s["parent"] == runs[0]["id"]]
    tool_errors = sorted(
        s["attributes"].get("error.type", "")
        for s in mine
        if s["name"].startswith("execute_tool") and s["status"] == "ERROR"
    )
    assert tool_errors == ["KeyError", "timeout"]
    assert [
        s["attributes"].get("error.type") for s in mine if s["name"].startswith("chat") and s["status"] == "ERROR"
    ] == ["ModelError"]
    descriptions = {s["description"] for s in spans if s["status"] == "ERROR"} - {None}
    assert descriptions <= {"KeyError", "timeout", "ModelError", "TimeoutError", "CancelledError"}
    # every call's span is a child of its run's
    run_ids = {s["id"] for s in spans if s["name"] == "invoke_agent"}
    assert all(s["parent"] in run_ids for s in spans if s["name"] != "invoke_agent")


# opentelemetry.md: "A run you stop iterating is closed ... its invoke_agent span then ends"; an
# async run cancelled from outside (asyncio.wait_for) must end its spans too.
def test_a_cancelled_async_run_ends_its_spans() -> None:
    spans = _spans("async")["spans"]
    assert isinstance(spans, list)
    runs = [s for s in spans if s["name"] == "invoke_agent"]
    assert len(runs) == 2
