"""Episodes a minute against a real llama.cpp server on 127.0.0.1, at concurrency 1 and 4.

    python bench/server_episodes.py [N]          # N suite tasks (default 8), each concurrency

Starts llama-cpp-python's OpenAI-compatible server with the embedded SmolLM2-135M-Instruct (the
`server` extra), then runs the first N arithmetic tasks of bench/tasks/suite.jsonl through
`agent.arun` over `OpenAICompletion(grammar=True)`, one episode at a time and four at once.
Run it alone: it is the only llama.cpp process the 2 cores can carry.

What 2 cores allow: llama-cpp-python's server evaluates one request at a time (it holds a lock
around the model), so four episodes at once overlap only their client-side work (the engine, the
tool, the HTTP round trip) with the model's; a server with parallel slots (llama.cpp's own
`llama-server -np 4`, vLLM) would batch them.
"""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from react_text import Agent, Limits, OpenAICompletion, Prompting
from react_text.backends.local import default_model_path
from react_text.evaluation import correct
from react_text.tools.toolbox import calculator

SUITE = Path(__file__).parent / "tasks" / "suite.jsonl"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start(port: int) -> subprocess.Popen[bytes]:
    command = [
        sys.executable, "-m", "llama_cpp.server", "--model", str(default_model_path()),
        "--model_alias", "smollm2", "--host", "127.0.0.1", "--port", str(port), "--seed", "0",
    ]  # fmt: skip
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=2):
                return process
        except OSError:
            time.sleep(0.3)
    process.kill()
    raise SystemExit("the llama.cpp server did not start")


async def episodes(agent: Agent, tasks: list[dict[str, str]], at_once: int) -> list[bool]:
    gate = asyncio.Semaphore(at_once)

    async def one(task: dict[str, str]) -> bool:
        async with gate:
            return correct((await agent.arun(task["task"])).answer, str(task["answer"]))

    return list(await asyncio.gather(*(one(t) for t in tasks)))


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 8
    rows = [json.loads(line) for line in SUITE.read_text(encoding="utf-8").splitlines() if line.strip()]
    tasks = [r for r in rows if r.get("tools", ["calculator"]) == ["calculator"]][:n]
    port = free_port()
    server = start(port)
    try:
        model = OpenAICompletion("smollm2", base_url=f"http://127.0.0.1:{port}/v1", grammar=True)
        agent = Agent(
            model, tools=[calculator], limits=Limits(steps=6, reply_tokens=256), prompting=Prompting(act_first=True)
        )
        asyncio.run(episodes(agent, tasks[:1], 1))  # warm the server
        print(f"{'concurrency':>11} {'episodes':>9} {'wall':>8} {'episodes a minute':>18} {'right':>6}")
        for at_once in (1, 4):
            started = time.perf_counter()
            right = asyncio.run(episodes(agent, tasks, at_once))
            wall = time.perf_counter() - started
            print(
                f"{at_once:>11} {len(tasks):>9} {wall:>7.1f}s {60 * len(tasks) / wall:>18.1f} {sum(right):>3}/{len(tasks)}"
            )
    finally:
        server.terminate()
        server.wait(timeout=30)


if __name__ == "__main__":
    main()
