"""The lean request path (react_text.backends.http1): async, plain requests to an http:// server.

What it promises: the same replies and request bodies as the `openai` client's path; one
connection reused across calls in a loop, closed with the loop; Content-Length, chunked and
read-until-close answers; an idle connection the server closed is replaced; and every failure
ends as the `openai` client's own (its retries, waits, errors), with the client's number of tries.
The server here is a real socket server that answers each POST with the next scripted bytes.
"""

from __future__ import annotations

import asyncio
import gzip
import json
import socket
import threading
import time
import zlib
from typing import Any

import pytest

from react_text import Message, ModelError, OpenAIChat, OpenAICompletion, Request
from react_text.core.errors import ContextLengthError
from tests.fake_openai import FakeServer

SECRET = "sk-test-secret-key-0123456789"
STOP = ("OBSERVATION:",)
NEVER = b""  # a scripted answer: read the request, then say nothing


def chat_json(text: str) -> dict[str, Any]:
    return {
        "id": "x",
        "object": "chat.completion",
        "created": 0,
        "model": "m",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }


def answer(status: int, payload: object, *headers: str, close: bool = False, chunked: bool = False) -> bytes:
    data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    lines = [f"HTTP/1.1 {status} X", "content-type: application/json", *headers]
    if close:
        lines.append("connection: close")
    if chunked:
        lines.append("transfer-encoding: chunked")
        half = len(data) // 2
        body = b"%x;ext=1\r\n%s\r\n%x\r\n%s\r\n0\r\nx-trailer: 1\r\n\r\n" % (
            half,
            data[:half],
            len(data) - half,
            data[half:],
        )
    else:
        lines.append(f"content-length: {len(data)}")
        body = data
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


class Scripted:
    """An HTTP/1.1 server on 127.0.0.1: each POST gets the next scripted answer. `hang_up_after`
    closes the connection after that many answers on it, without saying so (as servers with a
    keep-alive timeout do)."""

    def __init__(self, *answers: bytes, hang_up_after: int | None = None) -> None:
        self.answers = list(answers)
        self.hang_up_after = hang_up_after
        self.bodies: list[dict[str, Any]] = []
        self.connections = 0
        self.closed = 0  # connections the client closed
        self._writers: list[asyncio.StreamWriter] = []
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> Scripted:
        self._thread.start()
        self._ready.wait(5)
        return self

    def __exit__(self, *exc: object) -> None:
        asyncio.run_coroutine_threadsafe(self._shutdown(), self._loop).result(5)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(5)
        self._loop.close()

    async def _shutdown(self) -> None:
        self._server.close()
        for writer in self._writers:
            writer.close()
        await asyncio.sleep(0.05)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._server = self._loop.run_until_complete(asyncio.start_server(self._handle, "127.0.0.1", 0))
        self.port = self._server.sockets[0].getsockname()[1]
        self._ready.set()
        self._loop.run_forever()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        self._writers.append(writer)
        answered = 0
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = next(
                    int(line.split(b":")[1])
                    for line in head.split(b"\r\n")
                    if line.lower().startswith(b"content-length")
                )
                self.bodies.append(json.loads(await reader.readexactly(length)))
                reply = self.answers.pop(0)
                if reply == NEVER:
                    await asyncio.sleep(30)
                writer.write(reply)
                await writer.drain()
                answered += 1
                delimited = b"content-length" in reply or b"chunked" in reply
                if b"connection: close" in reply or not delimited or answered == self.hang_up_after:
                    break
        except asyncio.IncompleteReadError:
            self.closed += 1
        writer.close()


def chat(text: str = "hi") -> Request:
    return Request((Message("user", text),), STOP, 50)


def lean(url: str, **options: Any) -> OpenAIChat:
    return OpenAIChat("m", base_url=url, api_key=SECRET, **{"timeout": 5.0, **options})


