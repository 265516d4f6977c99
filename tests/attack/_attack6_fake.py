"""attack6's test doubles: an OpenAI-compatible HTTP fake on 127.0.0.1 (stdlib only), the two drivers, the CLI.

The fake follows OpenAI's documented shapes: POST /v1/chat/completions (`choices[0].message.content`)
and POST /v1/completions (`choices[0].text`), each answered from a script of reply texts, one per
call, in order, as server-sent events when the request says `stream`. A GET is answered from
`gets` (path without query -> JSON), else 404, so the client learns only what a test gives it.
Every request is recorded: its path (with query), headers and JSON body.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from react_text import Agent, RunResult

DRIVERS = ("run", "arun")
REPO = Path(__file__).resolve().parents[2]


def drive(agent: Agent, task: str, driver: str) -> RunResult:
    """One run of `agent` under the sync driver (`run`) or the async one (`arun`)."""
    if driver == "run":
        return agent.run(task)
    return asyncio.run(agent.arun(task))


def cli(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """`react-text ARGS` in a subprocess, this worktree first on the path, no key from the caller."""
    environment = {**os.environ, "PYTHONPATH": str(REPO), "OPENAI_API_KEY": "none", **(env or {})}
    environment.pop("OPENAI_BASE_URL", None)
    command = [sys.executable, "-m", "react_text.cli", *args]
    return subprocess.run(command, cwd=cwd, env=environment, capture_output=True, text=True, timeout=60, check=False)


@dataclass
class Fake:
    replies: list[str]
    gets: dict[str, dict[str, Any]] = field(default_factory=dict)
    requests: list[dict[str, Any]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    url: str = ""

    def posts(self) -> list[dict[str, Any]]:
        with self.lock:
            return [r for r in self.requests if r["method"] == "POST"]

    def record(self, record: dict[str, Any]) -> str | None:
        with self.lock:
            self.requests.append(record)
            if record["method"] == "POST":
                return self.replies.pop(0) if self.replies else None
            return None


def _handler(fake: Fake) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: object) -> None:  # a test double stays quiet
            pass

        def _send(self, status: int, payload: dict[str, Any]) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _record(self, body: Any) -> str | None:
            headers = {k.lower(): v for k, v in self.headers.items()}
            return fake.record({"method": self.command, "path": self.path, "headers": headers, "body": body})

        def do_GET(self) -> None:
            self._record(None)
            answer = fake.gets.get(self.path.split("?", 1)[0])
            if answer is None:
                self._send(404, {"error": {"message": "not found", "type": "not_found"}})
            else:
                self._send(200, answer)

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))) or b"{}")
            text = self._record(body)
            path = self.path.split("?", 1)[0]
            chat = path.endswith("/chat/completions")
            if not (chat or path.endswith("/completions")):
                self._send(404, {"error": {"message": "not found", "type": "not_found"}})
            elif text is None:
                self._send(400, {"error": {"message": "the fake has no more replies", "type": "invalid_request_error"}})
            elif body.get("stream"):
                self._stream(text, chat)
            else:
                self._answer(text, chat, body)

        def _answer(self, text: str, chat: bool, body: dict[str, Any]) -> None:
            choice: dict[str, Any] = {"index": 0, "finish_reason": "stop", "logprobs": None}
            if chat:
                choice["message"] = {"role": "assistant", "content": text}
            else:
                choice["text"] = text
            prompt = len(json.dumps(body.get("messages") or body.get("prompt") or "")) // 4 + 1  # ~4 chars a token
            completion = len(text) // 4 + 1
            usage = {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}
            kind = "chat.completion" if chat else "text_completion"
            self._send(
                200, {"id": "x", "object": kind, "created": 0, "model": "m", "choices": [choice], "usage": usage}
            )

        def _stream(self, text: str, chat: bool) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Connection", "close")
            self.end_headers()
            pieces = [text[i : i + 3] for i in range(0, len(text), 3)]
            for n, piece in enumerate([*pieces, ""]):
                last = n == len(pieces)
                choice: dict[str, Any] = {"index": 0, "finish_reason": "stop" if last else None}
                if chat:
                    choice["delta"] = {} if last else {"content": piece}
                else:
                    choice["text"] = piece
                kind = "chat.completion.chunk" if chat else "text_completion"
                chunk = {"id": "x", "object": kind, "created": 0, "model": "m", "choices": [choice]}
                self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
            self.wfile.write(b"data: [DONE]\n\n")
            self.close_connection = True

    return Handler


@contextmanager
def serving(replies: list[str], gets: dict[str, dict[str, Any]] | None = None) -> Iterator[Fake]:
    """A fake server answering `replies` in order, for the length of the block."""
    fake = Fake(list(replies), dict(gets or {}))
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(fake))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    fake.url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    try:
        yield fake
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
