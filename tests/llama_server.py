"""The embedded model behind an OpenAI-compatible server, and a recording proxy in front of it, for
the slow tests. Two servers:

    LlamaServer      llama-cpp-python's server (`python -m llama_cpp.server`, the `server` extra):
                     token texts only, no /props (run its tests under `flock /tmp/react-text-llama.lock`)
    LlamaCppServer   llama.cpp's own `llama-server`, built by `./dev test` into
                     $REACT_TEXT_LLAMA_SERVER (default ~/.cache/react-text/llama-server-<version>):
                     /props, `grammar`, token ids in its log-probs, /tokenize, parallel slots (-np).
                     It takes the llama lock itself while it runs (an inherited lock, from
                     `flock /tmp/react-text-llama.lock pytest ...`, is used as it is)

    with LlamaServer(threads=1) as server, RecordingProxy(server.url) as proxy:
        proxy.url                    # talk to this
        proxy.bodies                 # every request body, in order (proxy.paths: their paths)
        proxy.tasks()                # the tasks whose requests went through it
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from fake_openai import question

LOCK = "/tmp/react-text-llama.lock"  # never two llama.cpp processes at once (the machine's rule)
REQUIRED = "REACT_TEXT_LLAMA_SERVER_REQUIRED"  # set by CI (.ci/run): a missing binary fails, not skips
_DEV = Path(__file__).resolve().parent.parent / "dev"


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


@contextlib.contextmanager
def llama_lock() -> Iterator[None]:
    """The llama lock, held for the block; one this process inherited (it runs under `flock`) is
    used as it is, not asked for again (a second open of the file would wait for it forever)."""
    for fd in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):
            if os.readlink(f"/proc/self/fd/{fd}") == LOCK:
                yield
                return
    with open(LOCK, "a") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(held, fcntl.LOCK_UN)


def llama_server_binary() -> Path:
    """llama.cpp's `llama-server` as `./dev test` builds it; skips (fails under CI) when it is missing."""
    version = re.search(r"(?m)^LLAMA_VERSION=(\S+)", _DEV.read_text())
    default = Path.home() / ".cache" / "react-text" / f"llama-server-{version.group(1) if version else ''}"
    binary = Path(os.environ.get("REACT_TEXT_LLAMA_SERVER") or default) / "llama-server"
    if not os.access(binary, os.X_OK):
        why = f"no llama.cpp llama-server at {binary} (`./dev test` builds it once; it needs cmake and a C++ compiler)"
        if os.environ.get(REQUIRED):
            pytest.fail(why)
        pytest.skip(why)
    return binary


class LlamaCppServer:
    """llama.cpp's `llama-server` on 127.0.0.1 with the embedded model, `slots` parallel slots, a
    `context` shared by them (`-kvu`: each request may use all of it), greedy by default; under
    the llama lock while it runs. `args`: more of the server's own flags."""

    def __init__(self, *, slots: int = 2, context: int = 4096, threads: int = 1, args: tuple[str, ...] = ()) -> None:
        from react_text.backends.local import default_model_path

        port = free_port()
        self.root = f"http://127.0.0.1:{port}"
        self.url = f"{self.root}/v1"
        self.command = [
            str(llama_server_binary()), "--model", str(default_model_path()), "--alias", "smollm2",
            "--host", "127.0.0.1", "--port", str(port), "--ctx-size", str(context), "--parallel", str(slots),
            "--kv-unified", "--threads", str(threads), "--threads-batch", str(threads), "--seed", "0",
            "--no-webui", *args,
        ]  # fmt: skip
        self._locked = contextlib.ExitStack()

    def __enter__(self) -> LlamaCppServer:
        self._locked.enter_context(llama_lock())
        self.log = self._locked.enter_context(tempfile.TemporaryFile("w+"))  # its log, read when it fails
        self.process = subprocess.Popen(self.command, stdout=subprocess.DEVNULL, stderr=self.log)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                said = self.said()
                self._locked.close()
                raise RuntimeError(f"llama-server exited with {self.process.returncode}: {said[-2000:]}")
            try:  # /health answers 503 while the model loads, 200 once it can serve
                with urllib.request.urlopen(f"{self.root}/health", timeout=2) as answer:
                    if answer.status == 200:
                        return self
            except OSError:
                time.sleep(0.3)
        self.__exit__()
        raise RuntimeError("llama-server did not start within 120 s")

    def __exit__(self, *exc: object) -> None:
        try:
            self.process.terminate()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        finally:
            self._locked.close()

    def said(self) -> str:
        """What the server has logged so far."""
        self.log.seek(0)
        return self.log.read()

    def post(self, path: str, body: dict[str, Any]) -> Any:
        """POST JSON to one of the server's own endpoints (/tokenize, /detokenize, ...), its JSON answer."""
        request = urllib.request.Request(f"{self.root}{path}", data=json.dumps(body).encode(), method="POST")
        request.add_header("Content-Type", "application/json")
        with urllib.request.urlopen(request, timeout=60) as answer:
            return json.loads(answer.read())

    def get(self, path: str) -> Any:
        with urllib.request.urlopen(f"{self.root}{path}", timeout=10) as answer:
            return json.loads(answer.read())


class RecordingProxy:
    """Forwards every request to `upstream` and keeps its body."""

    def __init__(self, upstream: str) -> None:
        self.bodies: list[dict[str, Any]] = []
        self.paths: list[str] = []  # the path of each body's request
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                self._forward(None)

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers["Content-Length"]))
                proxy.bodies.append(json.loads(raw))
                proxy.paths.append(self.path)
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
