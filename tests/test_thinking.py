"""Thinking first, then the protocol: under the grammar a model may think in a free <think> block
before `THOUGHT:` (think=True), or the server's own reasoning parser takes the thinking and starts
the grammar after it. Fake servers in vLLM's and SGLang's forms, through the real `openai` client;
the grammars compiled by llama.cpp (and xgrammar, where installed); the embedded model (slow)."""

from __future__ import annotations

import importlib.util
from typing import Any

import pytest
from conftest import Drive
from fake_openai import FakeServer, answer
from grammars import ebnf, gbnf
from test_server_identify import LLAMA_CPP, SGLANG_INFO

from react_text import Agent
from react_text.backends.openai_api import OpenAIChat
from react_text.grammar import gbnf as reading
from react_text.grammar.protocol import after_cue, protocol_grammar, with_thinking
from react_text.tools.toolbox import calculator

XGRAMMAR = importlib.util.find_spec("xgrammar") is not None
THINKING = [
    "<think>2 and 3 make 5, but the calculator should say.</think>\nTHOUGHT: add\nACTION: calculator[2 + 3]",
    "<think>a < b, and </b> is not the end</think>\n\nTHOUGHT: done\nFINAL: 5",
    "<think></think>THOUGHT: done\nFINAL: 5",
    "THOUGHT: no thinking at all\nFINAL: 5",
]
REFUSED = [
    "<think>never closed\nTHOUGHT: done\nFINAL: 5",
    "<think>one</think>\n<think>two</think>\nTHOUGHT: done\nFINAL: 5",
    "<think>x</think>\nFINAL: 5",
    "<think>x</think>\n\n\nTHOUGHT: done\nFINAL: 5",
]


def engines(text: str) -> list[Any]:
    return [gbnf(text), ebnf(text)] if XGRAMMAR else [gbnf(text)]


@pytest.mark.parametrize("names", [["calculator"], ["web search", "get-weather", "files.read", "天气"]])
def test_the_thinking_grammar_admits_a_think_block_first_in_every_engine(names: list[str]) -> None:
    text = protocol_grammar(names, think=True)
    assert text == with_thinking(protocol_grammar(names))
    replies = [r.replace("calculator", names[0]) for r in THINKING]
    for engine in engines(text):
        for reply in replies:
            assert engine.accepts(reply), reply
        for reply in REFUSED:
            assert not engine.accepts(reply), reply
    for reply in replies:
        assert reading.admits(text, reply)
    for reply in REFUSED:
        assert not reading.admits(text, reply)


def test_after_the_cue_the_thinking_comes_before_the_label_again() -> None:
    text = after_cue(protocol_grammar(["calculator"], think=True))
    assert text == with_thinking(protocol_grammar(["calculator"], after_cue=True))
    for engine in engines(text):
        assert engine.accepts(" <think>add them</think>\nTHOUGHT: add\nACTION: calculator[2 + 3]")
        assert engine.accepts(" add\nACTION: calculator[2 + 3]")
        assert engine.accepts(" <think>add\nthem</think>\nTHOUGHT: add\nACTION: calculator[2 + 3]")
        # (on one line, a think block is a thought like any other; on two, the label must follow)
        assert not engine.accepts(" <think>add\nthem</think>\nACTION: calculator[2 + 3]")


def inline_thinking(messages: list[dict[str, str]]) -> str:
    return "<think>The calculator adds.</think>\n" + answer(messages)


def test_llama_cpp_gets_the_think_block_in_its_grammar(drive: Drive) -> None:
    with FakeServer(about=LLAMA_CPP, say=inline_thinking) as fake:
        model = OpenAIChat("fake", base_url=fake.url, think=True, grammar=True)
        result = drive(Agent(model, tools=[calculator]), "What is 2 + 3?")
    assert (result.answer, result.stop_reason) == ("5", "final")
    assert [s.reasoning for s in result.steps] == ["The calculator adds."] * 2
    for body in fake.bodies:
        assert "think ::= " in body["grammar"]
        assert gbnf(body["grammar"]).accepts(inline_thinking(body["messages"]))


def test_vllm_with_a_reasoning_parser_splits_the_thinking_and_the_grammar_holds_the_rest(drive: Drive) -> None:
    """vLLM with --reasoning-parser applies structured_outputs after the thinking ends and returns
    the thinking as reasoning_content; the optional block in the grammar changes nothing there."""
    with FakeServer(reasoning="First I think, then I add.") as fake:
        model = OpenAIChat("fake", base_url=fake.url, server="vllm", think=True, grammar=True)
        result = drive(Agent(model, tools=[calculator]), "What is 2 + 3?")
    assert (result.answer, result.stop_reason) == ("5", "final")
    assert all(s.reasoning == "First I think, then I add." for s in result.steps)
    for body in fake.bodies:
        sent = body["structured_outputs"]["grammar"]
        assert "think ::= " in sent
        assert gbnf(sent).accepts(answer(body["messages"]))  # the content alone is the protocol


