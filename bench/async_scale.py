"""Many episodes at once: the async driver against a slow model and against a server on 127.0.0.1.

    python bench/async_scale.py                 # 1,000 episodes, in-process model and fake server
    python bench/async_scale.py 200             # fewer episodes

Each episode takes 3 steps (two tool calls, then the answer). Two set-ups:

1. In process: a model whose `agenerate` sleeps 10 ms a call. The target of issue 14: 1,000
   concurrent `arun` episodes finish in under 3 s of wall time on 2 cores, every answer right.
2. Over HTTP: `OpenAIChat` (the real `openai.AsyncOpenAI` client) against a fake OpenAI-compatible
   server on 127.0.0.1 that answers each request after 20 ms (started here in a child process, so
   its CPU is not counted as the engine's). Episodes at concurrency 1,000, then the same episodes
   one after another, for the ratio.

Reported: wall time, episodes a second, the engine process's CPU per step (everything in this
process: engine, asyncio, the HTTP client), and the peak of Python memory (tracemalloc).
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


async def episodes(agent: Agent, n: int, *, at_once: bool) -> list[str | None]:
    tasks = [f"What is {i} plus 2?" for i in range(n)]
    if at_once:
        results = await asyncio.gather(*(agent.arun(t) for t in tasks))
    else:
        results = [await agent.arun(t) for t in tasks]
    return [r.answer for r in results]


def measure(label: str, agent: Agent, n: int, *, at_once: bool) -> float:
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
    measure("in process, 10 ms a call, all at once", in_process, n, at_once=True)
    measure("in process, 10 ms a call, one at a time", in_process, min(n, 100), at_once=False)

    from react_text import OpenAIChat

    port = free_port()
    server = multiprocessing.Process(target=serve, args=(port, 0.020), daemon=True)
    server.start()
    try:
        wait_for(port)
        import openai

        http = openai.DefaultAsyncHttpxClient(limits=_pool(n))
        client = openai.AsyncOpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key="x", http_client=http)
        model = OpenAIChat("fake", base_url=f"http://127.0.0.1:{port}/v1", async_client=client)  # type: ignore[call-arg]
        agent = Agent(model, tools=[add], limits=limits)
        at_once = measure("fake server, 20 ms a request, all at once", agent, n, at_once=True)
        one = measure("fake server, 20 ms a request, one at a time", agent, min(n, 100), at_once=False)
        print(f"all at once is {one / min(n, 100) * n / at_once:.0f}x faster than one at a time would be")
    finally:
        server.terminate()


def _pool(n: int) -> object:
    import httpx2 as httpx

    return httpx.Limits(max_connections=n, max_keepalive_connections=n)


if __name__ == "__main__":
    main()
