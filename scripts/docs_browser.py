"""Open the built docs site in headless Chromium, as a reader would: type into the search box and
check what it finds, and take a screenshot of the home page.

    python scripts/docs_browser.py                         build the site, serve it on 127.0.0.1, check
    python scripts/docs_browser.py --site /tmp/site        check a site already built
    python scripts/docs_browser.py --screenshot docs/assets/home.png

It needs Debian's chromium (`apt-get install chromium`) and mkdocs (`pip install -e ".[docs]"`).
Chromium is driven over the DevTools protocol with a small WebSocket client written here (the
standard library has none), on 127.0.0.1 only, with its background networking off. Exit status 0
when every query finds the page it should; each query's results are printed.
"""

from __future__ import annotations

import argparse
import base64
import functools
import http.server
import json
import os
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
# query -> a path that one of its results must link to
QUERIES = {"context window": "concepts/context-windows/", "vLLM": "how-to/servers/"}
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--window-size=1280,860",
    "--remote-debugging-address=127.0.0.1",
    "--remote-debugging-port=0",
]


class DevTools:
    """One WebSocket to one page target: `call(method, **params)` sends a command, returns its result."""

    def __init__(self, url: str) -> None:
        host, _, path = url.removeprefix("ws://").partition("/")
        name, _, port = host.partition(":")
        self.sock = socket.create_connection((name, int(port)), timeout=30)
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall(
            f"GET /{path} HTTP/1.1\r\nHost: {host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n".encode()
        )
        answer = b""
        while b"\r\n\r\n" not in answer:
            answer += self.sock.recv(4096)
        head, _, self.pending = answer.partition(b"\r\n\r\n")
        if b" 101 " not in head.split(b"\r\n", 1)[0]:
            raise RuntimeError(f"no WebSocket: {head[:200]!r}")
        self.next_id = 0

    def _read(self, count: int) -> bytes:
        while len(self.pending) < count:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("chromium closed the connection")
            self.pending += chunk
        data, self.pending = self.pending[:count], self.pending[count:]
        return data

    def _send(self, text: str) -> None:
        payload = text.encode()
        size = len(payload)
        header = bytes([0x81])  # a final text frame
        if size < 126:
            header += bytes([0x80 | size])
        elif size < 1 << 16:
            header += bytes([0x80 | 126]) + struct.pack("!H", size)
        else:
            header += bytes([0x80 | 127]) + struct.pack("!Q", size)
        mask = os.urandom(4)  # a client masks every frame
        self.sock.sendall(header + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload)))

    def _receive(self) -> dict[str, Any]:
        message = b""
        while True:
            first, second = self._read(2)
            size = second & 0x7F
            if size == 126:
                size = struct.unpack("!H", self._read(2))[0]
            elif size == 127:
                size = struct.unpack("!Q", self._read(8))[0]
            message += self._read(size)
            if first & 0x80:  # the final fragment
                return dict(json.loads(message))

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        self.next_id += 1
        self._send(json.dumps({"id": self.next_id, "method": method, "params": params}))
        while True:
            message = self._receive()
            if message.get("id") == self.next_id:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return dict(message.get("result", {}))

    def evaluate(self, expression: str) -> Any:
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        return result.get("result", {}).get("value")

    def wait_for(self, expression: str, seconds: float = 30.0) -> Any:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            value = self.evaluate(expression)
            if value:
                return value
            time.sleep(0.2)
        raise TimeoutError(f"never true: {expression}")

    def type(self, text: str) -> None:
        """Type as a person does: a key down (which inserts the character) and a key up, each key."""
        for char in text:
            self.call("Input.dispatchKeyEvent", type="keyDown", text=char, key=char, unmodifiedText=char)
            self.call("Input.dispatchKeyEvent", type="keyUp", key=char)


def serve(site: Path) -> tuple[http.server.ThreadingHTTPServer, str]:
    handler = functools.partial(QuietHandler, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/"


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


def build(into: Path) -> Path:
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    mkdocs = shutil.which("mkdocs", path=str(Path(sys.executable).parent)) or "mkdocs"
    subprocess.run([mkdocs, "build", "--strict", "--quiet", "--site-dir", str(into)], cwd=ROOT, env=env, check=True)
    return into


def search(page: DevTools, home: str, query: str) -> list[tuple[str, str]]:
    """Type `query` into the home page's search box; the results' titles and links."""
    page.call("Page.navigate", url=home)
    page.wait_for("document.readyState === 'complete' && !!document.querySelector('.md-search__input')")
    page.evaluate("document.querySelector('.md-search__input').focus()")
    page.type(query)
    page.wait_for("document.querySelectorAll('.md-search-result__item').length > 0")
    found = page.evaluate(
        "[...document.querySelectorAll('.md-search-result__item > a')]"
        ".map(a => [a.querySelector('h1, h2') ? a.querySelector('h1, h2').textContent.trim() : '', a.href])"
    )
    return [(str(title), str(link)) for title, link in found]


def main(argv: list[str]) -> int:
    options = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    options.add_argument("--site", type=Path, help="a site already built (default: build one)")
    options.add_argument("--screenshot", type=Path, help="write a PNG of the home page here")
    args = options.parse_args(argv)
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        sys.stderr.write("no chromium: apt-get install chromium\n")
        return 2
    with tempfile.TemporaryDirectory() as scratch:
        site = args.site or build(Path(scratch) / "site")
        server, home = serve(site)
        profile = Path(scratch) / "profile"
        browser = subprocess.Popen(
            [chromium, *FLAGS, f"--user-data-dir={profile}", "about:blank"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            port_file = profile / "DevToolsActivePort"
            deadline = time.monotonic() + 60
            while not (port_file.is_file() and port_file.read_text().strip()):
                if time.monotonic() > deadline or browser.poll() is not None:
                    raise RuntimeError("chromium did not start")
                time.sleep(0.2)
            port = port_file.read_text().split()[0]
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=10) as answer:
                targets = json.load(answer)
            page = DevTools(next(t["webSocketDebuggerUrl"] for t in targets if t["type"] == "page"))
            page.call("Page.enable")
            failed = 0
            for query, expected in QUERIES.items():
                results = search(page, home, query)
                hit = any(expected in link for _, link in results)
                failed += not hit
                said = "found" if hit else "MISSED"
                sys.stdout.write(f"{said} {query!r}: {len(results)} results, {expected} expected\n")
                for title, link in results[:5]:
                    sys.stdout.write(f"    {title}  {link.removeprefix(home)}\n")
            if args.screenshot:
                page.call("Page.navigate", url=home)
                page.wait_for("document.readyState === 'complete'")
                time.sleep(1.0)  # let the fonts and the layout settle
                shot = page.call("Page.captureScreenshot", format="png")
                args.screenshot.write_bytes(base64.b64decode(shot["data"]))
                sys.stdout.write(f"wrote {args.screenshot}\n")
        finally:
            browser.terminate()
            browser.wait(timeout=30)
            server.shutdown()
            server.server_close()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
