"""A server that takes a grammar field but does not apply it is found out from its replies, and
said once, in words, in the log and in the run's trace. The reading of the grammar that finds it
out (react_text.grammar.gbnf) agrees with llama.cpp's own on every grammar this package writes."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
from conftest import Drive
from fake_openai import FakeServer
from grammars import gbnf

from react_text import Agent
from react_text.backends.openai_api import OpenAIChat
from react_text.evaluation.config import describe
from react_text.grammar import gbnf as reading
from react_text.grammar.protocol import ignored, protocol_grammar
from react_text.observers.trace import Tracer, read
from react_text.tools.toolbox import calculator

NAMES = ["calculator", "web search", "get-weather", "files.read", "天气"]
GRAMMARS = {
    "chat": protocol_grammar(NAMES),
    "after the cue": protocol_grammar(NAMES, after_cue=True),
    "act first": protocol_grammar(NAMES, final=False),
    "final only": protocol_grammar((), after_cue=False),
    "parallel": protocol_grammar(NAMES, actions=3),
}
REPLIES = [
    "THOUGHT: add\nACTION: calculator[2 + 3]",
    "THOUGHT: look\nACTION: web search[capital of Peru]",
    "THOUGHT: w\nACTION: get-weather[Lima]",
    "THOUGHT: r\nACTION: files.read[a [b] c]",
    "THOUGHT: 天\nACTION: 天气[北京]",
    "THOUGHT: nested\nACTION: calculator[x [y z]",
    "THOUGHT: done\nFINAL: 5",
    "FINAL: 5",
    " done\nFINAL: 5",
    " add\nACTION: calculator[1]",
    "THOUGHT: a\nACTION: calculator[1]\nACTION: web search[x]",
    "THOUGHT: a\nACTION: calculator[1]\nACTION: calculator[2]\nACTION: calculator[3]\nACTION: calculator[4]",
    "THOUGHT: a\nACTION: search[1]",
    "THOUGHT: a\nFINAL: 5\nTHOUGHT: again",
    "THOUGHT: " + "a" * 200 + "\nFINAL: 1",
    "THOUGHT: " + "a" * 201 + "\nFINAL: 1",
    "Sure! The answer is 5.",
    "THOUGHT: a\nACTION: calculator[]",
]


@pytest.mark.parametrize("name", GRAMMARS)
def test_the_reading_agrees_with_llama_cpp(name: str) -> None:
    text = GRAMMARS[name]
    engine = gbnf(text)
    for reply in REPLIES:
        assert reading.admits(text, reply) == engine.accepts(reply), (name, reply)


def test_a_cut_reply_is_judged_by_its_beginning() -> None:
    text = GRAMMARS["chat"]
    assert ignored(text, "THOUGHT: add\nACTION: calculator[2 + ", cut=True) is False
    assert ignored(text, "THOUGHT: add\nACTION: calculator[2 + ") is True
    assert ignored(text, "The answer", cut=True) is True
    assert ignored(text, "<think>free\ntext</think>\nTHOUGHT: a\nFINAL: 5") is False  # thinking before it
    assert ignored(text, "THOUGHT: a\nFINAL: 5\n") is False  # whitespace at the end
    assert ignored("root ::= [a-z]+ | weird-ebnf-only", "x") is False  # not ours: cannot be judged


def chatty(messages: list[dict[str, str]]) -> str:
    """A model under no grammar at all: it answers in prose."""
    return "Sure! 2 + 3 is 5."


def test_a_server_that_ignores_the_grammar_is_said_once(drive: Drive, caplog: pytest.LogCaptureFixture) -> None:
    with FakeServer(say=chatty) as fake:
        model = OpenAIChat("fake", base_url=fake.url, server="vllm", grammar=True)
        agent = Agent(model, tools=[calculator]).with_limits(steps=3)
        for _ in range(2):
            result = drive(agent, "What is 2 + 3?")
            assert result.stop_reason != "final"
    assert len(fake.bodies) >= 4 and all("structured_outputs" in b for b in fake.bodies)
    said = [r for r in caplog.records if r.levelno == logging.WARNING and "does not apply the grammar" in r.message]
    assert len(said) == 1
    assert "Sure! 2 + 3 is 5." in said[0].message and "(vllm)" in said[0].message


def test_a_server_that_applies_it_is_not_suspected(caplog: pytest.LogCaptureFixture) -> None:
    with FakeServer() as fake:
        Agent(OpenAIChat("fake", base_url=fake.url, server="sglang", grammar=True), tools=[calculator]).run(
            "What is 2 + 3?"
        )
    assert not [r for r in caplog.records if "does not apply the grammar" in r.message]


def test_the_trace_says_it_once(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    with FakeServer(say=chatty) as fake, Tracer(path) as tracer:
        agent = Agent(
            OpenAIChat("fake", base_url=fake.url, server="llama.cpp", grammar=True), tools=[calculator]
        ).with_limits(steps=3)
        tracer.start("What is 2 + 3?", describe(agent))  # a run_start, as the CLI writes it
        agent.run("What is 2 + 3?", observer=tracer.observer)
    events = [json.loads(line) for line in path.read_text().splitlines()]
    noted = [e for e in events if e["event"] == "grammar_ignored"]
    assert len(noted) == 1
    assert "does not apply the grammar" in noted[0]["said"] and "(llama.cpp)" in noted[0]["said"]
    assert sum(e["event"] == "reply" for e in events) >= 2
    assert len(list(read(path))) == len(events)  # a trace as sound as any


def test_a_trace_without_its_run_start_still_says_it(tmp_path: Path) -> None:
    """The observer hears what the server is from the drivers (ModelInfo), not from run_start."""
    path = tmp_path / "run.jsonl"
    with FakeServer(say=chatty) as fake, Tracer(path) as tracer:
        agent = Agent(
            OpenAIChat("fake", base_url=fake.url, server="vllm", grammar=True), tools=[calculator]
        ).with_limits(steps=2)
        agent.run("What is 2 + 3?", observer=tracer.observer)
    events = [json.loads(line) for line in path.read_text().splitlines()]
    assert "run_start" not in {e["event"] for e in events}
    noted = [e for e in events if e["event"] == "grammar_ignored"]
    assert len(noted) == 1 and f"{fake.url.rstrip('/')} (vllm)" in noted[0]["said"]
