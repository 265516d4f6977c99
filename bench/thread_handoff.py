"""What handing a sync tool to a worker thread costs, the floor under the async driver's extra cost.

    python bench/thread_handoff.py [--calls 5000]

Three ways of one round trip to a thread and back, each timed over `--calls` calls of a job that
returns at once, CPU and wall µs a call: a bare ping-pong of two threads over `queue.SimpleQueue`
(no asyncio: the operating system's two wake-ups), `asyncio.to_thread`, and the engine's own
hand-off (`running._pool.arun`, as an async run calls a sync tool, with its 60 s limit).
"""

from __future__ import annotations

import argparse
import asyncio
import queue
import threading
import time
from collections.abc import Awaitable, Callable

from react_text.tools.running import _pool


def job() -> int:
    return 1


def ping_pong(calls: int) -> tuple[float, float]:
    jobs: queue.SimpleQueue[Callable[[], int]] = queue.SimpleQueue()
    answers: queue.SimpleQueue[int] = queue.SimpleQueue()

    def serve() -> None:
        while True:
            answers.put(jobs.get()())

    threading.Thread(target=serve, daemon=True).start()
    for _ in range(100):
        jobs.put(job)
        answers.get()
    cpu, wall = time.process_time(), time.perf_counter()
    for _ in range(calls):
        jobs.put(job)
        answers.get()
    return (time.process_time() - cpu) / calls * 1e6, (time.perf_counter() - wall) / calls * 1e6


async def timed(make: Callable[[], Awaitable[object]], calls: int) -> tuple[float, float]:
    for _ in range(100):
        await make()
    cpu, wall = time.process_time(), time.perf_counter()
    for _ in range(calls):
        await make()
    return (time.process_time() - cpu) / calls * 1e6, (time.perf_counter() - wall) / calls * 1e6


async def on_the_loop(calls: int) -> dict[str, tuple[float, float]]:
    return {
        "asyncio.to_thread": await timed(lambda: asyncio.to_thread(job), calls),
        "react-text's hand-off": await timed(lambda: _pool.arun(job, 60.0), calls),
    }


def main() -> None:
    options = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    options.add_argument("--calls", type=int, default=5000)
    args = options.parse_args()
    rows = {"threads' ping-pong (no asyncio)": ping_pong(args.calls), **asyncio.run(on_the_loop(args.calls))}
    print(f"{'round trip':<34} {'CPU µs':>8} {'wall µs':>8}")
    for name, (cpu, wall) in rows.items():
        print(f"{name:<34} {cpu:>8.1f} {wall:>8.1f}")


if __name__ == "__main__":
    main()
