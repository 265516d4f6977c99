"""Agent.stream and Agent.astream (react_text/core/streaming.py), under both drivers.

The oracle is the same run made without streaming (`run`, same script): the steps the stream ends
(StepEnd) and the RunResult it ends with (RunEnd) must be those, wall times aside; and each step's
text deltas, joined, must be the episode's own reading of the step's reply (`read_reply`: the
guard's cut, the thinking apart, the parser), never the stream's bookkeeping. Independently of
both: the text released at any point is a prefix of what the guard keeps of the whole reply, so a
made-up OBSERVATION is never emitted, however the reply is split.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from conftest import add, lookup
from fake_openai import JSONHandler, serving
from hypothesis import given, settings
from hypothesis import strategies as st

from react_text import (
    ActionReady,
    Agent,
    ModelError,
    Observed,
    OpenAIChat,
    OpenAICompletion,
    Prompting,
    Reply,
    Request,
    Revision,
    RunEnd,
    RunEvent,
    RunResult,
    ScriptedModel,
    StepEnd,
    TextDelta,
    Usage,
)
from react_text.core.model_info import ReplyDelta
from react_text.core.types import Action, Actions
from react_text.evaluation.tasks import load, toolset
from react_text.parser import guard
from react_text.parser.stream import Reader, read_reply

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data"
SUITE = load(ROOT / "bench" / "tasks" / "suite.jsonl")


def _corpus() -> list[tuple[str, str, str]]:
    rows = []
    for name in ("replies.jsonl", "unseen.jsonl"):
        for line in (DATA / name).read_text(encoding="utf-8").splitlines():
            if line.strip():
                row = json.loads(line)
                rows.append((row["id"], row.get("mode", "chat"), row["text"]))
    return rows


CORPUS = _corpus()


# --- helpers ---------------------------------------------------------------------------------------


def events_of(agent: Agent, task: str, driver: str, **options: Any) -> list[RunEvent]:
    if driver == "sync":
        return list(agent.stream(task, **options))

    async def main() -> list[RunEvent]:
        return [event async for event in agent.astream(task, **options)]

    return asyncio.run(main())


def timeless(result: RunResult) -> RunResult:
    return replace(result, steps=tuple(replace(s, seconds=0.0) for s in result.steps))


def actions_of(parsed: object) -> tuple[Action, ...]:
    if isinstance(parsed, Actions):
        return parsed.actions
    return (parsed,) if isinstance(parsed, Action) else ()


def number(event: RunEvent) -> int | None:
    """The step an event belongs to."""
    if isinstance(event, StepEnd):
        return event.step.number
    return None if isinstance(event, RunEnd) else event.step


def check_parity(events: list[RunEvent], reference: RunResult, *, chat: bool, revised: bool = False) -> None:
    """The events joined are the reference run: its steps, its result, each step's reading."""
    assert isinstance(events[-1], RunEnd)
    assert sum(isinstance(e, RunEnd) for e in events) == 1
    result = events[-1].result
    assert timeless(result) == timeless(reference)
    ended = [e.step for e in events if isinstance(e, StepEnd)]
    assert [replace(s, seconds=0.0) for s in ended] == [replace(s, seconds=0.0) for s in reference.steps]
    if not revised:  # a Revision only where a step's call was asked again (it stopped inside its thinking)
        assert not any(isinstance(e, Revision) for e in events)
    for step in result.steps:
        mine = [e for e in events if number(e) == step.number]
        deltas: list[TextDelta] = []
        for event in mine:
            if isinstance(event, Revision):
                deltas = list(event.deltas)
            elif isinstance(event, TextDelta):
                deltas.append(event)
        read = read_reply(step.reply, None, Reader(chat=chat, tools=("add", "lookup", "calculator", "search")))
        assert "".join(d.text for d in deltas if d.kind == "thinking") == step.reasoning
        assert "".join(d.text for d in deltas if d.kind != "thinking") == read.cut.kept
        assert tuple(e.action for e in mine if isinstance(e, ActionReady)) == actions_of(step.parsed)
        observed = [e for e in mine if isinstance(e, Observed)]
        assert [o.text for o in observed] == ([step.observation] if step.observation is not None else [])
        # the order: text, then actions, then the observation, then the step's end
        kinds = [type(e).__name__ for e in mine if not isinstance(e, TextDelta | Revision)]
        assert kinds == sorted(kinds, key=["ActionReady", "Observed", "StepEnd"].index)
        assert isinstance(mine[-1], StepEnd)


