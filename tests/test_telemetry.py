"""OpenTelemetry spans: the tree, names and attributes of a scripted run, under both drivers.

The SDK's in-memory exporter collects what the run emits; the oracle is the GenAI semantic
conventions' naming (invoke_agent > chat / execute_tool), not the code that emits it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("opentelemetry.sdk", reason='needs pip install "react-text[otel]" opentelemetry-sdk')

import otel_support
from conftest import Drive, add, lookup, make_agent
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from react_text import Limits, ModelError, Reply, ScriptedModel, Usage
from react_text.observers.telemetry import CAPTURE

TASK = "What does a train ticket cost?"
SECRET = "sk-proj-abcdefghijklmnop1234567890"
_EXPORTER = otel_support.EXPORTER


@pytest.fixture(scope="module", autouse=True)
def provider() -> None:
    """The process's one SDK provider (tests/otel_support.py: the global one can be set once)."""
    otel_support.install()


@pytest.fixture
def spans() -> Iterator[InMemorySpanExporter]:
    _EXPORTER.clear()
    yield _EXPORTER
    _EXPORTER.clear()


def scripted_run(drive: Drive) -> Any:
    """A tool error, a tool call, then the step limit and a forced final answer."""
    model = ScriptedModel(
        [
            Reply("THOUGHT: look it up\nACTION: lookup[bus ticket]", Usage(120, 12), "stop"),
            Reply("ACTION: lookup[train ticket]", Usage(160, 8), "stop"),
            Reply("FINAL: 89", Usage(200, 4), "stop"),
        ]
    )
    agent = make_agent(model, [lookup, add], steps=2)
    return drive(agent, TASK)


def by_name(finished: tuple[ReadableSpan, ...]) -> dict[str, list[ReadableSpan]]:
    found: dict[str, list[ReadableSpan]] = {}
    for span in finished:
        found.setdefault(span.name, []).append(span)
    return found


def test_the_span_tree_of_a_run_with_a_tool_error_and_a_forced_final(drive: Drive, spans: InMemorySpanExporter) -> None:
    result = scripted_run(drive)
    assert (result.stop_reason, result.forced, result.answer) == ("max_steps", True, "89")
    finished = spans.get_finished_spans()
    named = by_name(finished)
    assert sorted(named) == ["chat scripted", "execute_tool lookup", "invoke_agent"]
    (run,) = named["invoke_agent"]
    calls, tools = named["chat scripted"], named["execute_tool lookup"]
    assert (len(calls), len(tools)) == (3, 2)  # two steps and the forced call; two tool calls

    # The tree: every call a child of the run, one trace.
    assert run.parent is None
    assert all(s.parent is not None and s.parent.span_id == run.context.span_id for s in calls + tools)
    assert {s.context.trace_id for s in finished} == {run.context.trace_id}
    assert [s.name for s in sorted(calls + tools, key=lambda s: s.start_time or 0)] == [
        "chat scripted",
        "execute_tool lookup",
        "chat scripted",
        "execute_tool lookup",
        "chat scripted",
    ]

    # The run: invoke_agent, its stop reason, totals; a limit is not an error.
    assert run.kind is SpanKind.INTERNAL
    assert run.attributes is not None
    assert run.attributes["gen_ai.operation.name"] == "invoke_agent"
    assert run.attributes["gen_ai.provider.name"] == "react_text.scripted"
    assert run.attributes["gen_ai.request.model"] == "scripted"
    assert run.attributes["react_text.stop_reason"] == "max_steps"
    assert run.attributes["react_text.forced"] is True
    assert run.attributes["react_text.steps"] == 3
    assert (run.attributes["gen_ai.usage.input_tokens"], run.attributes["gen_ai.usage.output_tokens"]) == (480, 24)
    assert run.status.status_code is StatusCode.UNSET

    # Model calls: chat, the request's allowance, the server's usage and finish reason.
    first = calls[0].attributes
    assert first is not None
    assert first["gen_ai.operation.name"] == "chat"
    assert first["gen_ai.request.model"] == "scripted"
    assert isinstance(first["gen_ai.request.max_tokens"], int) and first["gen_ai.request.max_tokens"] > 0
    assert (first["gen_ai.usage.input_tokens"], first["gen_ai.usage.output_tokens"]) == (120, 12)
    assert first["gen_ai.response.finish_reasons"] == ("stop",)

    # Tool calls: the first raised (KeyError), the second did not.
    failed, ok = sorted(tools, key=lambda s: s.start_time or 0)
    assert failed.attributes is not None and ok.attributes is not None
    assert failed.attributes["gen_ai.operation.name"] == "execute_tool"
    assert failed.attributes["gen_ai.tool.name"] == "lookup"
    assert failed.attributes["gen_ai.tool.description"] == "Return the price of one item."
    assert failed.status.status_code is StatusCode.ERROR
    assert failed.attributes["error.type"] == "KeyError"
    assert ok.status.status_code is StatusCode.UNSET and "error.type" not in ok.attributes


