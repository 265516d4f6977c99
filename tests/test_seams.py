"""The model seam and the observer seam: what a model offers is read once, by `model_info.describe`
alone; a run is watched through one observer the drivers tell, under both drivers."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from react_text import Agent, Limits, Prompting, Reply, Request, ScriptedModel, tool
from react_text.core.episode import Command, Event
from react_text.core.errors import ModelError
from react_text.core.model_info import ModelInfo, describe
from react_text.core.types import AsyncModel, RunResult, Usage
from react_text.observers.observing import Call, Observer, Quiet, both
from react_text.observers.trace import Tracer


class Plain:
    """A model of the user's own: the four members and nothing else."""

    api = "chat"
    name = "plain"
    accepts_grammar = False

    def generate(self, request: Request) -> Reply:
        return Reply("FINAL: 4")


class Offering(Plain):
    """One that declares every optional member; its window would cost a request to read."""

    provider = "acme"
    url = "http://127.0.0.1:9/v1"
    in_process = False
    serial = True
    stream = True
    recommended_limits = Limits(steps=3)
    recommended_prompting = Prompting(example=None)
    looked_up = 0

    def count_tokens(self, text: str) -> int:
        return len(text)

    @property
    def context_window(self) -> int:
        type(self).looked_up += 1
        return 2048

    async def agenerate(self, request: Request) -> Reply:
        return self.generate(request)


def test_a_plain_model_offers_nothing_more() -> None:
    info = describe(Plain())
    assert (info.provider, info.url, info.in_process, info.serial, info.stream) == ("plain", None, False, False, False)
    assert not info.asynchronous and not isinstance(Plain(), AsyncModel)
    assert info.limits is info.prompting is info.count_tokens is info.window is info.awindow is None


def test_what_a_model_declares_is_read_and_its_window_only_when_asked() -> None:
    model = Offering()
    info = describe(model)
    assert (info.provider, info.url, info.serial, info.stream, info.asynchronous) == (
        "acme",
        "http://127.0.0.1:9/v1",
        True,
        True,
        True,
    )
    assert info.limits == Limits(steps=3) and info.prompting == Prompting(example=None)
    assert info.count_tokens is not None and info.count_tokens("abc") == 3
    assert Offering.looked_up == 0  # describing a model asks its server nothing
    agent = Agent(model)
    assert agent.limits == Limits(steps=3) and Offering.looked_up == 0
    assert info.window is not None and info.window() == 2048 and Offering.looked_up == 1


def test_the_backends_declare_what_they_are() -> None:
    scripted = describe(ScriptedModel(["FINAL: 1"], context_window=512))
    assert (scripted.provider, scripted.in_process, scripted.serial, scripted.asynchronous) == (
        "react_text.scripted",
        True,
        False,
        True,
    )
    assert scripted.window is not None and scripted.window() == 512


class Log(Quiet):
    def __init__(self, seen: list[str], tag: str = "") -> None:
        self.seen = seen
        self.tag = tag

    @contextlib.contextmanager
    def around(self, command: Command) -> Iterator[Call]:
        self.seen.append(f"{self.tag}enter {type(command).__name__}")
        yield self
        self.seen.append(f"{self.tag}leave {type(command).__name__}")

    def record(self, event: Event, counted: Usage | None = None) -> None:
        self.seen.append(f"{self.tag}{type(event).__name__}")

    def begin(self, model: ModelInfo) -> None:
        self.seen.append(f"{self.tag}begin {model.provider}")

    def end(self, result: RunResult) -> None:
        self.seen.append(f"{self.tag}end {result.stop_reason}")


@tool
def double(x: int) -> int:
    """Twice x."""
    return 2 * x


def _run(agent: Agent, task: str, form: str, observer: Observer) -> RunResult:
    if form == "sync":
        return agent.run(task, observer=observer)
    return asyncio.run(agent.arun(task, observer=observer))


@pytest.mark.parametrize("form", ["sync", "async"])
def test_an_observer_is_told_every_command_and_what_came_of_it(form: str) -> None:
    seen: list[str] = []
    model = ScriptedModel(["ACTION: double[2]", ModelError("the server is down")])
    result = _run(Agent(model, [double]), "Twice 2?", form, Log(seen))
    assert result.stop_reason == "model_error"
    assert seen == [
        "begin react_text.scripted",  # the model as the agent described it, before any command
        "enter Send",
        "Replied",
        "leave Send",
        "enter Invoke",
        "Ran",
        "leave Invoke",
        "enter Send",
        "Failed",
        "leave Send",
        "end model_error",
    ]


def test_several_observers_are_told_in_order_and_left_in_reverse() -> None:
    seen: list[str] = []
    Agent(ScriptedModel(["FINAL: 1"])).run("1?", observer=both([Log(seen, "a:"), Log(seen, "b:")]))
    assert seen[:2] == ["a:begin react_text.scripted", "b:begin react_text.scripted"]
    assert seen[2:8] == ["a:enter Send", "b:enter Send", "a:Replied", "b:Replied", "b:leave Send", "a:leave Send"]
    assert seen[-2:] == ["a:end final", "b:end final"]


@pytest.mark.parametrize("form", ["sync", "async"])
def test_a_trace_is_written_by_observing_the_run(form: str, tmp_path: Path) -> None:
    model = ScriptedModel(["ACTION: double[2]", "FINAL: 4"])
    with Tracer(tmp_path / "run.jsonl") as tracer:
        result = _run(Agent(model, [double]), "Twice 2?", form, tracer.observer)
    assert result.answer == "4"
    events = [json.loads(line) for line in (tmp_path / "run.jsonl").read_text().splitlines()]
    assert [e["event"] for e in events] == ["request", "reply", "request", "reply"]
    assert events[0]["new"][-1]["content"].endswith("Twice 2?")
    assert [m["role"] for m in events[2]["new"]] == ["assistant", "user"]  # only what is new
    assert events[3]["text"] == "FINAL: 4"