@pytest.mark.parametrize("cls", [OpenAIChat, OpenAICompletion])
def test_the_same_reply_and_body_as_the_openai_client(cls: type[OpenAIChat | OpenAICompletion]) -> None:
    """FakeServer speaks HTTP/1.0 and closes each connection: read until its Content-Length."""
    prompt: Any = (
        (Message("user", "QUESTION: What is 2 + 3?"),) if cls is OpenAIChat else "QUESTION: What is 2 + 3?\nTHOUGHT:"
    )
    request = Request(prompt, STOP, 30, grammar="root ::= x")
    with FakeServer() as server:
        model = cls("fake", base_url=server.url, api_key=SECRET, grammar=True, extra_body={"top_k": 1})
        through_openai = model.generate(request)  # the sync path is the openai client's
        through_lean = asyncio.run(model.agenerate(request))
    assert through_lean == through_openai
    assert "calculator[2 + 3]" in through_lean.text
    assert server.bodies[0] == server.bodies[1]
    assert server.bodies[1]["grammar"] == "root ::= x" and server.bodies[1]["top_k"] == 1


def test_one_connection_serves_a_loops_calls_and_closes_with_it() -> None:
    with Scripted(*[answer(200, chat_json(f"FINAL: {i}")) for i in range(5)]) as server:
        model = lean(server.url)

        async def five() -> list[str]:
            return [(await model.agenerate(chat())).text for _ in range(5)]

        assert asyncio.run(five()) == [f"FINAL: {i}" for i in range(5)]
        time.sleep(0.2)
        assert (server.connections, server.closed) == (1, 1)


def test_a_chunked_answer_and_one_read_until_close_are_read_whole() -> None:
    until_close = (
        b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n\r\n" + json.dumps(chat_json("FINAL: 2")).encode()
    )
    with Scripted(answer(200, chat_json("FINAL: 1"), chunked=True), until_close) as server:
        model = lean(server.url)

        async def two() -> list[str]:
            return [(await model.agenerate(chat())).text for _ in range(2)]

        assert asyncio.run(two()) == ["FINAL: 1", "FINAL: 2"]
        assert server.connections == 1


def test_an_idle_connection_the_server_closed_is_replaced() -> None:
    with Scripted(*[answer(200, chat_json(f"FINAL: {i}")) for i in range(3)], hang_up_after=1) as server:
        model = lean(server.url, max_retries=0)

        async def spaced() -> list[str]:
            replies = []
            for _ in range(3):
                replies.append((await model.agenerate(chat())).text)
                await asyncio.sleep(0.05)  # the server hangs up meanwhile
            return replies

        assert asyncio.run(spaced()) == ["FINAL: 0", "FINAL: 1", "FINAL: 2"]
        assert (server.connections, len(server.bodies)) == (3, 3)


def test_many_calls_at_once_each_get_their_own_reply() -> None:
    with Scripted(*[answer(200, chat_json("FINAL: ok")) for _ in range(50)]) as server:
        model = lean(server.url)

        async def many() -> list[str]:
            return [r.text for r in await asyncio.gather(*(model.agenerate(chat(str(i))) for i in range(50)))]

        assert asyncio.run(many()) == ["FINAL: ok"] * 50
        assert sorted(b["messages"][0]["content"] for b in server.bodies) == sorted(str(i) for i in range(50))


def test_a_429_waits_as_the_server_says_then_reads_the_reply() -> None:
    with Scripted(
        answer(429, {"error": {"message": "slow down"}}, "retry-after: 0.3"), answer(200, chat_json("FINAL: 3"))
    ) as server:
        started = time.monotonic()
        reply = asyncio.run(lean(server.url, max_retries=2).agenerate(chat()))
        assert reply.text == "FINAL: 3" and len(server.bodies) == 2
        assert time.monotonic() - started >= 0.3


def test_a_persistent_500_takes_the_clients_number_of_tries_and_hides_the_key() -> None:
    boom = answer(500, {"error": {"message": "boom"}}, "retry-after: 0")
    with Scripted(*[boom] * 5) as server:
        with pytest.raises(ModelError, match="answered 500: boom") as caught:
            asyncio.run(lean(server.url, max_retries=2).agenerate(chat()))
        assert len(server.bodies) == 3  # one try and the client's two retries, as without the lean path
    assert SECRET not in str(caught.value)