def released_prefixes(events: list[RunEvent]) -> None:
    """At every point, the visible text released for a step is a prefix of the guard's cut of its reply."""
    ends = {e.step.number: e.step for e in events if isinstance(e, StepEnd)}
    shown: dict[int, str] = {}
    for event in events:
        if isinstance(event, TextDelta) and event.kind != "thinking" and event.step in ends:
            shown[event.step] = shown.get(event.step, "") + event.text
            kept = guard.cut(guard.split_reasoning(ends[event.step].reply)[1]).kept
            assert kept.startswith(shown[event.step]), (shown[event.step], kept)


DRIVERS = ["sync", "async"]


# --- parity over the task suite and the recorded replies ----------------------------------------------


def suite_script(answer: str, tools: tuple[str, ...]) -> list[str]:
    tool, input_ = ("search", "capital of France") if tools[0] == "search" else ("calculator", "17 * 23 + 5")
    return [
        f"THOUGHT: I should use the {tool}.\nACTION: {tool}[{input_}]\nOBSERVATION: 42\nTHOUGHT: made up",
        f"THOUGHT: <think>so it is</think> that settles it.\nFINAL: {answer}",
    ]


@pytest.mark.parametrize("driver", DRIVERS)
@pytest.mark.parametrize("chunks", [None, 1, 5])
def test_a_streamed_run_of_every_suite_task_is_the_run(driver: str, chunks: int | None) -> None:
    for task in SUITE:
        tools = toolset(task.tools, ROOT / "bench" / "tasks" / "docs")
        script = suite_script(task.answer, task.tools)
        reference = Agent(ScriptedModel(script), tools=tools).run(task.task)
        events = events_of(Agent(ScriptedModel(script, chunks=chunks), tools=tools), task.task, driver)
        check_parity(events, reference, chat=True)
        released_prefixes(events)
        assert reference.stop_reason == "final"


@pytest.mark.parametrize("driver", DRIVERS)
def test_a_streamed_run_of_every_recorded_reply_is_the_run(driver: str) -> None:
    for _id, mode, text in CORPUS:
        if "</think>" in text and "<think>" not in text:
            continue  # a lone </think> revises what came before it: test_a_lone_think_close_is_a_revision
        script = [text, "FINAL: done"]
        api = "completion" if mode == "completion" else "chat"
        reference = Agent(ScriptedModel(script, api=api), tools=[add, lookup]).run("What is it?")
        model = ScriptedModel(script, api=api, chunks=7)
        events = events_of(Agent(model, tools=[add, lookup]), "What is it?", driver)
        asked_again = len(model.calls) > len(reference.steps)
        check_parity(events, reference, chat=api == "chat", revised=asked_again)
        released_prefixes(events)


def test_a_lone_think_close_is_a_revision_and_the_steps_are_the_run() -> None:
    script = ["THOUGHT: plan</think>\nTHOUGHT: now\nFINAL: 5"]
    reference = Agent(ScriptedModel(script)).run("q")
    events = list(Agent(ScriptedModel(script, chunks=3)).stream("q"))
    assert timeless(events[-1].result) == timeless(reference)  # type: ignore[union-attr]
    revisions = [e for e in events if isinstance(e, Revision)]
    assert (
        revisions
        and "".join(d.text for d in revisions[-1].deltas if d.kind == "thinking") == reference.steps[0].reasoning
    )


# --- every chunking of a reply --------------------------------------------------------------------------

TRICKY = [
    "THOUGHT: I add.\nACTION: add[2, 3]\nOBSERVATION: 5\nFINAL: 5",
    "THOUGHT: price\nACTION: lookup[train ticket]\n**Observation 1:** 89\nTHOUGHT: so\nFINAL: 89",
    "<think>first [ACTION: add[1, 1]]</think>\nTHOUGHT: go\nACTION: add[1, 2]\nObservation: 3",
    "THOUGHT: parallel?\nACTION: add[1, 2]\nACTION: lookup[hotel night]\nOBSERVATION (add[1, 2]): 3",
    "Thought: lower case\nAction: lookup[hotel night]\nObs",
]