def test_no_content_is_recorded_unless_asked(drive: Drive, spans: InMemorySpanExporter) -> None:
    os.environ.pop(CAPTURE, None)
    scripted_run(drive)
    text = json.dumps([dict(s.attributes or {}) for s in spans.get_finished_spans()], default=str)
    for content in ("train ticket", "bus ticket", "89", "look it up", "THOUGHT"):
        assert content not in text
    assert "gen_ai.input.messages" not in text and "gen_ai.tool.call" not in text


def test_content_is_recorded_when_the_user_opts_in(
    drive: Drive, spans: InMemorySpanExporter, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(CAPTURE, "true")
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    model = ScriptedModel([f"ACTION: lookup[train ticket]\nkey {SECRET}", "FINAL: 89"])
    drive(make_agent(model, [lookup], steps=3), TASK)
    named = by_name(spans.get_finished_spans())
    (run,) = named["invoke_agent"]
    assert run.attributes is not None
    assert json.loads(str(run.attributes["gen_ai.input.messages"]))[0]["parts"][0]["content"] == TASK
    assert "89" in str(run.attributes["gen_ai.output.messages"])
    first = named["chat scripted"][0].attributes
    assert first is not None
    assert json.loads(str(first["gen_ai.input.messages"]))[-1]["parts"][0]["content"].endswith(TASK)
    assert "lookup[train ticket]" in str(first["gen_ai.output.messages"])
    (tool_span,) = named["execute_tool lookup"]
    assert tool_span.attributes is not None
    assert json.loads(str(tool_span.attributes["gen_ai.tool.call.arguments"])) == {"item": "train ticket"}
    assert tool_span.attributes["gen_ai.tool.call.result"] == "89"
    everything = json.dumps([dict(s.attributes or {}) for s in spans.get_finished_spans()], default=str)
    assert SECRET not in everything  # never a key, even in captured content


def test_a_model_error_marks_the_call_and_the_run(drive: Drive, spans: InMemorySpanExporter) -> None:
    model = ScriptedModel([ModelError("http://127.0.0.1:9/v1 answered 500: overloaded")])
    result = drive(make_agent(model, [lookup]), TASK)
    assert result.stop_reason == "model_error"
    named = by_name(spans.get_finished_spans())
    (run,), (call,) = named["invoke_agent"], named["chat scripted"]
    for span in (run, call):
        assert span.status.status_code is StatusCode.ERROR
        assert span.attributes is not None and span.attributes["error.type"] == "ModelError"
    assert call.status.description == "ModelError"  # the type only: a message may echo content


def test_completion_models_make_text_completion_spans(drive: Drive, spans: InMemorySpanExporter) -> None:
    drive(make_agent(ScriptedModel(["FINAL: 1"], api="completion"), [add]), "1?")
    assert sorted(by_name(spans.get_finished_spans())) == ["invoke_agent", "text_completion scripted"]


def test_spans_nest_under_the_run_whatever_the_caller_does_between_steps(spans: InMemorySpanExporter) -> None:
    """The sync driver is an iterator: the caller's own current span must not adopt the run's calls."""
    tracer = trace.get_tracer("caller")
    model = ScriptedModel(["ACTION: lookup[train ticket]", "FINAL: 89"])
    run = make_agent(model, [lookup]).iter_steps(TASK)
    with tracer.start_as_current_span("caller work"):
        next(run)
    with tracer.start_as_current_span("more caller work"):
        list(run)
    named = by_name(spans.get_finished_spans())
    (agent_span,) = named["invoke_agent"]
    children = named["chat scripted"] + named["execute_tool lookup"]
    assert len(children) == 3
    assert all(s.parent is not None and s.parent.span_id == agent_span.context.span_id for s in children)


def test_a_run_interrupted_by_an_exception_ends_its_span_with_the_error(spans: InMemorySpanExporter) -> None:
    model = ScriptedModel([KeyboardInterrupt()])
    with pytest.raises(KeyboardInterrupt):
        make_agent(model, [lookup]).run(TASK)
    named = by_name(spans.get_finished_spans())
    (run,), (call,) = named["invoke_agent"], named["chat scripted"]
    assert run.attributes is not None and run.attributes["error.type"] == "KeyboardInterrupt"
    assert call.attributes is not None and call.attributes["error.type"] == "KeyboardInterrupt"


def test_a_server_model_call_is_a_client_span_with_the_server(spans: InMemorySpanExporter) -> None:
    from react_text import OpenAIChat

    model = OpenAIChat("m", base_url=f"http://user:{SECRET}@127.0.0.1:9/v1", max_retries=0, timeout=2)
    make_agent(model, [lookup]).run(TASK)
    (call,) = by_name(spans.get_finished_spans())["chat m"]
    assert call.kind is SpanKind.CLIENT
    assert call.attributes is not None
    assert (call.attributes["server.address"], call.attributes["server.port"]) == ("127.0.0.1", 9)
    assert call.attributes["gen_ai.provider.name"] == "openai"
    assert call.attributes["error.type"] == "ModelError"
    assert SECRET not in json.dumps(dict(call.attributes)) + (call.status.description or "")


def test_a_traced_run_is_spanned_as_any_run_is(spans: InMemorySpanExporter, tmp_path: Path) -> None:

    from react_text.observers.trace import Tracer

    agent = make_agent(ScriptedModel(["FINAL: 1"]), [add])
    with Tracer(tmp_path / "run.jsonl") as tracer:
        agent.run("1?", observer=tracer.observer)
    (call,) = by_name(spans.get_finished_spans())["chat scripted"]
    assert call.kind is SpanKind.INTERNAL
    assert call.attributes is not None and call.attributes["gen_ai.provider.name"] == "react_text.scripted"


def test_limits_are_not_errors(spans: InMemorySpanExporter) -> None:
    model = ScriptedModel(["ACTION: lookup[train ticket]"] * 3)
    agent = make_agent(model, [lookup], steps=2).with_limits(force_final=False)
    assert agent.limits == Limits(steps=2, force_final=False)
    agent.run(TASK)
    (run,) = by_name(spans.get_finished_spans())["invoke_agent"]
    assert run.status.status_code is StatusCode.UNSET


RUN = """
import sys
from react_text import Agent, ScriptedModel
def add(a: float, b: float) -> float:
    return a + b
result = Agent(ScriptedModel(["ACTION: add[2, 3]", "FINAL: 5"]), tools=[add]).run("2 + 3?")
print(result.answer, "opentelemetry" in sys.modules)
"""


def test_without_opentelemetry_nothing_is_imported_and_runs_work(tmp_path: Path) -> None:
    (tmp_path / "sitecustomize.py").write_text(
        "import sys\n"
        "class Hide:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] == 'opentelemetry':\n"
        "            raise ModuleNotFoundError(name)\n"
        "sys.meta_path.insert(0, Hide())\n"
    )
    root = str(Path(__file__).resolve().parent.parent)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), root])}
    done = subprocess.run([sys.executable, "-c", RUN], capture_output=True, text=True, env=env, timeout=60, check=True)
    assert done.stdout.split() == ["5", "False"]