def test_a_context_length_error_is_one_with_the_servers_words() -> None:
    said = {"error": {"message": "This model's maximum context length is 256 tokens. However, you requested 300"}}
    with Scripted(*[answer(400, said)] * 2) as server:
        model = lean(server.url, max_retries=2)
        with pytest.raises(ContextLengthError, match="maximum context length is 256 tokens") as caught:
            asyncio.run(model.agenerate(chat()))
        assert caught.value.window == 256 and model.context_window == 256
        assert len(server.bodies) == 1  # a 4xx is not retried: the client's own error, from the one answer


def test_a_rejected_stop_is_dropped_and_remembered() -> None:
    rejected = answer(400, {"error": {"message": "Unsupported parameter: 'stop'", "param": "stop"}})
    with Scripted(rejected, answer(200, chat_json("FINAL: 1")), answer(200, chat_json("FINAL: 2"))) as server:
        model = lean(server.url)
        assert asyncio.run(model.agenerate(chat())).text == "FINAL: 1"
        assert asyncio.run(model.agenerate(chat())).text == "FINAL: 2"
    assert ["stop" in body for body in server.bodies] == [True, False, False]  # the 400 heard once, not asked again


def test_no_answer_in_time_is_a_model_error_after_one_timeout() -> None:
    with Scripted(NEVER, NEVER) as server:
        started = time.monotonic()
        with pytest.raises(ModelError, match="did not answer in time"):
            asyncio.run(lean(server.url, max_retries=0, timeout=0.3).agenerate(chat()))
        assert time.monotonic() - started < 2 and len(server.bodies) == 1


def test_a_refused_connection_names_the_url() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{s.getsockname()[1]}/v1"
    with pytest.raises(ModelError, match=rf"could not reach {url}"):
        asyncio.run(lean(url, max_retries=0).agenerate(chat()))


def test_an_answer_it_does_not_read_is_read_by_the_openai_client_and_the_server_remembered() -> None:
    odd = answer(200, json.dumps(chat_json("FINAL: 9")).encode(), "content-encoding: x-unheard-of")
    with Scripted(odd, odd, odd) as server:
        model = lean(server.url)

        async def twice() -> list[str]:
            return [(await model.agenerate(chat())).text for _ in range(2)]

        assert asyncio.run(twice()) == ["FINAL: 9", "FINAL: 9"]
        assert len(server.bodies) == 3  # the first call learns the lean path cannot read it; the second goes straight


@pytest.mark.parametrize(
    "raw",
    [
        answer(200, gzip.compress(json.dumps(chat_json("FINAL: 9")).encode()), "content-encoding: gzip"),
        answer(200, zlib.compress(json.dumps(chat_json("FINAL: 9")).encode()), "content-encoding: deflate"),
        b"HTTP/1.1 100 Continue\r\n\r\n" + answer(200, json.dumps(chat_json("FINAL: 9")).encode()),
        answer(200, json.dumps(chat_json("FINAL: 9")).encode()).replace(b"\r\n", b"\n"),
    ],
    ids=["gzip", "deflate", "100-continue", "lf-only"],
)
def test_a_compressed_continued_or_lf_only_answer_is_read_on_the_lean_path_once(raw: bytes) -> None:
    with Scripted(raw, raw) as server:
        assert asyncio.run(lean(server.url).agenerate(chat())).text == "FINAL: 9"
        assert len(server.bodies) == 1


def test_an_html_page_is_a_model_error_that_shows_it() -> None:
    page = b"HTTP/1.1 200 OK\r\ncontent-type: text/html\r\ncontent-length: 15\r\n\r\n<html>hi</html>"
    with Scripted(page) as server, pytest.raises(ModelError, match="no choices: '<html>hi</html>'"):
        asyncio.run(lean(server.url).agenerate(chat()))


def test_runs_starting_together_ask_the_window_once() -> None:
    with FakeServer(window=4096) as server:
        model = OpenAIChat("fake", base_url=server.url, api_key=SECRET)
        asked: list[str] = []
        get = model._transport.aget

        async def counted(url: str) -> object:
            asked.append(url)
            return await get(url)

        model._transport.aget = counted  # type: ignore[method-assign]

        async def together() -> list[int | None]:
            return list(await asyncio.gather(*(model.acontext_window() for _ in range(20))))

        assert asyncio.run(together()) == [4096] * 20
        assert asked == [f"{server.url}/models"]
