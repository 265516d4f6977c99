"""attack3: grammars on servers, the server probe, grammar-ignored detection, the forced final.

From servers.md ("Constrained decoding on your server"), the CLI help of --grammar/--server/--think,
and help(react_text.backends.openai_api) / help(react_text.backends.identify).
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from typing import Any

import pytest
from _attack3_fake import Answer, Fake, Seen, chat_answer

from react_text import Agent, Limits, OpenAIChat

PROPS = {
    "default_generation_settings": {"n_ctx": 4096},
    "total_slots": 1,
    "model_path": "m.gguf",
    "build_info": "b5678-abc",
}


def _identity(kind: str, vllm_version: str = "0.12.0") -> dict[str, Any]:
    return {
        "llama.cpp": {"/props": PROPS},
        "vllm": {
            "/version": {"version": vllm_version},
            "/v1/models": {
                "object": "list",
                "data": [{"id": "m", "object": "model", "owned_by": "vllm", "max_model_len": 8192}],
            },
        },
        "sglang": {"/server_info": {"version": "0.5.4", "internal_states": [{}], "model_path": "m"}},
        "ollama": {"/api/version": {"version": "0.12.6"}},
        "none": {},
    }[kind]


def _server(kind: str, text: str = "THOUGHT: x\nFINAL: 42", **kw: str):
    paths = _identity(kind, **kw)

    def behave(seen: Seen, n: int) -> Answer:
        if seen.method == "GET":
            return Answer(200, paths[seen.path]) if seen.path in paths else Answer(404, {"error": "nf"})
        return Answer(body=chat_answer(text))

    return Fake(behave)


def _fields(body: dict[str, Any]) -> list[str]:
    return [k for k in ("grammar", "structured_outputs", "ebnf", "guided_grammar") if k in body]


def add(a: int, b: int) -> int:
    """Add two whole numbers."""
    return a + b


@pytest.mark.parametrize(
    ("kind", "field"),
    [("llama.cpp", "grammar"), ("vllm", "structured_outputs"), ("sglang", "ebnf"), ("none", "grammar")],
)
def test_the_probe_puts_the_grammar_where_the_server_reads_it(kind: str, field: str) -> None:
    with _server(kind) as fake:
        model = OpenAIChat("m", base_url=fake.url, api_key="x", grammar=True)
        result = Agent(model, tools=[add], limits=Limits(steps=2)).run("q")
        assert result.answer == "42"
        (post,) = fake.posts()
        assert _fields(post.body) == [field]
        grammar = post.body[field]["grammar"] if field == "structured_outputs" else post.body[field]
        assert '"ACTION: "' in grammar and '"FINAL: "' in grammar
        assert model.server == ("llama.cpp" if kind == "none" else kind)


def test_ollama_found_by_the_probe_gets_no_grammar_field() -> None:
    with _server("ollama") as fake:
        model = OpenAIChat("m", base_url=fake.url, api_key="x", grammar=True)
        assert Agent(model, tools=[add], limits=Limits(steps=2)).run("q").answer == "42"
        assert _fields(fake.posts()[0].body) == []
        assert model.accepts_grammar is False


@pytest.mark.parametrize("server", ["ollama", "openai"])
def test_a_grammar_for_a_server_without_a_grammar_field_is_refused_when_made(server: str) -> None:
    with pytest.raises(ValueError, match=f"{server} takes no grammar"):
        OpenAIChat("m", base_url="http://127.0.0.1:9/v1", api_key="x", grammar=True, server=server)  # type: ignore[arg-type]


def test_a_named_server_is_not_probed() -> None:
    with _server("none") as fake:
        model = OpenAIChat("m", base_url=fake.url, api_key="x", grammar=True, server="sglang")
        Agent(model, tools=[add], limits=Limits(steps=2)).run("q")
        probes = {s.path for s in fake.seen if s.method == "GET"}
        # /v1/models and /props are the context-window look-up; the identity paths are not asked
        assert not probes & {"/server_info", "/get_server_info", "/version", "/api/version", "/openapi.json"}
        assert _fields(fake.posts()[0].body) == ["ebnf"]


def test_the_forced_final_call_under_the_grammar_admits_only_final() -> None:
    with _server("llama.cpp", "THOUGHT: x\nACTION: add[2, 3]") as fake:
        model = OpenAIChat("m", base_url=fake.url, api_key="x", grammar=True)
        Agent(model, tools=[add], limits=Limits(steps=2)).run("q")
        *acting, forced = [p.body["grammar"] for p in fake.posts()]
        assert all('"ACTION: "' in g for g in acting)
        assert '"FINAL: "' in forced and "ACTION" not in forced
        # typed inputs: add takes two ints, so the action's input is int rules, not free text
        assert 'int ::= "-"? [0-9]' in acting[0]


def test_a_server_that_ignores_the_grammar_is_said_once(caplog: pytest.LogCaptureFixture) -> None:
    with _server("llama.cpp", "Sure, the answer is 42.\nFINAL: 42") as fake:
        model = OpenAIChat("m", base_url=fake.url, api_key="x", grammar=True)
        agent = Agent(model, tools=[add], limits=Limits(steps=2))
        with caplog.at_level(logging.WARNING):
            for _ in range(3):
                assert agent.run("q").answer == "42"
        said = [r for r in caplog.records if "does not apply the grammar" in r.getMessage()]
        assert len(said) == 1


def _cli(url: str, *flags: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "OPENAI_API_KEY": "x"}
    command = [
        sys.executable,
        "-m",
        "react_text.cli",
        "run",
        "--base-url",
        url,
        "--model",
        "m",
        *flags,
        "What is 2 + 2?",
    ]
    return subprocess.run(command, capture_output=True, text=True, timeout=60, env=env)


def test_cli_server_ollama_with_grammar_is_one_line_and_exit_2() -> None:
    proc = _cli("http://127.0.0.1:9/v1", "--server", "ollama", "--grammar")
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        "react-text: ollama takes no grammar: leave --grammar off (stop sequences and the guard still apply)"
    ]


def test_grammar_false_sends_no_grammar_to_a_llama_cpp_server() -> None:
    with _server("llama.cpp") as fake:
        model = OpenAIChat("m", base_url=fake.url, api_key="x", grammar=False)
        Agent(model, tools=[add], limits=Limits(steps=2)).run("q")
        assert _fields(fake.posts()[0].body) == []


@pytest.mark.parametrize("kind", ["llama.cpp", "vllm"])
def test_cli_without_grammar_sends_none_to_a_server_as_the_help_says(kind: str) -> None:
    with _server(kind) as fake:
        proc = _cli(fake.url)
        assert proc.returncode == 0, proc.stderr
        assert _fields(fake.posts()[0].body) == []


def test_cli_no_grammar_sends_none() -> None:
    with _server("llama.cpp") as fake:
        proc = _cli(fake.url, "--no-grammar")
        assert proc.returncode == 0, proc.stderr
        assert _fields(fake.posts()[0].body) == []


def test_an_old_vllm_is_not_sent_a_field_it_does_not_read() -> None:
    with _server("vllm", vllm_version="0.9.2") as fake:
        model = OpenAIChat("m", base_url=fake.url, api_key="x", grammar=True)
        Agent(model, tools=[add], limits=Limits(steps=2)).run("q")
        assert "structured_outputs" not in fake.posts()[0].body


def test_think_adds_an_optional_think_block_and_thinking_is_not_taken_for_an_ignored_grammar(
    caplog: pytest.LogCaptureFixture,
) -> None:
    reply = "<think>ACTION: add[9, 9]? no.</think>\nTHOUGHT: x\nFINAL: 42"
    with _server("llama.cpp", reply) as fake:
        model = OpenAIChat("m", base_url=fake.url, api_key="x", grammar=True, think=True)
        with caplog.at_level(logging.WARNING):
            result = Agent(model, tools=[add], limits=Limits(steps=2)).run("q")
        grammar = fake.posts()[0].body["grammar"]
    assert result.answer == "42" and result.tool_calls == 0
    assert "ACTION: add[9, 9]" in result.steps[0].reasoning
    assert grammar.startswith("root ::= think?")
    assert not [r for r in caplog.records if "does not apply the grammar" in r.getMessage()]
