"""Many episodes at once: the async driver against a slow model and against a server on 127.0.0.1.

    python bench/async_scale.py                 # 1,000 episodes, in-process model and fake server
    python bench/async_scale.py 200             # fewer episodes

Each episode takes 3 steps (two tool calls, then the answer). Two set-ups:

1. In process: a model whose `agenerate` sleeps 10 ms a call. The target of issue 14: 1,000
   concurrent `arun` episodes finish in under 3 s of wall time on 2 cores, every answer right.
   The CPU per step here is the engine's own (and asyncio's).
2. Over HTTP: `OpenAIChat` against a fake OpenAI-compatible server on 127.0.0.1 that answers each
   request after 20 ms (started here in a child process, so its CPU is not counted, though it
   shares the 2 cores). Episodes all at once, 64 at a time, and one after another, for the ratio.
   The CPU per step is this whole process: the engine plus the request path. To a plain http://
   server that is the lean path (react_text/backends/http1.py: a prepared body on a keep-alive
   connection from the loop's pool); before it, the `openai` client's `create` cost about 2 ms a
   request (its typed-parameter transform, and a pool that looks at every connection on every
   request), and 1,000 episodes starting together each asked the context window through it.
   Target (issue 22): at most 0.6 ms of CPU per model request, engine and client together.

Reported: wall time, episodes a second, CPU per step of this process, and the peak of Python
memory (tracemalloc, a second run).
"""

from __future__ import annotations

import asyncio
import json
import multiprocessing
import socket
import sys
import time
import tracemalloc
from dataclasses import dataclass

from react_text import Agent, Limits, Reply, Request, Usage


def add(a: int, b: int) -> int:
    """Add two whole numbers."""
    return a + b


def reply_for(messages: list[dict[str, str]]) -> str:
    """The scripted episode: add twice, then answer with the last sum."""
    turn = sum(1 for m in messages if m["role"] == "assistant")
    task = next(m["content"] for m in messages if m["content"].startswith("QUESTION:"))
    n = int(task.split()[3])  # "QUESTION: What is N plus 2?"
    if turn == 0:
        return f"THOUGHT: first add.\nACTION: add[{n}, 1]"
    if turn == 1:
        return f"THOUGHT: then add again.\nACTION: add[{n + 1}, 1]"
    return f"THOUGHT: done.\nFINAL: {n + 2}"


@dataclass
class Sleepy:
    """An async model that takes 10 ms a call."""

    api: str = "chat"
    name: str = "sleepy"
    accepts_grammar: bool = False
    delay: float = 0.010

    def generate(self, request: Request) -> Reply:
        raise AssertionError("async only")

    async def agenerate(self, request: Request) -> Reply:
        await asyncio.sleep(self.delay)
        assert isinstance(request.prompt, tuple)
        text = reply_for([{"role": m.role, "content": m.content} for m in request.prompt])
        return Reply(text, Usage(100, 10))


async def episodes(agent: Agent, n: int, *, at_once: int) -> list[str | None]:
    """`n` episodes, at most `at_once` of them running at a time."""
    gate = asyncio.Semaphore(at_once)

    async def one(task: str) -> str | None:
        async with gate:
            return (await agent.arun(task)).answer

    return list(await asyncio.gather(*(one(f"What is {i} plus 2?") for i in range(n))))


def measure(label: str, agent: Agent, n: int, *, at_once: int) -> float:
    wall, cpu = time.perf_counter(), time.process_time()
    answers = asyncio.run(episodes(agent, n, at_once=at_once))
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    tracemalloc.start()  # a second run for memory: tracing slows Python down
    asyncio.run(episodes(agent, n, at_once=at_once))
    peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    right = sum(a == str(i + 2) for i, a in enumerate(answers))
    print(
        f"{label:<42} {n:>6} {wall:>8.2f} s {n / wall:>9.0f}/s {cpu / (3 * n) * 1e6:>9.0f} µs {peak:>8.1f} MiB"
        f"  {right}/{n} right"
    )
    return wall


# --- the fake server ------------------------------------------------------------------------------


def serve(port: int, delay: float) -> None:
    """A minimal OpenAI-compatible chat server (HTTP/1.1, keep-alive): answers after `delay`."""

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":", 1)[1])
                if not head.startswith(b"POST"):  # the context window's look-up: this server cannot say
                    writer.write(b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n")
                    await writer.drain()
                    continue
                body = json.loads(await reader.readexactly(length))
                await asyncio.sleep(delay)
                text = reply_for(body["messages"])
                answer = json.dumps(
                    {
                        "id": "x",
                        "object": "chat.completion",
                        "created": 0,
                        "model": body["model"],
                        "choices": [
                            {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
                        ],
                        "usage": {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110},
                    }
                ).encode()
                writer.write(
                    b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
                    + f"content-length: {len(answer)}\r\n\r\n".encode()
                    + answer
                )
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            writer.close()

    async def main() -> None:
        server = await asyncio.start_server(handle, "127.0.0.1", port, backlog=2048)
        async with server:
            await server.serve_forever()

    asyncio.run(main())


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_for(port: int) -> None:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    raise SystemExit("the fake server did not start")


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    limits = Limits(steps=5, tool_seconds=None)
    print(f"{'set-up':<42} {'runs':>6} {'wall':>10} {'episodes':>10} {'CPU/step':>12} {'peak':>12}")
    in_process = Agent(Sleepy(), tools=[add], limits=limits)  # type: ignore[arg-type]
    measure("in process, 10 ms a call, all at once", in_process, n, at_once=n)
    measure("in process, 10 ms a call, one at a time", in_process, min(n, 100), at_once=1)

    from react_text import OpenAIChat

    port = free_port()
    server = multiprocessing.Process(target=serve, args=(port, 0.020), daemon=True)
    server.start()
    try:
        wait_for(port)
        model = OpenAIChat("fake", base_url=f"http://127.0.0.1:{port}/v1", api_key="not-needed")
        agent = Agent(model, tools=[add], limits=limits)
        at_once = measure("fake server, 20 ms a request, all at once", agent, n, at_once=n)
        measure("fake server, 20 ms a request, 64 at a time", agent, n, at_once=64)
        one = measure("fake server, 20 ms a request, one at a time", agent, min(n, 100), at_once=1)
        print(f"all at once is {one / min(n, 100) * n / at_once:.0f}x faster than one at a time would be")
    finally:
        server.terminate()


if __name__ == "__main__":
    main()
