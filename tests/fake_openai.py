"""A fake OpenAI-compatible server on 127.0.0.1, for the eval and docs tests: it plays a model that
solves `What is A + B?` with the calculator in two calls, over chat (/v1/chat/completions) or a
completion transcript (/v1/completions), and records every request it gets.

    with FakeServer(delay=0.05) as server:
        server.url                   # http://127.0.0.1:PORT/v1
        server.requests              # [(task, number of messages), ...] in the order received
        FakeServer(about={"/props": {...}})  # what it says about itself at GET paths (404 elsewhere)

Each request is told apart by its task (the QUESTION: line), so a test can see which server ran
which episode, and how many episodes it started (a first request holds two messages).
"""

from __future__ import annotations

import contextlib
import json
import re
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

QUESTION = re.compile(r"QUESTION: (.*)")
SUM = re.compile(r"What is (\d+) \+ (\d+)\?")


def answer(messages: list[dict[str, str]]) -> str:
    """The fake model: call the calculator on the sum asked, then give its result."""
    task = question(messages)
    observations = [m["content"] for m in messages if m["role"] == "user" and m["content"].startswith("OBSERVATION:")]
    if observations:
        return f"THOUGHT: the calculator says so.\nFINAL: {observations[-1].removeprefix('OBSERVATION:').strip()}"
    match = SUM.search(task)
    expression = f"{match.group(1)} + {match.group(2)}" if match else "0"
    return f"THOUGHT: I will add.\nACTION: calculator[{expression}]"


def transcript_messages(prompt: str) -> list[dict[str, str]]:
    """A completion transcript read as the chat messages it stands for: the instructions and task,
    then one user message per observation (so a first request holds two, as in chat)."""
    observations = [line for line in prompt.splitlines() if line.startswith("OBSERVATION:")]
    return [{"role": "system", "content": ""}, {"role": "user", "content": prompt}] + [
        {"role": "user", "content": line} for line in observations
    ]


def question(messages: list[dict[str, str]]) -> str:
    """The task: the last QUESTION: of the first user message (the example's comes before it)."""
    first = next(m["content"] for m in messages if m["role"] == "user" and "QUESTION:" in m["content"])
    return str(QUESTION.findall(first)[-1])


class JSONHandler(BaseHTTPRequestHandler):
    """The base of a test's own HTTP handler: quiet, and `send_json` for every answer."""

    def send_json(self, code: int, body: object) -> None:
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: object) -> None:  # quiet
        pass


@contextlib.contextmanager
def serving(handler: type[BaseHTTPRequestHandler]) -> Iterator[str]:
    """Serve `handler` on 127.0.0.1 while the block runs; yields the base URL (http://.../v1)."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


class FakeServer:
    def __init__(
        self,
        delay: float = 0.0,
        window: int | None = None,
        about: dict[str, Any] | None = None,
        say: Callable[[list[dict[str, str]]], str] | None = None,
        reasoning: str | None = None,
    ) -> None:
        self.say = say or answer  # the fake model: messages -> the reply's text
        self.reasoning = reasoning  # thinking split out as a reasoning parser does (`reasoning_content`)
        self.delay = delay
        self.window = window  # the context window it says at GET /v1/models, as vLLM does
        self.about = dict(about or {})  # what it answers at other GET paths ({"/props": {...}}), 404 elsewhere
        self.gets: list[str] = []  # every GET path, in order
        self.requests: list[tuple[str, int]] = []
        self.bodies: list[dict[str, Any]] = []  # every request body as received
        self._lock = threading.Lock()
        server = self

        class Handler(JSONHandler):
            def do_POST(self) -> None:
                body: dict[str, Any] = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                messages = body["messages"] if "messages" in body else transcript_messages(body["prompt"])
                task = question(messages)
                with server._lock:
                    server.requests.append((task, len(messages)))
                    server.bodies.append(body)
                time.sleep(server.delay)
                text = server.say(messages)
                choice: dict[str, Any] = {"index": 0, "finish_reason": "stop"}
                if "messages" in body:
                    choice["message"] = {"role": "assistant", "content": text}
                    if server.reasoning is not None:
                        choice["message"]["reasoning_content"] = server.reasoning
                else:  # the transcript ends in THOUGHT:, which the reply continues
                    choice["text"] = " " + text.removeprefix("THOUGHT: ")
                reply = {
                    "id": "fake",
                    "object": "chat.completion" if "messages" in body else "text_completion",
                    "created": 0,
                    "model": body["model"],
                    "choices": [choice],
                    "usage": {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110},
                }
                self.send_json(200, reply)

            def do_GET(self) -> None:
                with server._lock:
                    server.gets.append(self.path)
                if self.path in server.about:
                    answer = server.about[self.path]
                elif server.window is not None and self.path.endswith("/models"):
                    answer = {"data": [{"id": "fake", "max_model_len": server.window}]}
                else:
                    self.send_error(404)
                    return
                self.send_json(200, answer)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/v1"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> FakeServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def episodes(self) -> list[str]:
        """The tasks whose episodes started here (a first request: system and user messages only)."""
        with self._lock:
            return [task for task, count in self.requests if count == 2]

    def tasks(self) -> set[str]:
        with self._lock:
            return {task for task, _ in self.requests}