def test_with_the_api_and_no_sdk_runs_work(tmp_path: Path) -> None:
    root = str(Path(__file__).resolve().parent.parent)
    env = {**os.environ, "PYTHONPATH": root}
    done = subprocess.run([sys.executable, "-c", RUN], capture_output=True, text=True, env=env, timeout=60, check=True)
    assert done.stdout.split() == ["5", "True"]


RACE = """
import asyncio, sys, threading, time
from react_text import Agent, ScriptedModel
agent = Agent(ScriptedModel.per_run(["FINAL: 2"]))
failures = []
def one(i):
    try:
        if sys.argv[1] == "arun":  # each thread its own event loop
            asyncio.run(agent.arun(f"task {i}"))
        else:
            agent.run(f"task {i}")
    except Exception as error:
        failures.append(repr(error))
threads = [threading.Thread(target=one, args=(i,)) for i in range(24)]
for thread in threads:
    thread.start()
    time.sleep(0.0005)
for thread in threads:
    thread.join()
print(len(failures), failures[:1])
"""


@pytest.mark.parametrize("driver", ["run", "arun"])  # arun: each thread on its own event loop
def test_the_first_runs_of_a_process_started_on_threads_all_run(tmp_path: Path, driver: str) -> None:
    """docs/guarantees.md: "`ScriptedModel.per_run` gives each of many concurrent runs its own
    script" and "`Agent.run` and `arun` never raise for a model or network failure"; the
    ScriptedModel docstring: "safe when many episodes (threads or tasks) call one model at once".
    When a fresh process starts its first runs on several threads (a ThreadPoolExecutor over
    `agent.run`), some raise `AttributeError: 'NoneType' object has no attribute 'start_span'`
    out of telemetry's first use (opentelemetry-api installed, no SDK): 10 of 10 processes here.
    (Outside review, attack5.)"""
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}
    for _ in range(3):
        done = subprocess.run(
            [sys.executable, "-c", RACE, driver], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
        )
        assert done.stdout.startswith("0 "), done.stdout + done.stderr


