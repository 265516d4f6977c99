"""The protocol grammar reaches each server where its documentation says it goes, through the real
`openai` client to a fake server on 127.0.0.1, and compiles in the engine that server runs."""

from __future__ import annotations

import importlib.util
from typing import Any

import pytest
from fake_openai import FakeServer
from grammars import ebnf, gbnf

from react_text import Agent, Prompting
from react_text.backends.openai_api import OpenAIChat
from react_text.core.errors import ConfigError
from react_text.evaluation.config import model as configured
from react_text.tools.toolbox import calculator


def grammar_in(server: str, body: dict[str, Any]) -> str | None:
    """Where each server's documentation puts a grammar in the request body."""
    if server == "vllm":  # vLLM 0.12+: StructuredOutputsParams in `structured_outputs`
        return body.get("structured_outputs", {}).get("grammar")
    if server == "sglang":  # SGLang: `ebnf` beside `json_schema` and `regex` (one of the three)
        return body.get("ebnf")
    return body.get("grammar")  # llama.cpp's server, llama-cpp-python's


SHAPES = {"llama.cpp": {"grammar"}, "vllm": {"structured_outputs"}, "sglang": {"ebnf"}}
# The engine each server runs; the same text is GBNF too, so llama.cpp reads every one of them
# (and xgrammar those of vLLM and SGLang, where it is installed: tests/test_grammar.py skips, saying so).
XGRAMMAR = importlib.util.find_spec("xgrammar") is not None


@pytest.mark.parametrize("server", ["llama.cpp", "vllm", "sglang"])
def test_each_server_gets_the_grammar_in_its_own_field(server: str) -> None:
    with FakeServer() as fake:
        model = OpenAIChat("fake", base_url=fake.url, server=server, grammar=True)  # type: ignore[arg-type]
        agent = Agent(model, tools=[calculator])
        result = agent.run("What is 2 + 3?")
    assert (result.answer, result.stop_reason) == ("5", "final")
    assert len(fake.bodies) == 2
    for body in fake.bodies:
        others = {"grammar", "structured_outputs", "ebnf", "guided_grammar"} - SHAPES[server]
        assert not others & set(body), body.keys()
        text = grammar_in(server, body)
        assert isinstance(text, str), body
        engines = [gbnf, ebnf] if server != "llama.cpp" and XGRAMMAR else [gbnf]
        for grammar in (engine(text) for engine in engines):
            assert grammar.accepts("THOUGHT: add\nACTION: calculator[2 + 3]")
            assert not grammar.accepts("THOUGHT: add\nACTION: search[2 + 3]")


@pytest.mark.parametrize("server", ["ollama", "openai"])
def test_a_server_without_a_grammar_field_is_sent_none(server: str) -> None:
    with FakeServer() as fake:
        model = OpenAIChat("fake", base_url=fake.url, server=server)  # type: ignore[arg-type]
        assert not model.accepts_grammar
        Agent(model, tools=[calculator]).run("What is 2 + 3?")
    assert fake.bodies and not any({"grammar", "structured_outputs", "ebnf"} & set(b) for b in fake.bodies)


def test_grammar_on_a_server_that_takes_none_is_refused() -> None:
    with pytest.raises(ValueError, match="ollama takes no grammar"):
        OpenAIChat("m", base_url="http://127.0.0.1:9/v1", server="ollama", grammar=True)
    with pytest.raises(ConfigError, match="ollama takes no grammar"):
        configured("m", base_url="http://127.0.0.1:9/v1", grammar=True, server="ollama")
    with pytest.raises(ValueError, match="server must be one of"):
        OpenAIChat("m", base_url="http://127.0.0.1:9/v1", server="tgi")  # type: ignore[arg-type]


def test_grammar_alone_still_means_llama_cpp() -> None:
    model = OpenAIChat("m", base_url="http://127.0.0.1:9/v1", grammar=True)
    assert (model.server, model.accepts_grammar) == ("llama.cpp", True)
    assert not OpenAIChat("m", base_url="http://127.0.0.1:9/v1").accepts_grammar


def test_the_command_line_names_the_server(tmp_path: Any) -> None:
    from react_text.cli.main import main

    with FakeServer() as fake:
        code = main(
            ["run", "What is 2 + 3?", "--base-url", fake.url, "--model", "fake", "--server", "vllm", "--grammar"]
        )
    assert code == 0
    assert fake.bodies and all(grammar_in("vllm", b) for b in fake.bodies)


@pytest.mark.parametrize("server", ["llama.cpp", "vllm", "sglang"])
def test_naming_a_server_that_takes_a_grammar_sends_none_unasked(server: str) -> None:
    """servers.md and `--grammar`'s help: the grammar is off by default on a server; `server=`
    says where one would go. A reasoning model forced to start with THOUGHT: is harmed silently,
    so only grammar=True (or Prompting(grammar=True)) sends one."""
    with FakeServer() as fake:
        model = OpenAIChat("fake", base_url=fake.url, server=server)  # type: ignore[arg-type]
        assert model.accepts_grammar and not model.grammar
        Agent(model, tools=[calculator]).run("What is 2 + 3?")
        asked = Agent(model, tools=[calculator], prompting=Prompting(grammar=True)).run("What is 2 + 3?")
    assert asked.answer == "5"
    unasked, sent = fake.bodies[:2], fake.bodies[2:]
    assert unasked and not any({"grammar", "structured_outputs", "ebnf"} & set(b) for b in unasked)
    assert sent and all(grammar_in(server, b) for b in sent)


@pytest.mark.parametrize(
    ("version", "fields"),
    [
        ("0.9.2", {"guided_grammar": "g"}),
        ("0.11.0rc1", {"guided_grammar": "g"}),
        ("0.12.0", {"structured_outputs": {"grammar": "g"}}),
        ("1.0", {"structured_outputs": {"grammar": "g"}}),
        (None, {"structured_outputs": {"grammar": "g"}}),
        ("dev", {"structured_outputs": {"grammar": "g"}}),
    ],
)
def test_a_vllm_is_sent_the_grammar_field_its_version_reads(version: str | None, fields: dict[str, object]) -> None:
    from react_text.backends import wire

    assert wire.grammar_fields("vllm", "g", version) == fields


def test_the_version_pattern_does_not_backtrack() -> None:
    import time

    from react_text.backends.wire.servers import _release

    started = time.monotonic()
    assert _release("1." * 50_000 + "x")[:2] == (1, 1)
    assert _release("1" * 100_000 + ".!") == (111_111_111,)  # a number's first 9 digits: no huge int
    assert time.monotonic() - started < 1