@st.composite
def chunked(draw: st.DrawFn) -> tuple[str, list[int], bool]:
    text = draw(st.sampled_from(TRICKY + [t for _, m, t in CORPUS if m == "chat" and "</think>" not in t][:120]))
    cuts = draw(st.lists(st.integers(0, max(len(text), 1)), max_size=12))
    return text, cuts, draw(st.booleans())


def pieces_at(cuts: list[int]) -> Callable[[str], Iterable[str]]:
    def split(text: str) -> Iterator[str]:
        bounds = [0, *sorted({c for c in cuts if 0 < c < len(text)}), len(text)]
        for start, end in itertools.pairwise(bounds):
            yield text[start:end]

    return split


@settings(max_examples=150, deadline=None)
@given(chunked())
def test_every_chunking_of_a_reply_gives_the_same_run(case: tuple[str, list[int], bool]) -> None:
    text, cuts, asynchronous = case
    script = [text, "FINAL: done"]
    reference = Agent(ScriptedModel(script), tools=[add, lookup]).run("q")
    model = ScriptedModel(script, chunks=pieces_at(cuts))
    events = events_of(Agent(model, tools=[add, lookup]), "q", "async" if asynchronous else "sync")
    check_parity(events, reference, chat=True, revised=len(model.calls) > len(reference.steps))
    released_prefixes(events)


# --- the guard, live --------------------------------------------------------------------------------------


@pytest.mark.parametrize("driver", DRIVERS)
def test_a_made_up_observation_split_across_deltas_is_never_emitted(driver: str) -> None:
    reply = "THOUGHT: I look it up.\nACTION: lookup[train ticket]\nOBSERVATION: 1000000\nFINAL: 1000000"
    for size in (1, 2, 3, 5, 8, 13):
        model = ScriptedModel([reply, "FINAL: 89"], chunks=size)
        events = events_of(Agent(model, tools=[lookup]), "What is a train ticket?", driver)
        shown = "".join(e.text for e in events if isinstance(e, TextDelta))
        assert "1000000" not in shown and "OBSERVATION" not in shown and "Obs" not in shown
        observed = [e.text for e in events if isinstance(e, Observed)]
        assert observed == ["OBSERVATION: 89"] or observed[0].endswith("89")
        assert events[-1].result.answer == "89"  # type: ignore[union-attr]


@pytest.mark.parametrize("driver", DRIVERS)
def test_an_action_comes_before_it_is_run(driver: str) -> None:
    order: list[str] = []

    def probe(x: str) -> str:
        """Say x."""
        order.append("ran")
        return x

    live = Agent(ScriptedModel(["THOUGHT: go\nACTION: probe[hi]", "FINAL: hi"], chunks=2), tools=[probe]).stream("q")
    for event in live:
        if isinstance(event, ActionReady):
            order.append("action")
    assert order == ["action", "ran"]


class Failing:
    """A streaming model whose first reply breaks off after some text."""

    api = "chat"
    name = "failing"
    accepts_grammar = False

    def generate(self, request: Request) -> Reply:
        raise AssertionError("a streamed run asks stream_reply")

    def stream_reply(self, request: Request) -> Iterator[ReplyDelta | Reply]:
        yield ReplyDelta("THOUGHT: half a")
        yield ReplyDelta(" thought\nACT")
        raise ModelError("the connection closed")


def test_a_call_that_fails_after_some_text_revokes_it_and_ends_as_run_does() -> None:
    events = list(Agent(Failing()).stream("q"))
    assert isinstance(events[-2], Revision) and events[-2].deltas == ()
    result = events[-1].result  # type: ignore[union-attr]
    assert result.stop_reason == "model_error" and "connection closed" in (result.error or "")


