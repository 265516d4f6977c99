"""attack3: the async (and sync) HTTP path against a fake OpenAI-compatible server on 127.0.0.1.

Written from the docs and help() alone: openai_api's module doc ("the tries add up to the client's
own"), servers.md (`timeout=`, `max_retries=`), guarantees.md (model failures end as model_error).
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from collections import Counter

import pytest
from _attack3_fake import Answer, Fake, Seen, chat_answer

from react_text import Agent, Limits, OpenAIChat
from react_text.tools.toolbox import calculator

TEXT = "THOUGHT: easy.\nFINAL: 42"


def _not_found(seen: Seen) -> Answer | None:
    return Answer(404, {"error": "not found"}) if seen.method == "GET" else None


def _agent(url: str, **kw: object) -> Agent:
    model = OpenAIChat("m", base_url=url, api_key="sk-test", **kw)  # type: ignore[arg-type]
    return Agent(model, tools=[calculator], limits=Limits(steps=3))


async def _many(agent: Agent, n: int) -> list:
    return await asyncio.gather(*(agent.arun(f"question {i}") for i in range(n)))


@pytest.mark.parametrize("shape", ["content-length", "chunked", "close-after", "until-close"])
def test_two_hundred_concurrent_runs_all_answer_whatever_the_framing(shape: str) -> None:
    def behave(seen: Seen, n: int) -> Answer:
        return _not_found(seen) or Answer(
            body=chat_answer(TEXT),
            chunked=shape == "chunked",
            close=shape == "close-after",
            no_length=shape == "until-close",
        )

    with Fake(behave) as fake:
        results = asyncio.run(_many(_agent(fake.url), 200))
        assert Counter((r.stop_reason, r.answer) for r in results) == {("final", "42"): 200}
        assert len(fake.posts()) == 200


def test_a_server_that_silently_closes_each_kept_alive_connection_loses_no_step() -> None:
    # HTTP/1.1 keep-alive answer (no Connection: close), then the socket is closed under the client.
    def behave(seen: Seen, n: int) -> Answer:
        if (answer := _not_found(seen)) is not None:
            return answer
        text = "THOUGHT: t\nFINAL: 5" if len(seen.body["messages"]) > 2 else "THOUGHT: t\nACTION: calculator[2 + 3]"
        data = json.dumps(chat_answer(text)).encode()
        head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(data)
        return Answer(raw=head + data)

    with Fake(behave) as fake:
        results = asyncio.run(_many(_agent(fake.url), 30))
        assert Counter((r.stop_reason, r.answer) for r in results) == {("final", "5"): 30}
        assert len(fake.posts()) == 60


@pytest.mark.parametrize("driver", ["sync", "async"])
def test_persistent_500_is_tried_one_plus_max_retries_times(driver: str) -> None:
    def behave(seen: Seen, n: int) -> Answer:
        return _not_found(seen) or Answer(500, {"error": {"message": "boom"}}, headers={"Retry-After": "0"})

    with Fake(behave) as fake:
        agent = _agent(fake.url, max_retries=2)
        result = agent.run("q") if driver == "sync" else asyncio.run(agent.arun("q"))
        assert result.stop_reason == "model_error"
        assert "answered 500: boom" in (result.error or "")
        assert "sk-test" not in (result.error or "")
        assert len(fake.posts()) == 3


def test_async_max_retries_zero_sends_the_request_once() -> None:
    def behave(seen: Seen, n: int) -> Answer:
        return _not_found(seen) or Answer(500, {"error": {"message": "boom"}})

    with Fake(behave) as fake:
        result = asyncio.run(_agent(fake.url, max_retries=0).arun("q"))
        assert result.stop_reason == "model_error"
        assert len(fake.posts()) == 1  # the sync driver sends 1


@pytest.mark.parametrize("status", [400, 404])
def test_async_an_answer_that_is_not_retried_is_sent_once(status: int) -> None:
    def behave(seen: Seen, n: int) -> Answer:
        return _not_found(seen) or Answer(status, {"error": {"message": "no"}})

    with Fake(behave) as fake:
        result = asyncio.run(_agent(fake.url, max_retries=2).arun("q"))
        assert result.stop_reason == "model_error"
        assert len(fake.posts()) == 1  # the sync driver sends 1


@pytest.mark.parametrize("driver", ["sync", "async"])
@pytest.mark.parametrize(
    "raw",
    [
        b'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 500\r\n\r\n{"choices": [',
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n",
        b"HTTP/1.1 abc\r\n\r\n",
        b"\x00\x01\x02 hello\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nContent-Length: -5\r\n\r\n{}",
    ],
    ids=["cut-body", "bad-chunk", "bad-status", "garbage", "negative-length"],
)
def test_a_broken_answer_is_a_model_error_at_once(raw: bytes, driver: str) -> None:
    def behave(seen: Seen, n: int) -> Answer:
        return _not_found(seen) or Answer(raw=raw)

    with Fake(behave) as fake:
        agent = _agent(fake.url, max_retries=1, timeout=5.0)
        started = time.monotonic()
        result = agent.run("q") if driver == "sync" else asyncio.run(agent.arun("q"))
        assert result.stop_reason == "model_error"
        assert result.error
        assert time.monotonic() - started < 5


@pytest.mark.parametrize("driver", ["sync", "async"])
def test_a_server_that_never_answers_ends_the_run_at_the_timeout(driver: str) -> None:
    def behave(seen: Seen, n: int) -> Answer:
        return _not_found(seen) or Answer(stall=6, body=chat_answer(TEXT))

    with Fake(behave) as fake:
        agent = _agent(fake.url, max_retries=0, timeout=1.0)
        started = time.monotonic()
        result = agent.run("q") if driver == "sync" else asyncio.run(agent.arun("q"))
        assert result.stop_reason == "model_error"
        assert "did not answer in time" in (result.error or "")
        assert time.monotonic() - started < 4


class _Trickle:
    """Answers every POST one byte every 50 ms until stopped (headers at once)."""

    def __init__(self) -> None:
        self.stop = threading.Event()
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}/v1"
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        with conn:
            buf = b""
            while b"\r\n\r\n" not in buf:
                got = conn.recv(65536)
                if not got:
                    return
                buf += got
            if buf.startswith(b"GET"):
                conn.sendall(b"HTTP/1.1 404 Not Found\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}")
                return
            data = json.dumps(chat_answer(TEXT)).encode()
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(data))
            for i in range(len(data)):
                if self.stop.wait(0.05):
                    return
                conn.sendall(data[i : i + 1])

    def close(self) -> None:
        self.stop.set()
        self.sock.close()


def test_async_a_trickling_answer_ends_at_the_timeout() -> None:
    server = _Trickle()
    try:
        agent = _agent(server.url, max_retries=0, timeout=1.0)
        started = time.monotonic()
        result = asyncio.run(agent.arun("q"))
        assert result.stop_reason == "model_error"
        assert time.monotonic() - started < 4
    finally:
        server.close()


def test_sync_a_trickling_answer_ends_at_the_timeout() -> None:
    server = _Trickle()
    done: list[object] = []
    agent = _agent(server.url, max_retries=0, timeout=1.0)
    worker = threading.Thread(target=lambda: done.append(agent.run("q")), daemon=True)
    try:
        worker.start()
        worker.join(4)
        assert done, "run() still waiting 4 s after a 1 s timeout"
    finally:
        server.close()
        worker.join(10)


class _KeepAliveStream:
    """Answers every POST with an event stream that sends `piece` every 0.2 s, never any text."""

    def __init__(self, piece: bytes) -> None:
        self.piece = piece
        self.stop = threading.Event()
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}/v1"
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        with conn:
            buf = b""
            while b"\r\n\r\n" not in buf:
                got = conn.recv(65536)
                if not got:
                    return
                buf += got
            if buf.startswith(b"GET"):
                conn.sendall(b"HTTP/1.1 404 Not Found\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}")
                return
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n")
            try:
                while not self.stop.wait(0.2):
                    conn.sendall(self.piece)
            except OSError:
                return

    def close(self) -> None:
        self.stop.set()
        self.sock.close()


@pytest.mark.parametrize("driver", ["sync", "async"])
@pytest.mark.parametrize(
    "piece",
    [b": keep-alive\n\n", b'data: {"choices":[{"index":0,"delta":{"content":""},"finish_reason":null}]}\n\n'],
    ids=["comments", "empty-deltas"],
)
def test_a_stream_that_sends_bytes_but_no_text_ends_at_the_timeout(piece: bytes, driver: str) -> None:
    server = _KeepAliveStream(piece)
    try:
        agent = _agent(server.url, stream=True, max_retries=0, timeout=1.0)
        started = time.monotonic()
        result = agent.run("q") if driver == "sync" else asyncio.run(agent.arun("q"))
        assert result.stop_reason == "model_error"
        assert "sent no text for 1 second" in (result.error or "")
        assert time.monotonic() - started < 4
    finally:
        server.close()


def test_async_a_compressed_answer_is_not_paid_for_twice_on_every_call() -> None:
    import gzip

    def behave(seen: Seen, n: int) -> Answer:
        if (answer := _not_found(seen)) is not None:
            return answer
        return Answer(body=gzip.compress(json.dumps(chat_answer(TEXT)).encode()), headers={"Content-Encoding": "gzip"})

    with Fake(behave) as fake:
        results = asyncio.run(_many(_agent(fake.url), 10))
        assert Counter(r.answer for r in results) == {"42": 10}
        assert len(fake.posts()) <= 11  # at most one call learns that the lean path cannot read it
