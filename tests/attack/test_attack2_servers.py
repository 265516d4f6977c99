"""attack2: what reaches each server, and replies that must not hang the engine.

Written from docs/how-to/servers.md, docs/troubleshooting.md and `react-text run --help` only.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from _attack2_fake import FakeServer, Payload, chat_answer, chunk, drive, scripted_handler, sse

from react_text import Agent, Limits, OpenAIChat
from react_text.tools.toolbox import calculator

DRIVERS = ["sync", "async"]
GRAMMAR_FIELD = {"llama.cpp": "grammar", "vllm": "structured_outputs", "sglang": "ebnf"}


def _grammar_of(body: dict[str, Any], server: str) -> Any:
    value = body.get(GRAMMAR_FIELD[server])
    return value["grammar"] if server == "vllm" and isinstance(value, dict) else value


# servers.md: "`--grammar` (`OpenAIChat(..., grammar=True)` ...) turns it on, and it goes in the
# field of the server named with `--server`" -- llama.cpp "grammar", vLLM
# "structured_outputs": {"grammar": ...}, SGLang "ebnf"; "the forced final call at a limit admits
# only `FINAL:`".
@pytest.mark.parametrize("server", ["llama.cpp", "vllm", "sglang"])
def test_each_server_gets_the_grammar_in_its_own_field_and_the_forced_call_a_final_only_one(server: str) -> None:
    with FakeServer(scripted_handler(["ACTION: calculator[1 + 1]", "FINAL: 2"])) as fake:
        model = OpenAIChat("m", base_url=fake.url, api_key="x", server=server, grammar=True, max_retries=0)
        result = Agent(model, tools=[calculator], limits=Limits(steps=1)).run("What is 1 + 1?")
    assert result.forced and result.answer == "2"
    first, forced = fake.bodies
    others = set(GRAMMAR_FIELD.values()) - {GRAMMAR_FIELD[server]}
    assert all(isinstance(_grammar_of(b, server), str) and _grammar_of(b, server) for b in fake.bodies)
    assert not others & (set(first) | set(forced))
    assert _grammar_of(first, server) != _grammar_of(forced, server)
    assert "ACTION" in _grammar_of(first, server)


# servers.md: "a server without a grammar field is refused with a clear error".
@pytest.mark.parametrize("server", ["ollama", "openai"])
def test_a_server_without_a_grammar_field_is_refused_when_made(server: str) -> None:
    with pytest.raises(ValueError, match=f"{server} takes no grammar"):
        OpenAIChat("m", base_url="http://127.0.0.1:9/v1", api_key="x", server=server, grammar=True)


def _cli_bodies(*flags: str) -> list[dict[str, Any]]:
    with FakeServer(scripted_handler(["FINAL: 2"])) as fake:
        env = dict(os.environ, OPENAI_API_KEY="x")
        done = subprocess.run(
            [sys.executable, "-m", "react_text.cli", "run", "--base-url", fake.url, "--model", "m", *flags, "1 + 1?"],
            capture_output=True,
            text=True,
            timeout=120,
            env=env,
        )
        assert done.returncode == 0, done.stderr
        return fake.bodies


# `react-text run --help`: "--grammar, --no-grammar  constrain decoding to the protocol (default:
# on for the in-process model, off on a server ...)"; servers.md: "Naming the server ... never
# turns the grammar on by itself". Naming the server says where a grammar goes, not to send one.
def test_naming_the_server_does_not_turn_the_grammar_on() -> None:
    bodies = _cli_bodies("--server", "vllm")
    assert "structured_outputs" not in bodies[0]


def test_no_grammar_with_a_named_server_sends_none() -> None:
    # the same help line: --no-grammar turns it off, whatever the server.
    bodies = _cli_bodies("--server", "vllm", "--no-grammar")
    assert not set(GRAMMAR_FIELD.values()) & set(bodies[0])


def test_grammar_with_a_named_server_goes_in_its_field() -> None:
    bodies = _cli_bodies("--server", "sglang", "--grammar")
    assert isinstance(bodies[0].get("ebnf"), str) and "grammar" not in bodies[0]


# --- replies that must not hang ------------------------------------------------------------


def _completions_only(payload: Any) -> Any:
    def handle(path: str, body: dict[str, Any]) -> tuple[int, dict[str, str], Payload]:
        if path.endswith("/completions"):
            return 200, {}, payload() if callable(payload) else payload
        return 404, {}, {"error": {"message": "not found"}}

    return handle


def _run_within(agent: Agent, driver: str, seconds: float) -> tuple[bool, Any]:
    box: list[Any] = []
    worker = threading.Thread(target=lambda: box.append(drive(agent, "What is 1 + 1?", driver)), daemon=True)
    worker.start()
    worker.join(seconds)
    return (not worker.is_alive()), (box[0] if box else None)


# README: "a model or network failure ends the run with stop_reason "model_error", never an
# exception"; the brief (and troubleshooting's "url did not answer in time (why)"): no reply,
# however strange, may hang the engine. OpenAIChat(timeout=2) should bound a call that never ends.
@pytest.mark.parametrize("driver", DRIVERS)
@pytest.mark.parametrize("shape", ["keep-alive comments", "content that never ends"])
def test_a_stream_that_never_ends_does_not_hang_the_run(shape: str, driver: str) -> None:
    stop = threading.Event()

    def forever() -> Iterator[bytes]:
        yield sse(chunk("THOUGHT: let me think"))
        while not stop.is_set():
            time.sleep(0.05)
            yield b": keep-alive\n\n" if shape == "keep-alive comments" else sse(chunk(" and think"))

    with FakeServer(_completions_only(forever)) as fake:
        model = OpenAIChat("m", base_url=fake.url, api_key="x", stream=True, timeout=2, max_retries=0)
        agent = Agent(model, limits=Limits(steps=2, reply_tokens=64))
        try:
            ended, result = _run_within(agent, driver, 10)
        finally:
            stop.set()
    assert ended, "the run was still waiting on the stream after 10 s (timeout=2)"
    assert result.stop_reason in {"model_error", "format_errors", "max_steps", "final"}


STRANGE: dict[str, tuple[bool, Any]] = {
    "content null": (
        False,
        {"choices": [{"index": 0, "message": {"role": "assistant", "content": None}, "finish_reason": "stop"}]},
    ),
    "tool_calls, no content": (
        False,
        {
            "choices": [
                {
                    "index": 0,
                    "message": {
                        "role": "assistant",
                        "content": None,
                        "tool_calls": [
                            {"id": "1", "type": "function", "function": {"name": "calculator", "arguments": "{}"}}
                        ],
                    },
                    "finish_reason": "tool_calls",
                }
            ]
        },
    ),
    "choices an object": (False, {"choices": {"a": 1}}),
    "a JSON array": (False, b"[1, 2, 3]"),
    "an HTML page": (False, b"<html><body>proxy error</body></html>"),
    "empty and cut": (False, chat_answer("", finish_reason="length")),
    "absurd usage": (
        False,
        chat_answer("FINAL: 2", usage={"prompt_tokens": -5, "completion_tokens": 10**12, "total_tokens": 3}),
    ),
    "stream without [DONE]": (True, lambda: iter([sse(chunk("FINAL: 2"))])),
    "stream of garbage": (True, lambda: iter([b"data: {not json\n\n", b"data: [DONE]\n\n"])),
    "stream error event": (True, lambda: iter([sse({"error": {"message": "overloaded"}}), b"data: [DONE]\n\n"])),
}


# troubleshooting.md "Why a run stopped": a 200 answer that is not an OpenAI answer is
# `bad answer from url: ...`, a model_error; README: "never an exception"; and no hang.
@pytest.mark.parametrize("driver", DRIVERS)
@pytest.mark.parametrize("name", sorted(STRANGE))
def test_a_strange_answer_ends_the_run_cleanly_and_soon(name: str, driver: str) -> None:
    stream, payload = STRANGE[name]
    with FakeServer(_completions_only(payload)) as fake:
        model = OpenAIChat("m", base_url=fake.url, api_key="x", stream=stream, timeout=3, max_retries=0)
        ended, result = _run_within(Agent(model, limits=Limits(steps=3, tokens=20000)), driver, 30)
    assert ended
    assert result.stop_reason in {"model_error", "format_errors", "final", "max_tokens"}
    if result.stop_reason == "model_error":
        assert result.error and fake.url.split("/v1")[0] in result.error
    assert "Traceback" not in json.dumps(str(result.error))
