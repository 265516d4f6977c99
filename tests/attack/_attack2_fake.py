"""A fake OpenAI-compatible server for the attack2 tests, written from the public API's shapes.

`FakeServer(handler)` serves on 127.0.0.1 in a thread; `handler(path, body)` returns
`(status, headers, payload)` where payload is bytes, a dict (sent as JSON), or an iterator of
bytes (sent chunk by chunk, flushed, for streams and for servers that hang). Every request body
is kept in `.bodies`.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Payload = bytes | dict[str, Any] | Iterator[bytes]
Handler = Callable[[str, dict[str, Any]], tuple[int, dict[str, str], Payload]]


def chat_answer(text: str, finish_reason: str = "stop", usage: dict[str, int] | None = None) -> dict[str, Any]:
    """A /v1/chat/completions answer as the OpenAI API documents it."""
    answer: dict[str, Any] = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1,
        "model": "m",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": finish_reason}],
    }
    if usage is not None:
        answer["usage"] = usage
    return answer


class FakeServer:
    def __init__(self, handler: Handler) -> None:
        self.handler = handler
        self.bodies: list[dict[str, Any]] = []
        self.paths: list[str] = []
        outer = self

        class _H(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                return

            def _serve(self, body: dict[str, Any]) -> None:
                outer.paths.append(self.path)
                status, headers, payload = outer.handler(self.path, body)
                self.send_response(status)
                for k, v in headers.items():
                    self.send_header(k, v)
                if isinstance(payload, dict):
                    payload = json.dumps(payload).encode()
                if isinstance(payload, bytes):
                    self.send_header("Content-Length", str(len(payload)))
                    if "Content-Type" not in headers:
                        self.send_header("Content-Type", "application/json")
                    self.end_headers()
                    self.wfile.write(payload)
                    return
                if "Content-Type" not in headers:
                    self.send_header("Content-Type", "text/event-stream")
                self.send_header("Connection", "close")
                self.end_headers()
                try:
                    for chunk in payload:
                        self.wfile.write(chunk)
                        self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    return
                self.close_connection = True

            def do_GET(self) -> None:
                self._serve({})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b"{}"
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = {"_raw": raw.decode("utf-8", "replace")}
                if self.path.endswith("/completions"):
                    outer.bodies.append(body)
                self._serve(body)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _H)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def __enter__(self) -> FakeServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


def scripted_handler(replies: list[str], models: dict[str, Any] | None = None) -> Handler:
    """Answers each chat call with the next reply (then FINAL: done); 404 for /props, models as given."""
    queue = list(replies)

    def handle(path: str, body: dict[str, Any]) -> tuple[int, dict[str, str], Payload]:
        if path.endswith("/completions"):
            text = queue.pop(0) if queue else "FINAL: done"
            return 200, {}, chat_answer(text)
        if path.endswith("/models") and models is not None:
            return 200, {}, models
        return 404, {}, {"error": {"message": "not found"}}

    return handle


def drive(agent: Any, task: str, driver: str) -> Any:
    """Run `agent` on `task` under the sync or the async driver."""
    import asyncio

    if driver == "sync":
        return agent.run(task)
    return asyncio.run(agent.arun(task))


def sse(obj: dict[str, Any]) -> bytes:
    return b"data: " + json.dumps(obj).encode() + b"\n\n"


def chunk(text: str, finish_reason: str | None = None) -> dict[str, Any]:
    """One chat.completion.chunk of a stream, as the OpenAI API documents it."""
    return {
        "id": "c",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "m",
        "choices": [{"index": 0, "delta": {"content": text}, "finish_reason": finish_reason}],
    }