# --- promises, round three (issue 20): no leak without the opt-in, no span left open, usage always --


def account(customer: str) -> str:
    """The balance of a customer's account."""
    raise KeyError(customer)


def everything_said(finished: tuple[ReadableSpan, ...]) -> str:
    """Every attribute and status description of the spans, as one text to search."""
    return json.dumps(
        [{"attributes": dict(s.attributes or {}), "status": s.status.description} for s in finished], default=str
    )


def test_error_descriptions_carry_the_exception_type_only_without_the_opt_in(
    drive: Drive, spans: InMemorySpanExporter, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(CAPTURE, raising=False)
    model = ScriptedModel(["ACTION: account[zebra-7731]", ModelError("the server said: zebra-7731 is unknown")])
    result = drive(make_agent(model, [account]), TASK)
    assert result.stop_reason == "model_error"
    finished = spans.get_finished_spans()
    named = by_name(finished)
    (tool_span,), (_, call), (run,) = named["execute_tool account"], named["chat scripted"], named["invoke_agent"]
    assert "zebra-7731" not in everything_said(finished)
    assert tool_span.status.status_code is StatusCode.ERROR and tool_span.status.description == "KeyError"
    assert call.status.status_code is StatusCode.ERROR and call.status.description == "ModelError"
    assert run.status.status_code is StatusCode.ERROR and run.status.description == "ModelError"


def test_an_exception_that_ends_the_run_is_described_by_its_type_only(
    spans: InMemorySpanExporter, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(CAPTURE, raising=False)
    model = ScriptedModel([RuntimeError("customer zebra-7731 was not found")])
    with pytest.raises(RuntimeError):
        make_agent(model, [account]).run(TASK)
    finished = spans.get_finished_spans()
    assert "zebra-7731" not in everything_said(finished)
    (run,) = by_name(finished)["invoke_agent"]
    assert run.status.description == "RuntimeError"


def test_with_the_opt_in_error_descriptions_say_what_went_wrong(
    drive: Drive, spans: InMemorySpanExporter, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(CAPTURE, "true")
    drive(make_agent(ScriptedModel(["ACTION: account[zebra-7731]", "FINAL: none"]), [account]), TASK)
    (tool_span,) = by_name(spans.get_finished_spans())["execute_tool account"]
    assert "zebra-7731" in (tool_span.status.description or "")


@pytest.mark.parametrize("how", ["close", "gc"])
def test_a_sync_run_abandoned_early_ends_its_span(spans: InMemorySpanExporter, how: str) -> None:
    import gc

    model = ScriptedModel(["ACTION: lookup[train ticket]", "ACTION: lookup[hotel night]", "FINAL: 234"])
    run = make_agent(model, [lookup]).iter_steps(TASK)
    next(run)
    assert "invoke_agent" not in by_name(spans.get_finished_spans())  # still running
    if how == "close":
        run.close()
    else:
        del run
        gc.collect()
    (agent_span,) = by_name(spans.get_finished_spans())["invoke_agent"]
    assert agent_span.end_time is not None
    assert agent_span.attributes is not None and agent_span.attributes["react_text.steps"] == 1
    assert agent_span.attributes["react_text.stop_reason"] == "abandoned"


@pytest.mark.parametrize("how", ["aclose", "gc"])
def test_an_async_run_abandoned_early_ends_its_span(spans: InMemorySpanExporter, how: str) -> None:
    import asyncio
    import gc

    async def two_steps() -> None:
        model = ScriptedModel(["ACTION: lookup[train ticket]", "ACTION: lookup[hotel night]", "FINAL: 234"])
        run = make_agent(model, [lookup]).aiter_steps(TASK)
        seen = 0
        async for _ in run:
            seen += 1
            if seen == 2:
                break
        assert "invoke_agent" not in by_name(spans.get_finished_spans())
        if how == "aclose":
            await run.aclose()
        else:
            del run
            gc.collect()

    asyncio.run(two_steps())
    (agent_span,) = by_name(spans.get_finished_spans())["invoke_agent"]
    assert agent_span.attributes is not None and agent_span.attributes["react_text.steps"] == 2


def test_a_closed_run_is_closed_and_a_finished_one_is_unchanged(spans: InMemorySpanExporter) -> None:
    run = make_agent(ScriptedModel(["ACTION: lookup[train ticket]", "FINAL: 89"]), [lookup]).iter_steps(TASK)
    next(run)
    run.close()
    assert list(run) == []  # a closed run hands out nothing more
    with pytest.raises(RuntimeError, match="closed"):
        run.result  # noqa: B018
    done = make_agent(ScriptedModel(["FINAL: 89"]), [lookup]).iter_steps(TASK)
    list(done)
    done.close()
    assert done.result.answer == "89"
    runs = by_name(spans.get_finished_spans())["invoke_agent"]
    assert len(runs) == 2  # each ended once


def test_usage_the_model_does_not_report_is_the_engines_count_marked_as_such(
    drive: Drive, spans: InMemorySpanExporter
) -> None:
    model = ScriptedModel(["ACTION: lookup[train ticket]", "FINAL: 89"])  # replies without usage
    result = drive(make_agent(model, [lookup]), TASK)
    calls = sorted(by_name(spans.get_finished_spans())["chat scripted"], key=lambda s: s.start_time or 0)
    assert len(calls) == len(result.steps) == 2
    for span, step in zip(calls, result.steps, strict=True):
        attributes = span.attributes
        assert attributes is not None
        assert attributes["gen_ai.usage.input_tokens"] == step.usage.prompt_tokens > 0
        assert attributes["gen_ai.usage.output_tokens"] == step.usage.completion_tokens > 0
        assert attributes["react_text.usage.counted_locally"] is True


def test_usage_the_model_reports_is_not_marked_as_counted_locally(drive: Drive, spans: InMemorySpanExporter) -> None:
    scripted_run(drive)
    for span in by_name(spans.get_finished_spans())["chat scripted"]:
        assert span.attributes is not None and "react_text.usage.counted_locally" not in span.attributes


def test_parallel_actions_make_one_tool_span_per_call_siblings_under_the_run(
    drive: Drive, spans: InMemorySpanExporter
) -> None:
    def slow(x: str) -> str:
        """Slow."""
        time.sleep(0.3)
        return x

    def broken(x: str) -> str:
        """Fails."""
        raise KeyError(x)

    model = ScriptedModel(["ACTION: slow[a]\nACTION: broken[b]\nACTION: slow[c]", "FINAL: ok"])
    drive(make_agent(model, [slow, broken], parallel=True), TASK)
    found = by_name(spans.get_finished_spans())
    run = found["invoke_agent"][0]
    tools = found["execute_tool slow"] + found["execute_tool broken"]
    assert len(tools) == 3
    assert {t.parent.span_id for t in tools if t.parent} == {run.context.span_id}
    assert all(t.parent is not None for t in tools)
    (failed,) = found["execute_tool broken"]
    assert failed.status.status_code == StatusCode.ERROR
    assert failed.attributes["error.type"] == "KeyError"
    # the calls overlapped: each span ends when its own call ended
    ok = found["execute_tool slow"]
    assert all(s.end_time - s.start_time >= 0.25e9 for s in ok)
    assert failed.end_time - failed.start_time < 0.2e9
    assert max(s.start_time for s in tools) < min(s.end_time for s in ok)