def test_sglang_with_a_reasoning_parser_gets_the_plain_grammar(drive: Drive) -> None:
    """SGLang says its reasoning parser in /server_info; its grammar backend then starts after the
    thinking (and returns the thinking as reasoning_content), so the grammar is sent as it is."""
    about = {"/server_info": {**SGLANG_INFO, "reasoning_parser": "qwen3"}}
    with FakeServer(about=about, reasoning="Thinking it over.") as fake:
        model = OpenAIChat("fake", base_url=fake.url, think=True, grammar=True)
        result = drive(Agent(model, tools=[calculator]), "What is 2 + 3?")
    assert (result.answer, result.stop_reason) == ("5", "final")
    assert model.identity.reasoning_parser == "qwen3"
    assert "its reasoning parser (qwen3) starts the grammar after the thinking" in model.identity.said
    assert all(s.reasoning == "Thinking it over." for s in result.steps)
    for body in fake.bodies:
        assert "think" not in body["ebnf"]
        assert gbnf(body["ebnf"]).accepts(answer(body["messages"]))


def test_without_think_the_grammar_has_no_block() -> None:
    with FakeServer(about=LLAMA_CPP) as fake:
        Agent(OpenAIChat("fake", base_url=fake.url, grammar=True), tools=[calculator]).run("What is 2 + 3?")
    assert all("think" not in b["grammar"] for b in fake.bodies)


EXAMPLE = """Example:
QUESTION: What is 12 * 7 + 3?
THOUGHT: <think>12 * 7 is about 80, plus 3; the calculator will say exactly.</think>
THOUGHT: I will use the calculator.
ACTION: calculator[12 * 7 + 3]
OBSERVATION: 87
THOUGHT: <think>The calculator says 87, so that is the answer.</think>
THOUGHT: The calculator says 87.
FINAL: 87"""


@pytest.mark.slow
@pytest.mark.parametrize("api", ["completion", "chat"])
def test_the_embedded_model_asked_to_think_in_tags_stays_in_the_protocol(api: str) -> None:
    """Run under flock /tmp/react-text-llama.lock. Measured: SmolLM2-135M, asked to think in tags
    (and shown it), does not open a <think> block under the grammar; what it writes is still a
    reply the thinking grammar admits, read as the protocol."""
    pytest.importorskip("llama_cpp", reason='needs pip install "react-text[local]"')
    from react_text import Prompting
    from react_text.backends.local import LocalModel

    model = LocalModel(think=True, n_threads=1, api=api)  # type: ignore[arg-type]
    agent = Agent(model, tools=[calculator], prompting=Prompting(example=EXAMPLE)).with_limits(steps=3)
    result = agent.run("Think inside <think> and </think> first, then answer. What is 17 * 23?")
    assert result.stop_reason != "format_errors"
    text = protocol_grammar(["calculator"], think=True)
    for step in result.steps:
        reply = step.reply.removeprefix("THOUGHT:") if api == "chat" else step.reply
        assert reading.admits(after_cue(text), reply, cut=step.finish_reason == "length"), step.reply


@pytest.mark.parametrize(
    ("backend", "prompting", "words"),
    [
        ({}, None, "this agent sends none: build the backend with grammar=True or give Prompting(grammar=True)"),
        ({"grammar": True}, False, "Prompting(grammar=False) turns the grammar off: leave one of them out"),
        ({}, False, "Prompting(grammar=False) turns the grammar off: leave one of them out"),
    ],
    ids=["server-default", "grammar-then-off", "off"],
)
def test_think_where_the_agent_sends_no_grammar_is_refused(
    backend: dict[str, Any], prompting: bool | None, words: str
) -> None:
    """think=True only changes the grammar: an agent that sends none would ignore it without a word."""
    from react_text import Prompting

    model = OpenAIChat("fake", base_url="http://127.0.0.1:9/v1", think=True, **backend)
    with pytest.raises(ValueError, match="built with think=True") as refused:
        Agent(model, tools=[calculator], prompting=Prompting(grammar=prompting))
    assert words in str(refused.value) and "\n" not in str(refused.value)


def test_think_with_the_grammar_asked_of_the_agent_is_taken(drive: Drive) -> None:
    """Prompting(grammar=True) on a backend built without grammar=True: the think block is sent."""
    from react_text import Prompting

    with FakeServer(about=LLAMA_CPP, say=inline_thinking) as fake:
        model = OpenAIChat("fake", base_url=fake.url, think=True)
        result = drive(Agent(model, tools=[calculator], prompting=Prompting(grammar=True)), "What is 2 + 3?")
    assert (result.answer, result.stop_reason) == ("5", "final")
    assert fake.bodies and all("think ::= " in body["grammar"] for body in fake.bodies)
