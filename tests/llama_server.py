"""llama.cpp's OpenAI-compatible server with the embedded model, and a recording proxy in front of
it, for the slow CLI and eval tests (run them under `flock /tmp/react-text-llama.lock`).

    with LlamaServer(threads=1) as server, RecordingProxy(server.url) as proxy:
        proxy.url                    # talk to this
        proxy.bodies                 # every request body, in order
        proxy.tasks()                # the tasks whose requests went through it
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from fake_openai import question


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class LlamaServer:
    def __init__(self, threads: int | None = None) -> None:
        from react_text.backends.local import default_model_path

        port = free_port()
        self.url = f"http://127.0.0.1:{port}/v1"
        self.command = [
            sys.executable, "-m", "llama_cpp.server",
            "--model", str(default_model_path()), "--model_alias", "smollm2",
            "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "4096", "--seed", "0",
        ]  # fmt: skip
        if threads is not None:
            self.command += ["--n_threads", str(threads), "--n_threads_batch", str(threads)]

    def __enter__(self) -> LlamaServer:
        self.process = subprocess.Popen(self.command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"the llama.cpp server exited with {self.process.returncode}")
            try:
                urllib.request.urlopen(f"{self.url}/models", timeout=2)
                return self
            except OSError:
                time.sleep(0.3)
        self.process.kill()
        raise RuntimeError("the llama.cpp server did not start within 120 s")

    def __exit__(self, *exc: object) -> None:
        self.process.terminate()
        self.process.wait(timeout=30)


class RecordingProxy:
    """Forwards every request to `upstream` and keeps its body."""

    def __init__(self, upstream: str) -> None:
        self.bodies: list[dict[str, Any]] = []
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                self._forward(None)

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers["Content-Length"]))
                proxy.bodies.append(json.loads(raw))
                self._forward(raw)

            def _forward(self, raw: bytes | None) -> None:
                target = upstream.removesuffix("/v1") + self.path
                request = urllib.request.Request(target, data=raw, method=self.command)
                request.add_header("Content-Type", "application/json")
                try:
                    with urllib.request.urlopen(request, timeout=300) as answer:
                        data, status = answer.read(), answer.status
                except urllib.error.HTTPError as refused:  # a 404 is an answer too: pass it on
                    data, status = refused.read(), refused.code
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: object) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/v1"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> RecordingProxy:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def tasks(self) -> set[str]:
        """The tasks of the chat requests that went through."""
        return {question(body["messages"]) for body in self.bodies if "messages" in body}