def test_a_model_that_does_not_stream_is_one_delta_and_the_run_is_the_same() -> None:
    class Plain:
        api = "chat"
        name = "plain"
        accepts_grammar = False

        def __init__(self) -> None:
            self.replies = iter(["THOUGHT: add\nACTION: add[2, 3]", "THOUGHT: done\nFINAL: 5"])

        def generate(self, request: Request) -> Reply:
            return Reply(next(self.replies))

    reference = Agent(Plain(), tools=[add]).run("q")
    for driver in DRIVERS:
        events = events_of(Agent(Plain(), tools=[add]), "q", driver)
        check_parity(events, reference, chat=True)


def test_a_stream_closed_early_is_closed() -> None:
    stream = Agent(ScriptedModel(["THOUGHT: a\nACTION: add[1, 2]", "FINAL: 3"], chunks=1), tools=[add]).stream("q")
    next(stream)
    stream.close()
    assert list(stream) == []
    with pytest.raises(RuntimeError, match="closed"):
        stream.result  # noqa: B018


def test_a_streamed_completion_run_that_thinks_past_a_stop_is_the_run() -> None:
    """The step's first call stopped inside the thinking; a completion model continues it."""
    first = Reply("<think>I should call OBSERVATION", finish_reason="stop")
    script = [first, " add</think> add.\nACTION: add[2, 3]", "FINAL: 5"]
    reference = Agent(ScriptedModel(script, api="completion"), tools=[add]).run("q")
    for driver in DRIVERS:
        events = events_of(Agent(ScriptedModel(script, api="completion", chunks=4), tools=[add]), "q", driver)
        assert timeless(events[-1].result) == timeless(reference)  # type: ignore[union-attr]


# --- a fake OpenAI server that streams, through the real openai client ----------------------------------


