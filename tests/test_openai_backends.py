"""OpenAIChat and OpenAICompletion through the real openai client.

A mock transport plays the answers a real server cannot give on demand (400 naming `stop`, 429,
500, a stream to cut); a closed port on 127.0.0.1 plays a server that is down. The real llama.cpp
server tests are in test_server.py.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Callable
from typing import Any

import openai
import pytest

from react_text import Agent, Message, ModelError, OpenAIChat, OpenAICompletion, Request

try:  # openai 3.x is built on httpx2, earlier releases on httpx
    import httpx2 as httpx
except ImportError:  # pragma: no cover
    import httpx  # type: ignore[no-redef]

SECRET = "sk-test-secret-key-0123456789"
STOP = ("OBSERVATION:",)


def chat_body(text: str, usage: tuple[int, int] = (10, 5)) -> dict[str, Any]:
    return {
        "id": "x",
        "object": "chat.completion",
        "created": 0,
        "model": "m",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": usage[0], "completion_tokens": usage[1], "total_tokens": sum(usage)},
    }


def client(handler: Callable[[Any], Any], retries: int = 2) -> openai.OpenAI:
    return openai.OpenAI(
        api_key=SECRET,
        base_url="http://test.invalid/v1",
        http_client=httpx.Client(transport=httpx.MockTransport(handler)),
        max_retries=retries,
    )


def chat_request(text: str = "hi") -> Request:
    return Request((Message("user", text),), STOP, 50)


def test_chat_sends_stop_and_reads_usage() -> None:
    sent: list[dict[str, Any]] = []

    def handler(request: Any) -> Any:
        sent.append(json.loads(request.content))
        return httpx.Response(200, json=chat_body("FINAL: 1", (12, 3)))

    reply = OpenAIChat("m", client=client(handler)).generate(chat_request())
    assert (reply.text, reply.usage.prompt_tokens, reply.usage.completion_tokens) == ("FINAL: 1", 12, 3)  # type: ignore[union-attr]
    assert sent[0]["stop"] == list(STOP)
    assert sent[0]["max_tokens"] == 50
    assert sent[0]["messages"] == [{"role": "user", "content": "hi"}]


def test_stop_rejected_is_retried_without_it_and_remembered() -> None:
    sent: list[dict[str, Any]] = []

    def handler(request: Any) -> Any:
        body = json.loads(request.content)
        sent.append(body)
        if "stop" in body:
            error = {
                "message": "Unsupported parameter: 'stop' is not supported with this model.",
                "param": "stop",
            }
            return httpx.Response(400, json={"error": {**error, "type": "invalid_request_error"}})
        return httpx.Response(200, json=chat_body("FINAL: 1"))

    backend = OpenAIChat("o3", client=client(handler))
    assert backend.generate(chat_request()).text == "FINAL: 1"
    assert backend.generate(chat_request()).text == "FINAL: 1"
    assert ["stop" in body for body in sent] == [True, False, False]


def test_other_400_is_a_model_error() -> None:
    def handler(request: Any) -> Any:
        return httpx.Response(400, json={"error": {"message": "bad temperature", "param": "temperature"}})

    with pytest.raises(ModelError, match="answered 400: bad temperature"):
        OpenAIChat("m", client=client(handler)).generate(chat_request())


def test_429_is_retried_honouring_retry_after() -> None:
    calls = 0

    def handler(request: Any) -> Any:
        nonlocal calls
        calls += 1
        if calls == 1:
            return httpx.Response(429, headers={"retry-after": "0"}, json={"error": {"message": "slow down"}})
        return httpx.Response(200, json=chat_body("FINAL: 1"))

    assert OpenAIChat("m", client=client(handler)).generate(chat_request()).text == "FINAL: 1"
    assert calls == 2


def test_persistent_500_ends_the_run_cleanly_without_the_key() -> None:
    def handler(request: Any) -> Any:
        return httpx.Response(500, headers={"retry-after": "0"}, json={"error": {"message": "boom"}})

    backend = OpenAIChat("m", client=client(handler, retries=1))
    result = Agent(backend, tools=[]).run("task")
    assert result.stop_reason == "model_error"
    assert "answered 500: boom" in (result.error or "")
    assert SECRET not in (result.error or "") and SECRET not in repr(backend)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_connection_refused_names_the_url() -> None:
    url = f"http://127.0.0.1:{free_port()}/v1"
    backend = OpenAIChat("m", base_url=url, api_key=SECRET, max_retries=0, timeout=5)
    with pytest.raises(ModelError, match=r"could not reach http://127\.0\.0\.1:\d+/v1"):
        backend.generate(chat_request())


def sse(chunks: list[dict[str, Any]]) -> bytes:
    return b"".join(f"data: {json.dumps(c)}\n\n".encode() for c in chunks) + b"data: [DONE]\n\n"


def test_stream_stops_reading_at_a_made_up_observation() -> None:
    pieces = ["THOUGHT: x\nACTION: a[b]\nOBS", "ERVATION: 5\n", "FINAL: 5", " more", " and more"]
    chunks = [
        {
            "id": "x",
            "object": "chat.completion.chunk",
            "created": 0,
            "model": "m",
            "choices": [{"index": 0, "delta": {"content": p}, "finish_reason": None}],
        }
        for p in pieces
    ]

    def handler(request: Any) -> Any:
        assert json.loads(request.content)["stream"] is True
        return httpx.Response(200, content=sse(chunks), headers={"content-type": "text/event-stream"})

    reply = OpenAIChat("m", client=client(handler), stream=True).generate(chat_request())
    assert reply.text == "THOUGHT: x\nACTION: a[b]\nOBSERVATION: 5\n"
    assert reply.finish_reason == "stop"


def test_completion_endpoint_sends_the_transcript() -> None:
    sent: list[dict[str, Any]] = []

    def handler(request: Any) -> Any:
        sent.append(json.loads(request.content))
        assert request.url.path.endswith("/completions") and "chat" not in request.url.path
        return httpx.Response(
            200,
            json={
                "id": "x",
                "object": "text_completion",
                "created": 0,
                "model": "m",
                "choices": [{"index": 0, "text": " ok\nFINAL: 2", "finish_reason": "stop", "logprobs": None}],
                "usage": {"prompt_tokens": 20, "completion_tokens": 4, "total_tokens": 24},
            },
        )

    reply = OpenAICompletion("m", client=client(handler)).generate(Request("QUESTION: q\nTHOUGHT:", STOP, 30))
    assert reply.text == " ok\nFINAL: 2"
    assert sent[0]["prompt"] == "QUESTION: q\nTHOUGHT:"
    assert sent[0]["stop"] == list(STOP)


def test_grammar_is_sent_only_to_servers_that_take_one() -> None:
    sent: list[dict[str, Any]] = []

    def handler(request: Any) -> Any:
        sent.append(json.loads(request.content))
        return httpx.Response(200, json=chat_body("FINAL: 1"))

    request = Request((Message("user", "q"),), STOP, 10, grammar="root ::= x")
    OpenAIChat("m", client=client(handler)).generate(request)
    OpenAIChat("m", client=client(handler), grammar=True).generate(request)
    assert "grammar" not in sent[0]
    assert sent[1]["grammar"] == "root ::= x"
