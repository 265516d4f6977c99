"""A small OpenAI-compatible fake server (standard library only) for the attack3 tests.

It speaks HTTP/1.1 with keep-alive on 127.0.0.1 and answers each request with what a `behave`
function returns for it: a JSON answer (plain, chunked, or followed by closing the connection),
raw bytes, a stall, or a dropped connection. Shapes follow OpenAI's documented chat and
completion answers.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Seen:
    method: str
    path: str
    body: Any
    headers: dict[str, str]


@dataclass
class Answer:
    status: int = 200
    body: Any = None  # JSON-able, or bytes sent as they are
    headers: dict[str, str] = field(default_factory=dict)
    chunked: bool = False
    close: bool = False  # close the connection after answering
    no_length: bool = False  # no Content-Length, no chunking: the body ends at close
    stall: float = 0.0  # wait this long before answering
    drop: bool = False  # close the connection without a word
    raw: bytes | None = None  # write these bytes and close


def chat_answer(text: str, *, finish: str = "stop", extra: dict[str, Any] | None = None) -> dict[str, Any]:
    choice: dict[str, Any] = {
        "index": 0,
        "message": {"role": "assistant", "content": text},
        "finish_reason": finish,
    }
    if extra:
        choice.update(extra)
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 0,
        "model": "m",
        "choices": [choice],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }


def completion_answer(text: str, *, finish: str = "stop", extra: dict[str, Any] | None = None) -> dict[str, Any]:
    choice: dict[str, Any] = {"index": 0, "text": text, "finish_reason": finish, "logprobs": None}
    if extra:
        choice.update(extra)
    return {
        "id": "cmpl-1",
        "object": "text_completion",
        "created": 0,
        "model": "m",
        "choices": [choice],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }


Behave = Callable[[Seen, int], Answer]


def final(text: str = "THOUGHT: easy.\nFINAL: 42") -> Behave:
    def behave(seen: Seen, n: int) -> Answer:
        if seen.method == "GET":
            return Answer(404, {"error": "not found"})
        if seen.path.endswith("/completions") and "chat" not in seen.path:
            return Answer(body=completion_answer(text))
        return Answer(body=chat_answer(text))

    return behave


class Fake:
    def __init__(self, behave: Behave) -> None:
        self.behave = behave
        self.seen: list[Seen] = []
        self.connections = 0
        self.lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def setup(self) -> None:
                super().setup()
                with fake.lock:
                    fake.connections += 1

            def _serve(self, method: str) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw) if raw else None
                except ValueError:
                    body = raw
                seen = Seen(method, self.path, body, {k.lower(): v for k, v in self.headers.items()})
                with fake.lock:
                    fake.seen.append(seen)
                    n = len(fake.seen) - 1
                answer = fake.behave(seen, n)
                if answer.stall:
                    time.sleep(answer.stall)
                if answer.drop:
                    self.close_connection = True
                    self.connection.shutdown(socket.SHUT_RDWR)
                    return
                if answer.raw is not None:
                    self.wfile.write(answer.raw)
                    self.wfile.flush()
                    self.close_connection = True
                    return
                data = answer.body if isinstance(answer.body, bytes) else json.dumps(answer.body).encode()
                self.send_response(answer.status)
                self.send_header("Content-Type", "application/json")
                for k, v in answer.headers.items():
                    self.send_header(k, v)
                if answer.chunked:
                    self.send_header("Transfer-Encoding", "chunked")
                elif not answer.no_length:
                    self.send_header("Content-Length", str(len(data)))
                if answer.close or answer.no_length:
                    self.send_header("Connection", "close")
                    self.close_connection = True
                self.end_headers()
                if answer.chunked:
                    for i in range(0, len(data), 7):
                        piece = data[i : i + 7]
                        self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
                        self.wfile.flush()
                    self.wfile.write(b"0\r\n\r\n")
                else:
                    self.wfile.write(data)
                self.wfile.flush()

            def do_POST(self) -> None:
                self._serve("POST")

            def do_GET(self) -> None:
                self._serve("GET")

        class Server(ThreadingHTTPServer):
            daemon_threads = True
            request_queue_size = 1024

        self.server = Server(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def posts(self) -> list[Seen]:
        with self.lock:
            return [s for s in self.seen if s.method == "POST"]

    def __enter__(self) -> Fake:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(5)
