"""Without server=..., a server model asks the server what it is, once, and the grammar goes where
that server takes one. The fake servers answer as each server's source says it does (the shapes
are in react_text/backends/identify.py), through the real `openai` client."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest
from conftest import Drive
from fake_openai import FakeServer

from react_text import Agent
from react_text.backends.openai_api import OpenAIChat, OpenAICompletion
from react_text.tools.toolbox import calculator

LLAMA_CPP = {
    "/props": {
        "default_generation_settings": {"id": 0, "n_ctx": 4096, "speculative": False, "is_processing": False},
        "total_slots": 1,
        "model_path": "../models/Model.gguf",
        "chat_template": "...",
        "modalities": {"vision": False},
        "build_info": "b5678-abcdef0",
        "is_sleeping": False,
    }
}
SGLANG_INFO = {
    "model_path": "Qwen/Qwen3-8B",
    "tokenizer_path": "Qwen/Qwen3-8B",
    "grammar_backend": "xgrammar",
    "reasoning_parser": None,
    "tp_size": 1,
    "max_total_num_tokens": 100000,
    "internal_states": [{"last_gen_throughput": 0.0}],
    "version": "0.5.4",
}
SGLANG = {"/server_info": SGLANG_INFO}
SGLANG_OLD = {"/get_server_info": SGLANG_INFO}  # before /server_info
VLLM = {
    "/version": {"version": "0.12.0"},
    "/v1/models": {
        "object": "list",
        "data": [
            {
                "id": "fake",
                "object": "model",
                "created": 0,
                "owned_by": "vllm",
                "root": "fake",
                "parent": None,
                "max_model_len": 4096,
                "permission": [],
            }
        ],
    },
}
OLLAMA = {"/api/version": {"version": "0.12.6"}}
LLAMA_CPP_PYTHON = {
    "/openapi.json": {"openapi": "3.1.0", "info": {"title": "🦙 llama.cpp Python API", "version": "0.3.36"}}
}

SERVERS = [
    ("llama.cpp", LLAMA_CPP, "GET /props", "grammar"),
    ("sglang", SGLANG, "GET /server_info", "ebnf"),
    ("sglang", SGLANG_OLD, "GET /get_server_info", "ebnf"),
    ("vllm", VLLM, "GET /version", "structured_outputs"),
    ("ollama", OLLAMA, "GET /api/version", None),
    ("llama.cpp", LLAMA_CPP_PYTHON, "GET /openapi.json", "grammar"),
]
FIELDS = {"grammar", "structured_outputs", "ebnf", "guided_grammar"}


def said(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name.startswith("react_text.backends.openai_api")]


@pytest.mark.parametrize(("server", "about", "path", "where"), SERVERS, ids=[s[2] for s in SERVERS])
def test_the_server_says_what_it_is_and_the_grammar_goes_where_it_takes_one(
    server: str, about: dict[str, Any], path: str, where: str | None, drive: Drive, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="react_text.backends.openai_api")
    with FakeServer(about=about) as fake:
        model = OpenAIChat("fake", base_url=fake.url, grammar=True)
        agent = Agent(model, tools=[calculator])
        asked = []
        for _ in range(2):
            result = drive(agent, "What is 2 + 3?")
            assert (result.answer, result.stop_reason) == ("5", "final")
            asked.append(list(fake.gets))
    assert asked[0] == asked[1], "asked once for the model, not once a run"
    assert fake.gets[0] == "/props"
    assert model.server == server
    assert path in model.identity.said
    assert model.accepts_grammar is (where is not None)
    assert len(fake.bodies) == 4
    for body in fake.bodies:
        assert FIELDS & set(body) == ({where} if where else set()), body.keys()
    lines = [line for line in said(caplog) if path in line]
    assert len(lines) == 1, said(caplog)
    assert server in lines[0]


@pytest.mark.parametrize(("server", "about"), [("llama.cpp", LLAMA_CPP), ("vllm", VLLM), ("sglang", SGLANG)])
def test_a_server_that_says_it_takes_a_grammar_gets_none_unasked(
    server: str, about: dict[str, Any], drive: Drive, caplog: pytest.LogCaptureFixture
) -> None:
    """What the probe finds says where a grammar would go; it never turns one on (servers.md: the
    grammar is off by default on a server): a reasoning model made to start with THOUGHT: would
    be harmed without a word."""
    caplog.set_level(logging.INFO, logger="react_text.backends.openai_api")
    with FakeServer(about=about) as fake:
        model = OpenAIChat("fake", base_url=fake.url)
        result = drive(Agent(model, tools=[calculator]), "What is 2 + 3?")
        assert (model.server, model.accepts_grammar, result.answer) == (server, True, "5")
    assert fake.bodies and not any(FIELDS & set(b) for b in fake.bodies)
    assert any("grammar=True sends one" in line for line in said(caplog)), said(caplog)


def test_an_unknown_server_gets_no_grammar_said_once(drive: Drive, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="react_text.backends.openai_api")
    with FakeServer() as fake:  # answers no path but the chat endpoint
        model = OpenAIChat("fake", base_url=fake.url)
        agent = Agent(model, tools=[calculator])
        drive(agent, "What is 2 + 3?")
        drive(agent, "What is 4 + 3?")
    assert (model.server, model.accepts_grammar) == (None, False)
    assert fake.bodies and not any(FIELDS & set(b) for b in fake.bodies)
    probes = ["/props", "/server_info", "/get_server_info", "/version", "/api/version", "/openapi.json"]
    assert fake.gets[: len(probes)] == probes  # then the context window's look-up (/v1/models, /props)
    assert len(fake.gets) == len(probes) + 2
    lines = [line for line in said(caplog) if "did not say what it is" in line]
    assert len(lines) == 1
    assert "no grammar is sent" in lines[0]


def test_vllm_is_not_taken_from_version_alone() -> None:
    """/version is a common path: without /v1/models saying owned_by vllm it decides nothing."""
    with FakeServer(about={"/version": {"version": "1.0"}}) as fake:
        model = OpenAIChat("fake", base_url=fake.url)
        assert model.server is None
    assert "/v1/models" in fake.gets


def test_a_server_given_is_asked_only_what_its_name_does_not_decide() -> None:
    """A vLLM named is asked its version (where its grammar goes depends on it), nothing else."""
    with FakeServer(about=OLLAMA) as fake:
        model = OpenAIChat("fake", base_url=fake.url, server="vllm", grammar=True)
        Agent(model, tools=[calculator]).run("What is 2 + 3?")
    assert sorted(fake.gets) == ["/props", "/v1/models", "/version"]  # the window's look-up, and the version
    assert model.identity.said.startswith("server='vllm' was given")
    assert all("structured_outputs" in b for b in fake.bodies)


def test_grammar_true_on_a_server_that_says_it_takes_none_is_said_and_not_sent(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with FakeServer(about=OLLAMA) as fake:
        model = OpenAICompletion("fake", base_url=fake.url, grammar=True)
        assert (model.server, model.accepts_grammar) == ("ollama", False)
    warned = [r for r in caplog.records if r.levelno == logging.WARNING and "grammar=True is not honoured" in r.message]
    assert len(warned) == 1


def test_openai_itself_is_not_asked() -> None:
    model = OpenAIChat("gpt-4o-mini", api_key="sk-test")
    assert model.server == "openai"
    assert "not asked" in model.identity.said


def test_the_trace_says_what_the_server_is_and_why(tmp_path: Path) -> None:
    from react_text.cli.main import main

    trace = tmp_path / "run.jsonl"
    with FakeServer(about=VLLM) as fake:
        code = main(
            ["run", "What is 2 + 3?", "--base-url", fake.url, "--model", "fake", "--grammar", "--trace", str(trace)]
        )
    assert code == 0
    start = json.loads(trace.read_text().splitlines()[0])
    assert start["model"]["server"] == "vllm"
    assert "GET /version answered 0.12.0" in start["model"]["server_said"]
    assert all("structured_outputs" in b for b in fake.bodies)


@pytest.mark.slow
def test_the_real_llama_cpp_python_server_is_told_apart_and_gets_the_grammar() -> None:
    """llama-cpp-python's server (the one the `server` extra runs) has no /props: its OpenAPI
    document names it; asked for the grammar (off by default on a server), it gets it in
    llama.cpp's field. Run under flock /tmp/react-text-llama.lock."""
    pytest.importorskip("llama_cpp.server", reason='needs pip install "react-text[server]"')
    from llama_server import LlamaServer, RecordingProxy

    with LlamaServer(threads=1) as server, RecordingProxy(server.url) as proxy:
        model = OpenAIChat("smollm2", base_url=proxy.url, grammar=True)
        result = Agent(model, tools=[calculator]).with_limits(steps=2, reply_tokens=48).run("What is 2 + 3?")
    assert model.server == "llama.cpp"
    assert "GET /openapi.json names llama-cpp-python's server" in model.identity.said
    assert proxy.bodies and all(isinstance(b.get("grammar"), str) for b in proxy.bodies)
    for step in result.steps:  # under the grammar, every reply is the protocol
        assert step.reply.startswith("THOUGHT: "), step.reply