class SSE:
    """Plays replies in order over /v1/chat/completions and /v1/completions, streamed as OpenAI
    documents its chunks (`chat.completion.chunk`: a role delta, content deltas, reasoning_content
    deltas, a last chunk with finish_reason, a usage chunk with empty choices when
    stream_options.include_usage; `text_completion` chunks with `text`), or whole when not streamed."""

    def __init__(self, replies: list[tuple[str, str]], size: int = 3) -> None:
        self.replies = replies  # (reasoning, text) per request
        self.size = size
        self.bodies: list[dict[str, Any]] = []
        self.served = 0

    def handler(self) -> type[JSONHandler]:
        sse = self

        class Handler(JSONHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                sse.bodies.append(body)
                reasoning, text = sse.replies[sse.served]
                sse.served += 1
                chat = "messages" in body
                usage = {"prompt_tokens": 50, "completion_tokens": 7, "total_tokens": 57}
                if not body.get("stream"):
                    choice: dict[str, Any] = {"index": 0, "finish_reason": "stop"}
                    if chat:
                        choice["message"] = {"role": "assistant", "content": text}
                        if reasoning:
                            choice["message"]["reasoning_content"] = reasoning
                    else:
                        choice["text"] = text
                    self.send_json(200, {"id": "x", "object": "chat.completion", "choices": [choice], "usage": usage})
                    return
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                kind = "chat.completion.chunk" if chat else "text_completion"

                def chunk(choice: dict[str, Any] | None, **more: Any) -> None:
                    data = {"id": "x", "object": kind, "created": 0, "model": body["model"]}
                    data["choices"] = [choice] if choice is not None else []
                    data.update(more)
                    self.wfile.write(f"data: {json.dumps(data)}\n\n".encode())
                    self.wfile.flush()

                def piece(field: str, value: str) -> dict[str, Any]:
                    if chat:
                        return {"index": 0, "delta": {field: value}, "finish_reason": None}
                    return {"index": 0, "text": value, "finish_reason": None}

                if chat:
                    chunk({"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None})
                for at in range(0, len(reasoning), sse.size):
                    chunk(piece("reasoning_content", reasoning[at : at + sse.size]))
                for at in range(0, len(text), sse.size):
                    chunk(piece("content", text[at : at + sse.size]))
                last = {"index": 0, "finish_reason": "stop", **({"delta": {}} if chat else {"text": ""})}
                chunk(last)
                if (body.get("stream_options") or {}).get("include_usage"):
                    chunk(None, usage=usage)
                self.wfile.write(b"data: [DONE]\n\n")
                self.wfile.flush()
                self.close_connection = True

        return Handler


SERVED = [
    ("I should add", "THOUGHT: I add.\nACTION: add[2, 3]\nOBSERVATION: 99\nFINAL: 99"),
    ("", "THOUGHT: the tool says 5.\nFINAL: 5"),
]


@pytest.mark.parametrize("driver", DRIVERS)
@pytest.mark.parametrize("backend", [OpenAIChat, OpenAICompletion])
def test_a_server_stream_through_the_openai_client_is_the_run(driver: str, backend: type[OpenAIChat]) -> None:
    replies = SERVED if backend is OpenAIChat else [("", r.removeprefix("THOUGHT:")) for _, r in SERVED]
    plain = SSE(replies, size=2)
    with serving(plain.handler()) as url:  # stream=True: the run reads the server's stream as the stream does
        reference = Agent(backend("m", base_url=url, server="openai", stream=True), tools=[add]).run("What is 2 + 3?")
    streamed = SSE(replies, size=2)
    with serving(streamed.handler()) as url:
        events = events_of(Agent(backend("m", base_url=url, server="openai"), tools=[add]), "What is 2 + 3?", driver)
    assert all(b.get("stream") is True and b["stream_options"] == {"include_usage": True} for b in streamed.bodies)
    assert streamed.bodies == plain.bodies
    check_parity(events, reference, chat=backend is OpenAIChat)
    released_prefixes(events)
    shown = "".join(e.text for e in events if isinstance(e, TextDelta))
    assert "99" not in shown  # the made-up observation, split over two-character deltas
    if backend is OpenAIChat:
        assert [e.text for e in events if isinstance(e, TextDelta) and e.kind == "thinking"] == [
            "I ",
            "sh",
            "ou",
            "ld",
            " a",
            "dd",
        ]
    # the first reply's stream was left at the made-up observation (before its usage chunk); the second's was read
    assert events[-1].result.steps[-1].usage == Usage(50, 7)  # type: ignore[union-attr]


def test_a_streamed_request_is_the_request_with_stream_on() -> None:
    """A backend built with stream=False streams when the run streams: the body is the same, with stream on."""
    served = SSE(SERVED)
    with serving(served.handler()) as url:
        list(Agent(OpenAIChat("m", base_url=url, server="openai"), tools=[add], prompting=Prompting()).stream("q"))
    assert {tuple(sorted(b)) for b in served.bodies} == {
        ("max_tokens", "messages", "model", "stop", "stream", "stream_options", "temperature")
    }
    assert re.search("ACTION", served.bodies[0]["messages"][0]["content"])


# --- react-text run ------------------------------------------------------------------------------------


def _trace(path: Path) -> list[dict[str, Any]]:
    """A trace's events, wall times aside."""

    def timeless_value(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: timeless_value(v) for k, v in value.items() if k not in ("t", "seconds", "tool_seconds")}
        if isinstance(value, list):
            return [timeless_value(v) for v in value]
        return value

    return [timeless_value(json.loads(line)) for line in path.read_text(encoding="utf-8").splitlines()]


def test_react_text_run_streams_and_its_trace_is_the_unstreamed_one(tmp_path: Path) -> None:
    from cli_support import cli

    script = "THOUGHT: add\nACTION: calculator[2 + 3]\nOBSERVATION: 99\n---\nTHOUGHT: ok\nFINAL: 5\n"
    (tmp_path / "s.txt").write_text(script, encoding="utf-8")
    runs = {}
    for flag in ("--stream", "--no-stream", None):
        trace = tmp_path / f"{flag}.jsonl"
        args = ["run", "--script", "s.txt", "--trace", str(trace), *([flag] if flag else []), "What is 2 + 3?"]
        runs[flag] = cli(*args, cwd=tmp_path)
        assert runs[flag].returncode == 0, runs[flag].stderr
    assert _trace(tmp_path / "--stream.jsonl") == _trace(tmp_path / "--no-stream.jsonl")
    assert runs[None].stdout == runs["--no-stream"].stdout  # piped, without --stream: whole steps, as ever
    streamed = runs["--stream"].stdout
    assert "THOUGHT: add\nACTION: calculator[2 + 3]\nOBSERVATION: 5\n" in streamed
    assert "99" not in streamed.split("cut a made-up observation")[0]  # said only as what the guard cut
    assert streamed.rstrip().endswith("5")
