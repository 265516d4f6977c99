"""An answer cut short: the server answered, then closed the connection before the body's end.

What it promises: the run ends "model_error" with one line that says the answer from the URL was
cut short (how much of it came, when the answer said its length), not that the server could not
be reached; and a cut answer is retried as a dropped connection is, within `max_retries`, so a
cut that does not happen again costs one more try and nothing else. Under both drivers, on the
backend's own client (the async driver then takes the lean HTTP path) and on clients given to it.
The server is a raw socket on 127.0.0.1 that writes a status line, headers and part of the body,
then closes.
"""

from __future__ import annotations

import json
import socket
import threading
import typing
from typing import Literal

import openai
import pytest

from react_text import Agent, OpenAIChat
from tests.conftest import Drive

Framing = Literal["content-length", "chunked"]
Path = Literal["built", "given"]

REPLY = json.dumps(
    {
        "id": "x",
        "object": "chat.completion",
        "created": 0,
        "model": "m",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "FINAL: 42"}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }
).encode()
CAME = 20  # bytes of the body a cut answer sends before the server closes


class CuttingServer:
    """Answers each POST with the next of `cuts` (True: cut short, False: whole; after the last,
    whole), each a 200 framed as `framing`; a GET (the window look-up) gets a 404."""

    def __init__(self, *cuts: bool, framing: Framing = "content-length") -> None:
        self.cuts = list(cuts)
        self.framing = framing
        self.posts = 0
        self._socket = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self._socket.getsockname()[1]}/v1"
        self._thread = threading.Thread(target=self._serve, daemon=True)

    def __enter__(self) -> CuttingServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._socket.shutdown(socket.SHUT_RDWR)  # wakes the accept below (close alone does not)
        self._socket.close()
        self._thread.join(5)

    def _serve(self) -> None:
        while True:
            try:
                connection, _ = self._socket.accept()
            except OSError:  # closed by __exit__
                return
            with connection:
                self._answer(connection)

    def _answer(self, connection: socket.socket) -> None:
        data = b""
        while b"\r\n\r\n" not in data:
            more = connection.recv(65536)
            if not more:
                return
            data += more
        head, _, body = data.partition(b"\r\n\r\n")
        length = next(
            (int(x.split(b":")[1]) for x in head.split(b"\r\n") if x.lower().startswith(b"content-length")), 0
        )
        while len(body) < length:
            body += connection.recv(65536)
        if head.startswith(b"GET"):
            connection.sendall(b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
            return
        self.posts += 1
        cut = self.cuts.pop(0) if self.cuts else False
        sent = REPLY[:CAME] if cut else REPLY
        head = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nconnection: close\r\n"
        if self.framing == "chunked":  # a cut one never sends its last (zero-size) chunk
            connection.sendall(head + b"transfer-encoding: chunked\r\n\r\n%x\r\n%s\r\n" % (len(sent), sent))
            if not cut:
                connection.sendall(b"0\r\n\r\n")
        else:  # a cut one says the whole length, then sends part of it
            connection.sendall(head + b"content-length: %d\r\n\r\n%s" % (len(REPLY), sent))
        # and close, as said: a cut answer ends here, before its end


def backend(url: str, path: Path, retries: int) -> OpenAIChat:
    """The backend with its own clients ("built": the async driver takes the lean path), or with
    clients given ("given": the `openai` client's path under both drivers)."""
    if path == "built":
        return OpenAIChat("m", base_url=url, max_retries=retries, timeout=5.0)
    key = "not-needed"
    return OpenAIChat(
        "m",
        client=openai.OpenAI(base_url=url, api_key=key, max_retries=retries, timeout=5.0),
        async_client=openai.AsyncOpenAI(base_url=url, api_key=key, max_retries=retries, timeout=5.0),
    )


@pytest.fixture(params=["built", "given"])
def path(request: pytest.FixtureRequest) -> Path:
    return typing.cast(Path, request.param)


@pytest.mark.parametrize("framing", ["content-length", "chunked"])
@pytest.mark.parametrize("retries", [0, 1])
def test_a_cut_answer_says_it_was_cut_and_is_tried_max_retries_more_times(
    drive: Drive, path: Path, framing: Framing, retries: int
) -> None:
    with CuttingServer(*[True] * 5, framing=framing) as server:
        result = drive(Agent(backend(server.url, path, retries), tools=[]), "What is 6 times 7?")
    assert result.stop_reason == "model_error"
    error = result.error or ""
    how_much = f" after {CAME} of {len(REPLY)} bytes" if framing == "content-length" else ""
    assert error.startswith(f"the answer from {server.url}/ was cut short{how_much} ("), error
    assert "could not reach" not in error and "\n" not in error
    assert server.posts == 1 + retries  # a cut answer is retried as a dropped connection is


def test_an_answer_cut_once_is_asked_again_and_the_run_goes_on(drive: Drive, path: Path) -> None:
    with CuttingServer(True, framing="content-length") as server:
        result = drive(Agent(backend(server.url, path, 1), tools=[]), "What is 6 times 7?")
    assert (result.stop_reason, result.answer, server.posts) == ("final", "42", 2)


def test_a_whole_answer_is_read_whole(drive: Drive, path: Path) -> None:
    # the server's whole answers are read as answers (so a failure above is the cut's doing)
    with CuttingServer(framing="chunked") as server:
        result = drive(Agent(backend(server.url, path, 0), tools=[]), "What is 6 times 7?")
    assert (result.stop_reason, result.answer, server.posts) == ("final", "42", 1)
